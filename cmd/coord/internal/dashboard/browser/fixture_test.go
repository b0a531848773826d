package browser_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/cmd/coord/internal/dashboard"
	"github.com/rotd/coordination/cmd/coord/internal/dashboard/dashboardtest"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend/backendtest"
)

// bound is how long a test waits for a condition before it fails: far
// beyond what any condition needs, so that a loaded machine is never
// mistaken for a broken dashboard.
const bound = 45 * time.Second

// token is the dashboard's token when the page may act.
const token = "s3cret-token"

// fixture is a file project, its Service and a dashboard served over it
// (dashboardtest.Serve: the real dashboard, as coord dashboard runs it).
type fixture struct {
	t   testing.TB
	ctx context.Context
	s   *app.Service
	dir string // the coordination directory
	srv *dashboardtest.Served
}

// newFixture opens a fresh project seeded with seed (JSON Lines, "" for
// none) and tasks, config.json replaced by config (its members, without
// braces) when config is not "", and serves a dashboard over it, the
// page's acts wired to the project's app.Supervisor when acts is set.
func newFixture(t testing.TB, opt dashboard.Options, acts bool, config, seed string, tasks ...*coord.Task) *fixture {
	t.Helper()
	if config != "" {
		config = "{" + config + "}\n"
	}
	p := backendtest.NewProject(t, backendtest.Options{Config: config, Seed: seed, Tasks: tasks})
	return serve(t, p, opt, acts)
}

// serve serves a dashboard over the project p.
func serve(t testing.TB, p *backendtest.Project, opt dashboard.Options, acts bool) *fixture {
	t.Helper()
	d := dashboardtest.Serve(t, dashboardtest.Options(opt, p.Service, acts))
	return &fixture{t: t, ctx: d.Ctx, s: p.Service, dir: filepath.Join(p.Root, coord.TreeDir), srv: d}
}

// url is the dashboard's address followed by path.
func (f *fixture) url(path string) string { return f.srv.HTTP.URL + path }

func (f *fixture) claim(agent, id string) *coord.Task {
	f.t.Helper()
	res, err := f.s.Claim(f.ctx, app.ClaimRequest{Agent: coord.Agent{ID: agent}, TaskID: id})
	if err != nil || res.Task == nil {
		f.t.Fatalf("%s claims %s: %v", agent, id, err)
	}
	return res.Task
}

func (f *fixture) logText() string {
	f.t.Helper()
	var b strings.Builder
	if _, err := f.s.LogRead(f.ctx, 0, func(l string) error { b.WriteString(l + "\n"); return nil }); err != nil {
		f.t.Fatal(err)
	}
	return b.String()
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
