package coord

import (
	"fmt"
	"slices"
	"strings"
)

// Write claims (docs/GIT.md): the edit hooks take a path for the
// caller's task at its first write (Txn.WriteClaim), recorded in the
// task's touched files, which are its claims while it is in flight
// (Task.WriteClaims). Another task's agent meets them at every door:
// an edit (WriteClaim), a path lock (LockPaths), a commit (Guard), a
// claim of a task whose files they meet (eligibility). How they are
// met follows the project's settings, which the application puts on
// every Txn (WriteClaims, WriteClaimsUntasked).

// claimTreatment is how a write claim meets an agent.
type claimTreatment int

const (
	claimIgnored claimTreatment = iota
	claimWarns
	claimRefuses
)

// treatment is how another task's write claim meets agent: ignored when
// write_claims is off (or, for an agent that holds no task,
// write_claims_untasked is); refusing when write_claims is exclusive
// and, for an agent holding no task, write_claims_untasked is guard;
// otherwise named, not refused.
func (tx *Txn) treatment(agent string) claimTreatment {
	if !tx.WriteClaims.Recorded() {
		return claimIgnored
	}
	if len(tx.HeldBy(agent)) == 0 {
		switch tx.WriteClaimsUntasked {
		case UntaskedOff:
			return claimIgnored
		case UntaskedWarn:
			return claimWarns
		}
	}
	if tx.WriteClaims.Enforced() {
		return claimRefuses
	}
	return claimWarns
}

// claimsOn returns, for each path that in-flight tasks other than those
// of agent hold by write claim (covers says whether a path the caller
// names covers a claimed path), one hit per claiming task.
func (tx *Txn) claimsOn(agent string, paths []string, covers func(p, claimed string) bool, warn bool) []GuardHit {
	var hits []GuardHit
	for _, t := range tx.Tasks {
		if t.Worker() == agent || len(t.TouchedFiles) == 0 || !t.InFlight() {
			continue
		}
		for _, p := range paths {
			for _, q := range t.TouchedFiles {
				if covers(p, q) {
					hits = append(hits, GuardHit{Path: p, Holder: t.Worker(), TaskID: t.ID, Claimed: q, Status: t.Status, Warn: warn})
					break
				}
			}
		}
	}
	return hits
}

// WorkClaims checks, at release and at landing, the paths task id's
// commits change (changed) against the write claims of the other tasks
// in flight (not its agent's own): commits that reached the branch by a
// route no hook or guard saw (a cherry-pick, a merge of another branch,
// a rebase, git am) must not carry another task's files. Under
// write_claims exclusive a hit refuses (CodeConflict naming both tasks
// and the path); under warn the hits come back with Warn set; off: none.
func (tx *Txn) WorkClaims(id string, changed []string) ([]GuardHit, error) {
	if !tx.WriteClaims.Recorded() || len(changed) == 0 {
		return nil, nil
	}
	t := tx.Task(id)
	if t == nil {
		return nil, nil
	}
	warn := !tx.WriteClaims.Enforced()
	var hits []GuardHit
	for _, h := range tx.claimsOn(t.Worker(), changed, func(p, q string) bool { return p == q }, warn) {
		if h.TaskID != id {
			hits = append(hits, h)
		}
	}
	if len(hits) == 0 || warn {
		return hits, nil
	}
	h := hits[0]
	return hits, Errorf(CodeConflict, "task %s's commits change %s, which task %s (%s) holds by write claim%s",
		id, h.Path, h.TaskID, h.Holder, moreHits(len(hits))).
		WithHint("drop that change from task %s's branch (it came by a cherry-pick, a merge or a rebase no hook saw), or let task %s land first", id, h.TaskID).WithHolder(h.Holder)
}

func moreHits(n int) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf(" (and %d more)", n-1)
}

// LockClaims returns the write claims of other tasks in flight that
// path locks on paths would cover, as the project's settings treat them
// for agent (Warn set: named, not refused; none when they are ignored).
func (tx *Txn) LockClaims(agent string, paths []string) []GuardHit {
	tr := tx.treatment(agent)
	if tr == claimIgnored {
		return nil
	}
	return tx.claimsOn(agent, paths, LockCovers, tr == claimWarns)
}

// samePath: a path taken as a name meets only the same name.
func samePath(p, q string) bool { return p == q }

// WriteClaimPlan is what a write to paths by an agent means: the task
// it claims them for (nil: the agent holds none, or write_claims is
// off), the paths that task does not hold yet (New), and every holder
// met (Hits; those with Warn set are named, not refused).
type WriteClaimPlan struct {
	Task *Task
	New  []string
	Hits []GuardHit
	// Predicted are the tasks in flight predicted to touch a path
	// written (PredictedFor): named, never refused.
	Predicted []PredictedNote
	// Lost says why the writer is fenced ("" it is not): the task it
	// works on (on.Task) is no longer its, or a task was taken from it
	// (requeued, reassigned) since its last claim. Its writes are refused
	// as lost, hooks included.
	Lost string
}

// Refused returns the hits that refuse the write.
func (p WriteClaimPlan) Refused() []GuardHit {
	var out []GuardHit
	for _, h := range p.Hits {
		if !h.Warn {
			out = append(out, h)
		}
	}
	return out
}

// PlanWriteClaim says what a write to paths (clean repository paths,
// taken as names) by agent would do, changing nothing: the same check as
// Guard, and the paths the agent's task would claim. The task is the one
// agent holds claimed (else blocked), the first in registry order.
func (tx *Txn) PlanWriteClaim(agent string, on Working, paths []string) WriteClaimPlan {
	p := WriteClaimPlan{Hits: tx.Guard(agent, paths)}
	p.Predicted = tx.PredictedFor(agent, paths, p.Hits)
	p.Lost = tx.fenced(agent, on)
	if !tx.WriteClaims.Recorded() {
		return p
	}
	p.Task = tx.WorkingOn(agent, on)
	if p.Task == nil {
		return p
	}
	for _, path := range paths {
		if !Claimable(path) {
			continue
		}
		if _, found := slices.BinarySearch(p.Task.TouchedFiles, path); !found && !slices.Contains(p.New, path) {
			p.New = append(p.New, path)
		}
	}
	return p
}

// WriteClaim claims paths for the task agent holds before agent writes
// them, all or nothing: a path another agent holds (its path lock, the
// files of a task it holds, or another in-flight task's write claim
// under write_claims exclusive) refuses the whole write (CodeConflict
// naming each holder and task) and claims nothing; otherwise every path
// the task did not hold yet is added to its touched files and logged.
// Holders that only warn are returned in the plan's hits. An agent that
// holds no task claims nothing (write_claims_untasked says whether
// claims refuse it).
func (tx *Txn) WriteClaim(agent string, on Working, paths []string) (WriteClaimPlan, error) {
	if err := ValidActingAgent(agent); err != nil {
		return WriteClaimPlan{}, err
	}
	p := tx.PlanWriteClaim(agent, on, paths)
	if err := tx.Fenced(agent, on); err != nil {
		return p, err
	}
	if refused := p.Refused(); len(refused) > 0 {
		return p, RefuseWrite(refused)
	}
	if p.Task != nil && len(p.New) > 0 {
		p.Task.Touch(p.New)
		tx.Log(agent, "claimed %s for task %s", strings.Join(p.New, ", "), p.Task.ID)
	}
	return p, nil
}

// Fenced is the refusal of agent's writes (lock-file, the guard, the
// hooks) while it is fenced (CodeLost), or nil.
func (tx *Txn) Fenced(agent string, on Working) error {
	if why := tx.fenced(agent, on); why != "" {
		return Errorf(CodeLost, "write refused: %s", why).WithHint("stop working on it; take other work (coord run, coord claim)")
	}
	return nil
}

// fenced says why agent's writes are fenced ("" they are not): the task
// on names is not its any more, or it was last taken from a task
// (Task.Fenced) and has claimed nothing since.
func (tx *Txn) fenced(agent string, on Working) string {
	if on.Task != "" {
		if t := tx.Task(on.Task); t == nil || t.ClaimedBy != agent || !t.HoldsLock() {
			return fmt.Sprintf("task %s is no longer %s's", on.Task, agent)
		}
		return ""
	}
	if len(tx.HeldBy(agent)) > 0 {
		return ""
	}
	for _, t := range tx.Tasks {
		if t.Fenced == agent {
			return fmt.Sprintf("task %s was taken from %s", t.ID, agent)
		}
	}
	return ""
}

// Working says which of an agent's tasks a write is for: Task, the one
// coord run gives it (COORD_TASK), else the one whose branch (Branch, a
// full ref name) the writer's worktree has checked out; "" each when not
// known.
type Working struct{ Task, Branch string }

// WorkingOn is the task a write by agent is for: the held task on names
// (by id, else by branch), else a task it holds claimed (one blocked or
// finished when it holds none claimed); nil when it holds none.
func (tx *Txn) WorkingOn(agent string, on Working) *Task {
	var pick, byBranch *Task
	for _, t := range tx.HeldBy(agent) {
		if on.Task != "" && t.ID == on.Task {
			return t
		}
		if on.Branch != "" && byBranch == nil && t.Status == Claimed && BranchRef(t.Branch) == on.Branch {
			byBranch = t
		}
		if pick == nil || pick.Status != Claimed && t.Status == Claimed {
			pick = t
		}
	}
	if byBranch != nil {
		return byBranch
	}
	return pick
}

// RefuseWrite is the refusal of a write that meets hits (CodeConflict,
// naming each holder and task; the first holder as the error's Holder).
func RefuseWrite(hits []GuardHit) *Error {
	return Errorf(CodeConflict, "write refused: %s", hitList(hits)).
		WithHint("leave the file to its holder: pick other work, or wait until its task's work has landed").WithHolder(hits[0].Holder)
}

func hitList(hits []GuardHit) string {
	var what []string
	for _, h := range hits {
		what = append(what, h.String())
	}
	return strings.Join(what, ", ")
}

// Landed records that the work of task id reached the target: its head
// is reachable from the target, whose tip is at. It changes nothing
// (and reports false) unless the task is still done with that head and
// not yet landed, so a finding made before the commit's exclusion can
// be applied under it.
func (tx *Txn) Landed(id, head, at, target string) bool {
	t := tx.Task(id)
	if t == nil || t.Status != Done || t.Head == "" || t.Head != head || t.LandedAt != "" {
		return false
	}
	t.LandedAt = FormatTime(tx.Now)
	t.LandedCommit = at
	t.LandingAt, t.LandingOn = "", nil
	// What the work was told when it went back is answered: only a
	// landing clears it.
	t.ReviewNotes, t.Rejections = "", 0
	t.Dirty = true
	tx.Log(CoordinatorID, "task %s landed on %s at %s; its write claims are free", id, target, short(at))
	return true
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// claimDesc describes a write claim's task for people: "task 4.3 (bob,
// claimed)", and for finished work "(bob, done, not yet landed)".
func claimDesc(h GuardHit) string {
	state := string(h.Status)
	if h.Status == Done || h.Status == Review {
		state += ", not yet landed"
	}
	return fmt.Sprintf("task %s (%s, %s)", h.TaskID, h.Holder, state)
}

// WriteClaimRow is one write claim in force: a path an in-flight task
// has written, its task, that task's agent and status.
type WriteClaimRow struct {
	Path   string `json:"path"`
	TaskID string `json:"task"`
	Holder string `json:"holder"`
	Status Status `json:"status"`
}

// WriteClaimsInForce lists every write claim of the tasks in flight, by
// path then task (none when write_claims is off).
func (tx *Txn) WriteClaimsInForce() []WriteClaimRow {
	if !tx.WriteClaims.Recorded() {
		return nil
	}
	var out []WriteClaimRow
	for _, t := range tx.Tasks {
		for _, p := range t.WriteClaims() {
			out = append(out, WriteClaimRow{Path: p, TaskID: t.ID, Holder: t.Worker(), Status: t.Status})
		}
	}
	slices.SortFunc(out, func(a, b WriteClaimRow) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.TaskID, b.TaskID)
	})
	return out
}
