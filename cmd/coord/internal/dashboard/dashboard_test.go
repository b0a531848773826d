package dashboard_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/cmd/coord/internal/dashboard"
	"github.com/rotd/coordination/cmd/coord/internal/dashboard/dashboardtest"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend/backendtest"
)

// bound is how long a test waits for a condition before it fails: far
// beyond what any condition needs, so that a loaded machine is never
// mistaken for a broken dashboard.
const bound = 45 * time.Second

// fixture is a file project, its Service and a dashboard over it.
type fixture struct {
	t   testing.TB
	ctx context.Context
	s   *app.Service
	dir string // the coordination directory
	d   *dashboard.Server
	srv *httptest.Server
}

// newFixture opens a fresh project seeded with tasks and serves a
// dashboard over it, its builder running until the test ends (not in a
// benchmark).
func newFixture(t testing.TB, opt dashboard.Options, tasks ...*coord.Task) *fixture {
	t.Helper()
	return newFixtureConfig(t, opt, "", tasks...)
}

// newFixtureConfig is newFixture with config.json replaced by config
// (its members, without braces) when config is not "".
func newFixtureConfig(t testing.TB, opt dashboard.Options, config string, tasks ...*coord.Task) *fixture {
	t.Helper()
	if config != "" {
		config = "{" + config + "}\n"
	}
	p := backendtest.NewProject(t, backendtest.Options{Config: config, Tasks: tasks})
	d := dashboardtest.Serve(t, dashboardtest.Options(opt, p.Service, false))
	return &fixture{t: t, ctx: d.Ctx, s: p.Service, dir: filepath.Join(p.Root, coord.TreeDir), d: d.Server, srv: d.HTTP}
}

func (f *fixture) claim(agent, id string) *coord.Task {
	f.t.Helper()
	res, err := f.s.Claim(f.ctx, app.ClaimRequest{Agent: coord.Agent{ID: agent}, TaskID: id})
	if err != nil || res.Task == nil {
		f.t.Fatalf("%s claims %s: %v", agent, id, err)
	}
	return res.Task
}

// get fetches path with the given headers (post's, without a body) and
// returns the status and body.
func (f *fixture) get(method, path string, header ...string) (*http.Response, string) {
	f.t.Helper()
	return f.post(method, path, "", header...)
}

func sample() []*coord.Task {
	return []*coord.Task{
		{ID: "1.1", Title: "parser", Priority: coord.High},
		{ID: "1.2", Title: "lexer", Deps: []string{"1.1"}},
		{ID: "1.3", Title: "docs", ConflictGroup: "g"},
		{ID: "1.4", Title: "more docs", ConflictGroup: "g"},
		{ID: "1.5", Title: "blocked one"},
	}
}

func TestEndpoints(t *testing.T) {
	f := newFixture(t, dashboard.Options{}, sample()...)
	f.claim("alice", "1.1")
	task := f.claim("carol", "1.5")
	if _, err := f.s.Block(f.ctx, app.TaskRef{Agent: coord.Agent{ID: "carol"}, TaskID: "1.5", Epoch: task.Epoch}, "waiting for <b>an API key</b>"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.LockPaths(f.ctx, "alice", []string{"src/parse.go"}, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := f.d.Build(f.ctx); err != nil {
		t.Fatal(err)
	}

	t.Run("page", func(t *testing.T) {
		res, body := f.get("GET", "/")
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("GET / = %d %s", res.StatusCode, res.Header.Get("Content-Type"))
		}
		for _, want := range []string{`id="p-agents"`, `id="p-queue"`, `id="p-blocked"`, `id="p-review"`, `id="p-locks"`, `id="p-log"`, `id="p-thru"`, `id="p-alerts"`,
			"alice", "parser", "alive", "waiting for &lt;b&gt;an API key&lt;/b&gt;", "src/parse.go", "dependency 1.1 is not done", "<svg", `src="static/app.js"`} {
			if !strings.Contains(body, want) {
				t.Errorf("the page lacks %q", want)
			}
		}
		if strings.Contains(body, "<b>an API key</b>") {
			t.Error("a task's text reached the page unescaped")
		}
		if strings.Contains(body, "http://") || strings.Contains(body, "https://") {
			t.Error("the page names an outside URL: it must work with no internet")
		}
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("Content-Security-Policy %q", csp)
		}
	})

	t.Run("state", func(t *testing.T) {
		res, body := f.get("GET", "/api/state.json")
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("GET /api/state.json = %d %s", res.StatusCode, res.Header.Get("Content-Type"))
		}
		var st map[string]json.RawMessage
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"agents", "tasks", "locks", "leases", "log", "queue", "throughput", "alerts", "doctor", "counts", "now", "where"} {
			if _, ok := st[k]; !ok {
				t.Errorf("state.json lacks %q", k)
			}
		}
		var tasks []map[string]any
		var agents []coord.AgentView
		var locks []coord.PathLock
		var log []coord.LogEntry
		var queue struct {
			Ready   []string `json:"ready"`
			Waiting []struct{ ID, Reason string }
		}
		for k, v := range map[string]any{"tasks": &tasks, "agents": &agents, "locks": &locks, "log": &log, "queue": &queue} {
			if err := json.Unmarshal(st[k], v); err != nil {
				t.Fatalf("%s: %v", k, err)
			}
		}
		// The shapes of ls --json, agents --json, locks --json, log --json.
		if len(tasks) != 5 || tasks[0]["id"] != "1.1" || tasks[0]["status"] != "claimed" || tasks[0]["claimed_by"] != "alice" || tasks[4]["blocked_at"] == nil {
			t.Errorf("tasks %v", tasks)
		}
		if len(agents) != 2 || agents[0].Agent != "alice" || !agents[0].Alive {
			t.Errorf("agents %+v", agents)
		}
		if len(locks) != 1 || locks[0].Path != "src/parse.go" || locks[0].Holder != "alice" {
			t.Errorf("locks %+v", locks)
		}
		if len(log) == 0 || log[len(log)-1].AgentID == "" {
			t.Errorf("log %+v", log)
		}
		if strings.Join(queue.Ready, " ") != "1.3 1.4" || len(queue.Waiting) != 1 || queue.Waiting[0].ID != "1.2" || queue.Waiting[0].Reason != "dependency 1.1 is not done" {
			t.Errorf("queue %+v", queue)
		}
		res, _ = f.get("GET", "/api/state.json", "Accept-Encoding", "gzip")
		if res.Header.Get("Content-Encoding") != "gzip" {
			t.Errorf("gzip asked, got Content-Encoding %q", res.Header.Get("Content-Encoding"))
		}
	})

	t.Run("gzip body", func(t *testing.T) {
		req, _ := http.NewRequest("GET", f.srv.URL+"/api/state.json", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		res, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		zr, err := gzip.NewReader(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		var st map[string]any
		if err := json.NewDecoder(zr).Decode(&st); err != nil || st["tasks"] == nil {
			t.Fatalf("gzipped state: %v %v", err, st != nil)
		}
	})

	for _, c := range []struct {
		method, path string
		code         int
		has          string
	}{
		{"GET", "/tasks", 200, "Every task"},
		{"GET", "/tasks?list=waiting", 200, "dependency 1.1 is not done"},
		{"GET", "/tasks?list=ready", 200, "more docs"},
		{"GET", "/tasks?list=blocked&page=1", 200, "blocked one"},
		{"GET", "/tasks?list=done&page=9", 200, "No task in this list"},
		{"GET", "/tasks?list=secret", 400, "unknown list"},
		{"GET", "/tasks?list=all&page=0", 400, "not a page number"},
		{"GET", "/tasks?list=all&page=x", 400, "not a page number"},
		{"GET", "/static/style.css", 200, "--bg"},
		{"GET", "/static/app.js", 200, "EventSource"},
		{"GET", "/static/page.html", 404, ""},
		{"GET", "/static/../go.mod", 404, ""},
		{"GET", "/nothing", 404, ""},
		{"POST", "/", 405, "read-only"},
		{"DELETE", "/api/state.json", 405, "read-only"},
		{"HEAD", "/api/state.json", 200, ""},
	} {
		res, body := f.get(c.method, c.path)
		if res.StatusCode != c.code || !strings.Contains(body, c.has) {
			t.Errorf("%s %s = %d (want %d), body %q lacks %q", c.method, c.path, res.StatusCode, c.code, clip(body), c.has)
		}
	}
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// The token rule (docs/DASHBOARD.md): with a token, every route but the static
// files answers 401 unless the request carries it as a bearer token or
// ?token=; without one, a request that names the server by anything but
// a loopback host is refused (403: a page elsewhere cannot read the
// dashboard through DNS rebinding).
func TestToken(t *testing.T) {
	f := newFixture(t, dashboard.Options{Token: "s3cret"}, sample()...)
	for _, c := range []struct {
		path   string
		header []string
		code   int
	}{
		{"/", nil, 401},
		{"/api/state.json", nil, 401},
		{"/events", nil, 401},
		{"/tasks", nil, 401},
		{"/api/state.json?token=wrong", nil, 401},
		{"/api/state.json", []string{"Authorization", "Bearer wrong"}, 401},
		{"/api/state.json", []string{"Authorization", "Basic czNjcmV0"}, 401},
		{"/api/state.json?token=s3cret", nil, 200},
		{"/api/state.json", []string{"Authorization", "Bearer s3cret"}, 200},
		{"/?token=s3cret", nil, 200},
		{"/tasks?list=ready&token=s3cret", nil, 200},
		{"/api/state.json?token=s3cret", []string{"Host", "dash.example.com"}, 200},
		{"/static/style.css", nil, 200},
	} {
		res, body := f.get("GET", c.path, c.header...)
		if res.StatusCode != c.code {
			t.Errorf("GET %s %v = %d, want %d", c.path, c.header, res.StatusCode, c.code)
		}
		if c.code == 401 && (res.Header.Get("WWW-Authenticate") == "" || !strings.Contains(body, "token")) {
			t.Errorf("GET %s: a 401 must say how to send the token: %q", c.path, body)
		}
	}
	// The page's links carry the token on to /tasks and the JSON.
	if _, body := f.get("GET", "/?token=s3cret"); !strings.Contains(body, "tasks?list=all&amp;token=s3cret") {
		t.Error("the page's links drop the token")
	}

	open := newFixture(t, dashboard.Options{}, sample()...)
	for host, code := range map[string]int{"localhost:7777": 200, "127.0.0.1:7777": 200, "[::1]:7777": 200, "dash.localhost": 200, "evil.example:7777": 403, "10.0.0.1:7777": 403} {
		res, _ := open.get("GET", "/api/state.json", "Host", host)
		if res.StatusCode != code {
			t.Errorf("no token, Host %s: %d, want %d", host, res.StatusCode, code)
		}
	}
}

func TestCheckAddr(t *testing.T) {
	for _, c := range []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:7777", "", true},
		{"localhost:0", "", true},
		{"[::1]:7777", "", true},
		{"0.0.0.0:7777", "", false},
		{":7777", "", false},
		{"192.168.1.2:7777", "", false},
		{"example.com:80", "", false},
		{"0.0.0.0:7777", "t", true},
		{":7777", "t", true},
		{"7777", "", false},
		{"7777", "t", false},
	} {
		err := dashboard.CheckAddr(c.addr, c.token)
		if (err == nil) != c.ok {
			t.Errorf("CheckAddr(%q, %q) = %v, want ok=%v", c.addr, c.token, err, c.ok)
		}
		var ce *coord.Error
		if err != nil && (!errors.As(err, &ce) || ce.Code != coord.CodeUsage) {
			t.Errorf("CheckAddr(%q): %v is not a usage error (exit 1)", c.addr, err)
		}
	}
}

// openEvents opens srv's event stream for the test (closed with ctx or
// at the end), checks it is one, and returns its frames as events reads
// them.
func openEvents(t *testing.T, ctx context.Context, srv *httptest.Server) <-chan map[string]string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/events", nil)
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET /events = %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	frames := make(chan map[string]string, 64)
	go events(t, res.Body, frames)
	return frames
}

// events reads the server-sent events of one stream until it ends: each
// panels event as its panels by element id, plus "live" ("true" or
// "false") and "why" (why it is not live); ping events are skipped.
func events(t *testing.T, body io.Reader, out chan<- map[string]string) {
	defer close(out)
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	event := ""
	for sc.Scan() {
		if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			event = name
			continue
		}
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if event != "panels" {
			if event != "ping" {
				t.Errorf("an event of unknown type %q", event)
			}
			continue
		}
		var fr struct {
			Seq    uint64            `json:"seq"`
			Live   bool              `json:"live"`
			Why    string            `json:"why"`
			Panels map[string]string `json:"panels"`
		}
		if err := json.Unmarshal([]byte(line), &fr); err != nil {
			t.Errorf("an event that is not a frame: %v: %q", err, clip(line))
			return
		}
		if fr.Panels == nil {
			fr.Panels = map[string]string{}
		}
		fr.Panels["live"] = fmt.Sprint(fr.Live)
		fr.Panels["why"] = fr.Why
		out <- fr.Panels
	}
}

// waitFrame reads frames until one satisfies ok, or fails after bound.
func waitFrame(t *testing.T, frames <-chan map[string]string, what string, ok func(map[string]string) bool) {
	t.Helper()
	timer := time.NewTimer(bound)
	defer timer.Stop()
	for {
		select {
		case p, open := <-frames:
			if !open {
				t.Fatalf("the event stream ended before %s", what)
			}
			if ok(p) {
				return
			}
		case <-timer.C:
			t.Fatalf("no event showed %s within %s", what, bound)
		}
	}
}

// An SSE stream starts with every panel and then carries a claim made
// after it opened: the change notification (app.Reader.Until) reaches
// the client without a reload.
func TestEventsAfterClaim(t *testing.T) {
	f := newFixture(t, dashboard.Options{}, sample()...)
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	frames := openEvents(t, ctx, f.srv)
	waitFrame(t, frames, "every panel first", func(p map[string]string) bool {
		for _, id := range []string{"p-summary", "p-alerts", "p-agents", "p-thru", "p-queue", "p-blocked", "p-review", "p-conflicts", "p-locks", "p-log"} {
			if _, ok := p[id]; !ok {
				t.Fatalf("the first event lacks %s", id)
			}
		}
		return true
	})
	f.claim("dora", "1.3")
	waitFrame(t, frames, "dora's claim of 1.3", func(p map[string]string) bool {
		a := p["p-agents"]
		return strings.Contains(a, "dora") && strings.Contains(a, "1.3")
	})
}

// A browser that opens the event stream and never reads it does not slow
// anything: the builder keeps publishing (each client holds one snapshot
// at most) and other clients keep getting events.
func TestHungClientDoesNotBlock(t *testing.T) {
	f := newFixture(t, dashboard.Options{}, sample()...)
	host := strings.TrimPrefix(f.srv.URL, "http://")
	for i := 0; i < 4; i++ { // hung: they ask and never read
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /events HTTP/1.1\r\nHost: %s\r\n\r\n", host)
	}
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	frames := openEvents(t, ctx, f.srv)
	// Many changes, each published while the hung clients hold theirs.
	ids := []string{"1.1", "1.3", "1.5"}
	for i, id := range ids {
		f.claim(fmt.Sprintf("agent%d", i), id)
		built := make(chan error, 1)
		go func() { built <- f.d.Build(f.ctx) }()
		select {
		case err := <-built:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(bound):
			t.Fatal("building a snapshot waited on a hung client")
		}
	}
	waitFrame(t, frames, "the last claim", func(p map[string]string) bool {
		return strings.Contains(p["p-agents"], "agent2")
	})
}

// The dashboard writes nothing: serving every route, the event stream and
// the doctor check leave the coordination tree as it was, byte for byte
// (the flock sidecars aside: see treeSum).
func TestWritesNothing(t *testing.T) {
	f := newFixture(t, dashboard.Options{DoctorEvery: 10 * time.Millisecond}, sample()...)
	f.claim("alice", "1.1")
	before := treeSum(t, f.dir)
	for _, p := range []string{"/", "/api/state.json", "/tasks?list=all", "/tasks?list=ready", "/static/app.js"} {
		if res, _ := f.get("GET", p); res.StatusCode != 200 {
			t.Fatalf("GET %s = %d", p, res.StatusCode)
		}
	}
	// Let the builder and doctor run a few rounds.
	backendtest.Wait(t, "the doctor check", func() bool {
		_, body := f.get("GET", "/api/state.json")
		return strings.Contains(body, `"checked_at":"`)
	})
	if after := treeSum(t, f.dir); after != before {
		t.Fatalf("the coordination tree changed while the dashboard served it:\n%s\n---\n%s", before, after)
	}
}

// treeSum lists every file of dir with a hash of its content, but for
// the flock sidecars in .lock/: the doctor check takes the registry lock
// (to compare the registry with the lock files under it) and, as every
// holder does, writes who it is into the sidecar for --lock-diagnose.
// That is the lock's bookkeeping, not the project's state.
func treeSum(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".lock" {
				return filepath.SkipDir
			}
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(&b, "%s %x\n", rel, sha256.Sum256(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Size: the page shows the first rows of each list with its count and a
// link to /tasks, which pages through the rest 200 at a time.
func TestLargeProjectIsSummarised(t *testing.T) {
	tasks := make([]*coord.Task, 450)
	for i := range tasks {
		tasks[i] = &coord.Task{ID: fmt.Sprintf("t%03d", i), Title: fmt.Sprintf("task %d", i)}
	}
	f := newFixture(t, dashboard.Options{Rows: 10}, tasks...)
	_, page := f.get("GET", "/")
	if n := strings.Count(page, `<span class="tid">t`); n != 10 {
		t.Errorf("the page lists %d tasks, want the first 10 rows of the ready queue", n)
	}
	if !strings.Contains(page, "all 450 ready tasks") || !strings.Contains(page, `href="tasks?list=ready"`) {
		t.Error("the page does not link to the whole ready list")
	}
	for _, c := range []struct {
		page, rows  int
		first, last string
		next        bool
	}{
		{1, 200, "t000", "t199", true},
		{2, 200, "t200", "t399", true},
		{3, 50, "t400", "t449", false},
	} {
		_, body := f.get("GET", fmt.Sprintf("/tasks?list=ready&page=%d", c.page))
		rows := strings.Count(body, `<td class="tid">`)
		next := strings.Contains(body, fmt.Sprintf("page=%d", c.page+1))
		if rows != c.rows || !strings.Contains(body, ">"+c.first+"<") || !strings.Contains(body, ">"+c.last+"<") || next != c.next {
			t.Errorf("page %d: %d rows (want %d, %s to %s), next link %v (want %v)", c.page, rows, c.rows, c.first, c.last, next, c.next)
		}
	}
}

// stateOf is /api/state.json decoded.
func (f *fixture) stateOf() map[string]json.RawMessage {
	f.t.Helper()
	res, body := f.get("GET", "/api/state.json")
	var st map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &st); res.StatusCode != 200 || err != nil {
		f.t.Fatalf("GET /api/state.json = %d: %v", res.StatusCode, err)
	}
	return st
}

// Throughput counts what is finished: done tasks (approved, with the
// review gate on), never the tasks released into review, which a reviewer
// may still reject; it counts those apart, and the page says what done
// means under the project's review gate.
func TestThroughputCountsDone(t *testing.T) {
	f := newFixtureConfig(t, dashboard.Options{}, `"review_gate": true`, sample()...)
	for _, id := range []string{"1.3", "1.5", "1.1"} {
		task := f.claim("bob", id)
		if _, err := f.s.Release(f.ctx, app.TaskRef{Agent: coord.Agent{ID: "bob"}, TaskID: id, Epoch: task.Epoch}, "finished"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.s.Approve(f.ctx, app.ApproveRequest{Agent: "carol", TaskID: "1.3"}); err != nil {
		t.Fatal(err)
	}
	if err := f.d.Build(f.ctx); err != nil {
		t.Fatal(err)
	}
	var th coord.Throughput
	if err := json.Unmarshal(f.stateOf()["throughput"], &th); err != nil {
		t.Fatal(err)
	}
	if th.Done != 1 || th.Review != 2 || th.PerHour[len(th.PerHour)-1] != 1 {
		t.Errorf("throughput done %d, review %d, last hour %v; want 1 done (approved), 2 in review", th.Done, th.Review, th.PerHour[len(th.PerHour)-1])
	}
	_, page := f.get("GET", "/")
	thru := page[strings.Index(page, `id="p-thru"`):]
	for _, want := range []string{"<dt>done last 24 h</dt><dd>1</dd>", "Done means approved by a reviewer (the review gate is on)", "2 tasks released in this window wait in review and are not counted"} {
		if !strings.Contains(thru, want) {
			t.Errorf("the throughput panel lacks %q:\n%s", want, clip(thru))
		}
	}

	// the gate off: done means released
	g := newFixture(t, dashboard.Options{}, sample()...)
	task := g.claim("bob", "1.3")
	if _, err := g.s.Release(g.ctx, app.TaskRef{Agent: coord.Agent{ID: "bob"}, TaskID: "1.3", Epoch: task.Epoch}, "finished"); err != nil {
		t.Fatal(err)
	}
	if err := g.d.Build(g.ctx); err != nil {
		t.Fatal(err)
	}
	if _, page := g.get("GET", "/"); !strings.Contains(page, "<dt>done last 24 h</dt><dd>1</dd>") || !strings.Contains(page, "Done means released by its agent (the review gate is off).") {
		t.Errorf("gate off: the throughput panel does not count the released task as done, or does not say what done means")
	}
}

// An agent is stale after the project's stale_after, as the sweep judges
// it, read again at every build: a dashboard left running follows a
// change of config.json without a restart, and says which timeout it
// judges by. --timeout (Options.Timeout) overrides it, and says so.
func TestStaleAfterFollowsProject(t *testing.T) {
	f := newFixtureConfig(t, dashboard.Options{}, `"stale_after": "15m"`, sample()...)
	f.claim("erin", "1.3")
	old := time.Now().Add(-5 * time.Minute)
	if err := os.Chtimes(filepath.Join(f.dir, "heartbeat", "erin.beat"), old, old); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	frames := openEvents(t, ctx, f.srv)
	waitFrame(t, frames, "erin alive under stale_after 15m", func(p map[string]string) bool {
		if strings.Contains(p["p-agents"], "erin") && strings.Contains(p["p-alerts"], "No alerts") {
			if !strings.Contains(p["p-agents"], "stale after 15m (the project&#39;s stale_after)") {
				t.Error("the agents panel does not say it judges by the project's stale_after (15m)")
			}
			return true
		}
		return false
	})
	if err := os.WriteFile(filepath.Join(f.dir, "config.json"), []byte(`{"stale_after": "2m"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFrame(t, frames, "erin stale under the new stale_after 2m", func(p map[string]string) bool {
		return strings.Contains(p["p-alerts"], "agent erin is stale") && strings.Contains(p["p-agents"], "stale after 2m (the project&#39;s stale_after)")
	})
	var after int64
	if err := json.Unmarshal(f.stateOf()["stale_after_seconds"], &after); err != nil || after != 120 {
		t.Errorf("state.json stale_after_seconds %d (%v), want 120", after, err)
	}

	own := newFixtureConfig(t, dashboard.Options{Timeout: time.Hour}, `"stale_after": "2m"`, sample()...)
	own.claim("erin", "1.3")
	if err := os.Chtimes(filepath.Join(own.dir, "heartbeat", "erin.beat"), old, old); err != nil {
		t.Fatal(err)
	}
	if err := own.d.Build(own.ctx); err != nil {
		t.Fatal(err)
	}
	_, page := own.get("GET", "/")
	if strings.Contains(page, "agent erin is stale") || !strings.Contains(page, "stale after 1h 00m (this dashboard&#39;s --timeout)") {
		t.Errorf("with --timeout 1h: erin judged stale, or the page does not name the dashboard's timeout")
	}
}
