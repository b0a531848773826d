package app_test

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend/backendtest"
)

// lostLog collects what a Keeper reports lost.
type lostLog struct {
	mu   sync.Mutex
	list []string // "task: why"
}

func (l *lostLog) add(ref app.TaskRef, why string) {
	l.mu.Lock()
	l.list = append(l.list, ref.TaskID+": "+why)
	l.mu.Unlock()
}

func (l *lostLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.list...)
}

// TestKeeperFences: a holder whose beats fail (the heartbeat store
// cannot be written) is fenced once no beat has succeeded for half of
// stale_after: told so, Check answers CodeLost, and the task is owed.
// When beats succeed again the task is handed back, and stays refused
// until it is kept again.
func TestKeeperFences(t *testing.T) {
	p, c := newCounted(t, `"stale_after": "2s"`)
	p.seed(&coord.Task{ID: "t1"}, &coord.Task{ID: "t2"})
	a := coord.Agent{ID: "a"}
	var lost lostLog
	k := p.s.Keep(a, app.KeepOptions{Verify: true, OnLost: lost.add})
	defer k.Close()
	res, err := p.s.Claim(p.ctx, app.ClaimRequest{Agent: a, TaskID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	ref := app.TaskRef{Agent: a, TaskID: "t1", Epoch: res.Task.Epoch}
	k.Hold(ref, res.Since)
	if err := k.Check("t1"); err != nil {
		t.Fatalf("a kept task: %v", err)
	}
	c.failBeats.Store(true)
	backendtest.Wait(t, "the fence", func() bool { return len(lost.all()) > 0 })
	if got := lost.all(); len(got) != 1 || !strings.HasPrefix(got[0], "t1: no successful beat for ") ||
		!strings.Contains(got[0], "half of stale_after 2s") || !strings.Contains(got[0], "no space left on device") {
		t.Fatalf("reported lost: %q", got)
	}
	err = k.Check("t1")
	if coord.CodeOf(err) != coord.CodeLost || !strings.Contains(err.Error(), "no successful beat") {
		t.Fatalf("Check of a fenced task: %v", err)
	}
	if owed := k.Owed(); len(owed) != 1 || owed[0].TaskID != "t1" || owed[0].Epoch != ref.Epoch {
		t.Fatalf("owed: %+v", owed)
	}
	if task := p.task("t1"); task.ClaimedBy != "a" {
		t.Fatalf("fenced while the backend could not be written: %+v", task)
	}
	c.failBeats.Store(false)
	backendtest.Wait(t, "the hand-back", func() bool { return p.task("t1").Status == coord.Unclaimed && len(k.Owed()) == 0 })
	if coord.CodeOf(k.Check("t1")) != coord.CodeLost {
		t.Fatal("a handed-back task is no longer refused")
	}
	// Kept again after a new claim: trusted again.
	res, err = p.s.Claim(p.ctx, app.ClaimRequest{Agent: a, TaskID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	k.Hold(app.TaskRef{Agent: a, TaskID: "t1", Epoch: res.Task.Epoch}, res.Since)
	if err := k.Check("t1"); err != nil {
		t.Fatalf("a task claimed again: %v", err)
	}
}

// TestKeeperFencesOnce: once a fence has fired, the keeper waits for the
// next beat's result (or a new hold) before it looks again. It once
// re-armed the fence at zero while beats kept failing and spun on it,
// a core's worth of CPU in every run whose heartbeat store could not be
// written; here it looked at the clock some 10^5 times between two
// beats, against a few now.
func TestKeeperFencesOnce(t *testing.T) {
	p, c := newCounted(t, `"stale_after": "1s"`)
	p.seed(&coord.Task{ID: "t1"})
	a := coord.Agent{ID: "a"}
	var lost lostLog
	k := p.s.Keep(a, app.KeepOptions{OnLost: lost.add})
	defer k.Close()
	var looks atomic.Int64
	app.SetKeeperClock(k, func() time.Time { looks.Add(1); return time.Now() })
	res, err := p.s.Claim(p.ctx, app.ClaimRequest{Agent: a, TaskID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	k.Hold(app.TaskRef{Agent: a, TaskID: "t1", Epoch: res.Task.Epoch}, res.Since)
	c.failBeats.Store(true)
	backendtest.Wait(t, "the fence", func() bool { return len(lost.all()) > 0 })
	before, beats := looks.Load(), c.attempts.Load()
	backendtest.Wait(t, "three more beats", func() bool { return c.attempts.Load()-beats >= 3 })
	if n := looks.Load() - before; n > 100 {
		t.Fatalf("the keeper looked at the clock %d times over three failed beats after its fence: it spins", n)
	}
	if got := lost.all(); len(got) != 1 {
		t.Fatalf("reported lost %d times: %q", len(got), got)
	}
}

// TestKeeperVerifies: with Verify, a kept task that is no longer the
// agent's (handed back, swept, reclaimed) is reported lost after a beat.
func TestKeeperVerifies(t *testing.T) {
	p, _ := newCounted(t, `"stale_after": "2s"`)
	p.seed(&coord.Task{ID: "t1"})
	a := coord.Agent{ID: "a"}
	var lost lostLog
	k := p.s.Keep(a, app.KeepOptions{Verify: true, OnLost: lost.add})
	defer k.Close()
	res, err := p.s.Claim(p.ctx, app.ClaimRequest{Agent: a, TaskID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	ref := app.TaskRef{Agent: a, TaskID: "t1", Epoch: res.Task.Epoch}
	k.Hold(ref, res.Since)
	if _, err := p.s.HandBack(p.ctx, ref, "someone else's decision"); err != nil {
		t.Fatal(err)
	}
	backendtest.Wait(t, "the loss", func() bool { return len(lost.all()) > 0 })
	if got := lost.all(); len(got) != 1 || got[0] != "t1: it is now unclaimed by nobody" {
		t.Fatalf("reported lost: %q", got)
	}
	if len(k.Owed()) != 0 {
		t.Fatalf("a task lost to someone else is owed: %+v", k.Owed())
	}
}

// TestKeeperKeepsAHealthyHolder: while beats succeed, a holder is never
// fenced, however long it holds (here over a whole stale_after, with
// beats every 20 ms against a 2 s fence: 120 beats outlast it).
func TestKeeperKeepsAHealthyHolder(t *testing.T) {
	p, c := newCounted(t, `"stale_after": "4s"`)
	p.seed(&coord.Task{ID: "t1"})
	a := coord.Agent{ID: "a"}
	var lost lostLog
	k := p.s.Keep(a, app.KeepOptions{Every: 20 * time.Millisecond, Verify: true, OnLost: lost.add})
	defer k.Close()
	res, err := p.s.Claim(p.ctx, app.ClaimRequest{Agent: a, TaskID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	k.Hold(app.TaskRef{Agent: a, TaskID: "t1", Epoch: res.Task.Epoch}, res.Since)
	beats := c.beats.Load()
	backendtest.Wait(t, "120 beats", func() bool { return c.beats.Load()-beats >= 120 })
	if got := lost.all(); len(got) != 0 || k.Check("t1") != nil {
		t.Fatalf("a healthy holder was fenced: %q", got)
	}
	k.Drop("t1")
	k.Close()
}
