package browser_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rotd/coordination/cmd/coord/internal/dashboard"
	"github.com/rotd/coordination/cmd/coord/internal/dashboard/dashboardtest"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend"
	"github.com/rotd/coordination/registry/backend/backendtest"
	"github.com/rotd/coordination/registry/nats/hubtest"
)

// findBrowser is the first Chromium-like browser on PATH, or "".
func findBrowser() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chromium-headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// artifacts is where the browser test writes its screenshots:
// $COORD_ARTIFACTS when set (CI keeps that directory), else testdata/out
// beside this file (ignored by git).
func artifacts(t *testing.T) string {
	dir := os.Getenv("COORD_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("testdata", "out")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// startBrowser starts the browser of ctx on an empty page. A browser that
// is on PATH but cannot start here (a snap wrapper in a container, a
// missing library) counts as no browser: the test says skipped, naming
// why, rather than failing for the machine's sake.
func startBrowser(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Skipf("skipped: no chromium that starts (%s: %v)", path, err)
	}
}

// newBrowser starts headless Chromium for the test (skipping it when
// there is none that starts) and returns its context, bounded by 2*bound.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	browser := findBrowser()
	if browser == "" {
		t.Skip("skipped: no chromium (looked for chromium, chromium-browser, google-chrome, chromium-headless-shell on PATH)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser),
		chromedp.WindowSize(1400, 1000),
		chromedp.NoSandbox, // CI runs as root, where Chromium's sandbox refuses to start
		chromedp.DisableGPU,
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(cancelBrowser)
	ctx, cancel := context.WithTimeout(ctx, 2*bound)
	t.Cleanup(cancel)
	startBrowser(t, ctx, browser)
	return ctx
}

// pollText waits (up to bound) until the text of the element with id
// satisfies the JavaScript condition cond, written over a variable named
// s (e.g. `s.indexOf('live') === 0`), and fails the test naming what.
func pollText(t *testing.T, ctx context.Context, id, cond, what string) {
	t.Helper()
	js := `(function () { var s = document.getElementById('` + id + `').textContent; return ` + cond + `; })()`
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(bound), chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('`+id+`').textContent`))
		t.Fatalf("%s: not within %s (#%s reads %q): %v", what, bound, id, text, err)
	}
}

// The page in a real browser (headless Chromium driven over the DevTools
// protocol by chromedp): it loads, its event stream connects, a claim
// made after it loaded appears without a reload, and screenshots of it
// at laptop and phone widths are written for people to look at.
func TestBrowser(t *testing.T) {
	if findBrowser() == "" {
		t.Skip("skipped: no chromium (looked for chromium, chromium-browser, google-chrome, chromium-headless-shell on PATH)")
	}
	f := newFixture(t, dashboard.Options{DoctorEvery: time.Minute}, false, `"review_gate": true, "stale_after": "15m", "sweep_on_claim": false`, "",
		&coord.Task{ID: "1.1", Title: "Parse the config file strictly", Priority: coord.High},
		&coord.Task{ID: "1.2", Title: "Lexer for the query language", Deps: []string{"1.1"}},
		&coord.Task{ID: "1.3", Title: "Write the user guide", ConflictGroup: "docs"},
		&coord.Task{ID: "1.4", Title: "Document the flags", ConflictGroup: "docs"},
		&coord.Task{ID: "1.5", Title: "Release notes", Priority: coord.Low},
		&coord.Task{ID: "1.6", Title: "Wire the HTTP client"},
		&coord.Task{ID: "1.7", Title: "Retry with backoff", Priority: coord.Urgent},
		&coord.Task{ID: "1.8", Title: "Fuzz the parser", Deps: []string{"1.1"}},
		&coord.Task{ID: "1.9", Title: "Benchmarks for the cache"},
		&coord.Task{ID: "2.1", Title: "Rename the config keys", Capability: "go", SkillLevel: coord.Expert},
		&coord.Task{ID: "2.2", Title: "Migrate the CI images"},
		&coord.Task{ID: "2.3", Title: "Cache the module downloads"},
		&coord.Task{ID: "2.4", Title: "Tidy the Makefile", Priority: coord.Low},
	)
	agent := func(id string) coord.Agent { return coord.Agent{ID: id} }
	ref := func(a, id string, task *coord.Task) app.TaskRef {
		return app.TaskRef{Agent: agent(a), TaskID: id, Epoch: task.Epoch}
	}
	for _, id := range []string{"1.7", "1.9", "2.3"} {
		task := f.claim("bob", id)
		if _, err := f.s.Release(f.ctx, ref("bob", id, task), "done"); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"1.7", "1.9"} { // 2.3 stays in review
		if _, err := f.s.Approve(f.ctx, app.ApproveRequest{Agent: "carol", TaskID: id}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.s.AcquireLease(f.ctx, coord.LeaseRequest{Name: "deploy-staging", Holder: "bob", TTL: 45 * time.Second}); err != nil {
		t.Fatal(err)
	}
	// erin claimed and went silent 25 minutes ago: stale, still holding
	// its task (an alert). The heartbeat's mtime is the file engine's.
	f.claim("erin", "2.2")
	old := time.Now().Add(-25 * time.Minute)
	if err := os.Chtimes(filepath.Join(f.dir, "heartbeat", "erin.beat"), old, old); err != nil {
		t.Fatal(err)
	}
	task := f.claim("alice", "1.1")
	if _, err := f.s.Progress(f.ctx, ref("alice", "1.1", task), 60, "strict mode done"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.LockPaths(f.ctx, "alice", []string{"internal/config/parse.go"}, 20*time.Minute); err != nil {
		t.Fatal(err)
	}
	task = f.claim("carol", "1.6")
	if _, err := f.s.Block(f.ctx, ref("carol", "1.6", task), "needs the staging API key from ops"); err != nil {
		t.Fatal(err)
	}
	f.claim("bob", "1.5")
	if err := f.s.Msg(f.ctx, "bob", "taking the release notes next"); err != nil {
		t.Fatal(err)
	}

	ctx := newBrowser(t)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(f.url("/")),
		chromedp.WaitVisible(chromedp.CSS("#p-agents")),
		// the event stream is open and its first event arrived
		chromedp.Poll[chromedp.Void](`document.getElementById('conn').classList.contains('live') && document.body.dataset.seq !== undefined`, chromedp.WithPollingTimeout(bound)),
		chromedp.Evaluate[chromedp.Void](`window.coordNoReload = 1`),
	); err != nil {
		t.Fatalf("the page did not load and go live: %v", err)
	}

	// Throughput counts the done tasks (1.7 and 1.9, approved), not 2.3,
	// which waits in review, and says what done means with the gate on.
	pollText(t, ctx, "p-thru", `s.indexOf('done last 24 h2') >= 0 && s.indexOf('Done means approved by a reviewer (the review gate is on)') >= 0 && s.indexOf('1 task released in this window waits in review and is not counted') >= 0`,
		"the throughput panel counting 2 done and 1 in review apart")
	// erin is stale by the project's stale_after (15m), and the page says
	// so; when the project's stale_after changes, the page follows it
	// without a reload.
	pollText(t, ctx, "p-agents", `s.indexOf("stale after 15m (the project's stale_after)") >= 0`, "the agents panel naming the project's stale_after")
	pollText(t, ctx, "p-alerts", `s.indexOf('agent erin is stale') >= 0`, "erin's stale alert")
	if err := os.WriteFile(filepath.Join(f.dir, "config.json"), []byte(`{"review_gate": true, "stale_after": "30m", "sweep_on_claim": false}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pollText(t, ctx, "p-alerts", `s.indexOf('agent erin is stale') < 0`, "erin's alert gone once stale_after is 30m")
	pollText(t, ctx, "p-agents", `s.indexOf("stale after 30m (the project's stale_after)") >= 0`, "the agents panel following stale_after to 30m")
	if err := os.WriteFile(filepath.Join(f.dir, "config.json"), []byte(`{"review_gate": true, "stale_after": "15m", "sweep_on_claim": false}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pollText(t, ctx, "p-alerts", `s.indexOf('agent erin is stale') >= 0`, "erin's stale alert back at stale_after 15m")

	claimed := time.Now()
	f.claim("dora", "1.3")
	if err := chromedp.Do(ctx,
		chromedp.Poll[chromedp.Void](`(function () {
			var a = document.getElementById('p-agents').textContent;
			return a.indexOf('dora') >= 0 && a.indexOf('Write the user guide') >= 0;
		})()`, chromedp.WithPollingTimeout(bound), chromedp.WithPollingInterval(20*time.Millisecond)),
	); err != nil {
		t.Fatalf("the claim never appeared on the page (within %s): %v", bound, err)
	}
	t.Logf("the claim appeared on the page %s after it was made (without a reload)", time.Since(claimed).Round(time.Millisecond))
	if same, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.coordNoReload === 1`)); err != nil || !same {
		t.Fatalf("the page was reloaded to show the claim (%v)", err)
	}

	// The connection drops (a laptop sleeps, a proxy restarts): the page
	// says so, reconnects by itself and shows what happened meanwhile.
	f.srv.HTTP.CloseClientConnections()
	dropped := time.Now()
	f.claim("frank", "2.4")
	if err := chromedp.Do(ctx,
		chromedp.Poll[chromedp.Void](`document.getElementById('p-agents').textContent.indexOf('Tidy the Makefile') >= 0 && document.getElementById('conn').classList.contains('live')`,
			chromedp.WithPollingTimeout(bound), chromedp.WithPollingInterval(20*time.Millisecond)),
	); err != nil {
		t.Fatalf("after the connection dropped, the page never showed the next claim (within %s): %v", bound, err)
	}
	t.Logf("the connection dropped; the page was live again and showed the next claim %s later", time.Since(dropped).Round(time.Millisecond))
	if same, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.coordNoReload === 1`)); err != nil || !same {
		t.Fatalf("the page was reloaded to reconnect (%v)", err)
	}

	dir := artifacts(t)
	laptop, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile),
		chromedp.Sleep(200*time.Millisecond), // layout after the resize; the picture is not asserted
	); err != nil {
		t.Fatal(err)
	}
	phone, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"dashboard.png": laptop, "dashboard-phone.png": phone} {
		if len(b) == 0 {
			t.Fatalf("%s: empty screenshot", name)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", filepath.Join(dir, name))
	}
}

// TestBrowserBackendDown: a page open on a dashboard over a NATS hub. The
// hub stops: without a reload, the badge stops saying live and says why,
// naming the hub, and the alerts say that doctor could not run. The hub
// comes back (and an agent beats): live again. The dashboard itself goes away (its event
// stream fails): the badge says the page is not live either.
func TestBrowserBackendDown(t *testing.T) {
	if findBrowser() == "" {
		t.Skip("skipped: no chromium (looked for chromium, chromium-browser, google-chrome, chromium-headless-shell on PATH)")
	}
	bctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	h := hubtest.StartAt(t, dir, "127.0.0.1:0")
	hostport := strings.TrimPrefix(h.URL(), "nats://")
	url := h.URL() + "/browser"
	if _, _, err := backend.Init(bctx, backend.Options{URL: url}); err != nil {
		t.Fatal(err)
	}
	f := serve(t, backendtest.NewProject(t, backendtest.Options{URL: url}), dashboard.Options{DoctorEvery: 200 * time.Millisecond, StallAfter: time.Second}, false)
	srv := f.srv.HTTP
	agent := backendtest.NewProject(t, backendtest.Options{URL: url}).Backend // an agent's own connection

	ctx := newBrowser(t)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.Evaluate[chromedp.Void](`window.coordNoReload = 1`),
	); err != nil {
		t.Fatal(err)
	}
	pollText(t, ctx, "conn", `s === 'live'`, "the badge saying live")
	pollText(t, ctx, "p-alerts", `s.indexOf('found nothing') >= 0`, "doctor's check shown as run")

	h.Shutdown()
	stopped := time.Now()
	pollText(t, ctx, "conn", `s.indexOf('not live: ') === 0 && s.indexOf('`+hostport+`') >= 0`, "the badge saying not live, naming the hub")
	t.Logf("the badge said not live %s after the hub stopped", time.Since(stopped).Round(time.Millisecond))
	pollText(t, ctx, "p-alerts", `s.indexOf('cannot read the project') >= 0 && s.indexOf('doctor could not run') >= 0 && s.indexOf('found nothing') < 0`,
		"the alerts saying the project cannot be read and doctor could not run")
	if shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil && len(shot) > 0 {
		name := filepath.Join(artifacts(t), "dashboard-hub-down.png")
		if err := os.WriteFile(name, shot, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", name)
	}

	hubtest.StartAt(t, dir, hostport)
	if err := agent.Beats().Beat(bctx, "alice", nil); err != nil { // as agents do (see TestBackendDownNATS)
		t.Fatal(err)
	}
	pollText(t, ctx, "conn", `s === 'live'`, "the badge live again once the hub is back")
	pollText(t, ctx, "p-alerts", `s.indexOf('found nothing') >= 0`, "doctor's check run again once the hub is back")

	srv.CloseClientConnections()
	srv.Close()
	pollText(t, ctx, "conn", `s.indexOf('not live: no connection to the dashboard') === 0`, "the badge saying not live once the dashboard is gone")
	if same, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.coordNoReload === 1`)); err != nil || !same {
		t.Fatalf("the page was reloaded (%v)", err)
	}
}

// TestBrowserLoad10k is a figure, not a test (COORD_BENCH=1, make bench):
// how long Chromium takes to load the page of a 10,000-task project, from
// navigation start to the load event and to the first event of the
// stream, as the browser's own navigation timing reports it.
func TestBrowserLoad10k(t *testing.T) {
	if os.Getenv("COORD_BENCH") == "" {
		t.Skip("a figure for make bench (COORD_BENCH=1)")
	}
	browser := findBrowser()
	if browser == "" {
		t.Skip("skipped: no chromium")
	}
	f := newFixture(t, dashboard.Options{}, false, "", "", dashboardtest.Tasks(10000)...)
	for i := 0; i < 20; i++ {
		res, err := f.s.Claim(f.ctx, app.ClaimRequest{Agent: coord.Agent{ID: fmt.Sprintf("agent%d", i), Caps: []string{"go"}}})
		if err != nil || res.Task == nil {
			t.Fatalf("claim: %v", err)
		}
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.WindowSize(1400, 1000), chromedp.NoSandbox, chromedp.DisableGPU)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	ctx, cancel := context.WithTimeout(ctx, 2*bound)
	defer cancel()
	startBrowser(t, ctx, browser)
	for round := 0; round < 3; round++ {
		if err := chromedp.Do(ctx,
			chromedp.Navigate(f.url("/")),
			chromedp.Poll[chromedp.Void](`document.body.dataset.seq !== undefined`, chromedp.WithPollingTimeout(bound), chromedp.WithPollingInterval(5*time.Millisecond)),
		); err != nil {
			t.Fatal(err)
		}
		ms, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(function () {
			var n = performance.getEntriesByType('navigation')[0];
			return [n.domContentLoadedEventEnd, n.loadEventEnd, Number(document.body.dataset.at) - performance.timeOrigin, n.transferSize];
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("10,000 tasks, load %d: DOMContentLoaded %.0f ms, load %.0f ms, first live event %.0f ms after navigation start; page %.0f bytes", round+1, ms[0], ms[1], ms[2], ms[3])
	}
}
