package coord

import (
	"cmp"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"
)

// Event is one coordination-log event.
type Event struct {
	Time  time.Time
	Agent string // "coordinator" for the sweep and repairs
	Text  string
}

// CoordinatorID is the agent name under which sweeps and repairs are logged.
const CoordinatorID = "coordinator"

// Txn is the registry as loaded under the backend's exclusive lock. The
// operations below change it in memory; the backend then commits it
// atomically (lock files first, then the registry, then removals, then the
// log). An operation that returns an error leaves the Txn unchanged.
type Txn struct {
	Tasks  []*Task
	DepMap map[string][]string // dependency_map.json
	// Archived reports whether an id names an archived (hence done) task;
	// nil means nothing is archived.
	Archived func(id string) bool
	// LastEpoch is the highest epoch issued in the tree: the backend sets
	// it to at least every epoch the tree records anywhere (registry, lock
	// files, archive, log), so the next Claim's epoch is new. Only values
	// a counter could have issued count (Counted): one above MaxCounter
	// was never issued, and never raises it.
	LastEpoch int64
	// PathLocks are the path locks, kept with the tasks so that a task and
	// the locks taken for it are released in one commit. PathLocksDirty
	// tells the store they changed.
	PathLocks      []PathLock
	PathLocksDirty bool
	// Pool is the registered agents (the registry's "agents" member), in
	// registration order; PoolDirty tells the store it changed.
	Pool      []PoolAgent
	PoolDirty bool
	// Outbox holds tasks removed from Tasks to be archived: the store
	// makes them durable in the archive before it commits the registry
	// without them (a crash in between leaves a task in both places; the
	// registry wins, never in neither).
	Outbox []*Task
	Now    time.Time
	Events []Event
	// WriteClaims is the project's write_claims setting: how the rules
	// that meet another task's write claims (eligibility, LockPaths,
	// Guard, WriteClaim) treat them; WriteClaimsUntasked how they treat
	// an agent that holds no task. The application sets both on every
	// transaction; the zero values are exclusive and guard.
	WriteClaims         ClaimMode
	WriteClaimsUntasked UntaskedMode
	// PredictedFiles is the project's predicted_files setting (whether
	// eligibility weighs predicted paths) and PredictFloor its
	// predict_floor (predictions less likely are not weighed): see
	// coord/predict.go. The zero values weigh with a floor of 0.
	PredictedFiles PredictMode
	// OwnersAway are the owners of tasks returned to the pool that are
	// away (no heartbeat within stale_after): their tasks are anyone's.
	// The application sets it; nil counts every owner present.
	OwnersAway   map[string]bool
	PredictFloor float64

	index map[string]int
}

// Index rebuilds the id index; backends call it after loading.
func (tx *Txn) Index() {
	tx.index = make(map[string]int, len(tx.Tasks))
	for i, t := range tx.Tasks {
		tx.index[t.ID] = i
		tx.LastEpoch = max(tx.LastEpoch, Counted(t.Epoch))
	}
}

// UseIndex adopts an id -> position index the backend built while
// reading (it must match Tasks), saving a second pass over a large
// registry.
func (tx *Txn) UseIndex(index map[string]int) {
	tx.index = index
	for _, t := range tx.Tasks {
		tx.LastEpoch = max(tx.LastEpoch, Counted(t.Epoch))
	}
}

// Add appends a new task and indexes it.
func (tx *Txn) Add(t *Task) {
	if tx.index == nil {
		tx.Index()
	}
	tx.index[t.ID] = len(tx.Tasks)
	tx.Tasks = append(tx.Tasks, t)
}

// Task returns the task with the given id, or nil.
func (tx *Txn) Task(id string) *Task {
	if tx.index == nil {
		tx.Index()
	}
	if i, ok := tx.index[id]; ok {
		return tx.Tasks[i]
	}
	return nil
}

// Log records an event to be appended to the log on commit.
func (tx *Txn) Log(agent, format string, args ...any) {
	tx.Events = append(tx.Events, Event{Time: tx.Now, Agent: agent, Text: fmt.Sprintf(format, args...)})
}

// Deps returns a task's prerequisites: its own deps merged with the
// dependency map's, without duplicates, in order.
func (tx *Txn) Deps(t *Task) []string {
	extra := tx.DepMap[t.ID]
	if len(extra) == 0 {
		return t.Deps
	}
	out := append([]string(nil), t.Deps...)
	for _, d := range extra {
		dup := false
		for _, x := range out {
			if x == d {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, d)
		}
	}
	return out
}

// IsDone reports whether the id names a settled task (done or cancelled,
// in the registry or the archive). An id that names no task is a
// prerequisite not done.
func (tx *Txn) IsDone(id string) bool {
	if t := tx.Task(id); t != nil {
		return t.Status.Settled()
	}
	return tx.Archived != nil && tx.Archived(id)
}

// holders summarises what claimed and blocked tasks occupy, what tasks
// assigned to an agent will occupy once it starts them, and (under
// write_claims exclusive) what tasks in flight hold by write claim.
type holders struct {
	groups map[string]string // conflict group -> task id
	files  []*Task
	claims []claimed
	// weighing is what the tasks in flight are predicted to touch.
	weighing weighing
}

// claimed is an in-flight task's write claims, each quoted as a glob
// pattern that matches that one path.
type claimed struct {
	task     *Task
	patterns []string
}

func (tx *Txn) holders() holders {
	h := holders{groups: map[string]string{}, weighing: weighing{on: tx.PredictedFiles.Weighed(), floor: tx.PredictFloor}}
	enforced := tx.WriteClaims.Enforced()
	for _, t := range tx.Tasks {
		if t.Status == Claimed || t.Status == Blocked || (t.Status == Unclaimed && t.AssignedTo != "") {
			h.add(t)
		}
		if enforced && len(t.TouchedFiles) > 0 && t.InFlight() {
			c := claimed{task: t, patterns: make([]string, len(t.TouchedFiles))}
			for i, p := range t.TouchedFiles {
				c.patterns[i] = QuoteGlob(p)
			}
			h.claims = append(h.claims, c)
		}
	}
	return h
}

// writeClaimed says whether t's declared files meet the write claims of
// a task in flight that agent did not claim (agent's own finished work
// on its branch does not keep its next task waiting; "" counts every
// task's): "file X is write-claimed by task 4.3 (bob)". Predicted paths
// that meet write claims are weighed (holders.weigh), never refused.
func (h *holders) writeClaimed(t *Task, agent string) string {
	return h.claimedBy(t.Files, agent, t.ID, "file ")
}

// claimedBy says which write claim of a task in flight (other than
// self's, and not agent's) the patterns meet, the path said after what.
func (h *holders) claimedBy(patterns []string, agent, self, what string) string {
	if len(patterns) == 0 {
		return ""
	}
	for _, c := range h.claims {
		if c.task.ID == self || (agent != "" && c.task.Worker() == agent) {
			continue
		}
		for i, p := range c.patterns {
			if AnyOverlap([]string{p}, patterns) {
				return what + c.task.TouchedFiles[i] + " is write-claimed by task " + c.task.ID + " (" + c.task.Worker() + ")"
			}
		}
	}
	return ""
}

// add counts t as occupying its conflict group and files, and as work
// in flight for the weighing of predictions.
func (h *holders) add(t *Task) {
	if t.ConflictGroup != "" {
		h.groups[t.ConflictGroup] = t.ID
	}
	if len(t.Files) > 0 {
		h.files = append(h.files, t)
	}
	h.weighing.add(t)
}

// Ineligible returns why agent a may not claim t now, or "" if it may.
func (tx *Txn) Ineligible(t *Task, a Agent) string {
	return tx.ineligible(t, a, tx.holders())
}

// The eligibility rule is one conjunction in two parts: what depends on
// the task and the tree (taskBlocked: its state, its dependencies, its
// conflict group and files against what others occupy) and what depends
// on the agent (unsuited: capability and skill level). Claim, Best, Ready
// and the scheduler all ask them; the scheduler asks the first once per
// task and the second once per candidate agent.
func (tx *Txn) ineligible(t *Task, a Agent, h holders) string {
	if why := tx.ineligibleByRule(t, a, h); why != "" {
		return why
	}
	if w := h.weigh(t, a.ID); w.Waits {
		return w.String()
	}
	return ""
}

// taskBlocked is the part of eligibility that does not depend on who
// asks: an unclaimed, unassigned task whose dependencies are done and
// whose conflict group and files are free. (Write claims depend on who
// asks: holders.writeClaimed.)
func (tx *Txn) taskBlocked(t *Task, h holders) string {
	if t.Status != Unclaimed {
		return "status is " + string(t.Status)
	}
	if t.AssignedTo != "" {
		return "assigned to " + t.AssignedTo
	}
	if why := tx.depsBlocked(t); why != "" {
		return why
	}
	return tx.occupied(t, h)
}

func (tx *Txn) depsBlocked(t *Task) string {
	for _, d := range tx.Deps(t) {
		if !tx.IsDone(d) {
			return "dependency " + d + " is not done"
		}
	}
	return ""
}

// unsuited is the part of eligibility that depends on the agent.
func unsuited(t *Task, a Agent) string {
	if !a.HasCap(t.Capability) {
		return "needs capability " + t.Capability
	}
	if !a.Skill.Accepts(t.SkillLevel) {
		return "skill level " + string(t.SkillLevel) + " is outside " + a.Skill.String()
	}
	return ""
}

// occupied says whether another task holding or assigned its conflict
// group or an overlapping files pattern keeps t waiting (the rules;
// predictions are weighed apart).
func (tx *Txn) occupied(t *Task, h holders) string {
	if t.ConflictGroup != "" {
		if other, ok := h.groups[t.ConflictGroup]; ok && other != t.ID {
			return "conflict group " + t.ConflictGroup + " is held by task " + other
		}
	}
	if len(t.Files) > 0 {
		for _, o := range h.files {
			if o.ID != t.ID && AnyOverlap(t.Files, o.Files) {
				return "files overlap those of task " + o.ID
			}
		}
	}
	return ""
}

// ClaimOptions selects what Claim takes.
type ClaimOptions struct {
	TaskID string // a specific task, or "" for the best eligible one
	Any    bool   // first eligible in registry order instead of by priority
}

// Claim gives agent a one task: the named one, or the eligible task of
// highest priority (registry order breaking ties), or with Any the first
// eligible. It returns (nil, nil) when nothing is eligible. Without a
// named task, a task the agent holds that a reviewer rejected (Rejected)
// comes first, returned as it stands (same epoch, its review notes set):
// the owner finishes its rejected work before it takes new work.
func (tx *Txn) Claim(a Agent, opt ClaimOptions) (*Task, error) {
	if err := ValidActingAgent(a.ID); err != nil {
		return nil, err
	}
	if opt.TaskID == "" {
		// Work sent back comes first: it is already the agent's, and its
		// review notes say what to change.
		if back := tx.Rejected(a.ID); len(back) > 0 {
			return back[0], nil
		}
	}
	h := tx.holders()
	if opt.TaskID == "" {
		// Then work returned to the pool as this agent's (unblocked).
		opt.TaskID = tx.returnedTo(a, h)
	}
	var pick *Task
	if opt.TaskID != "" {
		if err := ValidTaskID(opt.TaskID); err != nil {
			return nil, err
		}
		t := tx.Task(opt.TaskID)
		if t == nil {
			return nil, Errorf(CodeConflict, "task %q not found", opt.TaskID).WithHint("run 'coord ls' to see the task ids")
		}
		if t.Status == Claimed && t.ClaimedBy == a.ID {
			return nil, Errorf(CodeConflict, "task %q is already claimed by you (epoch %d)", t.ID, t.Epoch).WithHolder(a.ID)
		}
		if why := tx.ineligible(t, a, h); why != "" {
			holder := ""
			if t.ClaimedBy != "" && t.Status == Claimed {
				why = "held by " + t.ClaimedBy
				holder = t.ClaimedBy
			}
			return nil, Errorf(CodeConflict, "task %q cannot be claimed: %s", t.ID, why).WithHolder(holder)
		}
		pick = t
	} else {
		pick = tx.best(a, opt.Any, h)
		if pick == nil {
			return nil, nil
		}
	}
	next, err := NextCounter("epoch", tx.LastEpoch)
	if err != nil {
		return nil, err
	}
	for _, t := range tx.Tasks {
		if t.Fenced == a.ID { // it has moved on: no longer fenced
			t.Fenced, t.Dirty = "", true
		}
	}
	tx.LastEpoch = next
	pick.Status = Claimed
	pick.ClaimedBy = a.ID
	pick.ClaimedAt = FormatTime(tx.Now)
	pick.CompletedAt = ""
	pick.Epoch = tx.LastEpoch
	pick.Progress = 0
	pick.BlockedReason = ""
	pick.BlockedAt = ""
	pick.ReviewerID = ""
	pick.ReviewerKind = ""
	pick.ReviewAlertAt = ""
	pick.AssignedTo = "" // the assignee's claim consumes its assignment
	pick.AssignedAt = ""
	pick.ReviewStartedAt = ""
	// Review notes, rejections, branch and base stay: work that comes
	// back is taken up where it stood, with what it was told (and the
	// write claims of work returned to its owner go on with it).
	pick.startWork()
	pick.Owner = ""
	pick.Dirty = true
	tx.Log(a.ID, "claimed task %s (epoch %d)", pick.ID, pick.Epoch)
	return pick, nil
}

// Best is the task Claim would take now for agent a (with any, the first
// eligible in registry order; otherwise the eligible task of highest
// priority, the least likely to meet the work in flight among those,
// registry order breaking ties), or nil. It is the one best-task choice:
// claim, run, wait and ready all ask it.
func (tx *Txn) Best(a Agent, any bool) *Task { return tx.best(a, any, tx.holders()) }

func (tx *Txn) best(a Agent, any bool, h holders) *Task {
	var pick *Task
	best, risk := 99, 2.0
	for _, t := range tx.Tasks {
		if t.Status != Unclaimed {
			continue
		}
		r := t.Priority.Rank()
		if !any && r > best {
			continue
		}
		if tx.ineligibleByRule(t, a, h) != "" {
			continue
		}
		w := h.weigh(t, a.ID)
		if w.Waits {
			continue
		}
		if any {
			return t
		}
		if r < best || w.P < risk {
			pick, best, risk = t, r, w.P
		}
		if r == 0 && risk == 0 {
			break
		}
	}
	return pick
}

// ineligibleByRule is eligibility without the weighing of predictions.
func (tx *Txn) ineligibleByRule(t *Task, a Agent, h holders) string {
	if t.Status != Unclaimed {
		return "status is " + string(t.Status)
	}
	if t.AssignedTo != "" && t.AssignedTo != a.ID {
		return "assigned to " + t.AssignedTo
	}
	if why := tx.heldForOwner(t, a.ID); why != "" {
		return why
	}
	if why := tx.depsBlocked(t); why != "" {
		return why
	}
	if why := unsuited(t, a); why != "" {
		return why
	}
	if why := tx.occupied(t, h); why != "" {
		return why
	}
	return h.writeClaimed(t, a.ID)
}

// Ready lists every task with why agent a may not claim it ("" if it may),
// the claimable ones first in the order Best takes them (priority, then
// the least likely to meet the work in flight, then registry order),
// then the rest in registry order.
func (tx *Txn) Ready(a Agent) (ready []*Task, not []*Task, why []string) {
	h := tx.holders()
	risk := map[*Task]float64{}
	for _, t := range tx.Tasks {
		if w := tx.ineligibleByRule(t, a, h); w != "" {
			not = append(not, t)
			why = append(why, w)
			continue
		}
		if w := h.weigh(t, a.ID); w.Waits {
			not = append(not, t)
			why = append(why, w.String())
		} else {
			ready = append(ready, t)
			risk[t] = w.P
		}
	}
	ready = byPriority(ready)
	slices.SortStableFunc(ready, func(x, y *Task) int {
		if rx, ry := x.Priority.Rank(), y.Priority.Rank(); rx != ry {
			return rx - ry
		}
		return cmp.Compare(risk[x], risk[y])
	})
	return ready, not, why
}

// byPriority orders tasks as Best takes them: by priority, urgent first,
// registry (slice) order breaking ties. It is stable and linear.
func byPriority(tasks []*Task) []*Task {
	var buckets [4][]*Task
	for _, t := range tasks {
		r := t.Priority.Rank()
		if r < 0 || r > 3 {
			r = 2 // Check refuses unknown priorities; treat one as medium
		}
		buckets[r] = append(buckets[r], t)
	}
	out := make([]*Task, 0, len(tasks))
	for _, b := range buckets {
		out = append(out, b...)
	}
	return out
}

// Drained reports whether no work is left at all: no task is unclaimed,
// claimed, blocked or in review.
func (tx *Txn) Drained() bool {
	for _, t := range tx.Tasks {
		if !t.Status.Settled() {
			return false
		}
	}
	return true
}

// NoEpoch means "no --epoch given": ownership is checked by agent alone.
// Any other negative epoch is refused (the CLI never passes one: an
// --epoch that is not given is NoEpoch, a negative one exits 1).
const NoEpoch int64 = -1

// CheckEpoch refuses an epoch a caller gives (a flag, a tool's argument)
// that is negative (CodeUsage): given, it must be a real epoch, never
// read as NoEpoch ("skip the check").
func CheckEpoch(epoch int64) error {
	if epoch < 0 {
		return Errorf(CodeUsage, "epoch %d is negative", epoch).WithHint("give the epoch claim printed, or leave it out")
	}
	return nil
}

// owned returns the task if agent holds it (and, unless epoch is NoEpoch,
// at that epoch); otherwise a CodeLost error that says what became of it.
func (tx *Txn) owned(agent, id string, epoch int64) (*Task, error) {
	if err := ValidActingAgent(agent); err != nil {
		return nil, err
	}
	if err := ValidTaskID(id); err != nil {
		return nil, err
	}
	if epoch != NoEpoch {
		if err := CheckEpoch(epoch); err != nil {
			return nil, err
		}
	}
	t := tx.Task(id)
	switch {
	case t == nil:
		return nil, Errorf(CodeLost, "task %q not found: you do not hold it", id).WithHint("stop working on it; run 'coord ls' to see the task ids")
	case !t.HoldsLock():
		// Finished, in review, free again, or blocked with its owner
		// swept: nobody holds it, whoever last did.
		what := map[Status]string{Done: "done", Review: "in review", Unclaimed: "unclaimed", Blocked: "blocked with no owner"}[t.Status]
		if what == "" {
			what = string(t.Status)
		}
		last := ""
		if t.ClaimedBy != "" {
			last = " (last held by " + t.ClaimedBy + ")"
		}
		hint := "stop working on it; claim another task"
		if t.Status == Done || t.Status == Review {
			hint = "nothing to do: it was already released"
		}
		return nil, Errorf(CodeLost, "task %q is %s: nobody holds it%s", id, what, last).WithHint("%s", hint)
	case t.ClaimedBy != agent:
		return nil, Errorf(CodeLost, "task %q is held by %s, not by %s (status %s)", id, t.ClaimedBy, agent, t.Status).WithHint("stop working on it; claim another task").WithHolder(t.ClaimedBy)
	case epoch != NoEpoch && t.Epoch != epoch:
		return nil, Errorf(CodeLost, "task %q was reclaimed: epoch is %d, yours is %d", id, t.Epoch, epoch).WithHint("stop working on it; claim another task")
	}
	return t, nil
}

// Release finishes a task held by agent: done, or review when the review
// gate is on. The summary goes to the log.
func (tx *Txn) Release(agent, id string, epoch int64, summary string, reviewGate bool) (*Task, error) {
	if err := CheckNote("summary", summary); err != nil {
		return nil, err
	}
	t, err := tx.owned(agent, id, epoch)
	if err != nil {
		return nil, err
	}
	if t.Status != Claimed {
		return nil, Errorf(CodeConflict, "task %q is %s, not claimed", id, t.Status).WithHint("run 'coord unblock %s' first", id)
	}
	t.CompletedAt = FormatTime(tx.Now)
	t.Dirty = true
	verb := "released"
	if reviewGate {
		t.Status = Review
		verb = "submitted for review"
	} else {
		t.Status = Done
		t.Progress = 100
	}
	tx.Log(agent, "%s task %s%s", verb, id, suffix(summary))
	tx.releasePathLocksWith(agent, id)
	return t, nil
}

// Block marks a held task blocked with a reason; it keeps owner and lock.
func (tx *Txn) Block(agent, id string, epoch int64, reason string) (*Task, error) {
	if err := CheckReason("block", reason); err != nil {
		return nil, err
	}
	t, err := tx.owned(agent, id, epoch)
	if err != nil {
		return nil, err
	}
	if t.Status != Blocked { // blocking again changes the reason, not the age
		t.BlockedAt = FormatTime(tx.Now)
	}
	t.Status = Blocked
	t.BlockedReason = OneLine(reason)
	t.Dirty = true
	tx.Log(agent, "blocked task %s: %s", id, t.BlockedReason)
	return t, nil
}

// Unblock returns a blocked task to the pool for agent, its owner: the
// task is unclaimed again with agent as its owner (its claim takes it
// first), its branch, base and review notes kept. Another agent's
// blocked task is the supervisor's to unblock (UnblockFor); an ownerless
// one anyone may unblock.
func (tx *Txn) Unblock(agent, id string, epoch int64) (*Task, error) {
	if err := ValidActingAgent(agent); err != nil {
		return nil, err
	}
	if err := ValidTaskID(id); err != nil {
		return nil, err
	}
	t := tx.Task(id)
	if t != nil && t.Status == Blocked && t.ClaimedBy != "" && t.ClaimedBy != agent {
		return nil, Errorf(CodeLost, "task %q is held by %s, not by %s (status blocked)", id, t.ClaimedBy, agent).
			WithHint("a supervisor returns it to the pool with a reason: coord unblock %s --reason TEXT", id).WithHolder(t.ClaimedBy)
	}
	if t != nil && t.Status == Blocked && t.ClaimedBy == "" {
		tx.toPool(t, "")
		tx.Log(agent, "unblocked task %s", id)
		return t, nil
	}
	t, err := tx.owned(agent, id, epoch)
	if err != nil {
		return nil, err
	}
	if t.Status != Blocked {
		return nil, Errorf(CodeConflict, "task %q is %s, not blocked", id, t.Status)
	}
	tx.toPool(t, agent)
	tx.Log(agent, "unblocked task %s: back in the pool, %s first", id, agent)
	return t, nil
}

// toPool returns a blocked task to the pool: unclaimed, owner (its
// holder, "" none) preferred, its lock and the path locks taken for it
// freed; branch, base, review notes and rejections stay (the work and
// what it was told), and so do its write claims while it waits for its
// owner (InFlight).
func (tx *Txn) toPool(t *Task, owner string) {
	holder := t.ClaimedBy
	t.Status = Unclaimed
	t.ClaimedBy, t.ClaimedAt, t.CompletedAt = "", "", ""
	t.BlockedReason, t.BlockedAt = "", ""
	t.AssignedTo, t.AssignedAt, t.ReviewStartedAt = "", "", ""
	t.Owner = owner
	if owner == "" {
		t.freeClaims()
	}
	t.Dirty = true
	if holder != "" {
		tx.releasePathLocksWith(holder, t.ID)
	}
}

// heldForOwner says why a task returned to its owner waits for that
// owner ("" when agent may take it: it is the owner, or the owner is
// away).
func (tx *Txn) heldForOwner(t *Task, agent string) string {
	if t.Owner == "" || t.Owner == agent || tx.OwnersAway[t.Owner] {
		return ""
	}
	return "returned to its owner " + t.Owner + ", who takes it first"
}

// returnedTo is the id of the first task returned to a's pool as a's
// own that a may claim now ("" none).
func (tx *Txn) returnedTo(a Agent, h holders) string {
	for _, t := range byPriority(tx.Tasks) {
		if t.Owner == a.ID && t.Status == Unclaimed && tx.ineligible(t, a, h) == "" {
			return t.ID
		}
	}
	return ""
}

// CheckProgress refuses a progress outside 0..100 percent (CodeUsage).
func CheckProgress(pct int) error {
	if pct < 0 || pct > 100 {
		return Errorf(CodeUsage, "progress %d is outside 0..100", pct)
	}
	return nil
}

// Progress records a held task's progress (0–100).
func (tx *Txn) Progress(agent, id string, epoch int64, pct int, note string) (*Task, error) {
	if err := CheckProgress(pct); err != nil {
		return nil, err
	}
	if err := CheckNote("note", note); err != nil {
		return nil, err
	}
	t, err := tx.owned(agent, id, epoch)
	if err != nil {
		return nil, err
	}
	t.Progress = pct
	t.Dirty = true
	tx.Log(agent, "progress task %s %d%%%s", id, pct, suffix(note))
	return t, nil
}

// Approve turns a task in review into done, with reviewer, the agent that
// approves, recorded as its reviewer. The reviewer must not be the agent
// that claimed it.
func (tx *Txn) Approve(reviewer, id string) (*Task, error) {
	return tx.approve(reviewer, reviewer, "agent", id, "")
}

// ApproveForHuman records a human's decision to approve a task in review,
// relayed by agent (or made by the human itself, agent == human: a person
// at the dashboard): human is recorded as the reviewer with reviewer_kind
// "human", and the log line, under agent's name, says so, with the note
// when there is one. The human must not be the agent that claimed the
// task.
func (tx *Txn) ApproveForHuman(agent, human, id, note string) (*Task, error) {
	if err := ValidActingAgent(agent); err != nil {
		return nil, err
	}
	return tx.approve(agent, human, "human", id, note)
}

func (tx *Txn) approve(agent, reviewer, kind, id, note string) (*Task, error) {
	if err := CheckNote("note", note); err != nil {
		return nil, err
	}
	if err := ValidActingAgent(reviewer); err != nil {
		return nil, err
	}
	t, err := tx.inReview(id)
	if err != nil {
		return nil, err
	}
	if t.ClaimedBy == reviewer {
		return nil, Errorf(CodeConflict, "task %q: %s claimed it and cannot approve it", id, reviewer).
			WithHint("the review gate needs a reviewer who did not do the work; leave it in review")
	}
	t.Status = Done
	t.ReviewerID = reviewer
	t.ReviewerKind = kind
	t.ReviewedCommit = t.Head // what the reviewer saw ("" released outside git)
	t.Progress = 100
	t.AssignedTo, t.AssignedAt, t.ReviewStartedAt = "", "", "" // the review is over, whoever it was routed to
	t.ReviewAlertAt = ""
	t.Dirty = true
	switch {
	case kind == "human" && agent == reviewer:
		tx.Log(agent, "approved task %s as its human reviewer%s", id, suffix(note))
	case kind == "human":
		tx.Log(agent, "approved task %s for human reviewer %s%s", id, reviewer, suffix(note))
	default:
		tx.Log(agent, "approved task %s%s", id, suffix(note))
	}
	return t, nil
}

// Reject hands a task in review back to its owner as claimed, with the
// reason as its review notes, and counts the rejection. The rejection
// that reaches max (the config's max_rejections; < 1: no limit) since
// the task was claimed blocks it instead, with the reason "rejected N
// times: <reason>": it keeps its owner (who may unblock it, or a person
// requeue it), and a further rejection in the same claim blocks it again
// at once. Only a new claim starts the count again.
func (tx *Txn) Reject(reviewer, id, reason string, max int) (*Task, error) {
	if err := CheckReason("reject", reason); err != nil {
		return nil, err
	}
	if err := ValidActingAgent(reviewer); err != nil {
		return nil, err
	}
	t, err := tx.inReview(id)
	if err != nil {
		return nil, err
	}
	if t.ClaimedBy == "" {
		return nil, Errorf(CodeConflict, "task %q has no owner to hand it back to", id)
	}
	tx.backToOwner(t, reason, max)
	tx.Log(reviewer, "rejected task %s: %s", id, t.ReviewNotes)
	tx.blockAtMax(t, max)
	return t, nil
}

// SendBack returns finished work that cannot go on — a landing that
// conflicts or fails its check, a review made void by a later commit
// (docs/GIT.md) — to its owner as claimed, with why as its review notes,
// counted as a rejection (max as in Reject: the send-back that reaches
// it blocks the task instead). by is who decided (the lander, the
// coordinator). The task must be in review or done and not landed, and
// have an owner; its branch, base and touched files stay (the owner
// goes on from them), its head, review and completion are cleared.
func (tx *Txn) SendBack(by, id, why string, max int) (*Task, error) {
	if err := CheckReason("send back", why); err != nil {
		return nil, err
	}
	if by != CoordinatorID { // coord's own round (a review made void) decides as the coordinator
		if err := ValidActor(by); err != nil {
			return nil, err
		}
	}
	if err := ValidTaskID(id); err != nil {
		return nil, err
	}
	t := tx.Task(id)
	switch {
	case t == nil:
		return nil, Errorf(CodeConflict, "task %q not found", id)
	case t.LandedAt != "":
		return nil, Errorf(CodeConflict, "task %q landed at %s; nothing to send back", id, t.LandedAt)
	case t.Status != Review && t.Status != Done:
		return nil, Errorf(CodeConflict, "task %q is %s, not finished", id, t.Status)
	case t.ClaimedBy == "":
		return nil, Errorf(CodeConflict, "task %q has no owner to send it back to", id)
	}
	tx.backToOwner(t, why, max)
	t.Head, t.LandingAt, t.LandingOn = "", "", nil
	t.ReviewerID, t.ReviewerKind = "", ""
	tx.Log(by, "sent task %s back to %s: %s", id, t.ClaimedBy, t.ReviewNotes)
	tx.blockAtMax(t, max)
	return t, nil
}

// backToOwner is the one "work goes back to its owner" transition of
// Reject and SendBack: claimed again, the reason as its review notes,
// one more rejection.
func (tx *Txn) backToOwner(t *Task, reason string, max int) {
	t.Status = Claimed
	t.CompletedAt = ""
	t.ReviewNotes = OneLine(reason)
	t.Rejections++
	// Whatever was reviewed is not what comes next.
	t.ReviewedCommit = ""
	t.AssignedTo, t.AssignedAt, t.ReviewStartedAt = "", "", "" // back to its owner, not to the reviewer's inbox
	t.ReviewAlertAt = ""
	t.Dirty = true
}

// blockAtMax blocks t when its rejections reached max (< 1: no limit).
func (tx *Txn) blockAtMax(t *Task, max int) {
	if max > 0 && t.Rejections >= max {
		t.Status = Blocked
		t.BlockedReason = clipText(fmt.Sprintf("rejected %d times: %s", t.Rejections, t.ReviewNotes), maxBlockedReason)
		t.BlockedAt = FormatTime(tx.Now)
		tx.Log(CoordinatorID, "blocked task %s: %s", t.ID, t.BlockedReason)
	}
}

// maxBlockedReason bounds the reason Reject writes (a reason is at most
// 4 KiB, docs/COMMANDS.md; the count in front must not push it over).
const maxBlockedReason = 4 << 10

// clipText cuts s to at most n bytes at a rune boundary, marking the cut
// with an ellipsis.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func (tx *Txn) inReview(id string) (*Task, error) {
	if err := ValidTaskID(id); err != nil {
		return nil, err
	}
	t := tx.Task(id)
	if t == nil {
		return nil, Errorf(CodeConflict, "task %q not found", id)
	}
	if t.Status != Review {
		return nil, Errorf(CodeConflict, "task %q is %s, not in review", id, t.Status)
	}
	return t, nil
}

// HeldBy lists the tasks whose lock agent holds.
func (tx *Txn) HeldBy(agent string) []*Task {
	var out []*Task
	for _, t := range tx.Tasks {
		if t.ClaimedBy == agent && t.HoldsLock() {
			out = append(out, t)
		}
	}
	return out
}

func suffix(s string) string {
	s = OneLine(s)
	if s == "" {
		return ""
	}
	return ": " + s
}
