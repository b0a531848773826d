package coord

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Advice (coord advise): how many agents to run now. The ready queue
// (Txn.Queue: unclaimed tasks whose dependencies are done and whose
// conflict group and declared files are free) is taken in claim order
// and a task is kept when it meets none kept before it by rule (same
// conflict group, declared files that meet) and when its predicted
// collisions with the work in flight and the tasks kept before it are
// worth the risk, as eligibility weighs them (coord/predict.go): a
// greedy independent set, whose size I is the work that can run at
// once, and the sum E of the kept tasks' probabilities of a collision
// is the work the set expects to redo. The project's measured conflicts
// per finished task (c: only conflicts coord itself found and logged)
// damp it: ⌈(I − E) / (1 + c)⌉, never below 1 while work is ready. The
// agents already at work (the tasks claimed now) are added: N is how
// many agents to have running, those busy and those to start. So with
// nothing in flight N is 1 when every ready task collides with every
// other, grows with independent ready work (a young repository, whose
// predictions are too weak to weigh, runs all its independent tasks at
// once), and never exceeds it.

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
	// Colliding the ready tasks left out of it; Expected the collisions
	// the set is expected to meet (the sum of its tasks' probabilities);
	// InFlight the tasks claimed now; WaitingOnDeps the unclaimed tasks
	// whose dependencies are not done.
	// Start is how many of Agents are to be started now (the rest are
	// at work on the tasks in flight).
	Start         int     `json:"start"`
	Independent   int     `json:"independent"`
	Colliding     int     `json:"colliding"`
	Expected      float64 `json:"expected_collisions"`
	InFlight      int     `json:"in_flight"`
	WaitingOnDeps int     `json:"waiting_on_deps"`
	Rates         Rates   `json:"rates"`
}

// ConflictEvents are the conflicts a log window holds, counted by the
// application (Txn does no I/O): conflict lines (write claims and trial
// merges) and send-backs (a landing or a reviewer returned the work).
type ConflictEvents struct {
	Conflicts, SendBacks int
}

// IsConflictEvent says which kind of conflict event a log line by agent
// is: "conflict" (RecordConflicts' line, which only coord itself writes,
// as CoordinatorID), "sendback" (SendBack's), or "". Only coord's own
// events count: an agent's message never reads as one (MessageText marks
// it), and a conflict line under any other name is not coord's.
func IsConflictEvent(agent, msg string) string {
	switch {
	case strings.HasPrefix(msg, "conflict: task ") && agent == CoordinatorID:
		return "conflict"
	case strings.HasPrefix(msg, "sent task ") && strings.Contains(msg, " back to "):
		return "sendback"
	}
	return ""
}

// coordEvent reports whether a message, logged by an agent, would read
// as one of coord's conflict events.
func coordEvent(msg string) bool {
	return strings.HasPrefix(msg, "conflict: task ") || strings.HasPrefix(msg, "sent task ") && strings.Contains(msg, " back to ")
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
	h := tx.holders()
	kept := 0
	for _, t := range ready {
		if tx.occupied(t, h) != "" {
			continue
		}
		w := h.weigh(t, "")
		if w.Waits {
			continue
		}
		kept++
		a.Expected += w.P
		h.add(t)
	}
	a.Expected = round2(a.Expected)
	a.Independent, a.Colliding = kept, len(ready)-kept
	for _, t := range tx.Tasks {
		if t.Status == Claimed {
			a.InFlight++
		}
	}
	a.Rates = tx.rates(now, ev, a.InFlight)
	if a.Independent > 0 {
		work := float64(a.Independent) - a.Expected*RedoCost
		a.Start = min(a.Independent, max(1, int(math.Ceil(work/(1+a.Rates.ConflictsPerTask)-1e-9))))
	}
	a.Agents = a.InFlight + a.Start
	a.Why = adviceWhy(a)
	return a
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
		s += fmt.Sprintf(" (%d collide through a conflict group, declared files or likely predicted paths)", a.Colliding)
	}
	if a.Start < a.Independent {
		s += fmt.Sprintf("; %.2f expected collisions and %.2f conflicts per task in the last %.4gh bring it to %d", a.Expected, a.Rates.ConflictsPerTask, a.Rates.Hours, a.Start)
	}
	s += fmt.Sprintf("; %d in flight (%d to start), %.2f tasks finished per hour", a.InFlight, a.Start, a.Rates.TasksPerHour)
	if a.WaitingOnDeps > 0 {
		s += fmt.Sprintf(", %d wait on dependencies", a.WaitingOnDeps)
	}
	return s
}
