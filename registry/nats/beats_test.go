package nats_test

import (
	"context"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend/backendtest"
	coordnats "github.com/rotd/coordination/registry/nats"
	"github.com/rotd/coordination/registry/nats/hubtest"
)

// Heartbeats are kept in memory, so a hub restart loses them. A live
// holder must not look stale sooner for it: after the restart an agent
// without a heartbeat counts as seen when the loss was noticed, not at
// its old claimed_at; a dead one still goes stale afterwards, and the
// engine makes the lost streams again by itself.
func TestBeatsLostInRestart(t *testing.T) {
	dir := t.TempDir()
	h := hubtest.StartAt(t, dir, "127.0.0.1:0")
	url := newNamespace(t, h, "lost")
	ctx := context.Background()
	b := open(t, url, coordnats.Options{})
	s := service(t, b)
	seed(t, s, "T1")
	if _, err := claimTask(s, ctx, app.ClaimRequest{Agent: coord.Agent{ID: "alive"}}); err != nil {
		t.Fatal(err)
	}
	// The claim is a day old: only its heartbeat keeps it alive.
	err := b.Tasks().Update(ctx, func(tx *coord.Txn) error {
		tk := tx.Task("T1")
		tk.ClaimedAt = coord.FormatTime(tx.Now.Add(-24 * time.Hour))
		tk.Dirty = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	stale := func(s *app.Service, timeout time.Duration) []coord.Stale {
		t.Helper()
		st, err := s.Sweep(ctx, app.SweepRequest{Timeout: timeout, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := stale(s, time.Hour); len(st) != 0 {
		t.Fatalf("before the restart, with a fresh heartbeat: %+v", st)
	}
	h.Shutdown()
	hubtest.StartAt(t, dir, hostPort(h))
	s2 := service(t, open(t, url, coordnats.Options{}))
	if st := stale(s2, time.Hour); len(st) != 0 {
		t.Fatalf("after the restart lost the heartbeat, a holder claimed a day ago was judged stale at once: %+v", st)
	}
	// A holder that never beats again goes stale after the timeout,
	// counted from when the loss was noticed.
	backendtest.Wait(t, "the silent holder to go stale", func() bool { return len(stale(s2, 200*time.Millisecond)) == 1 })
	// The streams kept in memory are back: a claim beats and commits.
	seed(t, s2, "T2")
	if tk, err := claimTask(s2, ctx, app.ClaimRequest{Agent: coord.Agent{ID: "new"}}); err != nil || tk == nil || tk.ID != "T2" {
		t.Fatalf("claim after the restart: %+v %v", tk, err)
	}
	seen, _, err := b.Beats().LastSeen(ctx, []string{"new"})
	if err != nil || seen["new"].IsZero() {
		t.Fatalf("heartbeat after the restart: %v %v", seen, err)
	}
}
