package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coord/cmd/coord/dashboard"
	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/coord/app"
	"github.com/rotd/coord/registry/backend"
	"github.com/rotd/coord/registry/nats/hubtest"
)

// openNATS opens the project at url as a client of its own (a NATS
// connection of its own, as another process has).
func openNATS(t *testing.T, url string) (*app.Service, coord.Backend) {
	t.Helper()
	ctx := context.Background()
	b, err := backend.Open(ctx, backend.Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	s, err := app.New(ctx, b, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s, b
}

// TestEventsAfterClaimNATS is TestEventsAfterClaim on a NATS hub: the
// dashboard reads through one client, another client claims, and the
// claim reaches an open event stream; /api/state.json has the shapes of
// the --json outputs there too, and the doctor check runs on the hub.
func TestEventsAfterClaimNATS(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := hubtest.Start(t) + "/dash"
	if _, _, err := backend.Init(ctx, backend.Options{URL: url}); err != nil {
		t.Fatal(err)
	}
	writer, _ := openNATS(t, url)
	var batch []coord.SeedLine
	for i, task := range sample() {
		task.Status = coord.Unclaimed
		batch = append(batch, coord.SeedLine{Line: i + 1, Task: task})
	}
	if _, err := writer.Seed(ctx, app.SeedRequest{Name: "test", Batch: batch}); err != nil {
		t.Fatal(err)
	}
	claim := func(agent, id string) {
		t.Helper()
		if res, err := writer.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: agent}, TaskID: id}); err != nil || res.Task == nil {
			t.Fatalf("%s claims %s: %v", agent, id, err)
		}
	}
	claim("alice", "1.1")

	reader, rb := openNATS(t, url)
	// The change notification of the dashboard's own client wakes on the
	// other client's commits (the builder also re-reads every second, so
	// the event stream alone would not show a notification that never
	// comes).
	changes, err := rb.Changes().Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := dashboard.New(dashboard.Options{Reader: reader.Reader(), TaskJSON: taskJSON, DoctorEvery: time.Hour})
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	srv := httptest.NewServer(d.Handler())
	defer func() { srv.CloseClientConnections(); srv.Close(); cancel(); <-done }()

	// /api/state.json once the first snapshot exists (Run builds it).
	var st map[string]json.RawMessage
	for deadline := time.Now().Add(bound); ; time.Sleep(20 * time.Millisecond) {
		res, err := srv.Client().Get(srv.URL + "/api/state.json")
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(res.Body).Decode(&st)
		res.Body.Close()
		if res.StatusCode == 200 && err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no state within %s: %d %v", bound, res.StatusCode, err)
		}
	}
	for _, k := range []string{"agents", "tasks", "locks", "leases", "log", "queue", "throughput", "alerts", "doctor", "counts", "now", "where"} {
		if _, ok := st[k]; !ok {
			t.Errorf("state.json lacks %q", k)
		}
	}
	var tasks []map[string]any
	var agents []coord.AgentView
	var where string
	for k, v := range map[string]any{"tasks": &tasks, "agents": &agents, "where": &where} {
		if err := json.Unmarshal(st[k], v); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
	}
	if len(tasks) != 5 || tasks[0]["id"] != "1.1" || tasks[0]["status"] != "claimed" || tasks[0]["claimed_by"] != "alice" || tasks[0]["epoch"] != float64(1) {
		t.Errorf("tasks %v", tasks)
	}
	if len(agents) != 1 || agents[0].Agent != "alice" || !agents[0].Alive {
		t.Errorf("agents %+v", agents)
	}
	if !strings.HasPrefix(where, "nats://") || !strings.HasSuffix(where, "/dash") {
		t.Errorf("where %q", where)
	}

	frames := openEvents(t, ctx, srv)
	waitFor(t, frames, "every panel first", func(p map[string]string) bool {
		_, ok := p["p-agents"]
		return ok
	})
	for len(changes) > 0 { // what the seed and alice's claim sent
		<-changes
	}
	claim("dora", "1.3")
	select {
	case <-changes:
	case <-time.After(bound):
		t.Fatalf("the dashboard's client got no change notification within %s of another client's claim", bound)
	}
	waitFor(t, frames, "dora's claim of 1.3", func(p map[string]string) bool {
		a := p["p-agents"]
		return strings.Contains(a, "dora") && strings.Contains(a, "1.3")
	})
}
