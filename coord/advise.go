package coord

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Advice (contract §9, coord advise): how many agents to run now. The
// ready queue (Txn.Queue: unclaimed tasks whose dependencies are done
// and whose conflict group, files and predicted paths are free) is
// taken in claim order and a task is kept when it collides with none
// kept before it (same conflict group, or declared or predicted paths
// that meet, predicted ones unless predicted_files is off): a greedy
// independent set, whose size is the work that can run at once. The
// project's measured conflicts per finished task damp it (each conflict
// costs a rework: I independent tasks at c conflicts per task are worth
// about I/(1+c) agents), never below 1 while work is ready. The agents
// already at work (the tasks claimed now) are added: N is how many
// agents to have running, those busy and those to start. So with
// nothing in flight N is 1 when every ready task collides with every
// other, grows with independent ready work, and never exceeds it.

// AdviceWindow is how far back the rates are measured.
const AdviceWindow = 24 * time.Hour

// Rates are a project's measured pace over a window that ends now.
type Rates struct {
	// Hours is the window measured: from the first task finished in
	// the last AdviceWindow (at least 1).
	Hours float64 `json:"hours"`
	// Finished counts the tasks finished (done) in it, Conflicts the
	// conflicts found in it: by write claims, trial merges and
	// landings (the log's conflict and send-back lines), at least those
	// recorded on the work in flight.
	Finished  int `json:"finished"`
	Conflicts int `json:"conflicts"`
	// TasksPerHour and ConflictsPerTask are the rates (per finished
	// task; per task in flight when none finished).
	TasksPerHour     float64 `json:"tasks_per_hour"`
	ConflictsPerTask float64 `json:"conflicts_per_task"`
}

// Advice is coord advise's answer.
type Advice struct {
	Agents int    `json:"agents"`
	Ready  int    `json:"ready"`
	Why    string `json:"why"`
	// Independent is the size of the independent set of ready tasks;
	// Colliding the ready tasks left out of it; InFlight the tasks
	// claimed now; WaitingOnDeps the unclaimed tasks whose dependencies
	// are not done.
	// Start is how many of Agents are to be started now (the rest are
	// at work on the tasks in flight).
	Start         int   `json:"start"`
	Independent   int   `json:"independent"`
	Colliding     int   `json:"colliding"`
	InFlight      int   `json:"in_flight"`
	WaitingOnDeps int   `json:"waiting_on_deps"`
	Rates         Rates `json:"rates"`
}

// ConflictEvents are the conflicts a log window holds, counted by the
// application (Txn does no I/O): conflict lines (write claims and trial
// merges) and send-backs (a landing or a reviewer returned the work).
type ConflictEvents struct {
	Conflicts, SendBacks int
}

// IsConflictEvent says which kind of conflict event a log message is:
// "conflict" (RecordConflicts' line), "sendback" (SendBack's), or "".
func IsConflictEvent(msg string) string {
	switch {
	case strings.HasPrefix(msg, "conflict: task "):
		return "conflict"
	case strings.HasPrefix(msg, "sent task ") && strings.Contains(msg, " back to "):
		return "sendback"
	}
	return ""
}

// Advise judges how many agents to run now (see the top of this file).
func (tx *Txn) Advise(now time.Time, ev ConflictEvents) Advice {
	var a Advice
	ready, waiting, why := tx.Queue()
	a.Ready = len(ready)
	for i := range waiting {
		if strings.HasPrefix(why[i], "dependency ") {
			a.WaitingOnDeps++
		}
	}
	var kept []*Task
	for _, t := range ready {
		if !tx.collidesWithAny(t, kept) {
			kept = append(kept, t)
		}
	}
	a.Independent, a.Colliding = len(kept), len(ready)-len(kept)
	for _, t := range tx.Tasks {
		if t.Status == Claimed {
			a.InFlight++
		}
	}
	a.Rates = tx.rates(now, ev, a.InFlight)
	start := a.Independent
	c := a.Rates.ConflictsPerTask
	if a.Independent > 0 && c > 0 {
		start = max(1, int(math.Ceil(float64(a.Independent)/(1+c)-1e-9)))
	}
	a.Start = start
	a.Agents = a.InFlight + start
	a.Why = adviceWhy(a)
	return a
}

// collidesWithAny says whether t may not run beside one of kept.
func (tx *Txn) collidesWithAny(t *Task, kept []*Task) bool {
	for _, k := range kept {
		if t.ConflictGroup != "" && t.ConflictGroup == k.ConflictGroup {
			return true
		}
		if len(t.Files) > 0 && AnyOverlap(t.Files, k.Files) {
			return true
		}
		if tx.PredictedFiles.Counted() && predictedOverlap(t, k) != "" {
			return true
		}
	}
	return false
}

func (tx *Txn) rates(now time.Time, ev ConflictEvents, inFlight int) Rates {
	var r Rates
	since := now.Add(-AdviceWindow)
	first := now
	for _, t := range tx.Tasks {
		if t.Status != Done || t.CompletedAt == "" {
			continue
		}
		at, err := ParseTime(t.CompletedAt)
		if err != nil || !at.After(since) || at.After(now) {
			continue
		}
		r.Finished++
		if at.Before(first) {
			first = at
		}
	}
	r.Hours = max(1, math.Round(now.Sub(first).Hours()*10)/10)
	r.Conflicts = max(ev.Conflicts, len(tx.Conflicts())) + ev.SendBacks
	r.TasksPerHour = round2(float64(r.Finished) / r.Hours)
	if per := max(r.Finished, inFlight); per > 0 {
		r.ConflictsPerTask = round2(float64(r.Conflicts) / float64(per))
	}
	return r
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

func adviceWhy(a Advice) string {
	if a.Ready == 0 {
		s := "no task is ready"
		if a.WaitingOnDeps > 0 {
			s += fmt.Sprintf(" (%d wait on dependencies)", a.WaitingOnDeps)
		}
		return s + fmt.Sprintf("; %d in flight", a.InFlight)
	}
	s := fmt.Sprintf("%d ready, %d of them can run together", a.Ready, a.Independent)
	if a.Colliding > 0 {
		s += fmt.Sprintf(" (%d collide through a conflict group or declared or predicted paths)", a.Colliding)
	}
	if a.Start < a.Independent {
		s += fmt.Sprintf("; %.2f conflicts per task in the last %.4gh bring it to %d", a.Rates.ConflictsPerTask, a.Rates.Hours, a.Start)
	}
	s += fmt.Sprintf("; %d in flight (%d to start), %.2f tasks finished per hour", a.InFlight, a.Start, a.Rates.TasksPerHour)
	if a.WaitingOnDeps > 0 {
		s += fmt.Sprintf(", %d wait on dependencies", a.WaitingOnDeps)
	}
	return s
}
