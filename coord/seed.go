package coord

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// SeedLine is one parsed line of a seed batch.
type SeedLine struct {
	Line int
	Task *Task
}

// The fields of a task, as a seed line sees them (docs/FORMATS.md, "Seed input"). A
// seed line defines a task: it may carry SeedFields, and status only as
// "unclaimed". What coord records about a task's life (OwnedFields) is
// coord's to write: a seed line carrying it is refused, so no seed can
// claim a task, forge a review or push the epoch counter. Any other name
// is refused too, naming the nearest known field ("titel": "title").
var (
	// SeedFields are the fields a seed line may carry.
	SeedFields = []string{"id", "title", "description", "status", "priority", "deps",
		"capability", "skill_level", "files", "conflict_group"}
	// PlanningFields are the seed fields that make a task's definition
	// (all but id and status): what 'seed-tasks --update' may change.
	PlanningFields = SeedFields[2:]
	// OwnedFields are every field coord keeps about a task's life: the
	// claim (claimed_by, claimed_at, epoch, the lock's fencing token),
	// the work (progress, blocked_reason, blocked_at, completed_at), the
	// review (reviewer_id, reviewer_kind, reject_reason, review_notes,
	// rejections, review_started_at, review_alert_at), push scheduling
	// (assigned_to, assigned_at), and the fields the contract names for
	// planning and landing (predicted_files, predicted_at,
	// predicted_confidence, touched_files,
	// branch, base, head, conflicts, receipts, reviewed_commit, landed_commit,
	// landed_at, landing_at, landing_on).
	OwnedFields = []string{"claimed_by", "claimed_at", "completed_at", "epoch", "progress",
		"blocked_reason", "blocked_at", "reviewer_id", "reviewer_kind", "reject_reason",
		"review_notes", "rejections", "review_started_at", "review_alert_at",
		"assigned_to", "assigned_at", "predicted_files", "predicted_at", "predicted_confidence", "touched_files", "owner", "fenced",
		"branch", "base", "head", "conflicts", "receipts", "reviewed_commit", "landed_commit", "landed_at", "landing_at", "landing_on"}
)

// IsOwnedField reports whether name is one of OwnedFields.
func IsOwnedField(name string) bool { return slices.Contains(OwnedFields, name) }

// CheckSeedField checks one member name of a seed line in coord's format:
// a seed field, or an error saying that coord owns the field or that it
// is unknown (naming the nearest known field).
func CheckSeedField(name string) error {
	switch {
	case slices.Contains(SeedFields, name):
		return nil
	case IsOwnedField(name):
		return OwnedFieldError(name)
	}
	known := append(slices.Clone(SeedFields), OwnedFields...)
	return Errorf(CodeUsage, "unknown field %q; the nearest known field is %q", clip(name), Nearest(name, known)).
		WithHint("a seed line may carry %s", strings.Join(SeedFields, ", "))
}

// OwnedFieldError is the refusal of a field coord owns in a seed line.
func OwnedFieldError(name string) *Error {
	return Errorf(CodeUsage, "field %q is coord's to set, not a seed line's", name).
		WithHint("remove it: coord records it as the task is claimed, worked on and reviewed")
}

// CheckSeedStatus refuses a seed line's status other than unclaimed: a
// seeded task starts unclaimed.
func CheckSeedStatus(s Status) error {
	if s != Unclaimed {
		return Errorf(CodeUsage, "field \"status\" is %q: a seeded task starts unclaimed", clip(string(s))).
			WithHint("remove status; coord sets it as the task is claimed and worked on")
	}
	return nil
}

// CheckSeedText checks the free text of every task of a batch against
// the bounds (Task.CheckText), reporting the first one over its bound
// with its line number. It needs no registry: front ends' application
// API runs it before any store is touched.
func CheckSeedText(batch []SeedLine) error {
	for _, s := range batch {
		if err := s.Task.CheckText(); err != nil {
			return lineErr(s.Line, err)
		}
	}
	return nil
}

// SameDefinition reports whether a and b define the same task: the same
// planning fields (an absent priority is medium; no deps or files is the
// same as an empty list). Their state (status, claim, epoch …) does not
// count.
func SameDefinition(a, b *Task) bool {
	pri := func(p Priority) Priority {
		if p == "" {
			return Medium
		}
		return p
	}
	return a.Title == b.Title && a.Description == b.Description && pri(a.Priority) == pri(b.Priority) &&
		slices.Equal(a.Deps, b.Deps) && a.Capability == b.Capability && a.SkillLevel == b.SkillLevel &&
		slices.Equal(a.Files, b.Files) && a.ConflictGroup == b.ConflictGroup
}

// ChangedFields names the planning fields in which def differs from t.
func ChangedFields(t, def *Task) []string {
	var out []string
	add := func(differs bool, name string) {
		if differs {
			out = append(out, name)
		}
	}
	pri := func(p Priority) Priority {
		if p == "" {
			return Medium
		}
		return p
	}
	add(t.Title != def.Title, "title")
	add(t.Description != def.Description, "description")
	add(pri(t.Priority) != pri(def.Priority), "priority")
	add(!slices.Equal(t.Deps, def.Deps), "deps")
	add(t.Capability != def.Capability, "capability")
	add(t.SkillLevel != def.SkillLevel, "skill_level")
	add(!slices.Equal(t.Files, def.Files), "files")
	add(t.ConflictGroup != def.ConflictGroup, "conflict_group")
	return out
}

// Redefine sets t's planning fields to def's, leaving its state alone,
// and marks it changed.
func (t *Task) Redefine(def *Task) {
	t.Title, t.Description, t.Priority = def.Title, def.Description, def.Priority
	if t.Priority == "" {
		t.Priority = Medium
	}
	t.Deps, t.Files = slices.Clone(def.Deps), slices.Clone(def.Files)
	t.Capability, t.SkillLevel, t.ConflictGroup = def.Capability, def.SkillLevel, def.ConflictGroup
	t.Dirty = true
}

// SeedPlan is what a batch does to the registry: the tasks it adds, the
// existing tasks it redefines (with --update), and the ids of lines that
// define a task exactly as the registry already holds it (skipped).
type SeedPlan struct {
	Add       []*Task
	Update    []SeedUpdate
	Unchanged []string
}

// SeedUpdate is one existing task redefined by a seed line.
type SeedUpdate struct {
	Task    *Task // the registry's task
	Def     *Task // the seed line's definition
	Changed []string
}

// CheckSeed validates a batch against the registry and plans it: every
// id valid; every line new, or defining a task exactly as the registry
// holds it (skipped), or, with update, redefining a task not yet claimed
// (only its planning fields change); every dep of the batch naming a
// known task (in the registry, the archive or the batch); no cycle among
// registry and batch deps, with the batch's definitions in force. No line
// may set what coord owns (a claim, an epoch, a review, an assignment):
// its dialect's parser refuses those fields, and this check refuses the
// state on the task whatever built it. It reports the first problem with
// its line number; the batch is all or nothing.
func (tx *Txn) CheckSeed(batch []SeedLine, update bool) (SeedPlan, error) {
	var plan SeedPlan
	if err := CheckSeedText(batch); err != nil {
		return plan, err
	}
	seen := make(map[string]int, len(batch))
	defs := make(map[string]*Task, len(batch)) // the batch's definitions in force
	for _, s := range batch {
		t := s.Task
		if err := t.Check(); err != nil {
			return SeedPlan{}, lineErr(s.Line, err)
		}
		if err := checkSeedState(t); err != nil {
			return SeedPlan{}, lineErr(s.Line, err)
		}
		if prev, dup := seen[t.ID]; dup {
			return SeedPlan{}, lineErr(s.Line, Errorf(CodeUsage, "task %q appears twice in the batch (first on line %d)", t.ID, prev))
		}
		seen[t.ID] = s.Line
		if tx.Archived != nil && tx.Archived(t.ID) && tx.Task(t.ID) == nil {
			return SeedPlan{}, lineErr(s.Line, Errorf(CodeUsage, "task %q already exists (archived, done)", t.ID))
		}
		cur := tx.Task(t.ID)
		switch {
		case cur == nil:
			plan.Add = append(plan.Add, t)
			defs[t.ID] = t
		case SameDefinition(cur, t):
			plan.Unchanged = append(plan.Unchanged, t.ID)
		case !update:
			return SeedPlan{}, lineErr(s.Line, Errorf(CodeUsage, "task %q already exists in the registry with another definition (%s differ)", t.ID, strings.Join(ChangedFields(cur, t), ", ")).
				WithHint("seed-tasks --update changes the definition of tasks not yet claimed"))
		case cur.Status != Unclaimed:
			return SeedPlan{}, lineErr(s.Line, Errorf(CodeUsage, "task %q is %s: only a task not yet claimed can be redefined", t.ID, describeState(cur)).
				WithHint("leave its line as the registry holds it, or requeue the task first"))
		default:
			plan.Update = append(plan.Update, SeedUpdate{Task: cur, Def: t, Changed: ChangedFields(cur, t)})
			defs[t.ID] = t
		}
	}
	for _, s := range batch {
		for _, d := range s.Task.Deps {
			if _, ok := seen[d]; ok || tx.Task(d) != nil || (tx.Archived != nil && tx.Archived(d)) {
				continue
			}
			return SeedPlan{}, lineErr(s.Line, Errorf(CodeUsage, "task %q: dep %q names no task", s.Task.ID, d))
		}
	}
	graph := make(map[string][]string, len(tx.Tasks)+len(defs))
	for _, t := range tx.Tasks {
		graph[t.ID] = tx.Deps(t)
	}
	for id, t := range defs {
		graph[id] = tx.Deps(t)
	}
	if cyc := FindCycle(graph); cyc != nil {
		line := 0
		for _, id := range cyc {
			if l, ok := seen[id]; ok && (line == 0 || l < line) {
				line = l
			}
		}
		return SeedPlan{}, lineErr(line, Errorf(CodeUsage, "dependency cycle %s", strings.Join(cyc, " -> ")))
	}
	return plan, nil
}

// checkSeedState refuses a seeded task that carries state coord owns,
// whatever dialect built it: a claim, an epoch, a review, an assignment,
// a status coord reaches only by work (claimed, review). An import (ROTD's
// dialect) may bring a task in done or blocked, with its progress,
// completion time and reason: its parser maps them; nothing else may.
func checkSeedState(t *Task) error {
	var owned string
	switch {
	case t.Status == Claimed || t.Status == Review:
		return Errorf(CodeUsage, "task %q: a seeded task cannot start %s", t.ID, t.Status)
	case t.ClaimedBy != "":
		owned = "claimed_by"
	case t.ClaimedAt != "":
		owned = "claimed_at"
	case t.Epoch != 0:
		owned = "epoch"
	case t.ReviewerID != "":
		owned = "reviewer_id"
	case t.ReviewerKind != "":
		owned = "reviewer_kind"
	case t.ReviewNotes != "":
		owned = "review_notes"
	case t.Rejections != 0:
		owned = "rejections"
	case t.ReviewAlertAt != "":
		owned = "review_alert_at"
	case t.AssignedTo != "" || t.AssignedAt != "" || t.ReviewStartedAt != "":
		return Errorf(CodeUsage, "task %q: a seeded task cannot be assigned (assigned_to, assigned_at, review_started_at)", t.ID).
			WithHint("'coord schedule' assigns tasks to registered agents")
	default:
		return nil
	}
	e := OwnedFieldError(owned)
	e.Msg = fmt.Sprintf("task %q: %s", t.ID, e.Msg)
	return e
}

// describeState says what a task is doing, for a refusal: "claimed by a",
// "done", "blocked".
func describeState(t *Task) string {
	if t.ClaimedBy != "" && t.Status != Done {
		return string(t.Status) + " by " + t.ClaimedBy
	}
	return string(t.Status)
}

func lineErr(line int, err error) error {
	ce, ok := err.(*Error)
	if !ok {
		ce = Wrap(CodeUsage, err, "invalid task")
	}
	if line > 0 {
		ce.Msg = "line " + itoa(line) + ": " + ce.Msg
	}
	return ce
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// FindCycle returns one dependency cycle as a path a -> b -> … -> a, or nil.
// Ids that name no node are leaves. Iteration order is sorted, so the
// answer is deterministic.
func FindCycle(graph map[string][]string) []string {
	const (
		white = iota
		grey
		black
	)
	color := make(map[string]int, len(graph))
	ids := make([]string, 0, len(graph))
	for id := range graph {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	type frame struct {
		id string
		i  int
	}
	for _, start := range ids {
		if color[start] != white {
			continue
		}
		stack := []frame{{start, 0}}
		color[start] = grey
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			deps := graph[top.id]
			if top.i == len(deps) {
				color[top.id] = black
				stack = stack[:len(stack)-1]
				continue
			}
			d := deps[top.i]
			top.i++
			if _, ok := graph[d]; !ok {
				continue
			}
			switch color[d] {
			case white:
				color[d] = grey
				stack = append(stack, frame{d, 0})
			case grey:
				var cyc []string
				for k := range stack {
					if stack[k].id == d {
						for _, f := range stack[k:] {
							cyc = append(cyc, f.id)
						}
						break
					}
				}
				return append(cyc, d)
			}
		}
	}
	return nil
}
