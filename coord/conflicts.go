package coord

import (
	"fmt"
	"slices"
	"strings"
)

// Conflicts found while work is in flight (docs/GIT.md): a trial merge
// of each in-flight task's work with the target branch and with every
// other in-flight task's says which would conflict, and in which files.
// The merging is git's business and the caller's (its repository); what
// is recorded, what counts as new, and who is told is decided here.
//
// A conflict is one pair: a task and the target, or two tasks. It is
// recorded on each task it involves (Task.Conflicts, With naming the
// target branch or the other task), kept by With: a pair found again
// keeps when it was first found (Since) and whether its agent was told
// (Told), with the files of the latest merge. A pair no longer found is
// dropped: the work was rebased, or the conflict resolved.

// ConflictPair is one conflict a scan found: merging task Task's work
// with With (the target branch's name, or another in-flight task's id)
// conflicts in Files.
type ConflictPair struct {
	Task  string   `json:"task"`
	With  string   `json:"with"`
	Files []string `json:"files"`
}

// WorkKey says which work of t a scan merged: what the task's record
// says of where its work is, in one string. A scan that finds another
// key when it records has raced a claim, a release or a hand-back, and
// records nothing for that task.
func WorkKey(t *Task) string {
	return strings.Join([]string{string(t.Status), t.ClaimedBy, t.Branch, t.Head, t.LandedAt}, "\x00")
}

// RecordConflicts records what a scan found. judged maps each task whose
// work the scan merged to its WorkKey at the time; found are the
// conflicting pairs among them and with the target branch target (a pair
// of two tasks once, either way round). For every task judged (and still
// as judged) its conflicts become those found, keeping Since and Told of
// pairs it had already; pairs with tasks the scan could not judge (work
// the caller's repository does not hold) are kept as they were, while
// both stay in flight. A task no longer in flight keeps no conflict.
// It logs each new pair once, as by, and returns the new pairs.
func (tx *Txn) RecordConflicts(judged map[string]string, found []ConflictPair, target, by string) []ConflictPair {
	now := FormatTime(tx.Now)
	ok := func(id string) bool {
		t := tx.Task(id)
		key, j := judged[id]
		return t != nil && j && t.InFlight() && WorkKey(t) == key
	}
	// What each judged task now conflicts with.
	next := map[string]map[string][]string{}
	add := func(id, with string, files []string) {
		if next[id] == nil {
			next[id] = map[string][]string{}
		}
		next[id][with] = files
	}
	var fresh []ConflictPair
	seen := map[[2]string]bool{}
	for _, p := range found {
		if !ok(p.Task) || p.With == p.Task {
			continue
		}
		files := slices.Clone(p.Files)
		slices.Sort(files)
		files = slices.Compact(files)
		withTask := p.With != target
		if withTask && !ok(p.With) {
			continue
		}
		k := [2]string{p.Task, p.With}
		if withTask && p.With < p.Task {
			k = [2]string{p.With, p.Task}
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		add(p.Task, p.With, files)
		if withTask {
			add(p.With, p.Task, files)
		}
		if !tx.hasConflict(p.Task, p.With) && !(withTask && tx.hasConflict(p.With, p.Task)) {
			fresh = append(fresh, ConflictPair{Task: p.Task, With: p.With, Files: files})
		}
	}
	for _, t := range tx.Tasks {
		if !t.InFlight() {
			if len(t.Conflicts) > 0 {
				t.Conflicts = nil
				t.Dirty = true
			}
			continue
		}
		var out []Conflict
		if ok(t.ID) {
			for with, files := range next[t.ID] {
				c := Conflict{With: with, Files: files, Since: now}
				if old := findConflict(t.Conflicts, with); old != nil {
					c.Since, c.Told = old.Since, old.Told
				}
				out = append(out, c)
			}
		}
		for _, c := range t.Conflicts {
			other := tx.Task(c.With)
			switch {
			case ok(t.ID) && (c.With == target || ok(c.With)):
				// judged both ways: what was found stands
			case c.With != target && (other == nil || !other.InFlight()):
				// the other task's work landed or was handed back
			case findConflict(out, c.With) == nil:
				out = append(out, c) // not judged here: kept
			}
		}
		slices.SortFunc(out, func(a, b Conflict) int { return strings.Compare(a.With, b.With) })
		if !conflictsEqual(t.Conflicts, out) {
			t.Conflicts = out
			t.Dirty = true
		}
	}
	for _, p := range fresh {
		t := tx.Task(p.Task)
		with := p.With + " (the target branch)"
		if o := tx.Task(p.With); p.With != target && o != nil {
			with = "task " + o.ID + " (" + whose(o) + ")"
		}
		tx.Log(by, "conflict: task %s (%s) and %s change %s", t.ID, whose(t), with, FilesPhrase(p.Files, 5))
	}
	return fresh
}

func whose(t *Task) string {
	if t.ClaimedBy == "" {
		return "nobody"
	}
	return t.ClaimedBy
}

// hasConflict reports whether task id has a conflict with with recorded.
func (tx *Txn) hasConflict(id, with string) bool {
	t := tx.Task(id)
	return t != nil && findConflict(t.Conflicts, with) != nil
}

func findConflict(cs []Conflict, with string) *Conflict {
	for i := range cs {
		if cs[i].With == with {
			return &cs[i]
		}
	}
	return nil
}

func conflictsEqual(a, b []Conflict) bool {
	return slices.EqualFunc(a, b, func(x, y Conflict) bool {
		return x.With == y.With && x.Since == y.Since && x.Told == y.Told && slices.Equal(x.Files, y.Files)
	})
}

// Conflicts lists every conflict recorded on the tasks in flight, a
// pair once: a task's with the target, then each pair of tasks named
// from the one earlier in the registry.
func (tx *Txn) Conflicts() []ConflictPair {
	pos := map[string]int{}
	for i, t := range tx.Tasks {
		pos[t.ID] = i
	}
	var out []ConflictPair
	for i, t := range tx.Tasks {
		if !t.InFlight() {
			continue
		}
		for _, c := range t.Conflicts {
			if j, isTask := pos[c.With]; isTask && j < i {
				continue // listed from the other task
			}
			out = append(out, ConflictPair{Task: t.ID, With: c.With, Files: c.Files})
		}
	}
	return out
}

// ConflictsOf lists the conflicts recorded on agent's tasks in flight,
// each from its own task's side (Task is the agent's).
func (tx *Txn) ConflictsOf(agent string) []ConflictPair {
	var out []ConflictPair
	for _, t := range tx.Tasks {
		if t.ClaimedBy != agent || !t.InFlight() {
			continue
		}
		for _, c := range t.Conflicts {
			out = append(out, ConflictPair{Task: t.ID, With: c.With, Files: c.Files})
		}
	}
	return out
}

// Notice is one conflict an agent is told of: its task, the other side
// (the target branch, or another task and its agent) and the files.
type Notice struct {
	Task      string
	With      string
	WithAgent string // the other task's agent; "" for the target
	Files     []string
}

// String is the line an agent reads: "your change to z.txt (task 4.2)
// now conflicts with task 4.3 (bob); coordinate or rebase".
func (n Notice) String() string {
	if n.WithAgent == "" {
		return fmt.Sprintf("coord: your change to %s (task %s) now conflicts with %s; merge %s into your branch (or rebase on it) and resolve",
			FilesPhrase(n.Files, 3), n.Task, n.With, n.With)
	}
	return fmt.Sprintf("coord: your change to %s (task %s) now conflicts with task %s (%s); coordinate or rebase",
		FilesPhrase(n.Files, 3), n.Task, n.With, n.WithAgent)
}

// Untold returns the conflicts of agent's tasks in flight that the agent
// has not been told of yet.
func (tx *Txn) Untold(agent string) []Notice {
	var out []Notice
	for _, t := range tx.Tasks {
		if t.ClaimedBy != agent || !t.InFlight() {
			continue
		}
		for _, c := range t.Conflicts {
			if c.Told {
				continue
			}
			n := Notice{Task: t.ID, With: c.With, Files: c.Files}
			if o := tx.Task(c.With); o != nil {
				n.WithAgent = whose(o)
			}
			out = append(out, n)
		}
	}
	return out
}

// Tell marks the conflicts Untold returns for agent as told, and returns
// them.
func (tx *Txn) Tell(agent string) []Notice {
	out := tx.Untold(agent)
	if len(out) == 0 {
		return nil
	}
	for _, t := range tx.Tasks {
		if t.ClaimedBy != agent || !t.InFlight() {
			continue
		}
		for i := range t.Conflicts {
			if !t.Conflicts[i].Told {
				t.Conflicts[i].Told = true
				t.Dirty = true
			}
		}
	}
	return out
}

// FilesPhrase names files for a sentence: "a.go", "a.go and b.go",
// "a.go, b.go and 3 more files" (at most max named). Each name is
// OneLine's: a file name holding an escape sequence or a newline reaches
// no terminal or log as one.
func FilesPhrase(files []string, max int) string {
	if max < 1 {
		max = 1
	}
	named := make([]string, min(len(files), max))
	for i := range named {
		named[i] = OneLine(files[i])
	}
	switch {
	case len(files) == 0:
		return "no file"
	case len(files) == 1:
		return named[0]
	case len(files) <= max:
		return strings.Join(named[:len(named)-1], ", ") + " and " + named[len(named)-1]
	}
	return strings.Join(named, ", ") + fmt.Sprintf(" and %d more files", len(files)-max)
}
