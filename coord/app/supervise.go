package app

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/rotd/coordination/coord"
)

// Supervisor is the part of the application that acts on work the caller
// does not hold (docs/COMMANDS.md#supervising): take a task from its holder (Requeue),
// push one to an agent (Assign), let a blocked task's owner resume
// (Unblock), decide a review as a human (Approve, Reject). It is what a
// front end for people is given (the dashboard, with a token): it can
// call these and nothing else that writes.
//
// Every act is logged under the name of who asked (Act.By), with why.
// When the project names its supervisors (config.json "supervisors",
// read afresh for every act, so a long-running front end follows a
// change), only they may act; others are refused with CodeConflict
// (errors.Is coord.ErrNotSupervisor) before anything is written.
type Supervisor struct{ s *Service }

// Supervisor returns the Service's supervisor part.
func (s *Service) Supervisor() Supervisor { return Supervisor{s} }

// Act is one supervisor's act on a task.
type Act struct {
	By     string // who asks: an agent id, or the dashboard's user
	TaskID string
	Reason string // why: required to requeue, to reject, and to take a held task away (assign, unblock)
	To     string // Assign: the registered agent the task goes to
	// Reviewer is, for Approve, the human recorded as the task's
	// reviewer ("" : By, a person approving for themself).
	Reviewer string
}

// ActResult is what an act did: the task as it now stands, and one line
// for people.
type ActResult struct {
	Task    *coord.Task
	Message string
}

// check validates who asks, the task id and the reason's bound, before
// any store is touched.
func (a Act) check() error {
	if err := coord.ValidActingAgent(a.By); err != nil {
		return err
	}
	if err := coord.ValidTaskID(a.TaskID); err != nil {
		return err
	}
	return coord.CheckNote("reason", a.Reason)
}

// supervisors is the project's list of supervisors as it stands now (nil:
// anyone may act), read from the stored settings for every act: an engine
// whose Config keeps what it read when opened (a hub's namespace) would
// let a long-running front end (the dashboard) miss a change.
func (s *Service) supervisors(ctx context.Context) ([]string, error) {
	if s.formats == nil {
		cfg, err := s.b.Config(ctx)
		return cfg.Supervisors, interrupted(ctx, err)
	}
	st, err := s.Setting(ctx, "supervisors")
	if err != nil {
		return nil, interrupted(ctx, err)
	}
	var list []string
	if err := json.Unmarshal(st.Value, &list); err != nil {
		return nil, coord.Wrap(coord.CodeIO, err, "%s: the stored \"supervisors\" does not read", s.b.Where())
	}
	return list, nil
}

// Requeue takes a claimed or blocked task back to unclaimed, whoever
// holds it; its holder is fenced (its next write is CodeLost) and the
// path locks it took for the task are freed (coord.Txn.Requeue).
func (v Supervisor) Requeue(ctx context.Context, a Act) (ActResult, error) {
	if err := a.check(); err != nil {
		return ActResult{}, err
	}
	if err := coord.CheckReason("requeue", a.Reason); err != nil {
		return ActResult{}, err
	}
	list, err := v.s.supervisors(ctx)
	if err != nil {
		return ActResult{}, err
	}
	if err := coord.CheckSupervisor(list, a.By, "requeue task "+a.TaskID); err != nil {
		return ActResult{}, err
	}
	var res ActResult
	err = v.s.tasks().Update(ctx, func(tx *coord.Txn) error {
		t, holder, err := tx.Requeue(a.By, a.TaskID, a.Reason)
		if err != nil {
			return err
		}
		res = ActResult{Task: t, Message: "requeued " + t.ID + " (it had no owner)"}
		if holder != "" {
			res.Message = fmt.Sprintf("requeued %s (taken from %s, epoch %d: its next write is refused)", t.ID, holder, t.Epoch)
		}
		return nil
	})
	if err != nil {
		return ActResult{}, interrupted(ctx, err)
	}
	return res, nil
}

// Assign pushes a task to a registered, live agent (coord.Txn.Assign):
// an unclaimed task to an implementer's inbox, a task in review to a
// reviewer; a held one is taken from its holder first (a reason is then
// required). Pull mode or push, the assignee's inbox (and claim) takes it
// and nobody else may claim it.
func (v Supervisor) Assign(ctx context.Context, a Act) (ActResult, error) {
	if err := a.check(); err != nil {
		return ActResult{}, err
	}
	if a.To == "" {
		return ActResult{}, coord.Errorf(coord.CodeUsage, "assign needs the agent it goes to").WithHint("give --to AGENT")
	}
	if err := coord.ValidActingAgent(a.To); err != nil {
		return ActResult{}, err
	}
	cfg, err := v.s.b.Config(ctx)
	if err != nil {
		return ActResult{}, interrupted(ctx, err)
	}
	list, err := v.s.supervisors(ctx)
	if err != nil {
		return ActResult{}, err
	}
	if err := coord.CheckSupervisor(list, a.By, "assign task "+a.TaskID); err != nil {
		return ActResult{}, err
	}
	seen, now, err := v.s.b.Beats().LastSeen(ctx, []string{a.To})
	if err != nil {
		return ActResult{}, interrupted(ctx, err)
	}
	var res ActResult
	err = v.s.tasks().Update(ctx, func(tx *coord.Txn) error {
		if tx.Member(a.To) != nil && !tx.PoolLive(seen, now, cfg.StaleAfter)[a.To] {
			return coord.Errorf(coord.CodeConflict, "task %q cannot be assigned to %s: %s is registered but stale (silent longer than stale_after %s), so it would never start it",
				a.TaskID, a.To, a.To, coord.RoundDuration(cfg.StaleAfter)).WithHint("assign it to a live agent ('coord agents' lists them)")
		}
		r, err := tx.Assign(a.By, a.TaskID, a.To, a.Reason)
		if err != nil {
			return err
		}
		res.Task = r.Task
		switch {
		case r.Unchanged:
			res.Message = fmt.Sprintf("%s is assigned to %s already", r.Task.ID, a.To)
		case r.From != "":
			res.Message = fmt.Sprintf("assigned %s to %s (taken from %s: its next write is refused)", r.Task.ID, a.To, r.From)
		case r.Before != "":
			res.Message = fmt.Sprintf("assigned %s to %s (was assigned to %s)", r.Task.ID, a.To, r.Before)
		default:
			res.Message = fmt.Sprintf("assigned %s to %s", r.Task.ID, a.To)
		}
		if !r.Unchanged && r.Task.Status == coord.Review {
			res.Message += " for review"
		}
		return nil
	})
	if err != nil {
		return ActResult{}, interrupted(ctx, err)
	}
	return res, nil
}

// Unblock returns a blocked task to the pool for someone who does not
// hold it: unclaimed, its holder as owner who takes it first (a reason
// is then required), its branch and review notes kept; an ownerless one
// back to the queue (coord.Txn.UnblockFor).
// The owner unblocking its own task is no supervisor's act and is never
// refused for want of being one.
func (v Supervisor) Unblock(ctx context.Context, a Act) (ActResult, error) {
	if err := a.check(); err != nil {
		return ActResult{}, err
	}
	list, err := v.s.supervisors(ctx)
	if err != nil {
		return ActResult{}, err
	}
	var res ActResult
	err = v.s.tasks().Update(ctx, func(tx *coord.Txn) error {
		if t := tx.Task(a.TaskID); t == nil || t.ClaimedBy != a.By {
			if err := coord.CheckSupervisor(list, a.By, "unblock task "+a.TaskID); err != nil {
				return err
			}
		}
		owner := ""
		if t := tx.Task(a.TaskID); t != nil {
			owner = t.ClaimedBy
		}
		t, err := tx.UnblockFor(a.By, a.TaskID, a.Reason)
		if err != nil {
			return err
		}
		res = ActResult{Task: t, Message: "unblocked " + t.ID + " (back in the queue)"}
		if owner != "" {
			res.Message = "unblocked " + t.ID + " (back in the pool; " + owner + " takes it first)"
		}
		return nil
	})
	if err != nil {
		return ActResult{}, interrupted(ctx, err)
	}
	return res, nil
}

// Cancel takes a task out of the work with a reason (coord.Txn.Cancel):
// it moves to the archive as cancelled, its holder is fenced, its claims
// are freed, and the tasks that depend on it no longer wait for it. Its
// branch stays in the repository (work on it that the target lacks is
// never deleted). A task the caller holds is its own to cancel; any
// other is a supervisor's act.
func (v Supervisor) Cancel(ctx context.Context, a Act) (ActResult, error) {
	if err := a.check(); err != nil {
		return ActResult{}, err
	}
	if err := coord.CheckReason("cancel", a.Reason); err != nil {
		return ActResult{}, err
	}
	list, err := v.s.supervisors(ctx)
	if err != nil {
		return ActResult{}, err
	}
	var res ActResult
	var freed []string
	err = v.s.tasks().Update(ctx, func(tx *coord.Txn) error {
		if t := tx.Task(a.TaskID); t == nil || t.ClaimedBy != a.By || !t.HoldsLock() {
			if err := coord.CheckSupervisor(list, a.By, "cancel task "+a.TaskID); err != nil {
				return err
			}
		}
		freed = freed[:0]
		for _, o := range tx.Tasks {
			if o.ID != a.TaskID && !o.Status.Settled() && slices.Contains(tx.Deps(o), a.TaskID) {
				freed = append(freed, o.ID)
			}
		}
		t, holder, err := tx.Cancel(a.By, a.TaskID, a.Reason)
		if err != nil {
			return err
		}
		res = ActResult{Task: t, Message: "cancelled " + t.ID}
		if holder != "" {
			res.Message += " (taken from " + holder + ": its next write is refused)"
		}
		if len(freed) > 0 {
			res.Message += "; no longer waited for by task " + strings.Join(freed, ", ")
		}
		return nil
	})
	if err != nil {
		return ActResult{}, interrupted(ctx, err)
	}
	return res, nil
}

// Approve approves a task in review as a human's decision: Reviewer (or
// By) recorded as its reviewer, of kind human, the reason logged as a
// note.
func (v Supervisor) Approve(ctx context.Context, a Act) (ActResult, error) {
	human := a.Reviewer
	if human == "" {
		human = a.By
	}
	if err := a.check(); err != nil {
		return ActResult{}, err
	}
	t, err := v.s.Approve(ctx, ApproveRequest{Agent: a.By, TaskID: a.TaskID, Human: human, Note: a.Reason})
	if err != nil {
		return ActResult{}, err
	}
	return ActResult{Task: t, Message: "approved " + t.ID + " (reviewer " + human + ")"}, nil
}

// Reject hands a task in review back to its owner with the reason as its
// review notes (or blocks it at max_rejections), as Service.Reject does
// for a reviewer; here it is a person's decision, kept to the project's
// supervisors when it names them.
func (v Supervisor) Reject(ctx context.Context, a Act) (ActResult, error) {
	if err := a.check(); err != nil {
		return ActResult{}, err
	}
	if err := coord.CheckReason("reject", a.Reason); err != nil {
		return ActResult{}, err
	}
	list, err := v.s.supervisors(ctx)
	if err != nil {
		return ActResult{}, err
	}
	if err := coord.CheckSupervisor(list, a.By, "reject task "+a.TaskID); err != nil {
		return ActResult{}, err
	}
	t, err := v.s.Reject(ctx, a.By, a.TaskID, a.Reason)
	if err != nil {
		return ActResult{}, err
	}
	if t.Status == coord.Blocked {
		return ActResult{Task: t, Message: "rejected " + t.ID + " and blocked it: " + t.BlockedReason}, nil
	}
	return ActResult{Task: t, Message: "rejected " + t.ID + " (back to " + t.ClaimedBy + ")"}, nil
}

// reviewAct refuses, for a caller that is not a supervisor (list set), a
// decision on a review routed to another reviewer: that review is the
// other's work.
func reviewAct(list []string, tx *coord.Txn, by, id, verb string) error {
	t := tx.Task(id)
	if t == nil || t.Status != coord.Review || t.AssignedTo == "" || t.AssignedTo == by {
		return nil
	}
	return coord.CheckSupervisor(list, by, verb+" task "+id+", a review routed to "+t.AssignedTo)
}
