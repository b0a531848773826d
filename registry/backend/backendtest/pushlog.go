package backendtest

import (
	"fmt"
	"strings"
)

// ReplayPush checks the log of a push-mode run, line by line as the log
// has them ("[TIME] AGENT ▶ MESSAGE"): what is out (assigned, or claimed)
// never conflicts (conflict reports whether two task ids may not be out
// at once), a task is never assigned while already assigned, and no
// claimer approves its own task. It returns the last claimer of each
// task and one line per violation.
func ReplayPush(lines []string, conflict func(a, b string) bool) (claimer map[string]string, problems []string) {
	out := map[string]bool{}          // assigned or claimed, occupying its group and files
	assignedTo := map[string]string{} // current unconsumed assignment
	claimer = map[string]string{}
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	occupy := func(id, line string) {
		for o := range out {
			if o != id && conflict(id, o) {
				bad("tasks %s and %s conflict and were out at once: %s", id, o, line)
			}
		}
		out[id] = true
	}
	for _, l := range lines {
		_, rest, ok := strings.Cut(l, "] ")
		if !ok {
			continue
		}
		agent, msg, ok := strings.Cut(rest, " ▶ ")
		if !ok {
			continue
		}
		f := strings.Fields(msg)
		k := -1 // the id follows the first word "task"
		for i, w := range f {
			if w == "task" {
				k = i + 1
				break
			}
		}
		if k < 1 || k >= len(f) {
			continue
		}
		id, after := strings.TrimSuffix(f[k], ":"), f[k+1:] // "task ID: SUMMARY"
		switch f[0] {
		case "assigned": // assigned task X to A (…)
			if len(after) < 2 {
				bad("unreadable assignment: %s", l)
				continue
			}
			if prev := assignedTo[id]; prev != "" {
				bad("task %s assigned to %s while assigned to %s: %s", id, after[1], prev, l)
			}
			assignedTo[id] = after[1]
			occupy(id, l)
		case "moved": // moved task X from A to B (work stealing)
			if len(after) < 4 {
				bad("unreadable move: %s", l)
				continue
			}
			if assignedTo[id] != after[1] {
				bad("task %s moved from %s, assigned to %q: %s", id, after[1], assignedTo[id], l)
			}
			assignedTo[id] = after[3]
		case "returned": // returned task X from A to the queue: … (only ever an unclaimed task or a review)
			delete(assignedTo, id)
			delete(out, id)
		case "claimed":
			delete(assignedTo, id)
			claimer[id] = agent
			occupy(id, l)
		case "rejected": // back to its owner, claimed
			occupy(id, l)
		case "submitted", "released", "handed", "freed":
			delete(out, id)
		case "approved":
			if claimer[id] == agent {
				bad("task %s approved by its claimer %s: %s", id, agent, l)
			}
		}
	}
	return claimer, problems
}
