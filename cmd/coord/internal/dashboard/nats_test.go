package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/cmd/coord/internal/dashboard"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend"
	"github.com/rotd/coordination/registry/backend/backendtest"
	"github.com/rotd/coordination/registry/nats/hubtest"
)

// openNATS opens the project at url as a client of its own (a NATS
// connection of its own, as another process has).
func openNATS(t *testing.T, url string) (*app.Service, coord.Backend) {
	t.Helper()
	p := backendtest.NewProject(t, backendtest.Options{URL: url})
	return p.Service, p.Backend
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
	d := dashboard.New(dashboard.Options{Reader: reader.Reader(), TaskJSON: reader.TaskJSON, DoctorEvery: time.Hour})
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	srv := httptest.NewServer(d.Handler())
	defer func() { srv.CloseClientConnections(); srv.Close(); cancel(); <-done }()

	// /api/state.json once the first snapshot exists (Run builds it).
	var st map[string]json.RawMessage
	backendtest.Wait(t, "/api/state.json", func() bool {
		res, err := srv.Client().Get(srv.URL + "/api/state.json")
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(res.Body).Decode(&st)
		res.Body.Close()
		return res.StatusCode == 200 && err == nil
	})
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
	waitFrame(t, frames, "every panel first", func(p map[string]string) bool {
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
	waitFrame(t, frames, "dora's claim of 1.3", func(p map[string]string) bool {
		a := p["p-agents"]
		return strings.Contains(a, "dora") && strings.Contains(a, "1.3")
	})
}

// TestBackendDownNATS: the hub under a running dashboard stops. Without a
// reload, the event stream says the page is not live, naming the hub's
// URL and why; the alerts say the project cannot be read and that doctor
// could not run (never "found nothing", never the timeouts doctor met,
// listed as the project's problems). The hub starts again on its
// directory and address (and an agent beats): the page is live again,
// and doctor runs again and finds nothing.
func TestBackendDownNATS(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	h := hubtest.StartAt(t, dir, "127.0.0.1:0")
	hostport := strings.TrimPrefix(h.URL(), "nats://")
	url := h.URL() + "/dash"
	if _, _, err := backend.Init(ctx, backend.Options{URL: url}); err != nil {
		t.Fatal(err)
	}
	reader, _ := openNATS(t, url)
	_, agent := openNATS(t, url) // an agent's own connection
	d := dashboard.New(dashboard.Options{Reader: reader.Reader(), TaskJSON: reader.TaskJSON, DoctorEvery: 200 * time.Millisecond, StallAfter: time.Second})
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	srv := httptest.NewServer(d.Handler())
	defer func() { srv.CloseClientConnections(); srv.Close(); cancel(); <-done }()
	state := func() map[string]json.RawMessage {
		t.Helper()
		res, err := srv.Client().Get(srv.URL + "/api/state.json")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var st map[string]json.RawMessage
		if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
			t.Fatal(err)
		}
		return st
	}

	frames := openEvents(t, ctx, srv)
	waitFrame(t, frames, "a live page whose doctor ran and found nothing", func(p map[string]string) bool {
		return p["live"] == "true" && strings.Contains(p["p-alerts"], "found nothing")
	})

	h.Shutdown()
	stopped := time.Now()
	waitFrame(t, frames, "the page not live, naming the hub", func(p map[string]string) bool {
		if p["live"] != "false" {
			return false
		}
		if !strings.Contains(p["why"], hostport) {
			t.Errorf("not live, but the reason %q does not name the hub %s", p["why"], hostport)
		}
		a := p["p-alerts"]
		if !strings.Contains(a, "cannot read the project") || !strings.Contains(a, "doctor could not run") || strings.Contains(a, "found nothing") {
			t.Errorf("not live, but the alerts do not say the project cannot be read and doctor could not run:\n%s", a)
		}
		if !strings.Contains(p["p-summary"], "not updating") {
			t.Errorf("not live, but the summary does not say it is not updating:\n%s", p["p-summary"])
		}
		return true
	})
	t.Logf("the page said it was not live %s after the hub stopped", time.Since(stopped).Round(time.Millisecond))
	var live bool
	var doc struct {
		Problems []coord.Problem `json:"problems"`
		Error    string          `json:"error"`
	}
	st := state()
	if err := json.Unmarshal(st["live"], &live); err != nil || live {
		t.Errorf("state.json live %s, want false", st["live"])
	}
	if err := json.Unmarshal(st["doctor"], &doc); err != nil || len(doc.Problems) != 0 || doc.Error == "" {
		t.Errorf("state.json doctor %s, want no problems and why it could not run", st["doctor"])
	}

	hubtest.StartAt(t, dir, hostport)
	restarted := time.Now()
	// An agent beats, as agents do: on a restarted hub the first write
	// makes the heartbeat stream (kept in memory) again at once, where a
	// read alone waits for the engine's IOBudget before it does.
	if err := agent.Beats().Beat(ctx, "alice", nil); err != nil {
		t.Fatal(err)
	}
	waitFrame(t, frames, "the page live again once the hub is back", func(p map[string]string) bool {
		return p["live"] == "true"
	})
	t.Logf("live again %s after the hub restarted", time.Since(restarted).Round(time.Millisecond))
	waitFrame(t, frames, "doctor run again, finding nothing", func(p map[string]string) bool {
		a, ok := p["p-alerts"]
		if ok && strings.Contains(a, "problem") {
			t.Errorf("after the hub came back, the alerts list problems:\n%s", a)
		}
		return ok && strings.Contains(a, "found nothing")
	})
}

// TestActsNATS is the page's writes on a NATS hub: a requeue posted to a
// dashboard over one client fences the holder (another client's release
// at its epoch is lost), an assignment lands in the assignee's inbox, the
// log names the dashboard's user, the event stream carries the change;
// the write protections refuse as on files (no token, a query token, a
// foreign origin), and a supervisors list set on the hub refuses the user.
func TestActsNATS(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := hubtest.Start(t) + "/acts"
	if _, _, err := backend.Init(ctx, backend.Options{URL: url}); err != nil {
		t.Fatal(err)
	}
	agents, _ := openNATS(t, url)
	var batch []coord.SeedLine
	for i, task := range sample() {
		task.Status = coord.Unclaimed
		batch = append(batch, coord.SeedLine{Line: i + 1, Task: task})
	}
	if _, err := agents.Seed(ctx, app.SeedRequest{Name: "test", Batch: batch}); err != nil {
		t.Fatal(err)
	}
	res, err := agents.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: "alice"}, TaskID: "1.1"})
	if err != nil {
		t.Fatal(err)
	}
	held := res.Task
	if _, err := agents.Register(ctx, app.RegisterRequest{Agent: "bob"}); err != nil {
		t.Fatal(err)
	}

	page, _ := openNATS(t, url)
	d := dashboard.New(dashboard.Options{Reader: page.Reader(), TaskJSON: page.TaskJSON, Acts: page.Supervisor(), Token: token, User: "pat"})
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	srv := httptest.NewServer(d.Handler())
	defer func() { srv.CloseClientConnections(); srv.Close(); cancel(); <-done }()
	f := &fixture{t: t, ctx: ctx, s: agents, srv: srv}
	backendtest.Wait(t, "the first snapshot", func() bool {
		r, _ := f.get("GET", "/api/state.json?token="+token)
		return r.StatusCode == 200
	})
	frames := openEventsPath(t, ctx, srv, "/events?token="+token)
	waitFrame(t, frames, "the first frame", func(map[string]string) bool { return true })

	for _, c := range []struct {
		name, path string
		header     []string
	}{
		{"no token", "", []string{"Content-Type", "application/json"}},
		{"query token", "?token=" + token, []string{"Content-Type", "application/json"}},
		{"foreign origin", "", []string{"Content-Type", "application/json", "Authorization", "Bearer " + token, "Origin", "http://evil.example"}},
	} {
		if r, _ := f.post("POST", "/api/tasks/1.1/requeue"+c.path, `{"reason":"x"}`, c.header...); r.StatusCode != 401 && r.StatusCode != 403 {
			t.Errorf("%s: %d, want 401 or 403", c.name, r.StatusCode)
		}
	}
	if code, msg := f.act("1.1", "requeue", `{"reason":"alice is stuck"}`); code != 200 || msg != "requeued 1.1 (taken from alice, epoch 1: its next write is refused)" {
		t.Fatalf("requeue on the hub: %d %q", code, msg)
	}
	waitFrame(t, frames, "the requeue on the page", func(p map[string]string) bool { return strings.Contains(p["p-log"], "requeued task 1.1") })
	if _, err := agents.Release(ctx, app.TaskRef{Agent: coord.Agent{ID: "alice"}, TaskID: "1.1", Epoch: held.Epoch}, "done"); coord.CodeOf(err) != coord.CodeLost {
		t.Fatalf("alice's release after the requeue: %v, want lost", err)
	}
	if code, msg := f.act("1.1", "assign", `{"to":"bob"}`); code != 200 || msg != "assigned 1.1 to bob" {
		t.Fatalf("assign on the hub: %d %q", code, msg)
	}
	in, err := agents.Inbox(ctx, app.InboxRequest{Agent: "bob"})
	if err != nil || in.Task == nil || in.Task.ID != "1.1" {
		t.Fatalf("bob's inbox: %+v %v", in, err)
	}
	var log strings.Builder
	agents.LogRead(ctx, 0, func(l string) error { log.WriteString(l + "\n"); return nil })
	for _, want := range []string{"pat ▶ requeued task 1.1 from alice (epoch 1): alice is stuck", "pat ▶ assigned task 1.1 to bob"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the hub's log lacks %q", want)
		}
	}
	if err := agents.SetConfigText(ctx, "supervisors", `["lead"]`); err != nil {
		t.Fatal(err)
	}
	if code, _ := f.act("1.1", "requeue", `{"reason":"x"}`); code != 403 {
		t.Fatalf("a user the hub's supervisors list leaves out: %d, want 403", code)
	}
}
