package app_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend/backendtest"
)

// scenarioTasks builds n tasks: a third in five conflict groups, a third
// with a directory pattern and a third with a file inside one (so
// patterns overlap across tasks), some with dependencies, mixed
// priorities.
func scenarioTasks(n int) []*coord.Task {
	var tasks []*coord.Task
	for i := range n {
		tk := &coord.Task{ID: fmt.Sprintf("t%02d", i), Priority: []coord.Priority{"urgent", "high", "medium", "low"}[i%4]}
		switch i % 3 {
		case 0:
			tk.ConflictGroup = fmt.Sprintf("g%d", i%5)
		case 1:
			tk.Files = []string{fmt.Sprintf("src/m%d/**", i%4)}
		case 2:
			tk.Files = []string{fmt.Sprintf("src/m%d/f%d.go", i%4, i)}
		}
		if i%10 == 7 {
			tk.Deps = []string{fmt.Sprintf("t%02d", i-5)}
		}
		tasks = append(tasks, tk)
	}
	return tasks
}

// TestPushScenario: push scheduling through a whole project on the
// injected clock. Five registered agents (one a reviewer) work through 60
// tasks with conflict groups, overlapping file patterns and dependencies,
// the review gate on, a scheduling round between their moves. One agent
// takes a task and, once it has more work waiting, goes silent (stops
// beating and acting) and the clock moves past stale_after. Every task
// ends done, approved by someone other than its claimer; the log's replay
// shows no two conflicting tasks out at once and no task assigned twice;
// the silent agent's held and waiting tasks were finished by others.
// (cmd/coord's TestPushScenario runs the same with real processes, a
// SIGKILL and real time, smaller.)
//
// Broken builds this fails against: holders() not counting assigned
// tasks (conflicting tasks out at once in the replay); Schedule not
// dropping a stale agent from the pool (its waiting task never done).
func TestPushScenario(t *testing.T) {
	tasks := scenarioTasks(60)
	byID := map[string]*coord.Task{}
	for _, tk := range tasks {
		byID[tk.ID] = tk
	}
	p := newPushProject(t, `{"scheduling":"push","review_gate":true,"stale_after":"60s"}`, tasks...)
	s := p.service(t)
	ctx := context.Background()
	agents := []string{"victim", "a1", "a2", "a3", "rev"}
	for _, a := range agents {
		role := "implementer"
		if a == "rev" {
			role = "reviewer"
		}
		register(t, s, a, role)
	}
	silent := false
	var held string
	var waiting []string
	for round := 0; ; round++ {
		if round == 2000 {
			t.Fatalf("not done after %d rounds:\n%s", round, strings.Join(logLines(t, s), "\n"))
		}
		p.advance(10 * time.Second)
		if _, err := s.Schedule(ctx, app.ScheduleRequest{Depth: 2}); err != nil {
			t.Fatal(err)
		}
		left := 0
		for _, tk := range mustTasks(t, s) {
			if tk.Status != coord.Done {
				left++
			}
			if !silent && tk.AssignedTo == "victim" && tk.Status == coord.Unclaimed && held != "" {
				waiting = append(waiting, tk.ID)
			}
		}
		if left == 0 {
			break
		}
		if len(waiting) > 0 {
			silent = true // from here on the victim neither beats nor acts
		}
		for _, a := range agents {
			if a == "victim" && silent {
				continue
			}
			if err := s.Beat(ctx, a, nil); err != nil {
				t.Fatal(err)
			}
			r, err := s.Inbox(ctx, app.InboxRequest{Agent: a})
			if err != nil {
				t.Fatalf("%s's inbox: %v", a, err)
			}
			if r.Task == nil {
				continue
			}
			switch {
			case r.Task.Status == coord.Review:
				if _, err := s.Approve(ctx, app.ApproveRequest{Agent: a, TaskID: r.Task.ID}); err != nil {
					t.Fatalf("%s approving %s: %v", a, r.Task.ID, err)
				}
			case a == "victim":
				held = r.Task.ID // holds its task until it goes silent
			default:
				if _, err := s.Release(ctx, app.TaskRef{Agent: coord.Agent{ID: a}, TaskID: r.Task.ID, Epoch: r.Task.Epoch}, "done"); err != nil {
					t.Fatalf("%s releasing %s: %v", a, r.Task.ID, err)
				}
			}
		}
	}
	if !silent {
		t.Fatal("the victim never held a task with work waiting")
	}
	for _, tk := range mustTasks(t, s) {
		if tk.ReviewerID == tk.ClaimedBy {
			t.Errorf("task %s reviewed by its claimer %s", tk.ID, tk.ClaimedBy)
		}
	}
	lines := logLines(t, s)
	conflict := func(a, b string) bool {
		x, y := byID[a], byID[b]
		return x.ConflictGroup != "" && x.ConflictGroup == y.ConflictGroup || coord.AnyOverlap(x.Files, y.Files)
	}
	claimer, problems := backendtest.ReplayPush(lines, conflict)
	for _, pr := range problems {
		t.Error(pr)
	}
	for _, id := range append(waiting, held) {
		if c := claimer[id]; c == "" || c == "victim" {
			t.Errorf("the victim's task %s was last claimed by %q; want another agent", id, c)
		}
	}
	log := strings.Join(lines, "\n")
	for _, want := range []string{"agent victim left the pool: its heartbeat is stale", "freed stale lock task " + held + " (agent victim)"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q", want)
		}
	}
}

func mustTasks(t *testing.T, s *app.Service) []*coord.Task {
	t.Helper()
	list, err := s.Tasks(context.Background(), app.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return list
}
