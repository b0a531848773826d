package coord

import (
	"slices"
	"strings"
)

// Landing (contract §10): finished work merged onto the target branch
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
func (t *Task) Landable(reviewGate bool) bool {
	return t.Status == Done && t.Head != "" && t.LandedAt == "" && (!reviewGate || t.ReviewerID != "")
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
		if t.LandingAt != "" {
			t.LandingAt = ""
			t.Dirty = true
			n++
		}
	}
	return n
}
