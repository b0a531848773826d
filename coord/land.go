package coord

import (
	"fmt"
	"slices"
	"strings"
)

// Landing (docs/GIT.md): finished work merged onto the target branch
// by one lander at a time. The rules here say which tasks may land, in
// which order, and record what the lander is doing; the lander itself
// (git, the check, the lease) is the application's.

// CheckLandCheck checks a land check's command line (config.json's
// land_check, --check): one line of text, at most MaxNote bytes ("" is
// no check).
func CheckLandCheck(cmd string) error {
	if strings.ContainsAny(cmd, "\x00\n\r") {
		return Errorf(CodeUsage, "a land check is one line (no NUL or line break)")
	}
	if len(cmd) > MaxNote {
		return Errorf(CodeUsage, "a land check is at most %d bytes, found %d", MaxNote, len(cmd))
	}
	return nil
}

// LandLease is the name of the lease that makes the lander exclusive.
const LandLease = "coord-land"

// Landable reports whether t's work waits to be landed: done (approved,
// with the review gate: a reviewer recorded), with a head, not landed.
func (t *Task) Landable(reviewGate bool) bool { return t.NotLandable(reviewGate) == "" }

// NotLandable says why t's work does not wait to be landed, "" when it
// does: the one statement of the rule Landable reports.
func (t *Task) NotLandable(reviewGate bool) string {
	switch {
	case t.Status != Done:
		return fmt.Sprintf("it is %s, not done", t.Status)
	case t.LandedAt != "":
		return "it has landed"
	case t.Head == "":
		return "it was released with no commit of its own to land"
	case reviewGate && t.ReviewerID == "":
		return "it is done but not approved (review_gate)"
	}
	return ""
}

// LandQueue returns the landable tasks (Landable) in the order the
// lander takes them: a task after the landable tasks it depends on
// (directly or not), else by completion time, then id. Only, when not
// empty, keeps the tasks named (still ordered by the same rule).
func (tx *Txn) LandQueue(reviewGate bool, only []string) []*Task {
	var q []*Task
	for _, t := range tx.Tasks {
		if t.Landable(reviewGate) && (len(only) == 0 || slices.Contains(only, t.ID)) {
			q = append(q, t)
		}
	}
	slices.SortStableFunc(q, func(a, b *Task) int {
		if c := strings.Compare(a.CompletedAt, b.CompletedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	// Dependencies first: a depth-first walk in that order, each task
	// after the queued tasks it depends on (a cycle is cut where met).
	in := map[string]*Task{}
	for _, t := range q {
		in[t.ID] = t
	}
	seen := map[string]bool{}
	out := make([]*Task, 0, len(q))
	var visit func(t *Task)
	visit = func(t *Task) {
		if seen[t.ID] {
			return
		}
		seen[t.ID] = true
		for _, d := range tx.Deps(t) {
			if dt := in[d]; dt != nil {
				visit(dt)
			}
		}
		out = append(out, t)
	}
	for _, t := range q {
		visit(t)
	}
	return out
}

// LandWaits names a prerequisite of t whose own work has not landed yet
// (in flight), or "" when none: t lands after it.
func (tx *Txn) LandWaits(t *Task) string {
	for _, d := range tx.Deps(t) {
		if dt := tx.Task(d); dt != nil && dt.InFlight() {
			return d
		}
	}
	return ""
}

// StartLanding records that the lander is checking task id's work at
// head (landing_at: now), for the displays. It changes nothing (false)
// unless the task is landable with that head.
func (tx *Txn) StartLanding(id, head string, reviewGate bool) bool {
	t := tx.Task(id)
	if t == nil || !t.Landable(reviewGate) || t.Head != head {
		return false
	}
	t.LandingAt = FormatTime(tx.Now)
	t.Dirty = true
	return true
}

// ClearLanding drops every landing_at a lander that stopped left behind
// (the new lander holds the lease: no other is checking anything), and
// returns how many it dropped.
func (tx *Txn) ClearLanding() int {
	n := 0
	for _, t := range tx.Tasks {
		if t.LandingAt != "" || t.LandingOn != nil {
			t.LandingAt, t.LandingOn = "", nil
			t.Dirty = true
			n++
		}
	}
	return n
}

// The states of the landing queue's rows.
const (
	LandChecking = "checking"  // the lander checks its merge now
	LandWaiting  = "waiting"   // landable, waiting for the lander
	LandSentBack = "sent_back" // back with its owner, with why
)

// LandingRow is one task of the landing queue, for people (watch, top,
// the dashboard): what the lander checks, what waits, what went back
// to its owner and why.
type LandingRow struct {
	Task  string `json:"task"`
	State string `json:"state"`
	Owner string `json:"owner,omitempty"`
	// Since is when it started being checked (checking), or was
	// finished (waiting).
	Since string `json:"since,omitempty"`
	// Why is what it waits for (waiting), what it is checked on top of
	// (checking, in a train), or why it went back (sent_back: its
	// review notes).
	Why string `json:"why,omitempty"`
	// On are the tasks ahead of it whose work its check includes
	// (checking, in a train of candidates; none: on the target alone).
	On []string `json:"on,omitempty"`
}

// LandingQueue is the landing queue: the task being checked, then the
// landable tasks in the order the lander takes them, then the finished
// work sent back to its owner (claimed again with review notes: by the
// lander or a reviewer) that the owner has not released again.
func (tx *Txn) LandingQueue(reviewGate bool) []LandingRow {
	var out, back []LandingRow
	for _, t := range tx.Tasks {
		if t.LandingAt != "" && t.Landable(reviewGate) {
			r := LandingRow{Task: t.ID, State: LandChecking, Owner: t.ClaimedBy, Since: t.LandingAt, On: t.LandingOn}
			if len(t.LandingOn) > 0 {
				r.Why = "on top of " + strings.Join(t.LandingOn, ", ")
			}
			out = append(out, r)
		}
		if t.Status == Claimed && t.ReviewNotes != "" && t.Rejections > 0 {
			back = append(back, LandingRow{Task: t.ID, State: LandSentBack, Owner: t.ClaimedBy, Why: t.ReviewNotes})
		}
	}
	for _, t := range tx.LandQueue(reviewGate, nil) {
		if t.LandingAt != "" {
			continue
		}
		r := LandingRow{Task: t.ID, State: LandWaiting, Owner: t.ClaimedBy, Since: t.CompletedAt}
		if d := tx.LandWaits(t); d != "" {
			r.Why = "after task " + d
		}
		out = append(out, r)
	}
	return append(out, back...)
}

// MoveJournal is the lander's note of a move of the target whose
// checkouts have not all followed yet: kept in the repository's common
// git directory at MoveJournalPath, as one line "branch old new", from
// before the move until every checkout of the branch has the new
// commit's files. While it is there, a commit made in such a checkout
// would undo the landing.
type MoveJournal struct{ Branch, Old, New string }

// MoveJournalPath is the journal's path in the common git directory.
const MoveJournalPath = "coord/land-move"

// Bytes is the journal as written.
func (m MoveJournal) Bytes() []byte { return []byte(m.Branch + " " + m.Old + " " + m.New + "\n") }

// ParseMoveJournal reads a journal; ok is false for one that does not
// say "branch old new".
func ParseMoveJournal(data []byte) (m MoveJournal, ok bool) {
	f := strings.Fields(string(data))
	if len(f) != 3 || ValidBranch(f[0]) != nil || len(f[1]) < 40 || len(f[2]) < 40 || !ValidCommit(f[1]) || !ValidCommit(f[2]) {
		return MoveJournal{}, false
	}
	return MoveJournal{f[0], f[1], f[2]}, true
}

// Unfollowed says, for people in a checkout of m's branch, that it has
// not followed the landing yet.
func (m MoveJournal) Unfollowed() string {
	return fmt.Sprintf("a landing moved %s to %s, but this checkout still has the files of %s: a commit here now would undo it; "+
		"'coord land' brings the checkout along (or by hand: git read-tree -m -u %s %s)", m.Branch, short(m.New), short(m.Old), m.Old, m.New)
}
