package app

import (
	"context"
	"time"

	"github.com/rotd/coord/coord"
)

// The agent loop (contract §4a): coord run takes the agent's next task,
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
}

// Worker is an agent taking tasks one after another (coord run --loop).
// Besides what Claim (or the inbox) gives, it takes up work of the
// agent's own: a task a reviewer rejected back to it, and a task it left
// blocked (Parked) once that task is back with the agent as claimed at
// the same epoch (its owner unblocked it). Only tasks this Worker parked
// are taken up so: another process of the same agent may be working on
// any other task the agent holds.
type Worker struct {
	s      *Service
	r      NextRequest
	parked map[string]int64 // task -> epoch
}

// NewWorker starts an agent's loop over tasks.
func (s *Service) NewWorker(r NextRequest) *Worker {
	return &Worker{s: s, r: r, parked: map[string]int64{}}
}

// Next is NewWorker(r).Next: one task (coord run without --loop).
func (s *Service) Next(ctx context.Context, r NextRequest) (ClaimResult, error) {
	return s.NewWorker(r).Next(ctx)
}

// Parked records that the worker left t blocked: it is taken up again
// when it comes back to the agent as claimed at its epoch.
func (w *Worker) Parked(t *coord.Task) {
	if t != nil && t.Status == coord.Blocked && t.ClaimedBy == w.r.Agent.ID {
		w.parked[t.ID] = t.Epoch
	}
}

// Next gets the agent's next task: work of its own first (see Worker),
// else a claim (Claim's rules; with Inbox, the inbox's next piece of
// pushed work). When nothing is eligible but work remains it waits as
// Wait does, woken by the backend's change notification (with Wait's slow
// poll as the fallback), beating for the agent and freeing stale locks
// meanwhile, and tries again: it never spins. It returns a task, or
// Drained when no work is left at all; CodeConflict when the named task
// cannot be claimed or the Timeout passes; coord.ErrInterrupted when ctx
// ends.
func (w *Worker) Next(ctx context.Context) (ClaimResult, error) {
	s, r := w.s, w.r
	if err := coord.ValidActingAgent(r.Agent.ID); err != nil {
		return ClaimResult{}, err
	}
	if r.TaskID != "" {
		if r.Inbox {
			return ClaimResult{}, coord.Errorf(coord.CodeUsage, "a named task is claimed, not taken from the inbox")
		}
		return s.Claim(ctx, ClaimRequest{Agent: r.Agent, TaskID: r.TaskID, Any: r.Any})
	}
	var deadline time.Time
	if r.Timeout > 0 {
		deadline = time.Now().Add(r.Timeout)
	}
	woken := false // the last wait ended because something looked eligible
	for {
		if t, since, err := w.own(ctx); err != nil || t != nil {
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
		if err != nil || res.Task != nil || res.Drained {
			return res, err
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
			return ClaimResult{Task: in.Task, Drained: in.Status == "drained", Since: in.Since}, err
		}
		got, err := s.Wait(ctx, WaitRequest{Agent: r.Agent, Timeout: timeout, own: w.ownIn})
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

// own returns work of the agent's own to take up (ownIn), forgetting it
// as parked, and beats for the agent (it holds the task: since is when
// that beat began).
func (w *Worker) own(ctx context.Context) (t *coord.Task, since time.Time, err error) {
	err = w.s.tasks().View(ctx, func(tx *coord.Txn) error {
		t = w.ownIn(tx)
		return nil
	})
	if err != nil || t == nil {
		return nil, since, interrupted(ctx, err)
	}
	since = time.Now()
	if err := w.s.b.Beats().Beat(ctx, w.r.Agent.ID, nil); err != nil {
		return nil, time.Time{}, interrupted(ctx, err)
	}
	delete(w.parked, t.ID)
	return t, since, nil
}

// ownIn is the first task in tx that is the agent's own to take up: with
// pull scheduling one a reviewer rejected back to it (push scheduling's
// inbox gives those itself), else one this worker parked that is back
// with the agent as claimed at the same epoch.
func (w *Worker) ownIn(tx *coord.Txn) *coord.Task {
	agent := w.r.Agent.ID
	if !w.r.Inbox && w.s.cfg.Scheduling != coord.Push {
		if back := tx.Rejected(agent); len(back) > 0 {
			return back[0]
		}
	}
	for id, epoch := range w.parked {
		if t := tx.Task(id); t != nil && t.Status == coord.Claimed && t.ClaimedBy == agent && t.Epoch == epoch {
			return t
		}
	}
	return nil
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
