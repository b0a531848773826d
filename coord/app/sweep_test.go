package app_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
)

// A claim sweeps (sweep_on_claim) reading every agent's heartbeat before
// its commit and, inside it, only the holders that reading shows silent:
// these tests watch what the engine is asked, through a BeatStore that
// records its calls and can serve an older SeenAll than the store holds.

// watchedBeats records the LastSeen calls and serves SeenAll from early
// when it is set.
type watchedBeats struct {
	coord.BeatStore
	mu       sync.Mutex
	lastSeen [][]string
	early    func(ctx context.Context) (map[string]time.Time, time.Time, error)
}

func (w *watchedBeats) LastSeen(ctx context.Context, agents []string) (map[string]time.Time, time.Time, error) {
	w.mu.Lock()
	w.lastSeen = append(w.lastSeen, slices.Clone(agents))
	w.mu.Unlock()
	return w.BeatStore.LastSeen(ctx, agents)
}

func (w *watchedBeats) SeenAll(ctx context.Context) (map[string]time.Time, time.Time, error) {
	if w.early != nil {
		return w.early(ctx)
	}
	return w.BeatStore.SeenAll(ctx)
}

// calls returns the LastSeen calls since the last look and forgets them.
func (w *watchedBeats) calls() [][]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.lastSeen
	w.lastSeen = nil
	return c
}

type watchedBackend struct {
	coord.Backend
	beats *watchedBeats
}

func (w watchedBackend) Beats() coord.BeatStore { return w.beats }

func newWatched(t *testing.T) (*project, *watchedBeats) {
	var w *watchedBeats
	p := openProject(t, "", func(b coord.Backend) coord.Backend {
		w = &watchedBeats{BeatStore: b.Beats()}
		return watchedBackend{Backend: b, beats: w}
	})
	return p, w
}

// silentAndBeating seeds t1, t2 and t3, has silent claim t1 and beating
// claim t2, moves the clock 20 minutes (past the 15m stale_after) and
// has beating beat again. It returns the instant before the move.
func silentAndBeating(t *testing.T, p *project, silent, beating string) time.Time {
	t.Helper()
	p.seed(&coord.Task{ID: "t1"}, &coord.Task{ID: "t2"}, &coord.Task{ID: "t3"})
	p.claim(silent, "t1")
	p.claim(beating, "t2")
	then := p.now
	p.now = p.now.Add(20 * time.Minute)
	if err := p.s.Beat(p.ctx, beating, nil); err != nil {
		t.Fatal(err)
	}
	return then
}

// With every holder alive, a claim reads no heartbeat inside its commit,
// however many agents hold locks.
func TestClaimReadsNoLiveHolderInItsCommit(t *testing.T) {
	p, w := newWatched(t)
	p.seed(&coord.Task{ID: "t1"}, &coord.Task{ID: "t2"}, &coord.Task{ID: "t3"}, &coord.Task{ID: "t4"}, &coord.Task{ID: "t5"})
	for _, a := range []string{"h1", "h2", "h3", "h4"} {
		p.claim(a, "")
	}
	p.now = p.now.Add(10 * time.Minute) // older, not stale (15m)
	w.calls()
	p.claim("a", "t5")
	if c := w.calls(); len(c) != 0 {
		t.Fatalf("the claim read heartbeats inside its commit: %v", c)
	}
}

// A holder the early reading shows silent is read again under the
// commit's exclusion, and kept when it beat in between.
func TestClaimRechecksUnderExclusion(t *testing.T) {
	p, w := newWatched(t)
	then := silentAndBeating(t, p, "b", "c")
	// The early reading was made before b's latest beat: b silent for
	// 20 minutes then, c seen now.
	w.early = func(ctx context.Context) (map[string]time.Time, time.Time, error) {
		return map[string]time.Time{"b": then, "c": p.now}, p.now, nil
	}
	if err := p.s.Beat(p.ctx, "b", nil); err != nil {
		t.Fatal(err)
	}
	w.calls()
	p.claim("a", "t3")
	if c := w.calls(); len(c) != 1 || !slices.Equal(c[0], []string{"b"}) {
		t.Fatalf("LastSeen calls %v, want one for b alone", c)
	}
	if st := p.task("t1"); st.Status != coord.Claimed || st.ClaimedBy != "b" {
		t.Fatalf("b beat before the commit, yet t1 is %s by %q", st.Status, st.ClaimedBy)
	}
}

// A dead holder is still freed by a claim, read once more inside the
// commit, the live ones not.
func TestClaimFreesTheDeadOnly(t *testing.T) {
	p, w := newWatched(t)
	silentAndBeating(t, p, "dead", "alive")
	w.calls()
	got := p.claim("a", "t1") // freed in the claim's own commit
	if got.ClaimedBy != "a" {
		t.Fatalf("t1 went to %q", got.ClaimedBy)
	}
	if c := w.calls(); len(c) != 1 || !slices.Equal(c[0], []string{"dead"}) {
		t.Fatalf("LastSeen calls %v, want one for dead alone", c)
	}
	if st := p.task("t2"); st.ClaimedBy != "alive" {
		t.Fatalf("the live holder lost t2: %+v", st)
	}
}

// An early reading that failed is no verdict: the commit reads every
// holder, as it would without one, and frees the dead.
func TestClaimWithoutEarlyReadingReadsEveryHolder(t *testing.T) {
	p, w := newWatched(t)
	silentAndBeating(t, p, "dead", "alive")
	w.early = func(ctx context.Context) (map[string]time.Time, time.Time, error) {
		return nil, time.Time{}, errors.New("unreachable")
	}
	w.calls()
	if got := p.claim("a", "t1"); got.ClaimedBy != "a" {
		t.Fatalf("t1 went to %q", got.ClaimedBy)
	}
	if c := w.calls(); len(c) != 1 || !slices.Equal(c[0], []string{"alive", "dead"}) {
		t.Fatalf("LastSeen calls %v, want one for every holder", c)
	}
}

// Nothing of a claim outlives it: a commit that found no holder never
// waits for the early reading, and the claim ends it before returning
// (make test's race detector once caught one reading the test's clock
// after the claim had returned).
func TestClaimEndsItsEarlyReading(t *testing.T) {
	p, w := newWatched(t)
	p.seed(&coord.Task{ID: "t1"})
	var mu sync.Mutex
	ended := false
	w.early = func(ctx context.Context) (map[string]time.Time, time.Time, error) {
		<-ctx.Done() // a reading that would never end by itself
		mu.Lock()
		ended = true
		mu.Unlock()
		return nil, time.Time{}, ctx.Err()
	}
	p.claim("a", "t1") // no holder yet: the commit does not wait for it
	mu.Lock()
	defer mu.Unlock()
	if !ended {
		t.Fatal("the claim returned while its early reading went on")
	}
}
