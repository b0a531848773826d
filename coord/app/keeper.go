package app

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rotd/coordination/coord"
)

// Keeper keeps alive the claims an agent is working on, and stops
// trusting them before they can go stale: self-fencing (docs/CHOICES.md),
// the pattern of etcd's session and of restic's lock refresh, where a
// holder gives its lock up before the lock can expire under it.
//
// While it keeps a task, a Keeper beats for the agent in the background
// and remembers when a beat last succeeded. A sweep frees a claim after a
// whole stale_after of silence; once no beat has succeeded for half of it
// (the backend unreachable, the disk full), every task the Keeper keeps
// is fenced: OnLost is told, Check answers CodeLost for the task until it
// is kept again (a new claim), and the holder must stop working on it. At
// least half of stale_after then separates the holder's stop from the
// first moment anyone else can be given the task. A fenced task is handed
// back (HandBack, at its epoch) as soon as a beat succeeds again, so that
// a live agent never keeps a task it has stopped working on.
//
// With Verify, each successful beat is followed by a look at every kept
// task: one swept as stale or taken by another claim is lost as well.
//
// The Keeper's goroutine runs only while it keeps or owes something; a
// beat that hangs does not delay the fence.
type Keeper struct {
	s      *Service
	agent  string
	every  time.Duration
	limit  time.Duration
	verify bool
	onLost func(TaskRef, string)
	now    func() time.Time

	mu      sync.Mutex
	kept    map[string]*keptTask
	lastOK  time.Time // when the last beat known to have succeeded began
	lastErr error     // the last beat's error, nil after a success
	owed    map[string]TaskRef
	running bool
	poke    chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

type keptTask struct {
	ref TaskRef
	why string // "" while kept; else why it was lost (it stays until kept again)
}

// KeepOptions tune a Keeper.
type KeepOptions struct {
	// Every is how often it beats (0: beat_interval). It is held to at
	// most a third of the fence's limit (half of stale_after), so that a
	// healthy holder is never fenced between two beats.
	Every time.Duration
	// Verify looks, after each successful beat, whether every kept task
	// is still held (Holds).
	Verify bool
	// OnLost is told, from the Keeper's goroutine, each task that was
	// fenced or found lost, with why.
	OnLost func(ref TaskRef, why string)
}

// Keep returns a Keeper for agent. It beats only while it keeps a task
// (Hold) or owes one's hand-back; Close ends it.
func (s *Service) Keep(agent coord.Agent, opt KeepOptions) *Keeper {
	limit := s.conf().StaleAfter / 2
	every := opt.Every
	if every <= 0 {
		every = s.conf().BeatInterval
	}
	every = min(every, limit/3)
	return &Keeper{s: s, agent: agent.ID, every: every, limit: limit, verify: opt.Verify, onLost: opt.OnLost,
		now: time.Now, kept: map[string]*keptTask{}, owed: map[string]TaskRef{}, poke: make(chan struct{}, 1)}
}

// Limit is how long the Keeper goes without a successful beat before it
// fences what it keeps: half of stale_after.
func (k *Keeper) Limit() time.Duration { return k.limit }

// Hold starts keeping ref, claimed at or after since (the instant its
// claim began: the claim beat inside its commit, so the agent was alive
// then). A task kept again is no longer fenced, and no longer owed.
func (k *Keeper) Hold(ref TaskRef, since time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.kept[ref.TaskID] = &keptTask{ref: ref}
	delete(k.owed, ref.TaskID)
	if since.After(k.lastOK) {
		k.lastOK = since
	}
	k.wake()
}

// Drop stops keeping a task (released, or left blocked).
func (k *Keeper) Drop(taskID string) {
	k.mu.Lock()
	delete(k.kept, taskID)
	k.mu.Unlock()
}

// Check is nil while the task is kept (or was never kept); CodeLost, with
// why, once it was fenced or found lost, until it is kept again.
func (k *Keeper) Check(taskID string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if t := k.kept[taskID]; t != nil && t.why != "" {
		return coord.Errorf(coord.CodeLost, "task %s is no longer yours: %s", taskID, t.why).
			WithHint("stop working on it; claim it again (or another task) to go on")
	}
	return nil
}

// Owed lists the fenced tasks not yet handed back.
func (k *Keeper) Owed() []TaskRef {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]TaskRef, 0, len(k.owed))
	for _, r := range k.owed {
		out = append(out, r)
	}
	return out
}

// Settle tries now, once, to hand back every fenced task not yet handed
// back (a holder about to exit: the backend may be back), bounded by ctx.
func (k *Keeper) Settle(ctx context.Context) {
	for _, r := range k.Owed() {
		if k.handBack(ctx, r) {
			k.mu.Lock()
			if cur, ok := k.owed[r.TaskID]; ok && cur.Epoch == r.Epoch {
				delete(k.owed, r.TaskID)
			}
			k.mu.Unlock()
		}
	}
}

// Close stops the Keeper and waits for its goroutine.
func (k *Keeper) Close() {
	k.mu.Lock()
	stop, done := k.stop, k.done
	k.running = false
	k.stop, k.done = nil, nil
	k.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// wake starts the goroutine if it is not running, or tells it that the
// deadline moved. k.mu is held.
func (k *Keeper) wake() {
	if !k.running {
		k.running = true
		k.stop, k.done = make(chan struct{}), make(chan struct{})
		go k.run(k.stop, k.done)
		return
	}
	select {
	case k.poke <- struct{}{}:
	default:
	}
}

// busy reports whether anything is kept (not lost) or owed. k.mu is held.
func (k *Keeper) busy() bool {
	if len(k.owed) > 0 {
		return true
	}
	for _, t := range k.kept {
		if t.why == "" {
			return true
		}
	}
	return false
}

type beatResult struct {
	start  time.Time
	err    error
	lost   map[string]string // task -> why (Verify)
	handed []TaskRef
}

func (k *Keeper) run(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tick := time.NewTicker(k.every)
	defer tick.Stop()
	fence := time.NewTimer(time.Hour)
	defer fence.Stop()
	arm := func() {
		k.mu.Lock()
		wait := k.lastOK.Add(k.limit).Sub(k.now())
		k.mu.Unlock()
		fence.Reset(max(wait, 0))
	}
	arm()
	results := make(chan beatResult, 1)
	inFlight := false
	var sent time.Time // when the beat in flight began
	for {
		select {
		case <-stop:
			if inFlight {
				cancel()
				<-results
			}
			return
		case <-k.poke:
			arm()
		case <-tick.C:
			if !inFlight {
				inFlight, sent = true, k.now()
				go func() { results <- k.beat(ctx) }()
			}
		case r := <-results:
			inFlight = false
			k.absorb(r)
			arm()
		case <-fence.C:
			var waiting time.Duration
			if inFlight {
				waiting = k.now().Sub(sent)
			}
			k.fence(waiting)
			// Not armed again here: until a beat succeeds the limit stays
			// passed, and a fence armed at zero would fire at once,
			// forever. The next beat's result or a new Hold arms it.
		}
		k.mu.Lock()
		if !k.busy() && !inFlight {
			// Nothing to keep: end; the next Hold starts again.
			k.running = false
			k.stop, k.done = nil, nil
			k.mu.Unlock()
			return
		}
		k.mu.Unlock()
	}
}

// beat beats once; after a success it verifies what is kept (Verify) and
// hands back what is owed.
func (k *Keeper) beat(ctx context.Context) beatResult {
	r := beatResult{start: k.now()}
	bctx, cancel := context.WithTimeout(ctx, k.limit)
	defer cancel()
	if r.err = k.s.b.Beats().Beat(bctx, k.agent, nil); r.err != nil {
		return r
	}
	k.mu.Lock()
	var kept, owed []TaskRef
	for _, t := range k.kept {
		if t.why == "" {
			kept = append(kept, t.ref)
		}
	}
	for _, o := range k.owed {
		owed = append(owed, o)
	}
	k.mu.Unlock()
	if k.verify {
		for _, ref := range kept {
			// An error means we cannot tell: keep it, look again next beat.
			if why, err := k.s.Holds(ctx, ref); err == nil && why != "" {
				if r.lost == nil {
					r.lost = map[string]string{}
				}
				r.lost[ref.TaskID] = why
			}
		}
	}
	for _, ref := range owed {
		if k.handBack(ctx, ref) {
			r.handed = append(r.handed, ref)
		}
	}
	return r
}

// handBack gives a fenced task up (as the sweep would, at once); true
// once nothing more is owed: handed back, or no longer the agent's.
func (k *Keeper) handBack(ctx context.Context, ref TaskRef) bool {
	_, err := k.s.HandBack(ctx, ref, fmt.Sprintf("no successful beat for %s", coord.RoundDuration(k.limit)))
	return err == nil || coord.CodeOf(err) == coord.CodeLost || coord.CodeOf(err) == coord.CodeConflict
}

func (k *Keeper) absorb(r beatResult) {
	var told []keptTask
	k.mu.Lock()
	if r.err != nil {
		k.lastErr = r.err
	} else {
		k.lastErr = nil
		if r.start.After(k.lastOK) {
			k.lastOK = r.start
		}
	}
	for id, why := range r.lost {
		if t := k.kept[id]; t != nil && t.why == "" {
			t.why = why
			told = append(told, *t)
		}
	}
	for _, ref := range r.handed {
		if cur, ok := k.owed[ref.TaskID]; ok && cur.Epoch == ref.Epoch {
			delete(k.owed, ref.TaskID)
		}
	}
	k.mu.Unlock()
	k.tell(told)
}

// fence fences every kept task when no beat has succeeded for the limit;
// waiting is how long the beat in flight has waited for an answer (0:
// none in flight).
func (k *Keeper) fence(waiting time.Duration) {
	var told []keptTask
	k.mu.Lock()
	if silent := k.now().Sub(k.lastOK); silent >= k.limit {
		why := fmt.Sprintf("no successful beat for %s (half of stale_after %s)", coord.RoundDuration(silent), coord.RoundDuration(2*k.limit))
		switch {
		case k.lastErr != nil:
			why += ": " + coord.OneLine(k.lastErr.Error())
		case waiting > 0:
			why += fmt.Sprintf(": a beat has waited %s for an answer", coord.RoundDuration(waiting))
		}
		for id, t := range k.kept {
			if t.why == "" {
				t.why = why
				k.owed[id] = t.ref
				told = append(told, *t)
			}
		}
	}
	k.mu.Unlock()
	k.tell(told)
}

func (k *Keeper) tell(told []keptTask) {
	if k.onLost == nil {
		return
	}
	for _, t := range told {
		k.onLost(t.ref, t.why)
	}
}
