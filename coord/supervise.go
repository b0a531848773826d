package coord

import (
	"errors"
	"strconv"
	"strings"
)

// The supervisor's acts (docs/COMMANDS.md#supervising): what a person, or an agent that
// coordinates others, does to work it does not hold. Requeue takes a task
// from its holder, Assign pushes one to an agent, UnblockFor lets a
// blocked task's owner resume. Each is logged under the name of who asked,
// with why. Who may act is the project's choice (config.json
// "supervisors", CheckSupervisor); the application asks it before it
// calls any of these.

// ErrNotSupervisor marks a refusal of an act the project keeps to its
// supervisors (CheckSupervisor).
var ErrNotSupervisor = errors.New("not one of the project's supervisors")

// CheckSupervisor refuses actor the act what (a verb and its object:
// "requeue task 4.2") when the project names its supervisors (list, from
// config.json "supervisors") and actor is not one of them: CodeConflict,
// wrapping ErrNotSupervisor. An empty list lets every agent act.
func CheckSupervisor(list []string, actor, what string) error {
	if len(list) == 0 {
		return nil
	}
	for _, id := range list {
		if id == actor {
			return nil
		}
	}
	return (&Error{Code: CodeConflict, Msg: clip(actor) + " may not " + what, Err: ErrNotSupervisor}).
		WithHint("config.json \"supervisors\" names %s; ask one of them, or add %s with 'coord config set supervisors'", strings.Join(list, ", "), clip(actor))
}

// CheckSupervisors validates a supervisors list as config.json holds it:
// agent ids, at least one (an empty list would keep every act from
// everyone; leaving the key out lets anyone act).
func CheckSupervisors(list []string) error {
	if len(list) == 0 {
		return Errorf(CodeUsage, "\"supervisors\" is empty: nobody could requeue, assign or unblock").
			WithHint("name at least one agent id, or unset it to let any agent act")
	}
	for _, id := range list {
		if err := ValidActingAgent(id); err != nil {
			return err
		}
	}
	return nil
}

// found returns the task id names, or CodeConflict when there is none.
func (tx *Txn) found(id string) (*Task, error) {
	if err := ValidTaskID(id); err != nil {
		return nil, err
	}
	t := tx.Task(id)
	if t == nil {
		return nil, Errorf(CodeConflict, "task %q not found", id).WithHint("run 'coord ls' to see the task ids")
	}
	return t, nil
}

// Requeue takes a claimed or blocked task back to unclaimed for by, with
// reason, whoever holds it (or nobody: a blocked task whose owner was
// swept). Its holder is fenced: the task is no longer its, so its next
// release, progress or block (with or without its epoch) is CodeLost, and
// the next claim issues a new epoch. The path locks the holder took for
// the task go with it. holder is who held it ("" nobody).
func (tx *Txn) Requeue(by, id, reason string) (t *Task, holder string, err error) {
	if err := CheckReason("requeue", reason); err != nil {
		return nil, "", err
	}
	if err := ValidActingAgent(by); err != nil {
		return nil, "", err
	}
	if t, err = tx.found(id); err != nil {
		return nil, "", err
	}
	if t.Status == Unclaimed && t.Owner != "" {
		// Returned to its owner: requeued, it is anyone's.
		holder, t.Owner = t.Owner, ""
		t.freeClaims()
		t.Dirty = true
		tx.Log(by, "requeued task %s from its owner %s%s", t.ID, holder, suffix(reason))
		return t, holder, nil
	}
	if t.Status != Claimed && t.Status != Blocked {
		return nil, "", notHeld(t, "requeued")
	}
	holder = tx.requeue(by, t, reason)
	return t, holder, nil
}

// notHeld is the refusal of an act that needs a claimed or blocked task.
func notHeld(t *Task, done string) *Error {
	e := Errorf(CodeConflict, "task %q is %s: only a claimed or blocked task is %s", t.ID, t.Status, done)
	switch t.Status {
	case Review:
		return e.WithHint("approve or reject it")
	case Unclaimed:
		return e.WithHint("it is in the queue already; 'coord assign %s --to AGENT' pushes it to an agent", t.ID)
	}
	return e
}

// requeue is Requeue's change, on a claimed or blocked task; it returns
// the holder it took the task from.
func (tx *Txn) requeue(by string, t *Task, reason string) string {
	holder, epoch := t.ClaimedBy, t.Epoch
	t.Status = Unclaimed
	t.Owner = ""
	t.ClaimedBy, t.ClaimedAt, t.CompletedAt = "", "", ""
	t.Progress = 0
	t.BlockedReason, t.BlockedAt = "", ""
	t.AssignedTo, t.AssignedAt, t.ReviewStartedAt = "", "", ""
	t.freeClaims() // back in the queue: its write claims go with its holder
	t.Dirty = true
	if holder == "" {
		tx.Log(by, "requeued task %s (it had no owner)%s", t.ID, suffix(reason))
		return ""
	}
	t.Fenced = holder
	tx.Log(by, "requeued task %s from %s (epoch %d)%s", t.ID, holder, epoch, suffix(reason))
	tx.dropPathLocks(by, func(l PathLock) bool { return l.Holder == holder && l.TaskID == t.ID })
	return holder
}

// AssignResult is what Assign did.
type AssignResult struct {
	Task *Task
	// From is the agent the task was taken from (it held it: requeued
	// first), "" when nobody held it.
	From string
	// Before is the agent it was assigned to before, "" none.
	Before string
	// Unchanged is set when it was already assigned to that agent.
	Unchanged bool
}

// Assign pushes a task to the registered agent to for by, as a scheduler
// would (assigned_to, assigned_at), in pull mode as in push mode: an
// unclaimed task waits in to's inbox (an implementer that suits it, the
// task's dependencies done and its conflict group and files free); a
// task in review goes to the reviewer to (one that did not claim it and
// suits it). A claimed or blocked task is first taken from its holder
// (Requeue, so reason is then required) and then assigned, in the same
// change. Assigning a task to the agent it already waits for changes
// nothing. Every refusal is CodeConflict, naming why, and changes nothing.
func (tx *Txn) Assign(by, id, to, reason string) (AssignResult, error) {
	if err := CheckNote("reason", reason); err != nil {
		return AssignResult{}, err
	}
	if err := ValidActingAgent(by); err != nil {
		return AssignResult{}, err
	}
	if err := ValidActingAgent(to); err != nil {
		return AssignResult{}, err
	}
	t, err := tx.found(id)
	if err != nil {
		return AssignResult{}, err
	}
	m := tx.Member(to)
	if m == nil {
		return AssignResult{}, NotRegistered(to)
	}
	refuse := func(why string) (AssignResult, error) {
		return AssignResult{}, Errorf(CodeConflict, "task %q cannot be assigned to %s: %s", id, to, why)
	}
	held := t.Status == Claimed || t.Status == Blocked
	switch {
	case t.Status == Done:
		return refuse("it is done")
	case held && t.ClaimedBy == to:
		return refuse(to + " holds it already")
	case held:
		if err := CheckReason("assign", reason); err != nil {
			e := err.(*Error)
			e.Msg = "assign needs a reason: task " + strconv.Quote(id) + " is " + string(t.Status) + " and goes back to the queue first"
			return AssignResult{}, e
		}
	case t.Status == Review:
		if m.Role != Reviewer {
			return refuse("a task in review goes to a reviewer, and " + to + " is a " + string(m.Role))
		}
		if why := reviewUnsuited(t, m); why != "" {
			return refuse(to + " " + why)
		}
		if t.AssignedTo == to && t.ReviewStartedAt != "" {
			return refuse(to + " is reviewing it already")
		}
	}
	if t.Status != Review {
		if m.Role != Implementer {
			return refuse(to + " is a " + string(m.Role) + ", not an implementer")
		}
		if why := unsuited(t, m.Agent()); why != "" {
			return refuse("it " + why)
		}
		if why := tx.depsBlocked(t); why != "" {
			return refuse(why)
		}
		if why := tx.occupied(t, tx.holders()); why != "" {
			return refuse(why)
		}
	}
	res := AssignResult{Task: t, Before: t.AssignedTo}
	if t.AssignedTo == to && !held {
		res.Unchanged = true
		return res, nil
	}
	if held {
		res.From = tx.requeue(by, t, reason)
		res.Before = ""
	}
	setAssigned(t, to, tx.Now)
	what := "assigned task %s to %s"
	if t.Status == Review {
		what = "assigned task %s to %s for review"
	}
	from := ""
	if res.Before != "" {
		from = " (was assigned to " + res.Before + ")"
	}
	tx.Log(by, what+"%s%s", t.ID, to, from, suffix(reason))
	return res, nil
}

// UnblockFor unblocks a blocked task for by, who does not hold it: the
// task goes back to the pool (unclaimed), its holder as its owner, who
// takes it first (Unblock); an ownerless one to the pool as it is. Its
// branch, base and review notes stay. Unblocking another agent's task
// needs a reason (logged); an ownerless one may have one.
func (tx *Txn) UnblockFor(by, id, reason string) (*Task, error) {
	if err := CheckNote("reason", reason); err != nil {
		return nil, err
	}
	if err := ValidActingAgent(by); err != nil {
		return nil, err
	}
	t, err := tx.found(id)
	if err != nil {
		return nil, err
	}
	if t.Status != Blocked {
		return nil, Errorf(CodeConflict, "task %q is %s, not blocked", id, t.Status)
	}
	holder := t.ClaimedBy
	if holder == "" || holder == by {
		tx.toPool(t, holder)
		tx.Log(by, "unblocked task %s%s", id, suffix(reason))
		return t, nil
	}
	if err := CheckReason("unblock", reason); err != nil {
		e := err.(*Error)
		e.Msg = "unblocking a task " + holder + " holds needs a reason"
		return nil, e
	}
	tx.toPool(t, holder)
	tx.Log(by, "unblocked task %s: back in the pool, %s first%s", id, holder, suffix(reason))
	return t, nil
}

// Cancel takes a task out of the work for by, with reason: it moves to
// the archive as Cancelled (Outbox), its holder fenced, its path locks
// and write claims freed; the tasks that depend on it no longer wait for
// it (a cancelled prerequisite is settled). Work already on the target
// cannot be cancelled, nor a task finished without work to land. holder
// is who held it ("" nobody).
func (tx *Txn) Cancel(by, id, reason string) (t *Task, holder string, err error) {
	if err := CheckReason("cancel", reason); err != nil {
		return nil, "", err
	}
	if err := ValidActingAgent(by); err != nil {
		return nil, "", err
	}
	if t, err = tx.found(id); err != nil {
		return nil, "", err
	}
	switch {
	case t.Status == Cancelled:
		return nil, "", Errorf(CodeConflict, "task %q is cancelled already", id)
	case t.LandedAt != "":
		return nil, "", Errorf(CodeConflict, "task %q landed at %s: its work is on the target and cannot be cancelled", id, t.LandedAt)
	case t.Status == Done && !t.InFlight():
		return nil, "", Errorf(CodeConflict, "task %q is done: nothing left to cancel", id).WithHint("'coord archive' moves done tasks out of the registry")
	}
	holder = t.ClaimedBy
	if t.HoldsLock() {
		tx.dropPathLocks(by, func(l PathLock) bool { return l.Holder == holder && l.TaskID == t.ID })
	}
	was := t.Status
	t.Status = Cancelled
	t.BlockedReason, t.BlockedAt = "", ""
	t.AssignedTo, t.AssignedAt, t.ReviewStartedAt = "", "", ""
	t.Owner = ""
	t.ReviewNotes = OneLine(reason)
	t.CompletedAt = FormatTime(tx.Now)
	t.freeClaims()
	t.Dirty = true
	keep := tx.Tasks[:0:0]
	for _, x := range tx.Tasks {
		if x != t {
			keep = append(keep, x)
		}
	}
	tx.Tasks = keep
	tx.Index()
	tx.Outbox = append(tx.Outbox, t)
	from := ""
	if holder != "" && (was == Claimed || was == Blocked) {
		from = " from " + holder
	}
	tx.Log(by, "cancelled task %s (%s%s)%s", id, was, from, suffix(reason))
	return t, holder, nil
}
