package coord

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Planning: a task's predicted_files are the repository paths a planner
// (coord plan, package coord/plan) expects it to touch, each with a
// calibrated probability (predicted_confidence). Declared files and the
// write claims of tasks in flight are rules (eligibility, txn.go); a
// prediction is weighed, never a rule:
//
//   - a prediction whose probability is below the floor (config.json
//     predict_floor) is recorded and shown, never weighed;
//   - a task's declared files replace its predictions;
//   - the risk of a ready task is the probability that its paths meet
//     the work in flight (declared files, write claims, and the weighed
//     predictions of the tasks claimed, blocked or assigned);
//   - its expected cost is that risk times the work a collision makes
//     redo (RedoCost, in tasks); it waits only while that exceeds the
//     cost of an idle agent (IdleCost); otherwise it may run, and among
//     the tasks that may, an agent takes the least risky of the best
//     priority.
//
// So a young repository, whose predictions are weak, never serialises
// its work, and a hot file predicted for many tasks holds a task back
// only when both sides are likely to touch it.

// PredictMode is config.json's "predicted_files": whether eligibility
// and the scheduler weigh predicted paths.
type PredictMode string

// The modes. The zero value means PredictWeigh.
const (
	// PredictWeigh (default): predicted paths are weighed.
	PredictWeigh PredictMode = "weigh"
	// PredictOff: predicted paths are recorded and shown by coord plan,
	// never weighed.
	PredictOff PredictMode = "off"
	// PredictEnforce and PredictWarn are the settings of earlier
	// versions, which held a task on any predicted meeting (enforce) or
	// logged it at every claim (warn). Both are still read, and both
	// now mean weigh.
	PredictEnforce PredictMode = "enforce"
	PredictWarn    PredictMode = "warn"
)

// Valid reports whether m is a mode a setting may name ("" is not).
func (m PredictMode) Valid() bool {
	return m == PredictWeigh || m == PredictOff || m == PredictEnforce || m == PredictWarn
}

// Weighed reports whether predicted paths are weighed (every mode but
// off).
func (m PredictMode) Weighed() bool { return m != PredictOff }

// PlanMode is config.json's "plan": whether seed-tasks plans the tasks
// it adds.
type PlanMode string

// The plan modes. The zero value means PlanAuto.
const (
	// PlanAuto (default): seed-tasks plans the batch it adds.
	PlanAuto PlanMode = "auto"
	// PlanManual: only coord plan does.
	PlanManual PlanMode = "manual"
)

// Valid reports whether m is auto or manual.
func (m PlanMode) Valid() bool { return m == PlanAuto || m == PlanManual }

// MaxPredicted bounds a task's predicted_files.
const MaxPredicted = 64

// The weighing's constants.
const (
	// DefaultPredictFloor is predict_floor when config.json does not
	// say: a prediction less likely than this is shown, never weighed.
	DefaultPredictFloor = 0.15
	// RedoCost is the work a collision makes redo, in tasks: a merge
	// conflict costs about a task's work (the second change redone on
	// top of the first, checked again, reviewed again).
	RedoCost = 1.0
	// IdleCost is the cost of an agent left idle instead, in tasks: it
	// waits for some of the work in flight that the task would meet to
	// land. 0.35 is measured (coordbench -plan, the replayed histories):
	// the mean over the runs of conflicts and makespan, no history
	// alone; a task then waits while its risk is above 0.35.
	IdleCost = 0.35
	// LegacyConfidence is the probability of a predicted path recorded
	// without one (by an earlier version of coord plan).
	LegacyConfidence = 0.5
)

// CheckPredictFloor refuses a floor outside 0..1 (CodeUsage).
func CheckPredictFloor(f float64) error {
	if math.IsNaN(f) || f < 0 || f > 1 {
		return Errorf(CodeUsage, "predict_floor %v is outside 0..1", f)
	}
	return nil
}

// checkPredicted validates predicted_files, predicted_confidence and
// predicted_at.
func (t *Task) checkPredicted() error {
	if len(t.PredictedFiles) > MaxPredicted {
		return Errorf(CodeUsage, "task %q: predicted_files holds %d paths, at most %d", t.ID, len(t.PredictedFiles), MaxPredicted)
	}
	for _, p := range t.PredictedFiles {
		if cp, err := CleanRepoPath(p); err != nil || cp != p {
			return Errorf(CodeUsage, "task %q: predicted_files: %q is not a clean repository path", t.ID, clip(p))
		}
	}
	if len(t.PredictedConfidence) > 0 && len(t.PredictedConfidence) != len(t.PredictedFiles) {
		return Errorf(CodeUsage, "task %q: predicted_confidence holds %d values for %d predicted_files", t.ID, len(t.PredictedConfidence), len(t.PredictedFiles))
	}
	for _, c := range t.PredictedConfidence {
		if math.IsNaN(c) || c < 0 || c > 1 {
			return Errorf(CodeUsage, "task %q: predicted_confidence %v is outside 0..1", t.ID, c)
		}
	}
	if t.PredictedAt != "" {
		if _, err := ParseTime(t.PredictedAt); err != nil {
			return Errorf(CodeUsage, "task %q: predicted_at %q is not an RFC 3339 time", t.ID, clip(t.PredictedAt))
		}
	}
	return nil
}

// Confidence is the probability recorded for t's i-th predicted path
// (LegacyConfidence when none was recorded).
func (t *Task) Confidence(i int) float64 {
	if i < len(t.PredictedConfidence) {
		return t.PredictedConfidence[i]
	}
	return LegacyConfidence
}

// Weighed is the decision on one task's predicted collisions with the
// work in flight.
type Weighed struct {
	// P is the probability that the task's paths meet the work in
	// flight; Path and With the path and the task in flight most likely
	// to meet ("" when P is 0).
	P    float64 `json:"p"`
	Path string  `json:"path,omitempty"`
	With string  `json:"with,omitempty"`
	// Cost is the expected work a collision would redo (P × RedoCost),
	// Idle the cost of an idle agent (IdleCost), both in tasks; the
	// task waits when Cost exceeds Idle.
	Cost  float64 `json:"cost"`
	Idle  float64 `json:"idle"`
	Waits bool    `json:"waits"`
}

// String says the decision in one line: "predicted path printer.go
// meets task p1 (p 0.62): expected redo 0.62 task > idle agent 0.50".
func (w Weighed) String() string {
	if w.Path == "" {
		return ""
	}
	op := "<="
	if w.Waits {
		op = ">"
	}
	return fmt.Sprintf("predicted path %s meets task %s (p %.2f): expected redo %.2f task %s idle agent %.2f", w.Path, w.With, w.P, w.Cost, op, w.Idle)
}

// weighing is what the tasks in flight are likely to touch, as the
// weighing reads it: the predicted paths above the floor of the tasks
// claimed, blocked or assigned (by path), those tasks' declared files,
// and the write claims (holders.claims).
type weighing struct {
	on       bool
	floor    float64
	pred     map[string][]weight
	declared []*Task
}

type weight struct {
	task *Task
	p    float64
}

// weighedPaths calls fn with each of t's predicted paths that is weighed
// and its probability: none when t declares files (they replace its
// predictions) or the mode is off, and none below the floor.
func (w *weighing) weighedPaths(t *Task, fn func(path string, p float64)) {
	if !w.on || len(t.Files) > 0 {
		return
	}
	for i, p := range t.PredictedFiles {
		if c := t.Confidence(i); c >= w.floor && c > 0 {
			fn(p, c)
		}
	}
}

// add counts t as work in flight.
func (w *weighing) add(t *Task) {
	if len(t.Files) > 0 {
		w.declared = append(w.declared, t)
	}
	w.weighedPaths(t, func(p string, c float64) {
		if w.pred == nil {
			w.pred = map[string][]weight{}
		}
		w.pred[p] = append(w.pred[p], weight{t, c})
	})
}

// weigh judges t against the work in flight (agent's own write claims
// left out, as eligibility leaves them out).
func (h *holders) weigh(t *Task, agent string) Weighed {
	w := &h.weighing
	out := Weighed{Idle: IdleCost}
	if !w.on {
		return out
	}
	miss := 1.0
	var best float64
	note := func(p float64, path, with string) {
		if p > best || p == best && p > 0 && (path < out.Path || path == out.Path && with < out.With) {
			best, out.Path, out.With = p, path, with
		}
	}
	// t's predicted paths against everything in flight.
	w.weighedPaths(t, func(f string, pt float64) {
		q := []string{QuoteGlob(f)}
		free := 1.0
		with, strongest := "", 0.0
		meet := func(o *Task, p float64) {
			free *= 1 - p
			if p > strongest || p == strongest && o.ID < with {
				with, strongest = o.ID, p
			}
		}
		for _, o := range w.pred[f] {
			if o.task.ID != t.ID {
				meet(o.task, o.p)
			}
		}
		for _, o := range w.declared {
			if o.ID != t.ID && AnyOverlap(q, o.Files) {
				meet(o, 1)
			}
		}
		for _, c := range h.claims {
			if c.task.ID == t.ID || agent != "" && c.task.ClaimedBy == agent {
				continue
			}
			if AnyOverlap(q, c.patterns) {
				meet(c.task, 1)
			}
		}
		p := pt * (1 - free)
		miss *= 1 - p
		if with != "" {
			note(p, f, with)
		}
	})
	// t's declared files against the predictions in flight.
	if len(t.Files) > 0 {
		for f, ws := range w.pred {
			if !AnyOverlap(t.Files, []string{QuoteGlob(f)}) {
				continue
			}
			for _, o := range ws {
				if o.task.ID != t.ID {
					miss *= 1 - o.p
					note(o.p, f, o.task.ID)
				}
			}
		}
	}
	out.P = round2(1 - miss)
	out.Cost = round2(out.P * RedoCost)
	out.Waits = out.Cost > out.Idle
	if out.P == 0 {
		out.Path, out.With = "", ""
	}
	return out
}

// Weigh is the decision on each of ts against the work in flight now,
// for agent (whose own write claims do not count; "" counts every
// task's).
func (tx *Txn) Weigh(ts []*Task, agent string) []Weighed {
	h := tx.holders()
	out := make([]Weighed, len(ts))
	for i, t := range ts {
		out[i] = h.weigh(t, agent)
	}
	return out
}

// Prediction is one task's planned paths, best first, each with its
// probability (Confidence, as long as Paths, or nil for none known).
type Prediction struct {
	Task       string
	Paths      []string
	Confidence []float64
}

// RecordPredictions records each prediction on its task (predicted_files,
// predicted_confidence and predicted_at, now) when the task is still
// there and not done; a prediction equal to what the task holds changes
// nothing. It returns how many tasks changed.
func (tx *Txn) RecordPredictions(preds []Prediction) int {
	n := 0
	at := FormatTime(tx.Now)
	for _, p := range preds {
		t := tx.Task(p.Task)
		if t == nil || t.Status == Done {
			continue
		}
		paths := make([]string, 0, len(p.Paths))
		var conf []float64
		for i, x := range p.Paths {
			if cp, err := CleanRepoPath(x); err == nil && cp == x && !slices.Contains(paths, x) && len(paths) < MaxPredicted {
				paths = append(paths, x)
				if i < len(p.Confidence) {
					conf = append(conf, min(1, max(0, round2(p.Confidence[i]))))
				}
			}
		}
		if len(conf) != len(paths) {
			conf = nil
		}
		if slices.Equal(paths, t.PredictedFiles) && slices.Equal(conf, t.PredictedConfidence) && t.PredictedAt != "" {
			continue
		}
		t.PredictedFiles, t.PredictedConfidence, t.PredictedAt, t.Dirty = paths, conf, at, true
		n++
	}
	if n > 0 {
		tx.Log(CoordinatorID, "planned %s: predicted the paths each will touch", plural(n, "task"))
	}
	return n
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// PredictedNote names a task in flight that was predicted to touch a
// path someone else writes.
type PredictedNote struct {
	Path, TaskID, Holder string
}

// String is the note for the writer: "printer.go was predicted for
// task 4.3 (bob), in flight".
func (n PredictedNote) String() string {
	return n.Path + " was predicted for task " + n.TaskID + " (" + n.Holder + "), in flight"
}

// PredictedFor names, for a write to paths by agent, the tasks in flight
// of other agents (claimed or blocked) predicted to touch one of them,
// a path once, leaving out the paths hits already name (a real holder
// says more) and nothing under predicted_files off. A prediction alone
// never refuses a write (write claims refuse once a file is really
// written): the writer is only told.
func (tx *Txn) PredictedFor(agent string, paths []string, hits []GuardHit) []PredictedNote {
	if !tx.PredictedFiles.Weighed() {
		return nil
	}
	var out []PredictedNote
	for _, p := range paths {
		if slices.ContainsFunc(hits, func(h GuardHit) bool { return h.Path == p }) {
			continue
		}
		for _, t := range tx.Tasks {
			if t.ClaimedBy == "" || t.ClaimedBy == agent || !t.HoldsLock() {
				continue
			}
			if slices.Contains(t.PredictedFiles, p) {
				out = append(out, PredictedNote{Path: p, TaskID: t.ID, Holder: t.ClaimedBy})
				break
			}
		}
	}
	return out
}

// Notes are the predicted notes a writer is told: for a task's first
// write to each path (New), or every write of an agent holding no
// task; a path the task already wrote was told before.
func (p WriteClaimPlan) Notes() []PredictedNote {
	if p.Task == nil {
		return p.Predicted
	}
	var out []PredictedNote
	for _, n := range p.Predicted {
		if slices.Contains(p.New, n.Path) {
			out = append(out, n)
		}
	}
	return out
}
