package browser_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/rotd/coordination/cmd/coord/internal/dashboard"
	"github.com/rotd/coordination/internal/gitrepo"
	"github.com/rotd/coordination/registry/backend/backendtest"
)

// newInFlight is a project whose registry holds tasks a (alice, branch
// coord/alice) and b (bob, coord/bob) at work, and a git repository in
// which their branches change one line of f.txt each (a conflict), served
// by a dashboard; scan runs a conflict scan of the repository, as
// coord conflicts does. (TestConflictsShown in package dashboard checks
// the same scenario through the event stream and state.json.)
func newInFlight(t *testing.T) (f *fixture, scan func()) {
	t.Helper()
	repo, root := backendtest.InFlightConflict(t)
	f = serve(t, backendtest.NewProject(t, backendtest.Options{Root: root}), dashboard.Options{}, false)
	return f, func() {
		t.Helper()
		res, err := f.s.Conflicts(f.ctx, gitrepo.NewMerger(gitrepo.New(repo), nil))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.New) != 1 {
			t.Fatalf("scan: %+v", res)
		}
	}
}

// TestBrowserConflicts: a page open in a real browser shows a conflict
// a scan finds after the page loaded, without a reload.
func TestBrowserConflicts(t *testing.T) {
	if findBrowser() == "" {
		t.Skip("skipped: no chromium (looked for chromium, chromium-browser, google-chrome, chromium-headless-shell on PATH)")
	}
	f, scan := newInFlight(t)
	ctx := newBrowser(t)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(f.url("/")),
		chromedp.WaitVisible(chromedp.CSS("#p-conflicts")),
		chromedp.Poll[chromedp.Void](`document.getElementById('conn').classList.contains('live') && document.body.dataset.seq !== undefined`, chromedp.WithPollingTimeout(bound)),
		chromedp.Evaluate[chromedp.Void](`window.coordNoReload = 1`),
	); err != nil {
		t.Fatalf("the page did not load and go live: %v", err)
	}
	pollText(t, ctx, "p-conflicts", `s.indexOf('No conflict found') >= 0`, "the empty conflicts panel")
	scan()
	pollText(t, ctx, "p-conflicts", `s.indexOf('a (alice) × b (bob)') >= 0 && s.indexOf('f.txt') >= 0`, "the conflict of a and b")
	pollText(t, ctx, "p-agents", `s.indexOf('conflicts') >= 0`, "the held tasks marked")
	if same, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.coordNoReload === 1`)); err != nil || !same {
		t.Fatalf("the page was reloaded to show the conflict (%v)", err)
	}
}
