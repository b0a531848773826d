package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rotd/coordination/coord"
)

// The agent loop (docs/COMMANDS.md#the-agent-loop): coord run takes the agent's next task,
// waiting while nothing is eligible but work remains, and run --loop does
// so one task after another. What to take next, and when to wait, is
// decided here; the front end runs each task's command.

// NextRequest asks for an agent's next task.
type NextRequest struct {
	Agent  coord.Agent
	TaskID string // this task, or a refusal at once, as Claim
	Any    bool   // as ClaimRequest.Any
	// Inbox takes from the agent's inbox (push scheduling: the agent must
	// be registered) instead of claiming.
	Inbox bool
	// Timeout bounds each wait for work (0: no limit); when it passes,
	// Next fails with CodeConflict.
	Timeout time.Duration
	// OnWait is told what a worker waits for when it starts to wait, and
	// again when that changes (nil: not told).
	OnWait func(why string)
}

// Worker is an agent taking tasks one after another (coord run --loop).
// Work of its own comes first: a task it holds claimed (work sent back to
// it, or taken by an earlier process of the same agent that died: a
// restart under the same id resumes it), then work returned to the pool
// as its own (an unblocked task), then new work (Claim, or the inbox).
// When nothing is eligible it waits; it is done (Drained) only when no
// work is left at all and nothing it owns is in flight: its released
// work has landed, or another agent took it over.
type Worker struct {
	s *Service
	r NextRequest
	// told is what the worker last said it waits for (OnWait).
	told string
	// lastLanded is when the worker last asked the repository which of
	// its finished tasks landed (a landing made by hand records nothing
	// that would wake it).
	lastLanded time.Time
}

// NewWorker starts an agent's loop over tasks.
func (s *Service) NewWorker(r NextRequest) *Worker {
	return &Worker{s: s, r: r}
}

// Next is NewWorker(r).Next: one task (coord run without --loop).
func (s *Service) Next(ctx context.Context, r NextRequest) (ClaimResult, error) {
	return s.NewWorker(r).Next(ctx)
}

// Next gets the agent's next task: work of its own first (see Worker),
// else a claim (Claim's rules; with Inbox, the inbox's next piece of
// pushed work); the task's branch is checked out in the caller's
// worktree as a claim does. When nothing is eligible but work remains,
// or its own finished work has not landed yet, it waits as Wait does,
// woken by the backend's change notification (with Wait's slow poll as
// the fallback), beating for the agent and freeing stale locks
// meanwhile, and tries again: it never spins. It returns a task, or
// Drained; CodeConflict when the named task cannot be taken, the Timeout
// passes or the worktree cannot be switched to the task's branch;
// coord.ErrInterrupted when ctx ends.
func (w *Worker) Next(ctx context.Context) (ClaimResult, error) {
	s, r := w.s, w.r
	if err := coord.ValidActingAgent(r.Agent.ID); err != nil {
		return ClaimResult{}, err
	}
	if r.TaskID != "" {
		if r.Inbox {
			return ClaimResult{}, coord.Errorf(coord.CodeUsage, "a named task is claimed, not taken from the inbox")
		}
		if err := coord.ValidTaskID(r.TaskID); err != nil {
			return ClaimResult{}, err
		}
		// The named task, taken up when it is the agent's already.
		if t, since, err := w.takeUp(ctx, r.TaskID); err != nil || t != nil {
			return ClaimResult{Task: t, Since: since}, err
		}
		return s.Claim(ctx, ClaimRequest{Agent: r.Agent, TaskID: r.TaskID, Any: r.Any})
	}
	var deadline time.Time
	if r.Timeout > 0 {
		deadline = time.Now().Add(r.Timeout)
	}
	woken := false // the last wait ended because something looked eligible
	for {
		if t, since, err := w.takeUp(ctx, ""); err != nil || t != nil {
			return ClaimResult{Task: t, Since: since}, err
		}
		var res ClaimResult
		var err error
		if r.Inbox {
			var in InboxResult
			in, res.Drained, err = s.take(ctx, r.Agent.ID)
			res.Task, res.Since = in.Task, in.Since
		} else {
			res, err = s.Claim(ctx, ClaimRequest{Agent: r.Agent, Any: r.Any})
		}
		if err != nil || res.Task != nil {
			return res, err
		}
		if res.Drained {
			mine, err := w.inFlight(ctx)
			if err != nil || len(mine) == 0 {
				return ClaimResult{Drained: err == nil}, err
			}
		}
		if woken {
			// What looked eligible was gone by the claim (another agent
			// took it): ordinary. Should the two ever disagree for good,
			// this pause keeps the loop to one claim a poll interval.
			if err := pause(ctx, PollInterval); err != nil {
				return ClaimResult{}, err
			}
		}
		timeout := time.Duration(0)
		if !deadline.IsZero() {
			if timeout = time.Until(deadline); timeout <= 0 {
				return ClaimResult{}, w.timedOut()
			}
		}
		if r.Inbox {
			// The inbox's wait takes what comes.
			in, err := s.Inbox(ctx, InboxRequest{Agent: r.Agent.ID, Wait: true, Timeout: timeout})
			if err != nil && !deadline.IsZero() && !time.Now().Before(deadline) && coord.CodeOf(err) == coord.CodeConflict {
				return ClaimResult{}, inboxTimedOut(r.Timeout, r.Agent.ID)
			}
			if err == nil && in.Status == "drained" {
				continue // the loop's own test: its work in flight too
			}
			return ClaimResult{Task: in.Task, Since: in.Since}, err
		}
		w.tell(ctx)
		got, err := s.Wait(ctx, WaitRequest{Agent: r.Agent, Timeout: timeout, own: w.ownIn, mine: w.mineIn, poll: w.poll})
		if err != nil {
			if !deadline.IsZero() && !time.Now().Before(deadline) && coord.CodeOf(err) == coord.CodeConflict {
				return ClaimResult{}, w.timedOut()
			}
			return ClaimResult{}, err
		}
		if got.Status == "drained" {
			return ClaimResult{Drained: true}, nil
		}
		woken = true
	}
}

func (w *Worker) timedOut() error {
	return coord.Errorf(coord.CodeConflict, "timed out after %s: no task became eligible for %s", coord.RoundDuration(w.r.Timeout), w.r.Agent.ID).
		WithHint("'coord ready --explain' says why each task waits")
}

// takeUp takes up work of the agent's own: the task id (any: the first
// ownIn finds) it holds claimed, with its branch checked out in the
// caller's worktree; it beats for the agent inside the commit (since is
// when that beat began). nil when there is none.
func (w *Worker) takeUp(ctx context.Context, id string) (t *coord.Task, since time.Time, err error) {
	s := w.s
	var want *coord.Task
	err = s.tasks().View(ctx, func(tx *coord.Txn) error {
		if id == "" {
			want = w.ownIn(tx)
		} else if cur := tx.Task(id); cur != nil && cur.Status == coord.Claimed && cur.ClaimedBy == w.r.Agent.ID {
			want = cur
		}
		return nil
	})
	if err != nil || want == nil {
		return nil, since, interrupted(ctx, err)
	}
	p := s.placeEarly(ctx)
	defer p.wait()
	err = s.tasks().Update(ctx, func(tx *coord.Txn) error {
		t = tx.Task(want.ID)
		if t == nil || t.Status != coord.Claimed || t.ClaimedBy != w.r.Agent.ID || t.Epoch != want.Epoch {
			t = nil // gone meanwhile: the next round looks again
			return nil
		}
		if err := p.decide(t); err != nil {
			return err
		}
		since = time.Now()
		return s.beatWithin(ctx, w.r.Agent.ID)
	})
	if err != nil || t == nil {
		return nil, since, interrupted(ctx, err)
	}
	if err := s.enter(ctx, p, t, nil); err != nil {
		return nil, since, err
	}
	s.beatHolding(ctx, w.r.Agent, []*coord.Task{t})
	return t, since, nil
}

// ownIn is the first task in tx the agent holds claimed: work sent back
// to it first (its review notes say what to change), then by claim time.
func (w *Worker) ownIn(tx *coord.Txn) *coord.Task {
	var first *coord.Task
	for _, t := range tx.Tasks {
		if t.Status != coord.Claimed || t.ClaimedBy != w.r.Agent.ID {
			continue
		}
		if t.ReviewNotes != "" && t.Rejections > 0 {
			return t
		}
		if first == nil || t.ClaimedAt < first.ClaimedAt {
			first = t
		}
	}
	return first
}

// mineIn lists the agent's work in flight that it is not working on:
// released and not landed (done with a head, or in review), or blocked
// while it holds it. While there is any, the worker is not done.
func (w *Worker) mineIn(tx *coord.Txn) []*coord.Task {
	var out []*coord.Task
	for _, t := range tx.Tasks {
		if t.ClaimedBy == w.r.Agent.ID && t.Status != coord.Claimed && t.InFlight() {
			out = append(out, t)
		}
	}
	return out
}

// inFlight is mineIn now.
func (w *Worker) inFlight(ctx context.Context) (mine []*coord.Task, err error) {
	w.poll(ctx)
	err = w.s.tasks().View(ctx, func(tx *coord.Txn) error {
		mine = w.mineIn(tx)
		return nil
	})
	return mine, interrupted(ctx, err)
}

// landedEvery bounds how often a waiting worker asks the repository
// whether its finished work landed.
const landedEvery = 5 * time.Second

// poll records, at most every landedEvery, the agent's finished work
// that has landed meanwhile (Service.Landed): a landing made by hand
// changes nothing a notification would report.
func (w *Worker) poll(ctx context.Context) {
	if time.Since(w.lastLanded) < landedEvery {
		return
	}
	w.lastLanded = time.Now()
	_, err := w.s.Landed(ctx)
	w.s.warnf(err)
}

// tell says what the worker now waits for (OnWait), when it changed.
func (w *Worker) tell(ctx context.Context) {
	if w.r.OnWait == nil {
		return
	}
	if why := w.WaitingFor(ctx); why != "" && why != w.told {
		w.told = why
		w.r.OnWait(why)
	}
}

// WaitingFor says what keeps the worker from its next task, for people:
// its own work in flight, or why the ready queue is empty for it ("" when
// nothing does).
func (w *Worker) WaitingFor(ctx context.Context) string {
	why := ""
	w.s.tasks().View(ctx, func(tx *coord.Txn) error {
		why = waitingFor(tx, w.r.Agent, w.mineIn(tx))
		return nil
	})
	return why
}

// waitingFor words what a worker waits for.
func waitingFor(tx *coord.Txn, a coord.Agent, mine []*coord.Task) string {
	var landing, blocked, review []string
	for _, t := range mine {
		switch t.Status {
		case coord.Done:
			landing = append(landing, t.ID)
		case coord.Review:
			review = append(review, t.ID)
		case coord.Blocked:
			blocked = append(blocked, t.ID)
		}
	}
	var parts []string
	if len(landing) > 0 {
		parts = append(parts, fmt.Sprintf("task %s to land (is a lander running? coord land --watch)", strings.Join(landing, ", ")))
	}
	if len(review) > 0 {
		parts = append(parts, fmt.Sprintf("task %s in review", strings.Join(review, ", ")))
	}
	if len(blocked) > 0 {
		parts = append(parts, fmt.Sprintf("blocked task %s (coord unblock ID, or coord cancel ID --reason R)", strings.Join(blocked, ", ")))
	}
	if len(parts) == 0 && !tx.Drained() {
		_, not, whyNot := tx.Ready(a)
		for i, t := range not {
			if !t.Status.Settled() && t.Status != coord.Claimed && t.Status != coord.Review {
				parts = append(parts, "task "+t.ID+": "+whyNot[i])
				break
			}
		}
		if len(parts) == 0 {
			parts = append(parts, "other agents' work in flight")
		}
	}
	return strings.Join(parts, "; ")
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return interrupted(ctx, ctx.Err())
	}
}
