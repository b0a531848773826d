// Package browser holds the dashboard's tests in a real browser: headless
// Chromium driven over the DevTools protocol by chromedp. It is a module
// of its own (github.com/rotd/coordination/cmd/coord/internal/dashboard/browser,
// the root replaced by its directory) so that the product's go.mod does
// not require chromedp; its path lies under cmd/coord/internal, so its
// tests may import the dashboard and the root's internal packages.
//
// The tests start the real dashboard as coord dashboard does, through
// package dashboardtest (dashboard.New, its builder, its handler on
// loopback), and assert only on what a person sees in the page. Each
// skips, saying so in one line, when no Chromium-like browser that starts
// is on PATH. Screenshots go to $COORD_ARTIFACTS, else testdata/out here.
//
// Run them from the repository root with `go -C
// cmd/coord/internal/dashboard/browser test ./...` (make unit and make
// test-long do); the 10,000-task page figure with COORD_BENCH=1 (make
// bench). The package itself has no code.
package browser
