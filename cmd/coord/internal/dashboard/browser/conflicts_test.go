package browser_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/rotd/coordination/cmd/coord/internal/dashboard"
	"github.com/rotd/coordination/coord"
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
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	if err := gitrepo.CheckMergeTree(context.Background()); err != nil {
		t.Skip(err)
	}
	repo := t.TempDir()
	git := func(args ...string) string { t.Helper(); return backendtest.Git(t, repo, args...) }
	write := func(content string) {
		if err := os.WriteFile(filepath.Join(repo, "f.txt"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	write("1\n2\n3\n4\n5\n")
	git("add", ".")
	git("commit", "-qm", "init")
	for _, who := range []string{"alice", "bob"} {
		git("checkout", "-q", "-b", "coord/"+who, "main")
		write("1\n2\n" + who + "\n4\n5\n")
		git("commit", "-qam", who)
	}
	git("checkout", "-q", "main")

	root := backendtest.Init(t, backendtest.Options{}).Root
	reg := `{"version": 1, "tasks": [
		{"id": "a", "title": "Parse the flags", "status": "claimed", "claimed_by": "alice", "epoch": 1, "branch": "coord/alice"},
		{"id": "b", "title": "Flags from the environment", "status": "claimed", "claimed_by": "bob", "epoch": 2, "branch": "coord/bob"}]}`
	if err := os.WriteFile(filepath.Join(root, coord.TreeDir, "active_work_registry.json"), []byte(reg), 0o644); err != nil {
		t.Fatal(err)
	}
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
