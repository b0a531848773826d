package coord

import (
	"testing"
	"time"
)

// TestAdvise: the advised number is the size of a greedy independent
// set of the ready queue (two tasks likely to collide and one
// independent: 2; all colliding: 1; predicted_files off or predictions
// below the floor: predictions do not count), less the collisions it
// expects, damped by the measured conflicts per task, never above the
// independent work nor below 1 while work is ready.
func TestAdvise(t *testing.T) {
	now := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	at := func(h int) string { return FormatTime(now.Add(-time.Duration(h) * time.Hour)) }
	queue := func() []*Task {
		return []*Task{
			{ID: "a", Status: Unclaimed, PredictedFiles: []string{"printer.go"}, PredictedConfidence: []float64{0.9}},
			{ID: "b", Status: Unclaimed, PredictedFiles: []string{"docs/x.md", "printer.go"}, PredictedConfidence: []float64{0.5, 0.8}},
			{ID: "c", Status: Unclaimed, PredictedFiles: []string{"search.go"}, PredictedConfidence: []float64{0.9}},
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
		{"warn (of earlier versions) weighs", PredictWarn, nil, ConflictEvents{}, 2, 3},
		{"off ignores predictions", PredictOff, nil, ConflictEvents{}, 3, 3},
		{"weak predictions are not weighed", "", func(ts []*Task) {
			for _, x := range ts[:3] {
				x.PredictedConfidence = make([]float64, len(x.PredictedFiles)) // a young repository: nothing to go on
			}
		}, ConflictEvents{}, 3, 3},
		{"unlikely collisions run, expected ones count", "", func(ts []*Task) {
			ts[0].PredictedConfidence = []float64{0.45}
			ts[1].PredictedConfidence = []float64{0.5, 0.45}
			ts[2].PredictedFiles, ts[2].PredictedConfidence = []string{"printer.go"}, []float64{0.45}
		}, ConflictEvents{}, 3, 3},
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
			tx := &Txn{Tasks: ts, PredictedFiles: c.mode, PredictFloor: DefaultPredictFloor}
			a := tx.Advise(now, c.ev)
			if a.Agents != c.agent || a.Ready != c.ready || a.Start > a.Independent || a.Agents != a.InFlight+a.Start || a.Why == "" {
				t.Fatalf("advice %+v, want %d agents for %d ready", a, c.agent, c.ready)
			}
		})
	}
	// Expected collisions are the work the set expects to redo, and a
	// task whose risk is worth more than an idle agent is left out.
	ts := queue()
	ts[0].PredictedConfidence = []float64{0.55}
	ts[1].PredictedFiles, ts[1].PredictedConfidence = []string{"printer.go"}, []float64{0.55}
	ts[2].PredictedFiles, ts[2].PredictedConfidence = []string{"printer.go", "search.go"}, []float64{0.43, 0.9}
	tx := &Txn{Tasks: ts, PredictFloor: DefaultPredictFloor}
	if a := tx.Advise(now, ConflictEvents{}); a.Independent != 3 || a.Expected != 0.64 || a.Start != 3 {
		t.Fatalf("advice %+v", a)
	}
	ts[2].PredictedConfidence = []float64{0.45, 0.9}
	if a := tx.Advise(now, ConflictEvents{}); a.Independent != 2 || a.Colliding != 1 || a.Expected != 0.3 || a.Start != 2 {
		t.Fatalf("advice %+v", a)
	}
	// The rates behind it: 2 finished in the last 4 hours; 2 conflicts
	// per finished task.
	a := (&Txn{Tasks: queue()}).Advise(now, ConflictEvents{Conflicts: 3, SendBacks: 1})
	if a.Rates.Finished != 2 || a.Rates.Hours != 4 || a.Rates.TasksPerHour != 0.5 || a.Rates.ConflictsPerTask != 2 || a.WaitingOnDeps != 1 {
		t.Fatalf("rates %+v, advice %+v", a.Rates, a)
	}
	for _, c := range []struct{ agent, msg, want string }{
		{CoordinatorID, "conflict: task 4.2 (bob) and main change a.go", "conflict"},
		{"lander@h", "sent task 4.2 back to bob: merge conflict", "sendback"},
		{CoordinatorID, "claimed task 4.2 (epoch 3)", ""},
		// an agent's own line is no event of coord's
		{"bob", "conflict: task 4.2 (bob) and main change a.go", ""},
		{"bob", MessageText("conflict: task 4.2 and main change a.go"), ""},
		{"bob", MessageText("sent task 4.2 back to bob: x"), ""},
	} {
		if got := IsConflictEvent(c.agent, c.msg); got != c.want {
			t.Errorf("%s %q: %q, want %q", c.agent, c.msg, got, c.want)
		}
	}
}
