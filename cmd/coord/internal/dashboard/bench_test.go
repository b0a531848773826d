package dashboard_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rotd/coordination/cmd/coord/internal/dashboard"
	"github.com/rotd/coordination/cmd/coord/internal/dashboard/dashboardtest"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// BenchmarkDashboard measures, at 1,000 and 10,000 tasks: build (what
// every change costs the dashboard: read the state through app.Reader,
// digest it, render the panels), page (GET / from the current snapshot),
// state.json (GET /api/state.json from the current snapshot, encoded once
// per snapshot) and state.json-fresh (a build and then the first GET of
// its JSON: what a script asking right after a change waits for).
func BenchmarkDashboard(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		f := newFixture(b, dashboard.Options{}, dashboardtest.Tasks(n)...)
		for i := 0; i < 20; i++ { // some agents at work, some finished
			agent := fmt.Sprintf("agent%d", i)
			res, err := f.s.Claim(f.ctx, app.ClaimRequest{Agent: coord.Agent{ID: agent, Caps: []string{"go"}}})
			if err != nil || res.Task == nil {
				b.Fatalf("claim: %v", err)
			}
			if i%2 == 0 {
				if _, err := f.s.Release(f.ctx, app.TaskRef{Agent: coord.Agent{ID: agent}, TaskID: res.Task.ID, Epoch: res.Task.Epoch}, "done"); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := f.d.Build(f.ctx); err != nil {
			b.Fatal(err)
		}
		h := f.d.Handler()
		get := func(b *testing.B, path string) int {
			req := httptest.NewRequest("GET", path, nil)
			req.Host = "127.0.0.1:7777"
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Fatalf("GET %s = %d", path, w.Code)
			}
			return w.Body.Len()
		}
		b.Run(fmt.Sprintf("tasks=%d/build", n), func(b *testing.B) {
			for b.Loop() {
				if err := f.d.Build(f.ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("tasks=%d/page", n), func(b *testing.B) {
			var size int
			for b.Loop() {
				size = get(b, "/")
			}
			b.ReportMetric(float64(size), "bytes")
		})
		b.Run(fmt.Sprintf("tasks=%d/state.json", n), func(b *testing.B) {
			var size int
			for b.Loop() {
				size = get(b, "/api/state.json")
			}
			b.ReportMetric(float64(size), "bytes")
		})
		b.Run(fmt.Sprintf("tasks=%d/state.json-fresh", n), func(b *testing.B) {
			for b.Loop() {
				if err := f.d.Build(f.ctx); err != nil {
					b.Fatal(err)
				}
				get(b, "/api/state.json")
			}
		})
	}
}
