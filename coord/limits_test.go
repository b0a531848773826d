package coord

import (
	"reflect"
	"strings"
	"testing"
)

// TestBoundedText: every operation that takes free text refuses text over
// its bound with CodeUsage and leaves the Txn as it was, and takes text at
// the bound. The bounds are counted as the contract says: a title in
// characters (so 200 non-ASCII characters are fine), the rest in bytes.
func TestBoundedText(t *testing.T) {
	type op func(tx *Txn, text string) error
	held := func(status Status) func() *Txn {
		return func() *Txn {
			return newTxn(&Task{ID: "t", Status: status, ClaimedBy: "a", Epoch: 1})
		}
	}
	assigned := func() *Txn {
		return newTxn(&Task{ID: "t", Status: Unclaimed, AssignedTo: "a", AssignedAt: "2026-11-22T10:00:00Z"})
	}
	seed := func(field func(*Task, string)) op {
		return func(tx *Txn, text string) error {
			task := &Task{ID: "n", Status: Unclaimed}
			field(task, text)
			_, err := tx.CheckSeed([]SeedLine{{Line: 3, Task: task}}, false)
			return err
		}
	}
	cases := []struct {
		name  string
		limit int
		rune  bool // counted in characters
		txn   func() *Txn
		do    op
	}{
		{"release summary", MaxNote, false, held(Claimed), func(tx *Txn, s string) error { _, err := tx.Release("a", "t", 1, s, false); return err }},
		{"block reason", MaxNote, false, held(Claimed), func(tx *Txn, s string) error { _, err := tx.Block("a", "t", 1, s); return err }},
		{"progress note", MaxNote, false, held(Claimed), func(tx *Txn, s string) error { _, err := tx.Progress("a", "t", 1, 50, s); return err }},
		{"reject reason", MaxNote, false, held(Review), func(tx *Txn, s string) error { _, err := tx.Reject("r", "t", s, 3); return err }},
		{"hand back reason", MaxNote, false, held(Claimed), func(tx *Txn, s string) error {
			_, err := tx.HandBack("a", "t", 1, s, BlockIfProgress)
			return err
		}},
		{"give back reason", MaxNote, false, assigned, func(tx *Txn, s string) error { _, err := tx.GiveBack("a", "t", s); return err }},
		{"seed title", MaxTitle, true, held(Claimed), seed(func(t *Task, s string) { t.Title = s })},
		{"seed description", MaxDescription, false, held(Claimed), seed(func(t *Task, s string) { t.Description = s })},
		{"seed blocked_reason", MaxNote, false, held(Claimed), seed(func(t *Task, s string) { t.Status, t.BlockedReason = Blocked, s })},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			unit := "x"
			if c.rune {
				unit = "é" // two bytes, one character
			}
			tx := c.txn()
			if err := c.do(tx, strings.Repeat(unit, c.limit)); err != nil {
				t.Fatalf("at the limit (%d): %v", c.limit, err)
			}
			tx = c.txn()
			before := snapshot(tx)
			err := c.do(tx, strings.Repeat(unit, c.limit+1))
			if CodeOf(err) != CodeUsage || !strings.Contains(err.Error(), "more than") {
				t.Fatalf("over the limit: %v (code %d), want CodeUsage naming the bound", err, CodeOf(err))
			}
			if !reflect.DeepEqual(before, snapshot(tx)) {
				t.Fatalf("a refused operation changed the Txn")
			}
		})
	}
	if err := CheckSeedText([]SeedLine{{Line: 7, Task: &Task{ID: "n", Title: strings.Repeat("x", MaxTitle+1)}}}); err == nil ||
		!strings.Contains(err.Error(), "line 7") || !strings.Contains(err.Error(), `task "n"`) {
		t.Fatalf("a seed line's refusal names neither its line nor its task: %v", err)
	}
}

// snapshot is what a Txn holds, for comparison.
func snapshot(tx *Txn) any {
	var tasks []Task
	for _, t := range tx.Tasks {
		tasks = append(tasks, *t)
	}
	return []any{tasks, tx.Events, tx.PathLocks, tx.Pool, tx.LastEpoch}
}
