package coord

import (
	"testing"
	"time"
)

// TestAdvise: the advised number is the size of a greedy independent
// set of the ready queue (two tasks predicted to collide and one
// independent: 2; all colliding: 1; predicted_files off: predictions do
// not count), damped by the measured conflicts per task, never above the
// independent work nor below 1 while work is ready.
func TestAdvise(t *testing.T) {
	now := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	at := func(h int) string { return FormatTime(now.Add(-time.Duration(h) * time.Hour)) }
	queue := func() []*Task {
		return []*Task{
			{ID: "a", Status: Unclaimed, PredictedFiles: []string{"printer.go"}},
			{ID: "b", Status: Unclaimed, PredictedFiles: []string{"docs/x.md", "printer.go"}},
			{ID: "c", Status: Unclaimed, PredictedFiles: []string{"search.go"}},
			{ID: "d", Status: Unclaimed, Deps: []string{"a"}},
			{ID: "f1", Status: Done, CompletedAt: at(4)},
			{ID: "f2", Status: Done, CompletedAt: at(2)},
			{ID: "old", Status: Done, CompletedAt: at(30)},
		}
	}
	for _, c := range []struct {
		name  string
		mode  PredictMode
		edit  func([]*Task)
		ev    ConflictEvents
		agent int
		ready int
	}{
		{"two collide, one free", "", nil, ConflictEvents{}, 2, 3},
		{"warn still counts predictions", PredictWarn, nil, ConflictEvents{}, 2, 3},
		{"off ignores predictions", PredictOff, nil, ConflictEvents{}, 3, 3},
		{"all collide", "", func(ts []*Task) { ts[2].PredictedFiles = []string{"printer.go"} }, ConflictEvents{}, 1, 3},
		{"conflict group", PredictOff, func(ts []*Task) { ts[0].ConflictGroup, ts[2].ConflictGroup = "g", "g" }, ConflictEvents{}, 2, 3},
		{"conflicts damp", PredictOff, nil, ConflictEvents{Conflicts: 1, SendBacks: 1}, 2, 3},
		{"conflicts never below 1", "", nil, ConflictEvents{Conflicts: 40}, 1, 3},
		{"one at work counts", "", func(ts []*Task) {
			ts[4] = &Task{ID: "w", Status: Claimed, ClaimedBy: "z", PredictedFiles: []string{"main.go"}}
		}, ConflictEvents{}, 3, 3},
		{"nothing ready", "", func(ts []*Task) {
			for _, x := range ts[:3] {
				x.Status = Done
			}
			ts[3].Status = Done
		}, ConflictEvents{}, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := queue()
			if c.edit != nil {
				c.edit(ts)
			}
			tx := &Txn{Tasks: ts, PredictedFiles: c.mode}
			a := tx.Advise(now, c.ev)
			if a.Agents != c.agent || a.Ready != c.ready || a.Start > a.Independent || a.Agents != a.InFlight+a.Start || a.Why == "" {
				t.Fatalf("advice %+v, want %d agents for %d ready", a, c.agent, c.ready)
			}
		})
	}
	// The rates behind it: 2 finished in the last 4 hours; 2 conflicts
	// per finished task.
	a := (&Txn{Tasks: queue()}).Advise(now, ConflictEvents{Conflicts: 3, SendBacks: 1})
	if a.Rates.Finished != 2 || a.Rates.Hours != 4 || a.Rates.TasksPerHour != 0.5 || a.Rates.ConflictsPerTask != 2 || a.WaitingOnDeps != 1 {
		t.Fatalf("rates %+v, advice %+v", a.Rates, a)
	}
	for msg, want := range map[string]string{
		"conflict: task 4.2 (bob) and main change a.go": "conflict",
		"sent task 4.2 back to bob: merge conflict":     "sendback",
		"claimed task 4.2 (epoch 3)":                    "",
	} {
		if got := IsConflictEvent(msg); got != want {
			t.Errorf("%q: %q, want %q", msg, got, want)
		}
	}
}
