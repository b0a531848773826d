package app_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend/backendtest"
)

// counted counts the transactions and reads run through it, and can make
// every beat fail (a heartbeat store that cannot be written).
type counted struct {
	coord.Backend
	updates, views, beats atomic.Int64
	attempts              atomic.Int64 // every beat, failed or not
	failBeats             atomic.Bool
}

func (c *counted) Tasks() coord.TaskStore { return countedTasks{c.Backend.Tasks(), c} }
func (c *counted) Beats() coord.BeatStore { return countedBeats{c.Backend.Beats(), c} }

type countedTasks struct {
	coord.TaskStore
	c *counted
}

func (t countedTasks) Update(ctx context.Context, fn func(*coord.Txn) error) error {
	t.c.updates.Add(1)
	return t.TaskStore.Update(ctx, fn)
}

func (t countedTasks) View(ctx context.Context, fn func(*coord.Txn) error) error {
	t.c.views.Add(1)
	return t.TaskStore.View(ctx, fn)
}

type countedBeats struct {
	coord.BeatStore
	c *counted
}

var errNoSpace = errors.New("write heartbeat: no space left on device")

func (b countedBeats) Beat(ctx context.Context, agent string, info *coord.BeatInfo) error {
	b.c.attempts.Add(1)
	if b.c.failBeats.Load() {
		return coord.Wrap(coord.CodeIO, errNoSpace, "beat")
	}
	b.c.beats.Add(1)
	return b.BeatStore.Beat(ctx, agent, info)
}

func newCounted(t *testing.T, config string) (*project, *counted) {
	var c *counted
	p := openProject(t, config, func(b coord.Backend) coord.Backend {
		c = &counted{Backend: b}
		return c
	})
	return p, c
}

// TestNextWaitsWithoutSpinning: with nothing eligible but work left (the
// only open task blocked, another waiting for it), Next claims once and
// then waits, woken by change notification or the slow poll: however many
// times it looks, it makes no further claim. The README's loop once ran
// 203 claims in 5 s here. When the blocked task is finished, the waiting
// Next takes the task that was waiting for it.
func TestNextWaitsWithoutSpinning(t *testing.T) {
	p, c := newCounted(t, "")
	p.seed(&coord.Task{ID: "stuck"}, &coord.Task{ID: "after", Deps: []string{"stuck"}})
	x := coord.Agent{ID: "x"}
	held := p.claim("x", "stuck")
	ref := app.TaskRef{Agent: x, TaskID: "stuck", Epoch: held.Epoch}
	if _, err := p.s.Block(p.ctx, ref, "waiting for a decision"); err != nil {
		t.Fatal(err)
	}
	updates, views := c.updates.Load(), c.views.Load()
	type result struct {
		res app.ClaimResult
		err error
	}
	got := make(chan result, 1)
	ctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	go func() {
		res, err := p.s.Next(ctx, app.NextRequest{Agent: coord.Agent{ID: "w"}})
		got <- result{res, err}
	}()
	// Five looks after the claim: at least four of them the slow poll.
	backendtest.Wait(t, "five looks", func() bool { return c.views.Load()-views >= 5 })
	if n := c.updates.Load() - updates; n != 1 {
		t.Fatalf("%d claims while nothing was eligible, want 1", n)
	}
	select {
	case r := <-got:
		t.Fatalf("Next returned with nothing eligible: %+v, %v", r.res, r.err)
	default:
	}
	if _, err := p.s.Unblock(p.ctx, ref); err != nil {
		t.Fatal(err)
	}
	again := p.claim("x", "stuck") // back in the pool, its owner first
	if _, err := p.s.Release(p.ctx, app.TaskRef{Agent: x, TaskID: "stuck", Epoch: again.Epoch}, "decided"); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		if r.err != nil || r.res.Task == nil || r.res.Task.ID != "after" || r.res.Task.ClaimedBy != "w" || r.res.Since.IsZero() {
			t.Fatalf("Next: %+v, %v; want after, claimed by w", r.res, r.err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Next did not take the task that became eligible")
	}
}

// TestNextTimeoutAndDrained: a bounded Next gives up with CodeConflict
// (exit 3) naming the agent; with no work left it says drained at once.
func TestNextTimeoutAndDrained(t *testing.T) {
	p, _ := newCounted(t, "")
	p.seed(&coord.Task{ID: "held"})
	p.claim("x", "held")
	_, err := p.s.Next(p.ctx, app.NextRequest{Agent: coord.Agent{ID: "w"}, Timeout: 200 * time.Millisecond})
	if coord.CodeOf(err) != coord.CodeConflict || !strings.Contains(err.Error(), "timed out after 200ms: no task became eligible for w") {
		t.Fatalf("bounded Next: %v", err)
	}
	p.s.Release(p.ctx, app.TaskRef{Agent: coord.Agent{ID: "x"}, TaskID: "held", Epoch: coord.NoEpoch}, "")
	res, err := p.s.Next(p.ctx, app.NextRequest{Agent: coord.Agent{ID: "w"}})
	if err != nil || res.Task != nil || !res.Drained {
		t.Fatalf("Next on a drained project: %+v, %v", res, err)
	}
	ctx, cancel := context.WithCancel(p.ctx)
	cancel()
	p.seed(&coord.Task{ID: "more"})
	p.claim("x", "more")
	if _, err := p.s.Next(ctx, app.NextRequest{Agent: coord.Agent{ID: "w"}}); !errors.Is(err, coord.ErrInterrupted) {
		t.Fatalf("cancelled Next: %v", err)
	}
}

// TestWorkerTakesUpItsOwnWork: a worker takes up work of its own before
// new work: a task the agent holds claimed (left by an earlier process
// of the same agent: a restart resumes it), a task a reviewer rejected
// back to it (same epoch, with the notes), and a task it left blocked
// once that task is unblocked (back in the pool, the owner first).
func TestWorkerTakesUpItsOwnWork(t *testing.T) {
	p, _ := newCounted(t, `"review_gate": true`)
	p.seed(&coord.Task{ID: "a"}, &coord.Task{ID: "b"}, &coord.Task{ID: "c"}, &coord.Task{ID: "z", Deps: []string{"a", "b", "c"}})
	w := coord.Agent{ID: "w"}
	worker := p.s.NewWorker(app.NextRequest{Agent: w})
	next := func() *coord.Task {
		t.Helper()
		res, err := worker.Next(p.ctx)
		if err != nil || res.Task == nil {
			t.Fatalf("next: %+v, %v", res, err)
		}
		return res.Task
	}
	a := next()
	if _, err := p.s.Block(p.ctx, app.TaskRef{Agent: w, TaskID: a.ID, Epoch: a.Epoch}, "tests fail"); err != nil {
		t.Fatal(err)
	}
	earlier := p.claim("w", "c") // the same agent's earlier process, killed
	if got := next(); got.ID != "c" || got.Epoch != earlier.Epoch {
		t.Fatalf("next: %+v, want c taken up at epoch %d", got, earlier.Epoch)
	}
	if _, err := p.s.Release(p.ctx, app.TaskRef{Agent: w, TaskID: "c", Epoch: earlier.Epoch}, "done"); err != nil {
		t.Fatal(err)
	}
	p.s.Approve(p.ctx, app.ApproveRequest{Agent: "rev", TaskID: "c"})
	b := next()
	if b.ID != "b" {
		t.Fatalf("next: %s, want b", b.ID)
	}
	if _, err := p.s.Release(p.ctx, app.TaskRef{Agent: w, TaskID: "b", Epoch: b.Epoch}, "done"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.s.Reject(p.ctx, "rev", "b", "needs tests"); err != nil {
		t.Fatal(err)
	}
	if got := next(); got.ID != "b" || got.Epoch != b.Epoch || got.ReviewNotes != "needs tests" {
		t.Fatalf("rejected work taken up: %+v", got)
	}
	if _, err := p.s.Release(p.ctx, app.TaskRef{Agent: w, TaskID: "b", Epoch: b.Epoch}, "with tests"); err != nil {
		t.Fatal(err)
	}
	p.s.Approve(p.ctx, app.ApproveRequest{Agent: "rev", TaskID: "b"})
	// Nothing else: the unblocked task wakes the waiting worker.
	done := make(chan *coord.Task, 1)
	go func() {
		res, _ := worker.Next(p.ctx)
		done <- res.Task
	}()
	if got, err := p.s.Unblock(p.ctx, app.TaskRef{Agent: w, TaskID: "a", Epoch: a.Epoch}); err != nil || got.Status != coord.Unclaimed || got.Owner != "w" {
		t.Fatal(got, err)
	}
	select {
	case got := <-done:
		if got == nil || got.ID != "a" || got.Epoch <= a.Epoch || got.Status != coord.Claimed || got.ClaimedBy != "w" {
			t.Fatalf("unblocked work taken up: %+v", got)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the worker did not take up the task its owner unblocked")
	}
}
