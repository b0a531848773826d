package dashboard_test

import (
	"context"
	"encoding/json"
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
	repo, root := backendtest.InFlightConflict(t)
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
