package conformance

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// checkNotify: a watcher on one connection to the project is told of a
// change made through another (the notifier alone, no polling): a task
// change, a kv write, a heartbeat.
func checkNotify(t *testing.T, e *env) {
	watcher := e.open()
	s := e.svc() // a second, independent opening: another agent
	for _, c := range []struct {
		what   string
		change func() error
	}{
		{"a seed", func() error {
			_, err := s.Seed(e.ctx, app.SeedRequest{Name: "x", Batch: []coord.SeedLine{{Line: 1, Task: &coord.Task{ID: "n1", Status: coord.Unclaimed}}}})
			return err
		}},
		{"a claim", func() error {
			_, err := s.Claim(e.ctx, app.ClaimRequest{Agent: coord.Agent{ID: "a"}})
			return err
		}},
		{"a kv write", func() error {
			_, err := s.KVSet(e.ctx, "k", json.RawMessage(`1`), time.Minute, "a", coord.KVCond{})
			return err
		}},
		{"a heartbeat", func() error { return s.Beat(e.ctx, "b", nil) }},
	} {
		ctx, cancel := context.WithCancel(e.ctx)
		ch, err := watcher.Changes().Watch(ctx)
		if err != nil {
			cancel()
			t.Fatalf("watch: %v", err)
		}
		ok(t, c.what, c.change())
		select {
		case _, open := <-ch:
			if !open {
				t.Errorf("%s: the watch ended instead of notifying", c.what)
			}
		case <-time.After(bound):
			t.Errorf("%s: no notification within %s", c.what, bound)
		}
		cancel()
		// The channel is closed once the watch's context ends.
		eventually(t, "the watch to end", func() bool {
			select {
			case _, open := <-ch:
				return !open
			default:
				return false
			}
		})
	}
}

// checkWaitWakes: Wait blocks while nothing is eligible and returns the
// task once another agent releases its dependency, or frees its conflict
// group; it reports drained once no work is left.
func checkWaitWakes(t *testing.T, e *env) {
	d := decorate(e.open())
	waiter := e.service(d)
	other := e.svc()
	e.seed(other,
		&coord.Task{ID: "base"}, &coord.Task{ID: "next", Deps: []string{"base"}},
		&coord.Task{ID: "g1", ConflictGroup: "ui"}, &coord.Task{ID: "g2", ConflictGroup: "ui"})
	eb := e.claim(other, "a", "base")
	eg := e.claim(other, "a", "g1")
	me := coord.Agent{ID: "w"}

	// wait runs Wait in the background and returns once it has looked
	// at the registry at least once (so it is waiting, not yet started).
	wait := func() <-chan app.WaitResult {
		var once sync.Once
		looked := make(chan struct{})
		d.onView(func() { once.Do(func() { close(looked) }) })
		out := make(chan app.WaitResult, 1)
		go func() {
			r, err := waiter.Wait(e.ctx, app.WaitRequest{Agent: me, Timeout: 2 * bound})
			if err != nil && !isInterrupted(err) {
				t.Errorf("wait: %v", err)
			}
			out <- r
		}()
		select {
		case <-looked:
		case <-time.After(bound):
			t.Fatalf("wait never looked")
		}
		return out
	}
	result := func(ch <-chan app.WaitResult) app.WaitResult {
		select {
		case r := <-ch:
			return r
		case <-time.After(2 * bound):
			t.Fatalf("wait did not return within %s", 2*bound)
		}
		return app.WaitResult{}
	}

	ch := wait()
	_, err := other.Release(e.ctx, app.TaskRef{Agent: coord.Agent{ID: "a"}, TaskID: "base", Epoch: eb}, "")
	ok(t, "release the dependency", err)
	if r := result(ch); r.Status != "eligible" || r.Task != "next" {
		t.Fatalf("wait returned %+v, want next eligible", r)
	}
	e.claim(waiter, "w", "next")

	ch = wait()
	_, err = other.Release(e.ctx, app.TaskRef{Agent: coord.Agent{ID: "a"}, TaskID: "g1", Epoch: eg}, "")
	ok(t, "free the conflict group", err)
	if r := result(ch); r.Status != "eligible" || r.Task != "g2" {
		t.Fatalf("wait returned %+v, want g2 eligible", r)
	}
	eg2 := e.claim(waiter, "w", "g2")

	// Waiting for a named task: its change of state ends the wait.
	named := make(chan app.WaitResult, 1)
	var once sync.Once
	looked := make(chan struct{})
	d.onView(func() { once.Do(func() { close(looked) }) })
	go func() {
		r, err := waiter.Wait(e.ctx, app.WaitRequest{TaskID: "next", Timeout: 2 * bound})
		if err != nil {
			t.Errorf("wait for next: %v", err)
		}
		named <- r
	}()
	select {
	case <-looked:
	case <-time.After(bound):
		t.Fatalf("the named wait never looked")
	}
	_, err = other.Block(e.ctx, app.TaskRef{Agent: coord.Agent{ID: "w"}, TaskID: "next", Epoch: coord.NoEpoch}, "stuck")
	ok(t, "block next", err)
	if r := result(named); r.Status != "blocked" || r.Was != "claimed" || r.Task != "next" {
		t.Fatalf("named wait returned %+v", r)
	}
	_, err = other.Unblock(e.ctx, app.TaskRef{Agent: coord.Agent{ID: "w"}, TaskID: "next", Epoch: coord.NoEpoch})
	ok(t, "unblock", err)
	_, err = other.Claim(e.ctx, app.ClaimRequest{Agent: coord.Agent{ID: "w"}, TaskID: "next"})
	ok(t, "its owner takes next back", err)
	for _, ref := range []app.TaskRef{{TaskID: "next", Epoch: coord.NoEpoch}, {TaskID: "g2", Epoch: eg2}} {
		ref.Agent = me
		_, err := other.Release(e.ctx, ref, "")
		ok(t, "release "+ref.TaskID, err)
	}
	d.onView(nil)
	r, err := waiter.Wait(e.ctx, app.WaitRequest{Agent: me, Timeout: bound})
	ok(t, "wait when drained", err)
	if r.Status != "drained" {
		t.Fatalf("wait on a drained registry: %+v", r)
	}
}
