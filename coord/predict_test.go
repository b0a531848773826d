package coord

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPredictedFilesEligibility: a task predicted to touch a path that a
// task in flight declares, is predicted to touch, or has write-claimed
// waits under enforce (the reason names the predicted path), is only
// reported under warn (ready's reason empty, a warning, a log line at
// the claim) and is ignored under off.
func TestPredictedFilesEligibility(t *testing.T) {
	type tc struct {
		name   string
		held   *Task // claimed by agent a
		claims []string
		next   *Task // unclaimed; agent b asks
		want   string
	}
	cases := []tc{
		{"predicted meets declared", &Task{ID: "h", Files: []string{"src/*.go"}}, nil,
			&Task{ID: "n", PredictedFiles: []string{"src/printer.go"}}, "predicted path src/printer.go meets task h"},
		{"predicted meets predicted", &Task{ID: "h", PredictedFiles: []string{"docs/a.md", "printer.go"}}, nil,
			&Task{ID: "n", PredictedFiles: []string{"printer.go"}}, "predicted path printer.go meets task h"},
		{"declared meets predicted", &Task{ID: "h", PredictedFiles: []string{"printer.go"}}, nil,
			&Task{ID: "n", Files: []string{"*.go"}}, "files meet path printer.go, predicted for task h"},
		{"predicted meets write claim", &Task{ID: "h"}, []string{"printer.go"},
			&Task{ID: "n", PredictedFiles: []string{"printer.go"}}, "predicted path printer.go is write-claimed by task h (a)"},
		{"a glob character is a name", &Task{ID: "h", Files: []string{"a.go"}}, nil,
			&Task{ID: "n", PredictedFiles: []string{"*.go"}}, ""},
		{"disjoint", &Task{ID: "h", PredictedFiles: []string{"docs/a.md"}}, nil,
			&Task{ID: "n", PredictedFiles: []string{"printer.go"}}, ""},
	}
	for _, c := range cases {
		for _, mode := range []PredictMode{"", PredictEnforce, PredictWarn, PredictOff} {
			t.Run(c.name+"/"+string(mode), func(t *testing.T) {
				held, next := *c.held, *c.next
				held.Status, next.Status = Unclaimed, Unclaimed
				tx := &Txn{Tasks: []*Task{&held, &next}, Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), PredictedFiles: mode}
				if _, err := tx.Claim(Agent{ID: "a"}, ClaimOptions{TaskID: "h"}); err != nil {
					t.Fatal(err)
				}
				if len(c.claims) > 0 {
					if _, err := tx.WriteClaim("a", Working{}, c.claims); err != nil {
						t.Fatal(err)
					}
				}
				why := tx.Ineligible(&next, Agent{ID: "b"})
				warn := tx.PredictedWarning(&next)
				wantWhy, wantWarn := "", ""
				switch mode {
				case "", PredictEnforce:
					wantWhy = c.want
				case PredictWarn:
					wantWarn = c.want
				}
				if why != wantWhy || warn != wantWarn {
					t.Fatalf("ineligible %q, warning %q; want %q, %q", why, warn, wantWhy, wantWarn)
				}
				// The scheduler sees what claim sees.
				tx.Pool = []PoolAgent{{ID: "b", Role: Implementer}}
				r := tx.Schedule(map[string]bool{"b": true}, 1)
				if assigned := len(r.Assigned) == 1; assigned != (wantWhy == "") {
					t.Fatalf("scheduler assigned %+v; ineligible %q", r.Assigned, wantWhy)
				}
				if wantWhy != "" {
					return
				}
				tx.Events = nil
				next.AssignedTo, next.AssignedAt = "", ""
				if _, err := tx.Claim(Agent{ID: "b"}, ClaimOptions{TaskID: "n"}); err != nil {
					t.Fatal(err)
				}
				logged := false
				for _, e := range tx.Events {
					logged = logged || strings.Contains(e.Text, "predicted_files: warn")
				}
				if logged != (wantWarn != "") {
					t.Fatalf("warning logged %v; events %+v", logged, tx.Events)
				}
			})
		}
	}
}

// TestRecordPredictions: predictions land on the tasks still open, clean
// and bounded; an unchanged one writes nothing.
func TestRecordPredictions(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tx := &Txn{Tasks: []*Task{{ID: "a", Status: Unclaimed}, {ID: "d", Status: Done}}, Now: now}
	n := tx.RecordPredictions([]Prediction{{Task: "a", Paths: []string{"x.go", "../bad", "x.go", "y/z.go"}}, {Task: "d", Paths: []string{"x.go"}}, {Task: "gone"}})
	a := tx.Task("a")
	if n != 1 || !slices.Equal(a.PredictedFiles, []string{"x.go", "y/z.go"}) || a.PredictedAt != "2026-01-01T00:00:00Z" || !a.Dirty {
		t.Fatalf("n %d, task %+v", n, a)
	}
	if err := a.Check(); err != nil {
		t.Fatal(err)
	}
	a.Dirty = false
	tx.Now = now.Add(time.Hour)
	if n := tx.RecordPredictions([]Prediction{{Task: "a", Paths: []string{"x.go", "y/z.go"}}}); n != 0 || a.Dirty || a.PredictedAt != "2026-01-01T00:00:00Z" {
		t.Fatalf("unchanged prediction rewrote the task: %d %+v", n, a)
	}
	for _, bad := range []*Task{{ID: "a", Status: Unclaimed, PredictedFiles: []string{"/abs"}}, {ID: "a", Status: Unclaimed, PredictedAt: "yesterday"}} {
		if err := bad.Check(); err == nil {
			t.Errorf("%+v passes Check", bad)
		}
	}
}
