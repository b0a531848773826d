package coord

import (
	"fmt"
	"testing"
)

// benchPool builds a Txn of n tasks shaped like a real backlog (200
// conflict groups on a third, directory and file patterns over 100
// modules on the rest, a dependency on every tenth, mixed priorities,
// some capabilities) and a pool of 50 live agents (45 implementers, 5
// reviewers; half with capability go), with the first 5% of the tasks
// done and waiting for review.
func benchPool(n int) (*Txn, map[string]bool) {
	var tasks []*Task
	for i := range n {
		t := &Task{ID: fmt.Sprintf("t%05d", i), Status: Unclaimed, Priority: []Priority{Urgent, High, Medium, Low}[i%4]}
		switch i % 3 {
		case 0:
			t.ConflictGroup = fmt.Sprintf("g%d", i%200)
		case 1:
			t.Files = []string{fmt.Sprintf("src/m%d/**", i%100)}
		case 2:
			t.Files = []string{fmt.Sprintf("src/m%d/f%d.go", i%100, i)}
		}
		if i%10 == 7 {
			t.Deps = []string{fmt.Sprintf("t%05d", i-5)}
		}
		if i%4 == 1 {
			t.Capability = "go"
		}
		if i < n/20 {
			t.Status, t.ClaimedBy, t.Epoch = Review, "x", int64(i+1)
		}
		tasks = append(tasks, t)
	}
	tx := &Txn{Tasks: tasks}
	tx.Index()
	live := map[string]bool{}
	for i := range 50 {
		p := PoolAgent{ID: fmt.Sprintf("a%02d", i), Role: Implementer, RegisteredAt: "2026-11-22T10:00:00Z"}
		if i%2 == 0 {
			p.Caps = []string{"go"}
		}
		if i >= 45 {
			p.Role = Reviewer
		}
		tx.Pool = append(tx.Pool, p)
		live[p.ID] = true
	}
	return tx, live
}

// BenchmarkScheduleRound: one scheduling round, pure (no storage), with
// 50 agents: "empty" assigns into empty inboxes (depth 1: 45 tasks and 5
// reviews), "full" finds every inbox full and changes nothing (the round
// a long-running scheduler runs on most notifications). The Txn is
// cloned outside the timer.
func BenchmarkScheduleRound(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		base, live := benchPool(n)
		full := base.Clone()
		full.Schedule(live, 1)
		for _, c := range []struct {
			name string
			tx   *Txn
		}{{"empty", base}, {"full", full}} {
			b.Run(fmt.Sprintf("tasks=%d/agents=50/%s", n, c.name), func(b *testing.B) {
				assigned := 0
				for b.Loop() {
					b.StopTimer()
					tx := c.tx.Clone()
					b.StartTimer()
					r := tx.Schedule(live, 1)
					assigned = len(r.Assigned) + len(r.Routed)
				}
				b.ReportMetric(float64(assigned), "assigned/round")
			})
		}
	}
}
