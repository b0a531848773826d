package heartbeat

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	rotdtemplate "github.com/rotd/coord"
	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/registry/file"
)

// between runs a function after the sweep's lock-free judgement and
// before its re-check under the registry lock: the window in which an
// agent may revive or its task be reclaimed.
type between struct {
	*file.Store
	hook func()
}

func (b *between) Update(ctx context.Context, fn func(*coord.Txn) error) error {
	if b.hook != nil {
		b.hook()
		b.hook = nil
	}
	return b.Store.Update(ctx, fn)
}

type fixture struct {
	store *file.Store
	beats *Dir
	now   time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".rotd", "coordination")
	if _, err := file.Init(dir, rotdtemplate.Coordination()); err != nil {
		t.Fatal(err)
	}
	s, err := file.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f := &fixture{store: s, now: time.Now().Truncate(time.Second)}
	s.Clock = func() time.Time { return f.now }
	f.beats = &Dir{Tree: s.Tree, Clock: s.Clock}
	err = s.Update(context.Background(), func(tx *coord.Txn) error {
		tx.Tasks = append(tx.Tasks, &coord.Task{ID: "t1", Status: coord.Unclaimed, Dirty: true}, &coord.Task{ID: "t2", Status: coord.Unclaimed, Dirty: true})
		tx.Index()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) claim(t *testing.T, agent, id string) int64 {
	t.Helper()
	var epoch int64
	err := f.store.Update(context.Background(), func(tx *coord.Txn) error {
		task, err := tx.Claim(coord.Agent{ID: agent}, coord.ClaimOptions{TaskID: id})
		if err == nil {
			epoch = task.Epoch
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.beats.Beat(agent, nil); err != nil {
		t.Fatal(err)
	}
	return epoch
}

func (f *fixture) sweeper(b coord.Updater) *Sweeper {
	return &Sweeper{Backend: b, Beats: f.beats, Timeout: 10 * time.Minute, Policy: coord.Requeue, Clock: func() time.Time { return f.now }}
}

func (f *fixture) status(t *testing.T, id string) (coord.Status, string) {
	t.Helper()
	var st coord.Status
	var by string
	f.store.View(context.Background(), func(tx *coord.Txn) error {
		st, by = tx.Task(id).Status, tx.Task(id).ClaimedBy
		return nil
	})
	return st, by
}

func TestSweepFreesOnlyStale(t *testing.T) {
	f := newFixture(t)
	f.claim(t, "dead", "t1")
	f.claim(t, "alive", "t2")
	f.now = f.now.Add(20 * time.Minute)
	f.beats.Beat("alive", nil) // mtime = f.now (the Dir clock)
	freed, err := f.sweeper(f.store).Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(freed) != 1 || freed[0].TaskID != "t1" || freed[0].Agent != "dead" || freed[0].Status != coord.Unclaimed {
		t.Fatalf("freed %+v", freed)
	}
	if st, _ := f.status(t, "t2"); st != coord.Claimed {
		t.Fatalf("live agent's task is %s", st)
	}
}

// The agent beats between judgement and re-check: its lock survives.
func TestSweepRechecksRevivedAgent(t *testing.T) {
	f := newFixture(t)
	f.claim(t, "slow", "t1")
	f.now = f.now.Add(20 * time.Minute)
	b := &between{Store: f.store, hook: func() { f.beats.Beat("slow", nil) }}
	freed, err := f.sweeper(b).Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(freed) != 0 {
		t.Fatalf("freed a revived agent's lock: %+v", freed)
	}
	if st, by := f.status(t, "t1"); st != coord.Claimed || by != "slow" {
		t.Fatalf("t1 is %s by %q", st, by)
	}
}

// The task is freed and reclaimed by the same agent (new epoch) between
// judgement and re-check: the new lock is not the one judged stale.
func TestSweepRechecksEpoch(t *testing.T) {
	f := newFixture(t)
	f.claim(t, "a", "t1")
	f.now = f.now.Add(20 * time.Minute)
	var newEpoch int64
	b := &between{Store: f.store, hook: func() {
		// Someone else's sweep freed it; the agent came back and reclaimed,
		// but its heartbeat file is old again by the time we re-check.
		f.store.Update(context.Background(), func(tx *coord.Txn) error {
			task := tx.Task("t1")
			tx.FreeStale(coord.LockRef{TaskID: "t1", Agent: "a", Epoch: task.Epoch}, coord.Requeue)
			n, err := tx.Claim(coord.Agent{ID: "a"}, coord.ClaimOptions{TaskID: "t1"})
			newEpoch = n.Epoch
			return err
		})
	}}
	freed, err := f.sweeper(b).Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(freed) != 0 {
		t.Fatalf("freed a lock with another epoch: %+v", freed)
	}
	if st, _ := f.status(t, "t1"); st != coord.Claimed || newEpoch < 2 {
		t.Fatalf("t1 is %s at epoch %d", st, newEpoch)
	}
}

// A heartbeat in the future cannot pin a lock: the sweep clamps it to
// now, so it ages from there.
func TestSweepClampsFutureHeartbeat(t *testing.T) {
	f := newFixture(t)
	f.claim(t, "skewed", "t1")
	future := f.now.Add(24 * time.Hour)
	if err := f.store.Tree.Chtimes("heartbeat/skewed.beat", future); err != nil {
		t.Fatal(err)
	}
	if freed, _ := f.sweeper(f.store).Sweep(context.Background()); len(freed) != 0 {
		t.Fatalf("freed at once: %+v", freed)
	}
	mt, _, _ := f.beats.MTime("skewed")
	if !mt.Equal(f.now) {
		t.Fatalf("future mtime %v not clamped to %v", mt, f.now)
	}
	f.now = f.now.Add(11 * time.Minute)
	freed, err := f.sweeper(f.store).Sweep(context.Background())
	if err != nil || len(freed) != 1 {
		t.Fatalf("after the timeout from the clamp: freed %+v, %v", freed, err)
	}
}

// With no heartbeat file, a lock ages from its claimed_at.
func TestSweepWithoutHeartbeatAgesFromSince(t *testing.T) {
	f := newFixture(t)
	f.claim(t, "ghost", "t1")
	if err := f.store.Tree.Remove("heartbeat/ghost.beat"); err != nil {
		t.Fatal(err)
	}
	f.now = f.now.Add(5 * time.Minute)
	if freed, _ := f.sweeper(f.store).Sweep(context.Background()); len(freed) != 0 {
		t.Fatalf("freed a 5-minute-old claim: %+v", freed)
	}
	f.now = f.now.Add(6 * time.Minute)
	if freed, _ := f.sweeper(f.store).Sweep(context.Background()); len(freed) != 1 {
		t.Fatalf("an 11-minute-old claim without heartbeat was not freed: %+v", freed)
	}
}

// TestClockSkew: heartbeat mtimes off by small and large amounts around
// a 30 s timeout. No live agent is swept, a dead one is freed within the
// timeout plus one sweep, and a future mtime cannot pin a lock.
//
// Broken build this fails against: the sweep without clamping future
// mtimes (the +29s, +4m22s and +24h cases are never freed).
func TestClockSkew(t *testing.T) {
	cases := []struct {
		offset time.Duration // mtime relative to the sweeper's clock
		freed  bool
	}{
		{-4 * time.Millisecond, false},
		{+4 * time.Millisecond, false},
		{-time.Second, false},
		{+time.Second, false},
		{-29 * time.Second, false},
		{-31 * time.Second, true},
		{-262 * time.Second, true},
		{+29 * time.Second, false},
		{+262 * time.Second, false}, // clamped to now: ages from here
		{+24 * time.Hour, false},
	}
	for _, c := range cases {
		t.Run(c.offset.String(), func(t *testing.T) {
			f := newFixture(t)
			f.claim(t, "a", "t1")
			if err := f.store.Tree.Chtimes("heartbeat/a.beat", f.now.Add(c.offset)); err != nil {
				t.Fatal(err)
			}
			sw := f.sweeper(f.store)
			sw.Timeout = 30 * time.Second
			freed, err := sw.Sweep(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if (len(freed) == 1) != c.freed {
				t.Fatalf("mtime %v from now: freed %+v, want freed=%v", c.offset, freed, c.freed)
			}
			if c.freed {
				return
			}
			// The agent dies now. Its last beat counts as no later than this
			// sweep (a future mtime was clamped to it), so one sweep after
			// the timeout frees it, whatever the skew.
			f.now = f.now.Add(31 * time.Second)
			freed, err = sw.Sweep(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(freed) != 1 {
				t.Fatalf("mtime offset %v: dead for the timeout, still not freed", c.offset)
			}
		})
	}
}

// TestSweeperRaces, scenario 6: a sweeper, a reviving agent and a new
// claimer race on one task, each through its own store (own descriptors,
// so the registry flock really excludes them). The agent revives inside
// the registry flock and records whether it still held its lock then; if
// it did, no later sweep may free that lock (its heartbeat is fresh), so
// the lock must still be there when the sweep returns. Zero live locks
// removed.
//
// Broken build this fails against: Sweeper.Sweep trusting its lock-free
// judgement (no re-check of the heartbeat under the flock).
func TestSweeperRaces(t *testing.T) {
	iters := 300
	if os.Getenv("COORD_STRESS") != "" {
		iters = 10000
	}
	f := newFixture(t)
	open := func() *file.Store {
		s, err := file.Open(f.store.Tree.Dir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	agentStore, sweepStore, claimStore := open(), open(), open()
	timeout := 10 * time.Minute
	base := time.Now()
	clock := func() time.Time { return base }
	agentStore.Clock, sweepStore.Clock, claimStore.Clock = clock, clock, clock
	beats := &Dir{Tree: agentStore.Tree, Clock: clock}
	ctx := context.Background()
	violations := 0
	for i := range iters {
		// The agent holds t1 with a heartbeat that looks dead.
		var epoch int64
		err := agentStore.Update(ctx, func(tx *coord.Txn) error {
			task := tx.Task("t1")
			if task.Status != coord.Unclaimed {
				task.Status, task.ClaimedBy, task.Dirty = coord.Unclaimed, "", true
			}
			c, err := tx.Claim(coord.Agent{ID: "agent"}, coord.ClaimOptions{TaskID: "t1"})
			if err == nil {
				epoch = c.Epoch
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		beats.Beat("agent", nil)
		agentStore.Tree.Chtimes("heartbeat/agent.beat", base.Add(-2*timeout))

		var revivedHolding bool
		var freed []Freed
		done := make(chan struct{}, 3)
		go func() { // the agent revives under the flock
			agentStore.Update(ctx, func(tx *coord.Txn) error {
				task := tx.Task("t1")
				revivedHolding = task.ClaimedBy == "agent" && task.Epoch == epoch && task.Status == coord.Claimed
				return agentStore.Tree.Chtimes("heartbeat/agent.beat", base)
			})
			done <- struct{}{}
		}()
		go func() { // the sweeper
			sw := &Sweeper{Backend: sweepStore, Beats: &Dir{Tree: sweepStore.Tree, Clock: clock}, Timeout: timeout, Policy: coord.Requeue, Clock: clock}
			freed, _ = sw.Sweep(ctx)
			done <- struct{}{}
		}()
		go func() { // a new claimer
			claimStore.Update(ctx, func(tx *coord.Txn) error {
				_, err := tx.Claim(coord.Agent{ID: "newcomer"}, coord.ClaimOptions{TaskID: "t1"})
				if coord.CodeOf(err) == coord.CodeConflict {
					return nil
				}
				return err
			})
			done <- struct{}{}
		}()
		<-done
		<-done
		<-done
		if revivedHolding && len(freed) > 0 {
			violations++
			t.Errorf("iteration %d: the sweep freed a lock whose agent had revived while holding it", i)
		}
	}
	if violations > 0 {
		t.Fatalf("%d live locks removed in %d iterations", violations, iters)
	}
}
