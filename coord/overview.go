package coord

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// The overview: what a person watching several agents asks of the
// registry without acting as any of them (the dashboard's panels). Pure
// functions of one snapshot; they change nothing.

// Queue is the unclaimed work seen from no particular agent. Ready are
// the tasks that some agent with the right capability and skill could
// claim now (unassigned, their dependencies done, their conflict group
// and files free), in the order claims take them (priority, then registry
// order: Best's order). Waiting are the other unclaimed tasks, in the
// same order, each with why it waits (a dependency not done, its conflict
// group or files held, assigned to an agent that has not started it).
func (tx *Txn) Queue() (ready, waiting []*Task, why []string) {
	h := tx.holders()
	var blocked []*Task
	reason := map[*Task]string{}
	for _, t := range tx.Tasks {
		if t.Status != Unclaimed {
			continue
		}
		if w := tx.taskBlocked(t, h); w != "" {
			blocked = append(blocked, t)
			reason[t] = w
		} else {
			ready = append(ready, t)
		}
	}
	waiting = byPriority(blocked)
	why = make([]string, len(waiting))
	for i, t := range waiting {
		why[i] = reason[t]
	}
	return byPriority(ready), waiting, why
}

// Throughput is the pace of the work over a window that ends now: how
// many tasks were finished in each hour of it and how long they took
// from claim to finish.
type Throughput struct {
	// Since is the start of the window (RFC 3339 UTC).
	Since string `json:"since"`
	// PerHour counts the tasks finished in each hour of the window,
	// oldest first; the last entry is the hour that ends now.
	PerHour []int `json:"done_per_hour"`
	// Done is the number finished in the window (the sum of PerHour).
	Done int `json:"done"`
	// Review is the number released in the window that still wait in
	// review: their agents' work ended, the tasks are not finished, and
	// Done does not count them.
	Review int `json:"review"`
	// MedianClaimToDone is the median of completed_at - claimed_at over
	// the finished tasks, in seconds; nil when none has both times.
	MedianClaimToDone *int64 `json:"median_claim_to_done_seconds"`
}

// ThroughputOf measures the tasks finished in the hours that end at now.
// Finished means done: released with the review gate off, approved with
// it on (a task in review is not finished: a reviewer may still reject
// it). A task counts at its completed_at, when its agent released it (an
// approval does not move it), and its claim-to-done time is completed_at
// - claimed_at, the last claim's. Tasks moved to the archive are not
// seen.
func ThroughputOf(tasks []*Task, now time.Time, hours int) Throughput {
	if hours < 1 {
		hours = 1
	}
	since := now.Add(-time.Duration(hours) * time.Hour)
	out := Throughput{Since: FormatTime(since), PerHour: make([]int, hours)}
	var spans []int64
	for _, t := range tasks {
		if (t.Status != Done && t.Status != Review) || t.CompletedAt == "" {
			continue
		}
		done, err := ParseTime(t.CompletedAt)
		if err != nil || !done.After(since) || done.After(now) {
			continue
		}
		if t.Status == Review {
			out.Review++
			continue
		}
		i := int(done.Sub(since) / time.Hour)
		if i >= hours { // exactly now
			i = hours - 1
		}
		out.PerHour[i]++
		out.Done++
		if claimed, err := ParseTime(t.ClaimedAt); err == nil && !done.Before(claimed) {
			spans = append(spans, int64(done.Sub(claimed)/time.Second))
		}
	}
	if len(spans) > 0 {
		sort.Slice(spans, func(i, j int) bool { return spans[i] < spans[j] })
		m := spans[len(spans)/2]
		if len(spans)%2 == 0 {
			m = (spans[len(spans)/2-1] + m) / 2
		}
		out.MedianClaimToDone = &m
	}
	return out
}

// Alert is something a person watching should act on.
type Alert struct {
	// Kind is "stale_holder" (an agent judged stale still holds, reviews
	// or is assigned work), "ownerless_blocked" (a blocked task whose
	// owner was swept: anyone may unblock it), "no_live_agent" (work is
	// ready and no agent is alive), "no_reviewer" (a task in review that
	// no registered reviewer may take: Txn.Unreviewable) or "doctor" (a
	// problem coord doctor reports).
	Kind  string `json:"kind"`
	Text  string `json:"text"`
	Agent string `json:"agent,omitempty"`
	Task  string `json:"task,omitempty"`
}

// Alerts judges one snapshot: the liveness view (Txn.Liveness) and the
// tasks. Stale holders come first, then ownerless blocked tasks.
func Alerts(agents []AgentView, tasks []*Task, ready int) []Alert {
	var out []Alert
	alive := 0
	for _, a := range agents {
		if a.Alive {
			alive++
			continue
		}
		var what []string
		if len(a.Tasks) > 0 {
			what = append(what, "holds "+strings.Join(a.Tasks, ", "))
		}
		if len(a.Reviewing) > 0 {
			what = append(what, "reviews "+strings.Join(a.Reviewing, ", "))
		}
		if len(a.Inbox) > 0 {
			what = append(what, fmt.Sprintf("has %d assigned and not started", len(a.Inbox)))
		}
		if len(what) == 0 {
			continue
		}
		age := "no heartbeat"
		if a.AgeS != nil {
			age = "last beat " + (time.Duration(*a.AgeS) * time.Second).String() + " ago"
		}
		out = append(out, Alert{Kind: "stale_holder", Agent: a.Agent,
			Text: fmt.Sprintf("agent %s is stale (%s) and %s: the sweep (coord watch, clean-stale) frees it", a.Agent, age, strings.Join(what, "; "))})
	}
	for _, t := range tasks {
		if t.Status == Blocked && t.ClaimedBy == "" {
			out = append(out, Alert{Kind: "ownerless_blocked", Task: t.ID,
				Text: fmt.Sprintf("task %s is blocked with no owner (%s): coord unblock %s returns it to the queue", t.ID, OneLine(t.BlockedReason), t.ID)})
		}
	}
	if alive == 0 && ready > 0 {
		out = append(out, Alert{Kind: "no_live_agent", Text: fmt.Sprintf("%d tasks are ready and no agent is alive", ready)})
	}
	return out
}
