package coord

import (
	"sort"
	"strings"
)

// SeedLine is one parsed line of a seed batch.
type SeedLine struct {
	Line int
	Task *Task
}

// CheckSeed validates a batch against the registry: every id valid and new,
// every dep of the batch naming a known task (in the registry, the archive
// or the batch), and no cycle among registry and batch deps. It reports the
// first problem with its line number.
func (tx *Txn) CheckSeed(batch []SeedLine) error {
	seen := make(map[string]int, len(batch))
	for _, s := range batch {
		t := s.Task
		if err := t.Check(); err != nil {
			return lineErr(s.Line, err)
		}
		if t.Status == Claimed || t.Status == Review {
			return lineErr(s.Line, Errorf(CodeUsage, "task %q: a seeded task cannot start %s", t.ID, t.Status))
		}
		if t.ClaimedBy != "" {
			return lineErr(s.Line, Errorf(CodeUsage, "task %q: a seeded task cannot have claimed_by", t.ID))
		}
		if t.AssignedTo != "" || t.AssignedAt != "" || t.ReviewStartedAt != "" {
			return lineErr(s.Line, Errorf(CodeUsage, "task %q: a seeded task cannot be assigned (assigned_to, assigned_at, review_started_at)", t.ID).
				WithHint("'coord schedule' assigns tasks to registered agents"))
		}
		if tx.Task(t.ID) != nil {
			return lineErr(s.Line, Errorf(CodeUsage, "task %q already exists in the registry", t.ID))
		}
		if tx.Archived != nil && tx.Archived(t.ID) {
			return lineErr(s.Line, Errorf(CodeUsage, "task %q already exists (archived, done)", t.ID))
		}
		if prev, dup := seen[t.ID]; dup {
			return lineErr(s.Line, Errorf(CodeUsage, "task %q appears twice in the batch (first on line %d)", t.ID, prev))
		}
		seen[t.ID] = s.Line
	}
	for _, s := range batch {
		for _, d := range s.Task.Deps {
			if _, ok := seen[d]; ok || tx.Task(d) != nil || (tx.Archived != nil && tx.Archived(d)) {
				continue
			}
			return lineErr(s.Line, Errorf(CodeUsage, "task %q: dep %q names no task", s.Task.ID, d))
		}
	}
	graph := make(map[string][]string, len(tx.Tasks)+len(batch))
	for _, t := range tx.Tasks {
		graph[t.ID] = tx.Deps(t)
	}
	for _, s := range batch {
		graph[s.Task.ID] = tx.Deps(s.Task)
	}
	if cyc := FindCycle(graph); cyc != nil {
		line := 0
		for _, id := range cyc {
			if l, ok := seen[id]; ok && (line == 0 || l < line) {
				line = l
			}
		}
		return lineErr(line, Errorf(CodeUsage, "dependency cycle %s", strings.Join(cyc, " -> ")))
	}
	return nil
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
