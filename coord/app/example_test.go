package app_test

import (
	_ "github.com/rotd/coordination/registry/engines"

	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend"
)

// openExample lays a project down in a new temporary directory and opens
// the application over it, as every front end does: the backend through
// the one opener, the Service with its clock and the formats it reads.
// The clock is fixed so that the output below is the same every run.
func openExample() (svc *app.Service, done func()) {
	ctx := context.Background()
	root, err := os.MkdirTemp("", "coord-example")
	if err != nil {
		log.Fatal(err)
	}
	clock := func() time.Time { return time.Date(2025, 7, 6, 12, 34, 1, 0, time.UTC) }
	if _, _, err := backend.Init(ctx, backend.Options{Root: root}); err != nil {
		log.Fatal(err)
	}
	b, err := backend.Open(ctx, backend.Options{Root: root, Clock: clock})
	if err != nil {
		log.Fatal(err)
	}
	svc, err = app.New(ctx, b, app.Options{Clock: clock, Formats: backend.Formats{}})
	if err != nil {
		log.Fatal(err)
	}
	return svc, func() { b.Close(); os.RemoveAll(root) }
}

// seedExample seeds three tasks: 4.2 waits for 4.1, and 4.3 is urgent.
func seedExample(svc *app.Service) {
	ctx := context.Background()
	batch, err := svc.ParseSeed(ctx, "coord", "tasks.jsonl", strings.NewReader(`
{"id":"4.1","title":"Parser","priority":"high"}
{"id":"4.2","title":"Preamble Editor Modal","deps":["4.1"]}
{"id":"4.3","title":"Fix the build","priority":"urgent"}
`))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := svc.Seed(ctx, app.SeedRequest{Name: "tasks.jsonl", Batch: batch}); err != nil {
		log.Fatal(err)
	}
}

// An agent's whole cycle: seed the tasks, claim the best eligible one,
// finish it, and see where the project stands.
func Example() {
	svc, done := openExample()
	defer done()
	ctx := context.Background()
	seedExample(svc)

	agent := coord.Agent{ID: "agent-a"}
	res, err := svc.Claim(ctx, app.ClaimRequest{Agent: agent})
	if err != nil {
		log.Fatal(err)
	}
	t := res.Task
	fmt.Println("claimed", t.ID, t.Status, "epoch", t.Epoch, "at", t.ClaimedAt)

	t, err = svc.Release(ctx, app.TaskRef{Agent: agent, TaskID: t.ID, Epoch: t.Epoch}, "fixed")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("released", t.ID, t.Status)

	st, err := svc.Status(ctx, agent.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("holding", len(st.Holding), "unclaimed", st.Counts[coord.Unclaimed], "done", st.Counts[coord.Done])
	// Output:
	// claimed 4.3 claimed epoch 1 at 2025-07-06T12:34:01Z
	// released 4.3 done
	// holding 0 unclaimed 2 done 1
}

// ParseSeed reads a batch in one of the seed formats (coord's JSON Lines
// here; "rotd" reads ROTD's tasks.jsonl); Seed adds it whole, or nothing
// when any line is wrong.
func ExampleService_Seed() {
	svc, done := openExample()
	defer done()
	ctx := context.Background()
	batch, err := svc.ParseSeed(ctx, "coord", "tasks.jsonl", strings.NewReader(`{"id":"1.1","title":"One"}
{"id":"1.2","title":"Two","deps":["1.1"]}
`))
	if err != nil {
		log.Fatal(err)
	}
	res, err := svc.Seed(ctx, app.SeedRequest{Name: "tasks.jsonl", Batch: batch})
	fmt.Println(res.Count, res.IDs, err)

	_, err = svc.ParseSeed(ctx, "coord", "more.jsonl", strings.NewReader(`{"id":"1.3","titel":"Three"}`))
	fmt.Println(coord.CodeOf(err) == coord.CodeUsage, err)
	// Output:
	// 2 [1.1 1.2] <nil>
	// true more.jsonl: line 1: unknown field "titel"; the nearest known field is "title"; a seed line may carry id, title, description, status, priority, deps, capability, skill_level, files, conflict_group
}

// Claim takes the best eligible task for the agent (urgent first; a task
// whose deps are not done waits), or a named one with TaskID; nothing
// eligible is not an error.
func ExampleService_Claim() {
	svc, done := openExample()
	defer done()
	ctx := context.Background()
	seedExample(svc)

	for _, id := range []string{"a", "b", "c"} {
		res, err := svc.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: id}})
		if err != nil {
			log.Fatal(err)
		}
		if res.Task == nil {
			fmt.Println(id, "gets nothing:", res.Status())
			continue
		}
		fmt.Println(id, "claims", res.Task.ID, "epoch", res.Task.Epoch)
	}
	_, err := svc.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: "c"}, TaskID: "4.3"})
	fmt.Println("c claims 4.3:", coord.CodeOf(err) == coord.CodeConflict)
	// Output:
	// a claims 4.3 epoch 1
	// b claims 4.1 epoch 2
	// c gets nothing: no_eligible_task
	// c claims 4.3: true
}

// Release finishes a task its holder names with the epoch its claim
// printed; a stale epoch is refused as lost (the task was reclaimed).
func ExampleService_Release() {
	svc, done := openExample()
	defer done()
	ctx := context.Background()
	seedExample(svc)
	a := coord.Agent{ID: "agent-a"}
	res, err := svc.Claim(ctx, app.ClaimRequest{Agent: a, TaskID: "4.1"})
	if err != nil {
		log.Fatal(err)
	}
	_, err = svc.Release(ctx, app.TaskRef{Agent: a, TaskID: "4.1", Epoch: res.Task.Epoch + 1}, "")
	fmt.Println("wrong epoch lost:", coord.CodeOf(err) == coord.CodeLost)
	t, err := svc.Release(ctx, app.TaskRef{Agent: a, TaskID: "4.1", Epoch: res.Task.Epoch}, "parser done")
	fmt.Println(t.ID, t.Status, t.CompletedAt, err)
	// Output:
	// wrong epoch lost: true
	// 4.1 done 2025-07-06T12:34:01Z <nil>
}

// Ready lists what an agent could claim now, best first, and every other
// task with the reason it waits.
func ExampleService_Ready() {
	svc, done := openExample()
	defer done()
	ctx := context.Background()
	seedExample(svc)
	ready, waiting, err := svc.Ready(ctx, coord.Agent{ID: "agent-a"})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range ready {
		fmt.Println("ready", r.ID, r.Priority)
	}
	for _, r := range waiting {
		fmt.Println("waits", r.ID, r.Reason)
	}
	// Output:
	// ready 4.3 urgent
	// ready 4.1 high
	// waits 4.2 dependency 4.1 is not done
}

// Status is what an agent asks when it starts or resumes: what it holds
// and where the work stands.
func ExampleService_Status() {
	svc, done := openExample()
	defer done()
	ctx := context.Background()
	seedExample(svc)
	if _, err := svc.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: "agent-a"}, TaskID: "4.1"}); err != nil {
		log.Fatal(err)
	}
	st, err := svc.Status(ctx, "agent-a")
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range st.Holding {
		fmt.Println("holding", t.ID, t.Title)
	}
	fmt.Println(st.Counts[coord.Claimed], "claimed,", st.Counts[coord.Unclaimed], "unclaimed, drained:", st.Drained)
	// Output:
	// holding 4.1 Parser
	// 1 claimed, 2 unclaimed, drained: false
}
