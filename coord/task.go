package coord

import (
	"fmt"
	"strings"
	"time"
)

// Status is a task's coordination state.
type Status string

// The task states (docs/FORMATS.md).
const (
	Unclaimed Status = "unclaimed"
	Claimed   Status = "claimed"
	Blocked   Status = "blocked"
	Review    Status = "review"
	Done      Status = "done"
)

// Cancelled is the state of a task a person took out of the work (coord
// cancel): it lives in the archive, is no work remaining, and settles
// the tasks that depend on it as a done task does.
const Cancelled Status = "cancelled"

// Statuses lists the states of the work, in lifecycle order (Cancelled,
// which only the archive holds, aside).
var Statuses = []Status{Unclaimed, Claimed, Blocked, Review, Done}

// StatusNames is how a refusal lists the valid states.
const StatusNames = "unclaimed, claimed, blocked, review, done, cancelled"

// Valid reports whether s is one of the six states.
func (s Status) Valid() bool {
	switch s {
	case Unclaimed, Claimed, Blocked, Review, Done, Cancelled:
		return true
	}
	return false
}

// Settled reports whether a task in state s is no work remaining and
// settles the tasks that depend on it: done or cancelled.
func (s Status) Settled() bool { return s == Done || s == Cancelled }

// Priority orders claims: urgent before high before medium before low.
type Priority string

// The priorities; an empty priority means Medium.
const (
	Urgent Priority = "urgent"
	High   Priority = "high"
	Medium Priority = "medium"
	Low    Priority = "low"
)

// Rank is 0 for urgent … 3 for low; an empty priority ranks as medium and
// an unknown one as -1.
func (p Priority) Rank() int {
	switch p {
	case Urgent:
		return 0
	case High:
		return 1
	case Medium, "":
		return 2
	case Low:
		return 3
	}
	return -1
}

// SkillLevel is the experience a task needs.
type SkillLevel string

// The skill levels, in increasing order.
const (
	Entry        SkillLevel = "entry"
	Intermediate SkillLevel = "intermediate"
	Expert       SkillLevel = "expert"
)

// Rank is 1 for entry, 2 intermediate, 3 expert, 0 for empty, -1 unknown.
func (l SkillLevel) Rank() int {
	switch l {
	case "":
		return 0
	case Entry:
		return 1
	case Intermediate:
		return 2
	case Expert:
		return 3
	}
	return -1
}

// Task is one registry entry with the fields coord understands. Fields it
// does not understand are kept by the backend, never by Task.
type Task struct {
	ID    string
	Title string
	// Description is the task's longer text (docs/FORMATS.md; "" when it has
	// none).
	Description   string
	Status        Status
	Priority      Priority
	Deps          []string
	Capability    string
	SkillLevel    SkillLevel
	Files         []string
	ConflictGroup string
	ClaimedBy     string // "" is JSON null
	ClaimedAt     string // RFC 3339 UTC; "" is null
	CompletedAt   string
	Epoch         int64
	Progress      int
	BlockedReason string
	// BlockedAt is when the task last became blocked (RFC 3339 UTC; ""
	// when it is not blocked, or was blocked by a coord that did not
	// record it): how long it has waited, for people.
	BlockedAt  string
	ReviewerID string
	// ReviewerKind is "agent" or "human" (approve --human: a human's
	// decision relayed by an agent); "" before any approval.
	ReviewerKind string
	// ReviewNotes is why the task was last sent back (a reviewer's reject
	// reason, the lander's conflict or failed check, a voided review):
	// what whoever takes the task gets with it from claim, inbox and
	// status, and run puts in COORD_REVIEW_NOTES. Only a landing clears
	// it: work that comes back keeps what it was told.
	ReviewNotes string
	// Rejections counts the times the work was sent back since it last
	// landed: at max_rejections a send-back blocks the task instead of
	// returning it (Txn.Reject, Txn.SendBack). Only a landing clears it.
	Rejections int
	// Owner is the agent whose work a task back in the pool is (coord
	// unblock returns a task to the pool with its holder as owner): that
	// agent's claim takes it before other work, and another agent only
	// once the owner is away (Txn.OwnersAway). A claim clears it.
	Owner string
	// Fenced is the agent this task was last taken from (requeued,
	// reassigned) while it held it: until that agent claims again, its
	// writes through the hooks are refused as lost. A claim by it clears
	// it.
	Fenced string
	// ReviewAlertAt is when a scheduling round first found this task in
	// review with no registered reviewer that may take it and logged so
	// (RFC 3339 UTC; "" when it is not in that state): the alert is logged
	// once, not every round.
	ReviewAlertAt string
	// AssignedTo is the registered agent a scheduler pushed the task to
	// ("" none): an unclaimed task waiting in that agent's inbox, or a task
	// in review routed to that reviewer. AssignedAt is when (RFC 3339 UTC).
	// A claim by the assignee consumes the assignment; approve and reject
	// end a review's.
	AssignedTo string
	AssignedAt string
	// ReviewStartedAt is when the reviewer took a routed review from its
	// inbox ("" not yet): a started review is never moved to another
	// reviewer while its reviewer lives.
	ReviewStartedAt string

	// Where the task's work lives. Branch is the full name of the task's
	// own branch (refs/heads/task/<id>, config task_branch), checked out
	// in the worktree of whoever takes the task; or, where coord does not
	// switch branches (the main worktree), the branch the claimer stood
	// on; "" outside git. Base is the target's commit the branch started
	// from (their merge base). Both stay when the task comes back to the
	// pool: the branch is the work.
	Branch string
	Base   string
	// TouchedFiles are the repository paths the task has written: taken
	// by the edit hooks at the first write (write claims) and, at
	// release, the paths its commits changed. Sorted, each once, clean
	// repository paths with no glob meaning. While the task is in flight
	// (InFlight) they are its write claims.
	TouchedFiles []string
	// Head is the branch tip at release: what the work is ("" when
	// released outside git, or with no commit of its own).
	Head string
	// LandedCommit and LandedAt say the work reached the target branch:
	// the target's tip when it was found there (or the lander's commit),
	// and when (RFC 3339 UTC). Until then a done task with a head is in
	// flight.
	LandedCommit string
	LandedAt     string
	// LandingAt is when the lander started checking the task's work
	// (RFC 3339 UTC; "" when it is not being landed): what the displays
	// show as being checked. Cleared when it lands or goes back.
	LandingAt string
	// LandingOn are the tasks whose work the candidate being checked
	// holds besides its own, in landing order: the candidates ahead of
	// it in the lander's train (nil: on the target alone). Set and
	// cleared with LandingAt.
	LandingOn []string
	// Conflicts are the in-flight conflicts last found for the task
	// (coord conflicts, watch, schedule).
	Conflicts []Conflict
	// Receipts are the newest checks run on the task's work (coord
	// verify), oldest first, at most MaxReceipts of them.
	Receipts []Receipt
	// ReviewedCommit is the commit a reviewer approved: the task's head
	// at the approval. When the task's branch moves past it before the
	// work lands, the review is void (app.Service.VoidMovedReviews).
	ReviewedCommit string
	// PredictedFiles are the paths coord plan predicts the task will
	// touch (clean repository paths, best first, no glob meaning),
	// PredictedConfidence the probability of each (as many, or none
	// when an earlier coord recorded them), and PredictedAt when
	// (coord/predict.go).
	PredictedFiles      []string
	PredictedConfidence []float64
	PredictedAt         string

	// Dirty is set by every operation that changes the task; the backend
	// re-encodes only dirty tasks.
	Dirty bool
	// Raw is the backend's original encoding of the task (unknown fields
	// included); the domain never reads it.
	Raw []byte
}

// Conflict is one in-flight conflict of a task: merging its branch with
// With (the target branch's name, or another in-flight task's id) would
// conflict in Files. Since is when it was first found (RFC 3339 UTC);
// Told, that the task's agent has been told.
type Conflict struct {
	With  string   `json:"with"`
	Files []string `json:"files"`
	Since string   `json:"since,omitempty"`
	Told  bool     `json:"told,omitempty"`
}

// HoldsLock reports whether the task must be backed by exactly one lock
// file: it has an owner and is claimed or blocked (a blocked task keeps its
// owner's lock until the owner goes stale).
func (t *Task) HoldsLock() bool {
	return t.ClaimedBy != "" && (t.Status == Claimed || t.Status == Blocked)
}

// Check validates a task's fields (used for seeded and loaded tasks).
func (t *Task) Check() error {
	if err := ValidTaskID(t.ID); err != nil {
		return err
	}
	if !t.Status.Valid() {
		return Errorf(CodeUsage, "task %q: status %q is not one of %s", t.ID, t.Status, StatusNames)
	}
	if t.Priority.Rank() < 0 {
		return Errorf(CodeUsage, "task %q: priority %q is not one of urgent, high, medium, low", t.ID, t.Priority)
	}
	if t.SkillLevel.Rank() < 0 {
		return Errorf(CodeUsage, "task %q: skill_level %q is not one of entry, intermediate, expert", t.ID, t.SkillLevel)
	}
	for _, d := range t.Deps {
		if err := ValidTaskID(d); err != nil {
			return Errorf(CodeUsage, "task %q: dep: %v", t.ID, err)
		}
		if d == t.ID {
			return Errorf(CodeUsage, "task %q depends on itself", t.ID)
		}
	}
	if t.ClaimedBy != "" {
		if err := ValidAgentID(t.ClaimedBy); err != nil {
			return Errorf(CodeUsage, "task %q: claimed_by: %v", t.ID, err)
		}
	}
	if t.AssignedTo != "" {
		if err := ValidAgentID(t.AssignedTo); err != nil {
			return Errorf(CodeUsage, "task %q: assigned_to: %v", t.ID, err)
		}
	}
	if t.Owner != "" {
		if err := ValidAgentID(t.Owner); err != nil {
			return Errorf(CodeUsage, "task %q: owner: %v", t.ID, err)
		}
	}
	if t.Fenced != "" {
		if err := ValidAgentID(t.Fenced); err != nil {
			return Errorf(CodeUsage, "task %q: fenced: %v", t.ID, err)
		}
	}
	if t.ReviewerKind != "" && t.ReviewerKind != "agent" && t.ReviewerKind != "human" {
		return Errorf(CodeUsage, "task %q: reviewer_kind %q is not agent or human", t.ID, clip(t.ReviewerKind))
	}
	if t.Rejections < 0 {
		return Errorf(CodeUsage, "task %q: rejections %d is negative", t.ID, t.Rejections)
	}
	if t.Progress < 0 || t.Progress > 100 {
		return Errorf(CodeUsage, "task %q: progress %d is outside 0..100", t.ID, t.Progress)
	}
	if t.Epoch < 0 {
		return Errorf(CodeUsage, "task %q: epoch %d is negative", t.ID, t.Epoch)
	}
	for _, f := range t.Files {
		if f == "" || strings.ContainsRune(f, 0) {
			return Errorf(CodeUsage, "task %q: files: empty or NUL-containing pattern", t.ID)
		}
	}
	if err := t.checkPredicted(); err != nil {
		return err
	}
	return t.checkWork()
}

// checkWork validates the fields that say where the task's work lives.
func (t *Task) checkWork() error {
	if t.Branch != "" {
		if err := ValidBranch(t.Branch); err != nil {
			return Errorf(CodeUsage, "task %q: branch: %v", t.ID, err)
		}
	}
	for _, c := range []struct{ name, v string }{{"base", t.Base}, {"head", t.Head}, {"landed_commit", t.LandedCommit}, {"reviewed_commit", t.ReviewedCommit}} {
		if c.v != "" && !ValidCommit(c.v) {
			return Errorf(CodeUsage, "task %q: %s %q is not a commit id (4 to 64 hexadecimal digits)", t.ID, c.name, clip(c.v))
		}
	}
	if t.LandingAt != "" {
		if _, err := ParseTime(t.LandingAt); err != nil {
			return Errorf(CodeUsage, "task %q: landing_at %q is not an RFC 3339 time", t.ID, clip(t.LandingAt))
		}
	}
	for _, p := range t.TouchedFiles {
		if cp, err := CleanRepoPath(p); err != nil || cp != p {
			return Errorf(CodeUsage, "task %q: touched_files: %q is not a clean repository path", t.ID, clip(p))
		}
	}
	for _, c := range t.Conflicts {
		if c.With == "" || strings.ContainsRune(c.With, 0) {
			return Errorf(CodeUsage, "task %q: conflicts: empty or NUL-containing \"with\"", t.ID)
		}
		for _, f := range c.Files {
			if f == "" || strings.ContainsRune(f, 0) {
				return Errorf(CodeUsage, "task %q: conflicts: empty or NUL-containing file", t.ID)
			}
		}
	}
	for _, r := range t.Receipts {
		if err := r.check(); err != nil {
			return Errorf(CodeUsage, "task %q: receipts: %v", t.ID, err)
		}
	}
	return nil
}

const maxIDLen = 64

// ValidTaskID checks a task id: [A-Za-z0-9][A-Za-z0-9._-]{0,63}.
func ValidTaskID(id string) error { return validID("task", id, true) }

// ValidAgentID checks an agent id: [A-Za-z0-9][A-Za-z0-9_-]{0,63} (no dots,
// so a lock name <task>.<agent>.lock splits at its last dot).
func ValidAgentID(id string) error { return validID("agent", id, false) }

func validID(kind, id string, dots bool) error {
	bad := func(why string) error {
		return &Error{Code: CodeUsage, Msg: fmt.Sprintf("invalid %s id %q: %s", kind, clip(id), why)}
	}
	if id == "" {
		return bad("empty")
	}
	if len(id) > maxIDLen {
		return bad(fmt.Sprintf("longer than %d bytes", maxIDLen))
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if alnum {
			continue
		}
		if i > 0 && (c == '_' || c == '-' || (dots && c == '.')) {
			continue
		}
		if i == 0 {
			return bad("must start with a letter or digit")
		}
		allowed := "letters, digits, '_' and '-'"
		if dots {
			allowed = "letters, digits, '.', '_' and '-'"
		}
		return bad("only " + allowed + " are allowed")
	}
	return nil
}

func clip(s string) string {
	if len(s) > 70 {
		return s[:64] + "…"
	}
	return s
}

// TimeFormat is the contract's time format: RFC 3339, UTC, to the second.
const TimeFormat = "2006-01-02T15:04:05Z"

// FormatTime renders t in TimeFormat.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// ParseTime parses any RFC 3339 time (ROTD writes offsets and fractions too).
func ParseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }

// Clock returns the current time; tests inject their own.
type Clock func() time.Time

// SystemClock is the real clock.
func SystemClock() time.Time { return time.Now() }
