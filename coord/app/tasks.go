package app

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rotd/coordination/coord"
)

// SeedRequest adds a batch of tasks.
type SeedRequest struct {
	Name     string // where the batch came from, for messages ("tasks.jsonl", "stdin")
	Batch    []coord.SeedLine
	Validate bool // only check; write nothing
	// Update lets a line redefine a task the registry holds and nobody
	// has claimed yet: its planning fields change, its state stays.
	Update bool
	By     string // who seeds (logged); "" is the coordinator
}

// SeedResult is what Seed did (with Validate: would do). Count and IDs
// are the tasks added; Updated and UpdatedIDs the tasks redefined;
// Unchanged and UnchangedIDs the lines that define a task exactly as the
// registry holds it, skipped.
type SeedResult struct {
	Validated    bool     `json:"validated"`
	Count        int      `json:"count"`
	IDs          []string `json:"ids"`
	Updated      int      `json:"updated"`
	UpdatedIDs   []string `json:"updated_ids"`
	Unchanged    int      `json:"unchanged"`
	UnchangedIDs []string `json:"unchanged_ids"`
	// Planned counts the tasks of the batch that were planned
	// (predicted_files recorded), unless config.json says
	// "plan": "manual"; PlanNote says why planning was skipped or what
	// went wrong with it ("" when nothing did). Neither is part of the
	// printed JSON.
	Planned  int    `json:"-"`
	PlanNote string `json:"-"`
}

// Seed checks a batch against the registry and, unless Validate, applies
// it whole in one commit (new tasks added, with Update redefined ones
// changed; lines identical to the registry's tasks skipped); one bad line
// refuses the batch with its line number. A batch that changes nothing
// writes nothing.
func (s *Service) Seed(ctx context.Context, r SeedRequest) (SeedResult, error) {
	if len(r.Batch) == 0 {
		return SeedResult{}, coord.Errorf(coord.CodeUsage, "%s: no tasks in the batch", r.Name)
	}
	if err := coord.CheckSeedText(r.Batch); err != nil {
		if ce, ok := err.(*coord.Error); ok {
			ce.Msg = r.Name + ": " + ce.Msg
		}
		return SeedResult{}, err
	}
	by := r.By
	if by == "" {
		by = coord.CoordinatorID
	}
	var plan coord.SeedPlan
	check := func(tx *coord.Txn) error {
		var err error
		if plan, err = tx.CheckSeed(r.Batch, r.Update); err != nil {
			if ce, ok := err.(*coord.Error); ok {
				ce.Msg = r.Name + ": " + ce.Msg
				return ce
			}
			return err
		}
		if r.Validate {
			return nil
		}
		for _, t := range plan.Add {
			if t.Priority == "" {
				t.Priority = coord.Medium
			}
			tx.Add(t)
		}
		if len(plan.Add) > 0 {
			tx.Log(by, "seeded %d tasks", len(plan.Add))
		}
		for _, u := range plan.Update {
			u.Task.Redefine(u.Def)
			tx.Log(by, "redefined task %s (%s)", u.Task.ID, strings.Join(u.Changed, ", "))
		}
		return nil
	}
	var err error
	if r.Validate {
		err = s.tasks().View(ctx, check)
	} else {
		err = s.tasks().Update(ctx, check)
	}
	if err != nil {
		return SeedResult{}, interrupted(ctx, err)
	}
	res := SeedResult{Validated: r.Validate, IDs: []string{}, UpdatedIDs: []string{}, UnchangedIDs: []string{}}
	for _, t := range plan.Add {
		res.IDs = append(res.IDs, t.ID)
	}
	for _, u := range plan.Update {
		res.UpdatedIDs = append(res.UpdatedIDs, u.Task.ID)
	}
	res.UnchangedIDs = append(res.UnchangedIDs, plan.Unchanged...)
	res.Count, res.Updated, res.Unchanged = len(res.IDs), len(res.UpdatedIDs), len(res.UnchangedIDs)
	if !r.Validate {
		res.Planned, res.PlanNote = s.planSeeded(ctx, append(slices.Clone(res.IDs), res.UpdatedIDs...))
	}
	return res, nil
}

// SeedPlanTimeout bounds the planning of a seeded batch: the batch is
// in the registry whatever happens to its planning.
const SeedPlanTimeout = 20 * time.Second

// planSeeded plans a batch just seeded, unless the project
// plans by hand or has no history; a failure is a note, never the
// seed's error (the batch is committed).
func (s *Service) planSeeded(ctx context.Context, ids []string) (int, string) {
	if len(ids) == 0 || s.conf().Plan == coord.PlanManual || s.history == nil {
		return 0, ""
	}
	pctx, cancel := context.WithTimeout(ctx, SeedPlanTimeout)
	defer cancel()
	res, err := s.Plan(pctx, PlanRequest{Tasks: ids})
	switch {
	case err != nil && pctx.Err() != nil && ctx.Err() == nil:
		return 0, fmt.Sprintf("planning the batch took longer than %v: not planned (run 'coord plan')", SeedPlanTimeout)
	case err != nil:
		return 0, "planning the batch failed: " + coord.OneLine(err.Error()) + " (run 'coord plan')"
	case res.NoHistory:
		return 0, ""
	}
	return len(res.Predictions), res.Warning
}

// ClaimRequest asks for one task.
type ClaimRequest struct {
	Agent  coord.Agent
	TaskID string // this task or a conflict; "" for the best eligible one
	Any    bool   // the first eligible in registry order, not by priority
}

// ClaimResult is what a claim got: the task, or none (Task nil), and then
// whether no work is left at all (Drained: no task unclaimed, claimed,
// blocked or in review).
type ClaimResult struct {
	Task    *coord.Task
	Drained bool
	// Since is when the beat inside the claim's commit began (the local
	// clock): the agent was alive then. A Keeper counts from it.
	Since time.Time
}

// Claim's answers when it got no task (the "status" every front end
// prints: claim, run and the MCP claim tool).
const (
	// StatusNoEligible: work remains, none of it eligible for the caller
	// now (deps not done, its group or files held, in review, claimed).
	StatusNoEligible = "no_eligible_task"
	// StatusDrained: no work is left at all; as wait and run say it.
	StatusDrained = "drained"
)

// Status is what a claim that got no task answers: StatusDrained when no
// work is left at all, else StatusNoEligible; "" when it got a task.
func (r ClaimResult) Status() string {
	switch {
	case r.Task != nil:
		return ""
	case r.Drained:
		return StatusDrained
	}
	return StatusNoEligible
}

// Claim frees stale locks in the same commit when the configuration
// allows (sweep_on_claim), and claims: the named task, or the best
// eligible one (coord.Txn.Best); with push scheduling, without a task, it
// takes from the agent's inbox as Inbox does. A task assigned to another
// agent is never claimed (CodeConflict). The agent beats inside the
// commit (beatWithin); its heartbeat then names the task. A refused claim
// leaves no trace: no heartbeat, no log line.
func (s *Service) Claim(ctx context.Context, r ClaimRequest) (ClaimResult, error) {
	var res ClaimResult
	if err := coord.ValidActingAgent(r.Agent.ID); err != nil {
		return res, err
	}
	if r.TaskID != "" {
		if err := coord.ValidTaskID(r.TaskID); err != nil {
			return res, err
		}
	}
	if r.TaskID == "" && s.conf().Scheduling == coord.Push {
		// Push scheduling: claim takes from the caller's inbox.
		in, drained, err := s.take(ctx, r.Agent.ID)
		return ClaimResult{Task: in.Task, Drained: drained, Since: in.Since}, err
	}
	early := s.seenEarly(ctx)
	defer early.stop()
	p := s.placeEarly(ctx)
	defer p.wait() // nothing of the call outlives it
	fresh := false
	err := s.tasks().Update(ctx, func(tx *coord.Txn) error {
		if err := s.sweepIn(ctx, tx, early, r.Agent.ID); err != nil {
			return err
		}
		last := tx.LastEpoch
		t, err := tx.Claim(r.Agent, coord.ClaimOptions{TaskID: r.TaskID, Any: r.Any})
		if err != nil {
			return err
		}
		fresh = tx.LastEpoch != last // not work of its own handed back as it stands
		if err := p.decide(t); err != nil {
			return err
		}
		res = ClaimResult{Task: t, Drained: t == nil && tx.Drained(), Since: time.Now()}
		return s.beatWithin(ctx, r.Agent.ID)
	})
	if err != nil {
		return ClaimResult{}, interrupted(ctx, err)
	}
	if res.Task != nil {
		if err := s.enter(ctx, p, res.Task, s.undoTake(ctx, r.Agent, res.Task, fresh)); err != nil {
			return ClaimResult{}, err
		}
		s.beatHolding(ctx, r.Agent, []*coord.Task{res.Task})
	}
	return res, nil
}

// undoTake is what a take that cannot check out its task's branch does
// (nil: nothing): a fresh claim is handed back, as the take never
// happened; work of the agent's own stays its own.
func (s *Service) undoTake(ctx context.Context, a coord.Agent, t *coord.Task, fresh bool) func(string) {
	if !fresh {
		return nil
	}
	ref := TaskRef{Agent: a, TaskID: t.ID, Epoch: t.Epoch}
	return func(why string) {
		_, err := s.HandBack(context.WithoutCancel(ctx), ref, "not taken: "+why)
		s.warnf(err)
	}
}

// Holds says why agent no longer holds the task at the epoch ("" while it
// does): what a running command's keeper checks on every beat.
func (s *Service) Holds(ctx context.Context, r TaskRef) (string, error) {
	why := ""
	err := s.tasks().View(ctx, func(tx *coord.Txn) error {
		t := tx.Task(r.TaskID)
		switch {
		case t == nil:
			why = "the task is gone"
		case t.ClaimedBy != r.Agent.ID || !t.HoldsLock():
			holder := t.ClaimedBy
			if holder == "" {
				holder = "nobody"
			}
			why = "it is now " + string(t.Status) + " by " + holder
		case r.Epoch != coord.NoEpoch && t.Epoch != r.Epoch:
			why = fmt.Sprintf("it was reclaimed (epoch %d, ours %d)", t.Epoch, r.Epoch)
		}
		return nil
	})
	return why, interrupted(ctx, err)
}

// early is every agent's last beat, read in the background before a
// commit (seenEarly) for sweepIn.
type early struct {
	done   chan struct{}
	cancel context.CancelFunc
	seen   map[string]time.Time
	now    time.Time
	err    error
}

// seenEarly starts reading every agent's last beat (BeatStore.SeenAll)
// while the caller goes on to its commit; nil when the commit sweeps
// nothing (sweep_on_claim off). The caller stops it before it returns.
func (s *Service) seenEarly(ctx context.Context) *early {
	if !s.conf().SweepOnClaim {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	e := &early{done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(e.done)
		e.seen, e.now, e.err = s.b.Beats().SeenAll(ctx)
	}()
	return e
}

// stop ends the reading if it is still under way (a commit that found no
// holder never waited for it) and waits for its end: nothing of a call
// outlives it.
func (e *early) stop() {
	if e == nil {
		return
	}
	e.cancel()
	<-e.done
}

// beatWithin beats for agent from inside a commit's transaction, once the
// transaction has succeeded and before it is written: on files under the
// registry flock, on NATS before the compare-and-set. A sweep that can see
// the commit therefore sees the beat too (it judges under the same
// exclusion, or its compare-and-set fails against the commit and it
// judges again), so the committing agent is never judged stale by the
// heartbeat it had before; and a transaction that is refused never beats.
// A beat that fails fails the transaction: nothing is written. (On NATS a
// commit that loses its compare-and-set runs the transaction again; if the
// second run is refused, the first run's beat stays: a refusal that only a
// concurrent writer can cause, never one of the caller's input.)
func (s *Service) beatWithin(ctx context.Context, agent string) error {
	return s.b.Beats().Beat(ctx, agent, nil)
}

// sweepIn frees, inside the caller's transaction, the locks whose agents
// went stale (when sweep_on_claim is on); never those of self, the agent
// acting in this transaction, which is alive (it beats inside the same
// commit, beatWithin). Only a reading made under the
// commit's exclusion frees a lock; a reading made before it (e, from
// seenEarly; nil: none) can only be older, so a holder it shows alive at
// the commit's now is alive, and only the holders it shows silent (or
// does not show) are read again here. When nothing is stale, that is no
// read at all inside the commit, however many agents hold locks.
func (s *Service) sweepIn(ctx context.Context, tx *coord.Txn, e *early, self string) error {
	if !s.conf().SweepOnClaim {
		return nil
	}
	holders := slices.DeleteFunc(tx.LockHolders(), func(a string) bool { return a == self })
	if len(holders) == 0 {
		return nil
	}
	suspects := holders
	if e != nil {
		<-e.done
		if e.err == nil {
			now := e.now
			if tx.Now.After(now) {
				now = tx.Now
			}
			suspects = slices.DeleteFunc(staleAgents(tx.JudgeStale(e.seen, now, s.conf().StaleAfter, s.conf().OnStale)),
				func(a string) bool { return a == self })
			if len(suspects) == 0 {
				return nil
			}
		}
		// An early reading that failed is no verdict: read every holder.
	}
	seen, now, err := s.b.Beats().LastSeen(ctx, suspects)
	if err != nil {
		return err
	}
	for _, st := range tx.JudgeStale(seen, now, s.conf().StaleAfter, s.conf().OnStale) {
		if slices.Contains(suspects, st.Agent) {
			tx.FreeStale(st.Ref(), s.conf().OnStale)
		}
	}
	return nil
}

// staleAgents are the agents of the judged locks, each once, sorted.
func staleAgents(judged []coord.Stale) []string {
	var out []string
	for _, st := range judged {
		out = append(out, st.Agent)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// beatHolding beats with a description of what the agent now holds; a
// failure is a warning (the operation is done).
func (s *Service) beatHolding(ctx context.Context, a coord.Agent, held []*coord.Task) {
	in := &coord.BeatInfo{Status: coord.AgentIdle, Capabilities: a.Caps}
	if len(held) > 0 {
		id := held[0].ID
		in.CurrentTask = &id
		in.Status = coord.AgentWorking
		if held[0].Status == coord.Blocked {
			in.Status = coord.AgentBlocked
		}
	}
	s.warnf(s.b.Beats().Beat(context.WithoutCancel(ctx), a.ID, in))
}

// TaskRef names a task an agent holds, at the epoch it was given (NoEpoch:
// check the owner only).
type TaskRef struct {
	Agent  coord.Agent
	TaskID string
	Epoch  int64
}

func (r TaskRef) check() error {
	if err := coord.ValidActingAgent(r.Agent.ID); err != nil {
		return err
	}
	if err := coord.ValidTaskID(r.TaskID); err != nil {
		return err
	}
	if r.Epoch != coord.NoEpoch {
		return coord.CheckEpoch(r.Epoch)
	}
	return nil
}

// held runs op on a task the agent holds and then beats with what it still
// holds. text is the call's free text and what names it ("reason",
// "summary", "note"; "" when there is none): it is checked against
// coord.MaxNote with the ids, before any store is touched.
func (s *Service) held(ctx context.Context, r TaskRef, what, text string, op func(tx *coord.Txn) (*coord.Task, error)) (*coord.Task, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	if err := coord.CheckNote(what, text); err != nil {
		return nil, err
	}
	var got *coord.Task
	var still []*coord.Task
	err := s.tasks().Update(ctx, func(tx *coord.Txn) error {
		t, err := op(tx)
		got = t
		still = tx.HeldBy(r.Agent.ID)
		return err
	})
	if err != nil {
		return nil, interrupted(ctx, err)
	}
	s.beatHolding(ctx, r.Agent, still)
	return got, nil
}

// Release finishes a held task: done, or review with the review gate; the
// path locks taken for it go in the same commit. Summary goes to the log
// ("": one coord writes, the task's commits since its base and what they
// changed, and uncommitted changes if any). In a git repository the
// release records the work: the tip of the task's branch as its head
// (when the branch has commits of its own against the target), wherever
// the caller stands, and the paths those commits changed among its
// touched files; the task's write claims then hold until that head has
// landed. A release from a worktree standing on another branch with
// commits the task's branch lacks is refused (workDone). With
// require_verified the release is refused (CodeConflict, naming the
// mismatch) unless the task's newest receipt passed on the tree of the
// caller's worktree as it stands (coord.Txn.CheckVerified).
func (s *Service) Release(ctx context.Context, r TaskRef, summary string) (*coord.Task, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	if err := coord.CheckNote("summary", summary); err != nil {
		return nil, err
	}
	work, err := s.workDone(ctx, r.TaskID, summary == "")
	if err != nil {
		return nil, err
	}
	tree, here, err := s.releasedTrees(ctx, r.TaskID)
	if err != nil {
		return nil, err
	}
	head, changed := work.head, work.changed
	if err := s.pushWork(ctx, r.TaskID, head); err != nil {
		return nil, err
	}
	if summary == "" {
		summary = work.summary
	}
	return s.held(ctx, r, "summary", summary, func(tx *coord.Txn) (*coord.Task, error) {
		if s.conf().RequireVerified {
			if err := tx.CheckVerified(r.Agent.ID, r.TaskID, r.Epoch, tree, here); err != nil {
				return nil, err
			}
		}
		hits, err := tx.WorkClaims(r.TaskID, changed)
		if err != nil {
			if _, lost := tx.Release(r.Agent.ID, r.TaskID, r.Epoch, summary, s.conf().ReviewGate); coord.CodeOf(lost) == coord.CodeLost {
				return nil, lost // not the caller's to release at all
			}
			return nil, err
		}
		t, err := tx.Release(r.Agent.ID, r.TaskID, r.Epoch, summary, s.conf().ReviewGate)
		if err == nil {
			for _, h := range hits {
				tx.Log(r.Agent.ID, "warning: task %s's commits change %s, which task %s (%s) holds by write claim (write_claims: warn)", r.TaskID, h.Path, h.TaskID, h.Holder)
			}
			t.RecordWork(head, changed)
		}
		return t, err
	})
}

// Block marks a held task blocked with a reason (it keeps its owner).
func (s *Service) Block(ctx context.Context, r TaskRef, reason string) (*coord.Task, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	if err := coord.CheckReason("block", reason); err != nil {
		return nil, err
	}
	return s.held(ctx, r, "reason", reason, func(tx *coord.Txn) (*coord.Task, error) {
		return tx.Block(r.Agent.ID, r.TaskID, r.Epoch, reason)
	})
}

// Unblock returns a blocked task to claimed (its owner still holds it) or
// to unclaimed (the sweep cleared its owner; then any agent may, or, when
// the project names its supervisors, any of them: work the caller does
// not hold).
func (s *Service) Unblock(ctx context.Context, r TaskRef) (*coord.Task, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	list, err := s.supervisors(ctx)
	if err != nil {
		return nil, err
	}
	return s.held(ctx, r, "", "", func(tx *coord.Txn) (*coord.Task, error) {
		if t := tx.Task(r.TaskID); t != nil && t.Status == coord.Blocked && t.ClaimedBy == "" {
			if err := coord.CheckSupervisor(list, r.Agent.ID, "unblock task "+r.TaskID); err != nil {
				return nil, err
			}
		}
		return tx.Unblock(r.Agent.ID, r.TaskID, r.Epoch)
	})
}

// Progress records a held task's progress (0–100) with a note for the log.
func (s *Service) Progress(ctx context.Context, r TaskRef, pct int, note string) (*coord.Task, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	if err := coord.CheckProgress(pct); err != nil {
		return nil, err
	}
	return s.held(ctx, r, "note", note, func(tx *coord.Txn) (*coord.Task, error) {
		return tx.Progress(r.Agent.ID, r.TaskID, r.Epoch, pct, note)
	})
}

// HandBack gives up a held task unfinished (an interrupted run, a session
// that ended): where the stale sweep would send it under on_stale, at once.
func (s *Service) HandBack(ctx context.Context, r TaskRef, why string) (*coord.Task, error) {
	return s.held(ctx, r, "reason", why, func(tx *coord.Txn) (*coord.Task, error) {
		return tx.HandBack(r.Agent.ID, r.TaskID, r.Epoch, why, s.conf().OnStale)
	})
}

// ApproveRequest approves a task in review.
type ApproveRequest struct {
	Agent  string // the caller, recorded as reviewer
	TaskID string
	Human  string // a human reviewer the caller approves for ("" : none)
	Note   string // logged with the approval ("" : none)
}

// Approve turns a task in review into done; the reviewer is never the
// agent that claimed it. Approving for a human, or a review routed to
// another reviewer, is a supervisor's act: when the project names its
// supervisors, only they may.
func (s *Service) Approve(ctx context.Context, r ApproveRequest) (*coord.Task, error) {
	if err := coord.CheckNote("note", r.Note); err != nil {
		return nil, err
	}
	list, err := s.supervisors(ctx)
	if err != nil {
		return nil, err
	}
	if r.Human != "" {
		if err := coord.CheckSupervisor(list, r.Agent, "approve task "+r.TaskID+" for a human"); err != nil {
			return nil, err
		}
	}
	var got *coord.Task
	err = s.tasks().Update(ctx, func(tx *coord.Txn) error {
		if err := reviewAct(list, tx, r.Agent, r.TaskID, "approve"); err != nil {
			return err
		}
		var err error
		if r.Human != "" {
			got, err = tx.ApproveForHuman(r.Agent, r.Human, r.TaskID, r.Note)
		} else {
			got, err = tx.Approve(r.Agent, r.TaskID)
		}
		return err
	})
	return got, interrupted(ctx, err)
}

// Reject hands a task in review back to its owner as claimed, the reason
// becoming its review notes; the rejection that reaches max_rejections
// blocks it instead (coord.Txn.Reject). Rejecting a review routed to
// another reviewer is a supervisor's act.
func (s *Service) Reject(ctx context.Context, agent, taskID, reason string) (*coord.Task, error) {
	if err := coord.CheckReason("reject", reason); err != nil {
		return nil, err
	}
	list, err := s.supervisors(ctx)
	if err != nil {
		return nil, err
	}
	var got *coord.Task
	err = s.tasks().Update(ctx, func(tx *coord.Txn) error {
		if err := reviewAct(list, tx, agent, taskID, "reject"); err != nil {
			return err
		}
		var err error
		got, err = tx.Reject(agent, taskID, reason, s.conf().MaxRejections)
		return err
	})
	return got, interrupted(ctx, err)
}

// ListRequest selects tasks.
type ListRequest struct {
	Statuses []coord.Status // none: every status
	All      bool           // archived tasks too, after the active ones
}

// Tasks returns the registry's tasks in registry order (and with All the
// archived ones after them, an id once: a task both active and archived by
// a crash counts as active).
func (s *Service) Tasks(ctx context.Context, r ListRequest) ([]*coord.Task, error) {
	want := map[coord.Status]bool{}
	for _, st := range r.Statuses {
		if !st.Valid() {
			return nil, coord.Errorf(coord.CodeUsage, "status %q is not one of unclaimed, claimed, blocked, review, done", st)
		}
		want[st] = true
	}
	var list []*coord.Task
	err := s.tasks().View(ctx, func(tx *coord.Txn) error {
		for _, t := range tx.Tasks {
			if len(want) == 0 || want[t.Status] {
				list = append(list, t)
			}
		}
		if r.All && (len(want) == 0 || want[coord.Done]) {
			arch, err := s.tasks().ArchivedTasks(ctx)
			if err != nil {
				return err
			}
			for _, t := range arch {
				if tx.Task(t.ID) == nil {
					list = append(list, t)
				}
			}
		}
		return nil
	})
	return list, interrupted(ctx, err)
}

// ListLimit is how many rows of each list ls and ready print unless told
// otherwise (--limit N; 0: every row), with a count of the rest: a list a
// person or an agent reads whole costs bytes in proportion to the
// project (ls printed 1 MB at 10,000 tasks).
const ListLimit = 50

// CheckLimit refuses a negative row limit (name says how the caller gave
// it: "--limit", "limit"): 0 is every row, more is that many.
func CheckLimit(name string, n int) error {
	if n < 0 {
		return coord.Errorf(coord.CodeUsage, "%s %d: use 0 (every row) or more", name, n)
	}
	return nil
}

// Limit returns the first n rows (every row when n <= 0) and how many
// were left out.
func Limit[T any](rows []T, n int) ([]T, int) {
	if n <= 0 || len(rows) <= n {
		return rows, 0
	}
	return rows[:n], len(rows) - n
}

// ReadyRow is one task as the ready list shows it.
type ReadyRow struct {
	ID       string `json:"id"`
	Priority string `json:"priority"`
	Title    string `json:"title,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Weighed, on a task whose predicted paths may meet the work in
	// flight, is that risk and the decision on it (ready: worth it;
	// not ready: it waits, and Reason says so).
	Weighed *coord.Weighed `json:"weighed,omitempty"`
}

// Ready lists what agent could claim now, in the order claim takes it,
// and every other task with why not.
func (s *Service) Ready(ctx context.Context, a coord.Agent) (ready, not []ReadyRow, err error) {
	err = s.tasks().View(ctx, func(tx *coord.Txn) error {
		yes, no, why := tx.Ready(a)
		weighed := func(w coord.Weighed) *coord.Weighed {
			if w.P == 0 {
				return nil
			}
			return &w
		}
		for i, w := range tx.Weigh(yes, a.ID) {
			t := yes[i]
			ready = append(ready, ReadyRow{ID: t.ID, Priority: string(priority(t)), Title: t.Title, Weighed: weighed(w)})
		}
		ws := tx.Weigh(no, a.ID)
		for i, t := range no {
			r := ReadyRow{ID: t.ID, Priority: string(priority(t)), Title: t.Title, Reason: why[i]}
			if ws[i].Waits && why[i] == ws[i].String() {
				r.Weighed = weighed(ws[i])
			}
			not = append(not, r)
		}
		return nil
	})
	return nonNil(ready), nonNil(not), interrupted(ctx, err)
}

func priority(t *coord.Task) coord.Priority {
	if t.Priority == "" {
		return coord.Medium
	}
	return t.Priority
}

// DepNode is one node of the merged dependency graph.
type DepNode struct {
	ID     string   `json:"id"`
	Status string   `json:"status"` // a task status, "archived" or "unknown"
	Deps   []string `json:"deps"`
}

// DepGraph is the merged dependency graph: every task's deps merged with
// the dependency map, ids that name no task, and one cycle if any.
type DepGraph struct {
	Tasks   []DepNode `json:"tasks"`
	Unknown []string  `json:"unknown"`
	Cycle   []string  `json:"cycle"`
}

// Deps returns the merged dependency graph, sorted by id.
func (s *Service) Deps(ctx context.Context) (DepGraph, error) {
	var g DepGraph
	err := s.tasks().View(ctx, func(tx *coord.Txn) error {
		graph := map[string][]string{}
		seen := map[string]bool{}
		for _, t := range tx.Tasks {
			d := tx.Deps(t)
			graph[t.ID] = d
			g.Tasks = append(g.Tasks, DepNode{t.ID, string(t.Status), nonNil(d)})
		}
		for id, d := range tx.DepMap {
			if tx.Task(id) == nil {
				graph[id] = d
				g.Tasks = append(g.Tasks, DepNode{id, "unknown", nonNil(d)})
			}
		}
		for _, n := range g.Tasks {
			for _, d := range n.Deps {
				if _, ok := graph[d]; ok || seen[d] {
					continue
				}
				seen[d] = true
				if tx.Archived != nil && tx.Archived(d) {
					g.Tasks = append(g.Tasks, DepNode{d, "archived", []string{}})
					graph[d] = nil
					continue
				}
				g.Unknown = append(g.Unknown, d)
			}
		}
		g.Cycle = coord.FindCycle(graph)
		return nil
	})
	sort.Slice(g.Tasks, func(i, j int) bool { return g.Tasks[i].ID < g.Tasks[j].ID })
	sort.Strings(g.Unknown)
	g.Tasks, g.Unknown, g.Cycle = nonNil(g.Tasks), nonNil(g.Unknown), nonNil(g.Cycle)
	return g, interrupted(ctx, err)
}

// Archive moves done tasks completed before cutoff (all when zero) out of
// the active registry into the archive; it returns the ids moved.
func (s *Service) Archive(ctx context.Context, cutoff time.Time) ([]string, error) {
	var moved []string
	err := s.tasks().Update(ctx, func(tx *coord.Txn) error {
		moved = tx.ArchiveDone(cutoff)
		return nil
	})
	return nonNil(moved), interrupted(ctx, err)
}

// Snapshot returns the registry's tasks for a read-only front end.
func (s *Service) Snapshot(ctx context.Context) ([]*coord.Task, error) {
	var out []*coord.Task
	err := s.tasks().View(ctx, func(tx *coord.Txn) error {
		out = tx.Tasks
		return nil
	})
	return out, interrupted(ctx, err)
}
