package coord

import (
	"slices"
	"strconv"
)

// Planning (contract §9): a task's predicted_files are the repository
// paths a planner (coord plan, package coord/plan) expects it to touch.
// Eligibility and the scheduler treat them as files: two tasks whose
// declared or predicted paths meet are never in flight at once, unless
// the project's predicted_files setting says warn (the overlap is
// reported, not enforced) or off (ignored; only plan reports them).

// PredictMode is config.json's "predicted_files": what eligibility and
// the scheduler do with predicted paths.
type PredictMode string

// The modes. The zero value means PredictEnforce.
const (
	// PredictEnforce (default): predicted paths count as files.
	PredictEnforce PredictMode = "enforce"
	// PredictWarn: an overlap through a predicted path is reported
	// (ready --explain, a log line at the claim) but holds nothing.
	PredictWarn PredictMode = "warn"
	// PredictOff: predicted paths are ignored outside coord plan.
	PredictOff PredictMode = "off"
)

// Valid reports whether m is one of the three modes ("" is not: a
// stored setting names one).
func (m PredictMode) Valid() bool { return m == PredictEnforce || m == PredictWarn || m == PredictOff }

// Enforced reports whether predicted paths hold tasks (enforce, or the
// zero value).
func (m PredictMode) Enforced() bool { return m == PredictEnforce || m == "" }

// Counted reports whether predicted paths are looked at by eligibility
// at all (enforce or warn).
func (m PredictMode) Counted() bool { return m != PredictOff }

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

// checkPredicted validates predicted_files and predicted_at.
func (t *Task) checkPredicted() error {
	if len(t.PredictedFiles) > MaxPredicted {
		return Errorf(CodeUsage, "task %q: predicted_files holds %d paths, at most %d", t.ID, len(t.PredictedFiles), MaxPredicted)
	}
	for _, p := range t.PredictedFiles {
		if cp, err := CleanRepoPath(p); err != nil || cp != p {
			return Errorf(CodeUsage, "task %q: predicted_files: %q is not a clean repository path", t.ID, clip(p))
		}
	}
	if t.PredictedAt != "" {
		if _, err := ParseTime(t.PredictedAt); err != nil {
			return Errorf(CodeUsage, "task %q: predicted_at %q is not an RFC 3339 time", t.ID, clip(t.PredictedAt))
		}
	}
	return nil
}

// predictedOverlap says how t's declared or predicted paths meet o's
// when at least one side of the meeting is a prediction (a meeting of
// declared files alone is occupied's own rule): "predicted path a.go
// meets task 4.3" naming the predicted path. "" when they do not meet.
func predictedOverlap(t, o *Task) string {
	for _, p := range t.PredictedFiles {
		q := []string{QuoteGlob(p)}
		if AnyOverlap(q, o.Files) || AnyOverlap(q, quoted(o.PredictedFiles)) {
			return "predicted path " + p + " meets task " + o.ID
		}
	}
	for _, p := range o.PredictedFiles {
		if AnyOverlap(t.Files, []string{QuoteGlob(p)}) {
			return "files meet path " + p + ", predicted for task " + o.ID
		}
	}
	return ""
}

func quoted(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = QuoteGlob(p)
	}
	return out
}

// PredictedWarning is, under warn, the predicted overlap that would keep
// t waiting under enforce ("" when there is none or the mode is not
// warn): what ready --explain and the claim report.
func (tx *Txn) PredictedWarning(t *Task) string {
	return tx.PredictedWarnings([]*Task{t})[0]
}

// PredictedWarnings is PredictedWarning for each of ts (what others
// occupy read once); nil unless the mode is warn.
func (tx *Txn) PredictedWarnings(ts []*Task) []string {
	out := make([]string, len(ts))
	if tx.PredictedFiles != PredictWarn {
		return out
	}
	h := tx.holders()
	for i, t := range ts {
		if out[i] = h.predictedMeet(t); out[i] == "" {
			out[i] = h.claimedBy(quoted(t.PredictedFiles), "", t.ID, "predicted path ")
		}
	}
	return out
}

// predictedMeet is the first task holding or assigned paths that meet
// t's through a prediction, said as predictedOverlap says it.
func (h *holders) predictedMeet(t *Task) string {
	if len(t.Files) == 0 && len(t.PredictedFiles) == 0 {
		return ""
	}
	for _, o := range h.files {
		if o.ID == t.ID {
			continue
		}
		if why := predictedOverlap(t, o); why != "" {
			return why
		}
	}
	return ""
}

// Prediction is one task's planned paths, best first.
type Prediction struct {
	Task  string
	Paths []string
}

// RecordPredictions records each prediction on its task (predicted_files
// and predicted_at, now) when the task is still there and not done; a
// prediction equal to what the task holds changes nothing. It returns
// how many tasks changed.
func (tx *Txn) RecordPredictions(preds []Prediction) int {
	n := 0
	at := FormatTime(tx.Now)
	for _, p := range preds {
		t := tx.Task(p.Task)
		if t == nil || t.Status == Done {
			continue
		}
		paths := make([]string, 0, len(p.Paths))
		for _, x := range p.Paths {
			if cp, err := CleanRepoPath(x); err == nil && cp == x && !slices.Contains(paths, x) && len(paths) < MaxPredicted {
				paths = append(paths, x)
			}
		}
		if slices.Equal(paths, t.PredictedFiles) && t.PredictedAt != "" {
			continue
		}
		t.PredictedFiles, t.PredictedAt, t.Dirty = paths, at, true
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
	if !tx.PredictedFiles.Counted() {
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
