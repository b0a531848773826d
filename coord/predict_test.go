package coord

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestWeighPredictions: a prediction is weighed, never a rule. A task
// whose predicted paths likely meet the work in flight (a declared file,
// a write claim, a confident prediction) waits, and ready --explain's
// reason says both numbers; one whose meeting is unlikely (two weak
// predictions, a prediction below the floor) is claimable; a task's
// declared files replace its predictions; predicted_files off weighs
// nothing, and the legacy settings weigh. No claim logs a warning.
func TestWeighPredictions(t *testing.T) {
	type tc struct {
		name   string
		held   *Task // claimed by agent a
		claims []string
		next   *Task // unclaimed; agent b asks
		want   string
	}
	p := func(paths []string, conf ...float64) *Task {
		return &Task{PredictedFiles: paths, PredictedConfidence: conf}
	}
	cases := []tc{
		{"predicted meets declared", &Task{ID: "h", Files: []string{"src/*.go"}}, nil,
			&Task{ID: "n", PredictedFiles: []string{"src/printer.go"}, PredictedConfidence: []float64{0.8}},
			"predicted path src/printer.go meets task h (p 0.80): expected redo 0.80 task > idle agent 0.35"},
		{"likely meets likely", &Task{ID: "h", PredictedFiles: []string{"docs/a.md", "printer.go"}, PredictedConfidence: []float64{0.3, 0.9}}, nil,
			&Task{ID: "n", PredictedFiles: []string{"printer.go"}, PredictedConfidence: []float64{0.8}},
			"predicted path printer.go meets task h (p 0.72): expected redo 0.72 task > idle agent 0.35"},
		{"unlikely meets unlikely", p([]string{"printer.go"}, 0.5), nil,
			&Task{ID: "n", PredictedFiles: []string{"printer.go"}, PredictedConfidence: []float64{0.6}}, ""},
		{"below the floor is not weighed", p([]string{"printer.go"}, 0.1), nil,
			&Task{ID: "n", PredictedFiles: []string{"printer.go"}, PredictedConfidence: []float64{0.1}}, ""},
		{"declared meets predicted", p([]string{"printer.go"}, 0.7), nil,
			&Task{ID: "n", Files: []string{"*.go"}},
			"predicted path printer.go meets task h (p 0.70): expected redo 0.70 task > idle agent 0.35"},
		{"declared files replace predictions", &Task{ID: "h", Files: []string{"a.txt"}}, nil,
			&Task{ID: "n", Files: []string{"b.txt"}, PredictedFiles: []string{"a.txt"}, PredictedConfidence: []float64{0.99}}, ""},
		{"predicted meets write claim", &Task{ID: "h"}, []string{"printer.go"},
			&Task{ID: "n", PredictedFiles: []string{"printer.go"}, PredictedConfidence: []float64{0.9}},
			"predicted path printer.go meets task h (p 0.90): expected redo 0.90 task > idle agent 0.35"},
		{"a weak prediction meets a write claim", &Task{ID: "h"}, []string{"printer.go"},
			&Task{ID: "n", PredictedFiles: []string{"printer.go"}, PredictedConfidence: []float64{0.3}}, ""},
		{"a glob character is a name", &Task{ID: "h", Files: []string{"a.go"}}, nil,
			&Task{ID: "n", PredictedFiles: []string{"*.go"}, PredictedConfidence: []float64{0.9}}, ""},
		{"disjoint", p([]string{"docs/a.md"}, 0.9), nil,
			&Task{ID: "n", PredictedFiles: []string{"printer.go"}, PredictedConfidence: []float64{0.9}}, ""},
	}
	for _, c := range cases {
		for _, mode := range []PredictMode{"", PredictWeigh, PredictEnforce, PredictWarn, PredictOff} {
			t.Run(c.name+"/"+string(mode), func(t *testing.T) {
				held, next := *c.held, *c.next
				if held.ID == "" {
					held.ID = "h"
				}
				held.Status, next.Status = Unclaimed, Unclaimed
				tx := &Txn{Tasks: []*Task{&held, &next}, Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), PredictedFiles: mode, PredictFloor: DefaultPredictFloor}
				if _, err := tx.Claim(Agent{ID: "a"}, ClaimOptions{TaskID: "h"}); err != nil {
					t.Fatal(err)
				}
				if len(c.claims) > 0 {
					if _, err := tx.WriteClaim("a", Working{}, c.claims); err != nil {
						t.Fatal(err)
					}
				}
				want := c.want
				if mode == PredictOff {
					want = ""
				}
				if why := tx.Ineligible(&next, Agent{ID: "b"}); why != want {
					t.Fatalf("ineligible %q, want %q", why, want)
				}
				w := tx.Weigh([]*Task{&next}, "b")[0]
				if w.Waits != (want != "") || w.Idle != IdleCost || (want != "" && w.Cost <= w.Idle) {
					t.Fatalf("weighed %+v, want waits %v", w, want != "")
				}
				// ready --explain lists it with that reason.
				_, not, why := tx.Ready(Agent{ID: "b"})
				if got := slices.Index(not, &next) >= 0; got != (want != "") || got && why[slices.Index(not, &next)] != want {
					t.Fatalf("ready: not %v, why %q", not, why)
				}
				// The scheduler sees what claim sees.
				tx.Pool = []PoolAgent{{ID: "b", Role: Implementer}}
				r := tx.Schedule(map[string]bool{"b": true}, 1)
				if assigned := len(r.Assigned) == 1; assigned != (want == "") {
					t.Fatalf("scheduler assigned %+v; ineligible %q", r.Assigned, want)
				}
				if want != "" {
					return
				}
				tx.Events = nil
				next.AssignedTo, next.AssignedAt = "", ""
				if _, err := tx.Claim(Agent{ID: "b"}, ClaimOptions{TaskID: "n"}); err != nil {
					t.Fatal(err)
				}
				for _, e := range tx.Events {
					if strings.Contains(e.Text, "warning") {
						t.Fatalf("the claim logged a warning: %+v", tx.Events)
					}
				}
			})
		}
	}
}

// TestBestLeastLikely: among ready tasks of one priority, a free agent
// takes the one least likely to meet the work in flight (registry order
// breaking ties), and priority still comes first.
func TestBestLeastLikely(t *testing.T) {
	pred := func(id, path string, c float64) *Task {
		return &Task{ID: id, Status: Unclaimed, PredictedFiles: []string{path}, PredictedConfidence: []float64{c}}
	}
	tx := &Txn{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), PredictFloor: DefaultPredictFloor, Tasks: []*Task{
		pred("h", "hot.go", 0.8),
		pred("risky", "hot.go", 0.4),   // 0.32: ready, but risky
		pred("safe", "cold.go", 0.9),   // 0
		pred("after", "other.go", 0.9), // 0, later in the registry
	}}
	if _, err := tx.Claim(Agent{ID: "a"}, ClaimOptions{TaskID: "h"}); err != nil {
		t.Fatal(err)
	}
	if got := tx.Best(Agent{ID: "b"}, false); got == nil || got.ID != "safe" {
		t.Fatalf("best %v, want safe", got)
	}
	ready, _, _ := tx.Ready(Agent{ID: "b"})
	var ids []string
	for _, r := range ready {
		ids = append(ids, r.ID)
	}
	if !slices.Equal(ids, []string{"safe", "after", "risky"}) {
		t.Fatalf("ready in order %v", ids)
	}
	tx.Task("risky").Priority = High
	if got := tx.Best(Agent{ID: "b"}, false); got == nil || got.ID != "risky" {
		t.Fatalf("best %v, want the high-priority risky", got)
	}
}

// TestOrphanedHotClaim: one claimed task whose agent went silent, holding
// a write claim on a hot file that every other task is predicted to
// touch now and then, does not stall the rest: they run.
func TestOrphanedHotClaim(t *testing.T) {
	tx := &Txn{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), PredictFloor: DefaultPredictFloor}
	tx.Add(&Task{ID: "orphan", Status: Unclaimed, PredictedFiles: []string{"src/click/types.py"}, PredictedConfidence: []float64{0.45}})
	for i := range 30 {
		tx.Add(&Task{ID: "t" + strconv.Itoa(i), Status: Unclaimed,
			PredictedFiles: []string{"src/click/types.py", "src/click/f" + strconv.Itoa(i) + ".py"}, PredictedConfidence: []float64{0.35, 0.6}})
	}
	if _, err := tx.Claim(Agent{ID: "gone"}, ClaimOptions{TaskID: "orphan"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.WriteClaim("gone", Working{}, []string{"src/click/types.py"}); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		got, err := tx.Claim(Agent{ID: "a" + strconv.Itoa(i)}, ClaimOptions{})
		if err != nil || got == nil {
			t.Fatalf("agent %d got %v, %v: the orphaned claim stalls the work", i, got, err)
		}
	}
	if a := tx.Advise(tx.Now, ConflictEvents{}); a.Start < 6 {
		t.Fatalf("advice %+v", a)
	}
}

// TestRecordPredictions: predictions land on the tasks still open, clean
// and bounded; an unchanged one writes nothing.
func TestRecordPredictions(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tx := &Txn{Tasks: []*Task{{ID: "a", Status: Unclaimed}, {ID: "d", Status: Done}}, Now: now}
	n := tx.RecordPredictions([]Prediction{{Task: "a", Paths: []string{"x.go", "../bad", "x.go", "y/z.go"}, Confidence: []float64{0.5, 0.9, 0.4, 0.2}}, {Task: "d", Paths: []string{"x.go"}}, {Task: "gone"}})
	a := tx.Task("a")
	if n != 1 || !slices.Equal(a.PredictedFiles, []string{"x.go", "y/z.go"}) || !slices.Equal(a.PredictedConfidence, []float64{0.5, 0.2}) || a.PredictedAt != "2026-01-01T00:00:00Z" || !a.Dirty {
		t.Fatalf("n %d, task %+v", n, a)
	}
	if err := a.Check(); err != nil {
		t.Fatal(err)
	}
	a.Dirty = false
	tx.Now = now.Add(time.Hour)
	if n := tx.RecordPredictions([]Prediction{{Task: "a", Paths: []string{"x.go", "y/z.go"}, Confidence: []float64{0.5, 0.2}}}); n != 0 || a.Dirty || a.PredictedAt != "2026-01-01T00:00:00Z" {
		t.Fatalf("unchanged prediction rewrote the task: %d %+v", n, a)
	}
	for _, bad := range []*Task{{ID: "a", Status: Unclaimed, PredictedFiles: []string{"/abs"}}, {ID: "a", Status: Unclaimed, PredictedAt: "yesterday"},
		{ID: "a", Status: Unclaimed, PredictedFiles: []string{"x.go"}, PredictedConfidence: []float64{0.5, 0.5}},
		{ID: "a", Status: Unclaimed, PredictedFiles: []string{"x.go"}, PredictedConfidence: []float64{1.5}}} {
		if err := bad.Check(); err == nil {
			t.Errorf("%+v passes Check", bad)
		}
	}
}
