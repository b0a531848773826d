package dashboard_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotd/coordination/cmd/coord/internal/dashboard"
	"github.com/rotd/coordination/cmd/coord/internal/dashboard/dashboardtest"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/internal/gitrepo"
	"github.com/rotd/coordination/registry/backend/backendtest"
)

// inFlight is a project whose registry holds tasks a (alice, branch
// coord/alice) and b (bob, coord/bob) at work, and a git repository in
// which their branches change one line of f.txt each (a conflict), served
// by a dashboard. scan records what a conflict scan finds.
type inFlight struct {
	*fixture
	repo string
}

func newInFlight(t *testing.T) *inFlight {
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
	p := backendtest.NewProject(t, backendtest.Options{Root: root})
	d := dashboardtest.Serve(t, dashboardtest.Options(dashboard.Options{}, p.Service, false))
	f := &fixture{t: t, ctx: d.Ctx, s: p.Service, dir: filepath.Join(root, coord.TreeDir), d: d.Server, srv: d.HTTP}
	return &inFlight{fixture: f, repo: repo}
}

func (f *inFlight) scan() app.ConflictsResult {
	f.t.Helper()
	res, err := f.s.Conflicts(f.ctx, gitrepo.NewMerger(gitrepo.New(f.repo), nil))
	if err != nil {
		f.t.Fatal(err)
	}
	return res
}

// TestConflictsShown: the conflicts a scan records appear, without a
// reload, in the conflicts panel (the pair, its agents and its file)
// and as a mark on each held task in the agents panel, and in
// /api/state.json in the shape of coord conflicts --json.
func TestConflictsShown(t *testing.T) {
	f := newInFlight(t)
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	frames := openEvents(t, ctx, f.srv)
	waitFrame(t, frames, "an empty conflicts panel first", func(p map[string]string) bool {
		return strings.Contains(p["p-conflicts"], "No conflict found among the work in flight")
	})
	if res := f.scan(); len(res.New) != 1 {
		t.Fatalf("scan: %+v", res)
	}
	waitFrame(t, frames, "the pair in the conflicts panel", func(p map[string]string) bool {
		c := p["p-conflicts"]
		return strings.Contains(c, `<span class="tid">a</span> (alice) × <span class="tid">b</span> (bob)`) && strings.Contains(c, "f.txt") &&
			strings.Count(p["p-agents"], `class="badge s-conflict"`) == 2
	})
	_, body := f.get("GET", "/api/state.json")
	var st struct {
		Conflicts json.RawMessage `json:"conflicts"`
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	if got := string(st.Conflicts); got != `[{"task":"a","with":"b","files":["f.txt"]}]` {
		t.Errorf("state.json conflicts %s", got)
	}
}
