// Package dashboardtest serves a dashboard for tests outside package
// dashboard, as `coord dashboard` serves one: dashboard.New over the
// options given, its first snapshot built, its builder (Server.Run)
// going until the test ends, its Handler on a loopback httptest server.
// The dashboard's own external tests use it, and so do its browser tests
// (module cmd/coord/internal/dashboard/browser, kept apart so that the
// product's go.mod does not require chromedp).
//
// It exports nothing of the dashboard's internals: a test sees the
// dashboard as a user does, through its pages, its event stream and its
// JSON. It names no storage package either (cmd/coord's layout test):
// the caller opens the project (registry/backend/backendtest does) and
// passes its app.Reader and TaskJSON in the options.
package dashboardtest

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/rotd/coordination/cmd/coord/internal/dashboard"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// Served is one dashboard being served to a test.
type Served struct {
	// Ctx ends when the test does; the builder runs under it.
	Ctx    context.Context
	Server *dashboard.Server
	// HTTP serves Server.Handler on loopback (HTTP.URL is the page's
	// origin); closing its client connections is how a test drops a
	// page's event stream.
	HTTP *httptest.Server
}

// Serve builds a dashboard over opt (opt.Reader and opt.TaskJSON set by
// the caller), builds its first snapshot (failing t if the project cannot
// be read), starts its builder unless t is a benchmark (a benchmark calls
// Build when it means to) and serves it. When the test ends the server's
// connections are closed, the server stopped and the builder waited for.
func Serve(t testing.TB, opt dashboard.Options) *Served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d := dashboard.New(opt)
	if err := d.Build(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	if _, bench := t.(*testing.B); bench {
		close(done)
	} else {
		go func() { defer close(done); d.Run(ctx) }()
	}
	srv := httptest.NewServer(d.Handler())
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		cancel()
		<-done
	})
	return &Served{Ctx: ctx, Server: d, HTTP: srv}
}

// Options is opt reading s, as `coord dashboard` wires it: s's Reader and
// TaskJSON, and s's Supervisor as the page's acts when acts is set.
func Options(opt dashboard.Options, s *app.Service, acts bool) dashboard.Options {
	opt.Reader, opt.TaskJSON = s.Reader(), s.TaskJSON
	if acts {
		opt.Acts = s.Supervisor()
	}
	return opt
}

// Tasks is n tasks of a big project, the benchmarks' and the 10,000-task
// page figure's: ids t00000 on, priorities in turn, one in three
// depending on the task before it, one in ten in one of 50 conflict
// groups, one in seven needing the capability go.
func Tasks(n int) []*coord.Task {
	prio := []coord.Priority{coord.Low, coord.Medium, coord.High, coord.Urgent}
	tasks := make([]*coord.Task, n)
	for i := range tasks {
		t := &coord.Task{ID: fmt.Sprintf("t%05d", i), Title: fmt.Sprintf("task number %d of the big project", i), Priority: prio[i%4]}
		if i%3 == 1 {
			t.Deps = []string{fmt.Sprintf("t%05d", i-1)}
		}
		if i%10 == 0 {
			t.ConflictGroup = fmt.Sprintf("g%d", i%50)
		}
		if i%7 == 0 {
			t.Capability = "go"
		}
		tasks[i] = t
	}
	return tasks
}
