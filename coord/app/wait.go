package app

import (
	"context"
	"errors"
	"time"

	"github.com/rotd/coordination/coord"
)

// Changes returns the backend's change notifications (coord.Notifier):
// an error means notification is unavailable and the caller polls.
func (s *Service) Changes(ctx context.Context) (<-chan coord.Change, error) {
	return s.b.Changes().Watch(ctx)
}

// HoldExclusive takes a named lock for the life of this process where the
// engine offers one (coord.Exclusive: a watcher's); elsewhere it does
// nothing and returns a no-op release.
func (s *Service) HoldExclusive(ctx context.Context, name string, holder []byte) (func(), error) {
	if x, ok := s.b.(coord.Exclusive); ok {
		return x.HoldExclusive(ctx, name, holder)
	}
	return func() {}, nil
}

// ErrTimeout is what Until returns when its timeout passes.
var ErrTimeout = errors.New("timed out")

// PollInterval is how often Until re-checks without a notification: the
// fallback when notification is unavailable or misses a change.
const PollInterval = time.Second

// Until calls check now, then again after every change the backend
// notifies and at least every PollInterval, until check reports done (or
// fails), ctx ends (coord.ErrInterrupted), or timeout passes (ErrTimeout;
// 0: no timeout). A burst of notifications is coalesced over settle into
// one check. It is what wait, kv watch, top, the dashboard and the inbox
// block on.
func (s *Service) Until(ctx context.Context, timeout, settle time.Duration, check func() (bool, error)) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := s.b.Changes().Watch(wctx)
	if err != nil {
		events = nil // poll only
	}
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	poll := time.NewTicker(PollInterval)
	defer poll.Stop()
	for {
		if done, err := check(); err != nil || done {
			return interrupted(ctx, err)
		}
		select {
		case _, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if settle > 0 {
				select {
				case <-time.After(settle):
				case <-ctx.Done():
				}
			}
			for len(events) > 0 {
				<-events
			}
		case <-poll.C:
		case <-deadline:
			return ErrTimeout
		case <-ctx.Done():
			return interrupted(ctx, ctx.Err())
		}
	}
}

// The bounds of one wait made through a tool call (the MCP wait tool),
// which its client gives up on after a timeout of its own.
const (
	// DefaultToolWait is the wait when the caller gives no timeout.
	DefaultToolWait = 2 * time.Minute
	// MaxToolWait is the longest: Gemini CLI's default MCP tool timeout.
	MaxToolWait = 10 * time.Minute
	// ToolTimeout is the tool timeout coord setup gives the agents' MCP
	// clients: the longest wait and a minute to spare, so that a wait
	// ends with its own answer, never with the client's timeout.
	ToolTimeout = MaxToolWait + time.Minute
)

// WaitRequest asks to wait for work.
type WaitRequest struct {
	Agent   coord.Agent // whose eligibility counts, and whose heartbeat is kept fresh
	TaskID  string      // wait for this task to change state instead
	Timeout time.Duration
	// own, when set, finds work of the agent's own to take up (a Worker's):
	// the wait ends as eligible with it.
	own func(*coord.Txn) *coord.Task
	// mine, when set, lists the agent's own work in flight (a Worker's):
	// while there is any, no work left is not the end of the wait.
	mine func(*coord.Txn) []*coord.Task
	// poll, when set, runs at every look (a Worker's: landings made by
	// hand).
	poll func(context.Context)
}

// WaitResult is what ended a wait.
type WaitResult struct {
	// Status is "eligible" (a task is claimable: Task), "drained" (no work
	// is left at all), or for a named task its new status (Was the old).
	Status string `json:"status"`
	Task   string `json:"task,omitempty"`
	Was    string `json:"was,omitempty"`
}

// Wait blocks until a task is eligible for the agent (coord.Txn.Best; a
// task assigned to it is), or with push scheduling until its inbox holds
// something, or the named task changes state, or no work is left
// (drained, at once). It keeps the agent's heartbeat fresh (every beat_interval) and frees stale
// locks it finds (sweep_on_claim), so a dead agent's conflict group does
// not keep it waiting. A timeout is CodeConflict.
func (s *Service) Wait(ctx context.Context, r WaitRequest) (WaitResult, error) {
	if r.TaskID != "" {
		if err := coord.ValidTaskID(r.TaskID); err != nil {
			return WaitResult{}, err
		}
	}
	beat := r.Agent.ID != ""
	if beat {
		if err := coord.ValidActingAgent(r.Agent.ID); err != nil {
			return WaitResult{}, err
		}
	}
	var lastBeat time.Time
	swept := false
	initial := ""
	var out WaitResult
	check := func() (bool, error) {
		if r.poll != nil {
			r.poll(ctx)
		}
		stale := false
		done := false
		err := s.tasks().View(ctx, func(tx *coord.Txn) error {
			if r.TaskID != "" {
				t := tx.Task(r.TaskID)
				if t == nil {
					return coord.Errorf(coord.CodeConflict, "task %q not found", r.TaskID)
				}
				if initial == "" {
					initial = string(t.Status)
				} else if string(t.Status) != initial {
					out, done = WaitResult{Status: string(t.Status), Task: t.ID, Was: initial}, true
					return nil
				}
			}
			if tx.Drained() && (r.mine == nil || len(r.mine(tx)) == 0) {
				out, done = WaitResult{Status: "drained"}, true
				return nil
			}
			if r.TaskID == "" && r.own != nil {
				if t := r.own(tx); t != nil {
					out, done = WaitResult{Status: "eligible", Task: t.ID}, true
					return nil
				}
			}
			if r.TaskID == "" && s.conf().Scheduling == coord.Push {
				// Push scheduling: what wakes the agent is its inbox.
				if tx.Member(r.Agent.ID) == nil {
					return coord.NotRegistered(r.Agent.ID)
				}
				next := append(tx.Rejected(r.Agent.ID), tx.Waiting(r.Agent.ID)...)
				if len(next) > 0 {
					out, done = WaitResult{Status: "eligible", Task: next[0].ID}, true
					return nil
				}
			} else if r.TaskID == "" {
				if best := tx.Best(r.Agent, false); best != nil {
					out, done = WaitResult{Status: "eligible", Task: best.ID}, true
					return nil
				}
			}
			if holders := tx.LockHolders(); s.conf().SweepOnClaim && len(holders) > 0 {
				seen, now, err := s.b.Beats().LastSeen(ctx, holders)
				if err != nil {
					return err
				}
				stale = len(tx.JudgeStale(seen, now, s.conf().StaleAfter, s.conf().OnStale)) > 0
			}
			return nil
		})
		if err != nil {
			return false, err
		}
		// Beat once the look succeeded: a refused wait (a task that is not
		// there, an agent outside the pool) leaves no trace.
		if beat && time.Since(lastBeat) >= s.conf().BeatInterval {
			if err := s.b.Beats().Beat(ctx, r.Agent.ID, nil); err != nil {
				return false, err
			}
			lastBeat = time.Now()
		}
		if done || !stale {
			return done, nil
		}
		freed, err := s.Sweep(ctx, SweepRequest{})
		swept = len(freed) > 0
		return false, err
	}
	recheck := func() (bool, error) {
		// A sweep that freed something is followed by one more look at once.
		swept = false
		done, err := check()
		if err != nil || done || !swept {
			return done, err
		}
		return check()
	}
	err := s.Until(ctx, r.Timeout, 20*time.Millisecond, recheck)
	if errors.Is(err, ErrTimeout) {
		what := "an eligible task"
		if r.TaskID != "" {
			what = "task " + r.TaskID + " to leave " + initial
		}
		return WaitResult{}, coord.Errorf(coord.CodeConflict, "timed out after %s waiting for %s", coord.RoundDuration(r.Timeout), what)
	}
	return out, err
}
