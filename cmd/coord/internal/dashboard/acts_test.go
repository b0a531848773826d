package dashboard_test

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotd/coordination/cmd/coord/internal/dashboard"
	"github.com/rotd/coordination/cmd/coord/internal/dashboard/dashboardtest"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend/backendtest"
)

// The page's writes (docs/COMMANDS.md#supervising), over HTTP: what protects them
// (RELIABILITY: "dashboard write path"), what they do, and the task page.

const token = "s3cret-token"

// newActsFixture is newFixtureConfig with the page's actions wired to
// the project's app.Supervisor when acts is set, and seed (JSON Lines,
// another tool's fields kept) seeded before the tasks.
func newActsFixture(t *testing.T, opt dashboard.Options, acts bool, config, seed string, tasks ...*coord.Task) *fixture {
	t.Helper()
	if config != "" {
		config = "{" + config + "}\n"
	}
	p := backendtest.NewProject(t, backendtest.Options{Config: config, Seed: seed, Tasks: tasks})
	d := dashboardtest.Serve(t, dashboardtest.Options(opt, p.Service, acts))
	return &fixture{t: t, ctx: d.Ctx, s: p.Service, dir: filepath.Join(p.Root, coord.TreeDir), d: d.Server, srv: d.HTTP}
}

// post sends one write: path, a body, and header pairs (Host and Cookie
// included); it returns the status and the body.
func (f *fixture) post(method, path, body string, header ...string) (*http.Response, string) {
	f.t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Add(header[i], header[i+1])
	}
	res, err := f.srv.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// origin is the dashboard's own origin as a browser names it.
func (f *fixture) origin() string { return f.srv.URL }

func (f *fixture) logText() string {
	f.t.Helper()
	var b strings.Builder
	if _, err := f.s.LogRead(f.ctx, 0, func(l string) error { b.WriteString(l + "\n"); return nil }); err != nil {
		f.t.Fatal(err)
	}
	return b.String()
}

// TestWriteRefused: every way a write can be refused, each before it
// reaches the project: no token, a token in the query string or a
// cookie (never read for a write), a wrong token, a foreign or null
// Origin, a body that is not JSON (what a form or a no-preflight fetch
// can send), bad JSON, an oversized body, an unknown action, a bad id.
// None changes the tree or writes a log line.
func TestWriteRefused(t *testing.T) {
	f := newActsFixture(t, dashboard.Options{Token: token, User: "pat"}, true, "", "", sample()...)
	f.claim("alice", "1.1")
	before := treeSum(t, f.dir)
	auth := "Bearer " + token
	const js = "application/json"
	path := "/api/tasks/1.1/requeue"
	body := `{"reason":"stuck"}`
	for _, c := range []struct {
		name, method, path, body string
		header                   []string
		code                     int
		has                      string
	}{
		{"no token", "POST", path, body, []string{"Content-Type", js}, 401, "Authorization: Bearer"},
		{"query token", "POST", path + "?token=" + token, body, []string{"Content-Type", js}, 401, "never a cookie or ?token="},
		{"cookie token", "POST", path, body, []string{"Content-Type", js, "Cookie", "token=" + token}, 401, ""},
		{"cookie named Authorization", "POST", path, body, []string{"Content-Type", js, "Cookie", "Authorization=Bearer " + token}, 401, ""},
		{"wrong token", "POST", path, body, []string{"Content-Type", js, "Authorization", "Bearer nope"}, 401, ""},
		{"basic auth", "POST", path, body, []string{"Content-Type", js, "Authorization", "Basic czNjcmV0LXRva2Vu"}, 401, ""},
		{"foreign origin", "POST", path, body, []string{"Content-Type", js, "Authorization", auth, "Origin", "http://evil.example"}, 403, "another origin"},
		{"null origin", "POST", path, body, []string{"Content-Type", js, "Authorization", auth, "Origin", "null"}, 403, ""},
		{"other port", "POST", path, body, []string{"Content-Type", js, "Authorization", auth, "Origin", "http://127.0.0.1:1"}, 403, ""},
		{"two origins", "POST", path, body, []string{"Content-Type", js, "Authorization", auth, "Origin", f.origin(), "Origin", "http://evil.example"}, 403, ""},
		{"foreign origin, no token", "POST", path, body, []string{"Content-Type", js, "Origin", "http://evil.example"}, 403, ""},
		{"form", "POST", path, "reason=stuck", []string{"Content-Type", "application/x-www-form-urlencoded", "Authorization", auth}, 415, "JSON"},
		{"text", "POST", path, body, []string{"Content-Type", "text/plain", "Authorization", auth}, 415, ""},
		{"multipart", "POST", path, body, []string{"Content-Type", "multipart/form-data; boundary=x", "Authorization", auth}, 415, ""},
		{"no type", "POST", path, body, []string{"Authorization", auth}, 415, ""},
		{"not JSON", "POST", path, "reason", []string{"Content-Type", js, "Authorization", auth}, 400, "one JSON object"},
		{"unknown field", "POST", path, `{"reason":"x","as":"root"}`, []string{"Content-Type", js, "Authorization", auth}, 400, `unknown field \"as\"`},
		{"two objects", "POST", path, `{"reason":"x"}{"reason":"y"}`, []string{"Content-Type", js, "Authorization", auth}, 400, "trailing data"},
		{"oversized", "POST", path, `{"reason":"` + strings.Repeat("x", 40<<10) + `"}`, []string{"Content-Type", js, "Authorization", auth}, 413, ""},
		{"reason over 4 KiB", "POST", path, `{"reason":"` + strings.Repeat("x", coord.MaxNote+1) + `"}`, []string{"Content-Type", js, "Authorization", auth}, 400, "more than 4096"},
		{"no reason", "POST", path, `{}`, []string{"Content-Type", js, "Authorization", auth}, 400, "requeue needs a reason"},
		{"unknown action", "POST", "/api/tasks/1.1/delete", body, []string{"Content-Type", js, "Authorization", auth}, 404, "no such action"},
		{"bad id", "POST", "/api/tasks/..x/requeue", body, []string{"Content-Type", js, "Authorization", auth}, 400, "invalid task id"},
		{"unknown task", "POST", "/api/tasks/9.9/requeue", body, []string{"Content-Type", js, "Authorization", auth}, 409, `task \"9.9\" not found`},
		{"not held", "POST", "/api/tasks/1.3/requeue", body, []string{"Content-Type", js, "Authorization", auth}, 409, "only a claimed or blocked task"},
		{"GET a write", "GET", path, "", []string{"Authorization", auth}, 405, ""},
		{"preflight", "OPTIONS", path, "", []string{"Origin", "http://evil.example", "Access-Control-Request-Method", "POST"}, 405, ""},
		{"PUT", "PUT", path, body, []string{"Content-Type", js, "Authorization", auth}, 405, ""},
		{"POST the page", "POST", "/", body, []string{"Content-Type", js, "Authorization", auth}, 405, ""},
	} {
		res, got := f.post(c.method, c.path, c.body, c.header...)
		if res.StatusCode != c.code || !strings.Contains(got, c.has) {
			t.Errorf("%s: %d %q, want %d naming %q", c.name, res.StatusCode, clip(got), c.code, c.has)
		}
		if res.Header.Get("Access-Control-Allow-Origin") != "" || res.Header.Get("Access-Control-Allow-Headers") != "" {
			t.Errorf("%s: answered with CORS headers", c.name)
		}
	}
	if after := treeSum(t, f.dir); after != before {
		t.Fatalf("a refused write changed the tree:\n%s\n---\n%s", before, after)
	}
	if strings.Contains(f.logText(), "pat ▶") {
		t.Fatal("a refused write was logged as pat's")
	}
	// The same request, done right: accepted, from the page's own origin
	// or from a script (no Origin).
	res, got := f.post("POST", path, body, "Content-Type", "application/json; charset=utf-8", "Authorization", auth, "Origin", f.origin())
	if res.StatusCode != 200 || !strings.Contains(got, `"message":"requeued 1.1 (taken from alice, epoch 1: its next write is refused)"`) || !strings.Contains(got, `"status":"unclaimed"`) {
		t.Fatalf("the write done right: %d %s", res.StatusCode, got)
	}
	f.claim("bob", "1.1")
	if res, got := f.post("POST", path, body, "Content-Type", js, "Authorization", auth); res.StatusCode != 200 {
		t.Fatalf("a script's write (no Origin): %d %s", res.StatusCode, got)
	}
}

// TestNoTokenNoWrites: without a token (or with one and --read-only: no
// Acts) every POST is 405, whatever it carries, and the page shows no
// button and hands out no token.
func TestNoTokenNoWrites(t *testing.T) {
	for name, f := range map[string]*fixture{
		"no token":  newActsFixture(t, dashboard.Options{}, true, "", "", sample()...),
		"read-only": newActsFixture(t, dashboard.Options{Token: token}, false, "", "", sample()...),
	} {
		f.claim("alice", "1.1")
		before := treeSum(t, f.dir)
		for _, p := range []string{"/api/tasks/1.1/requeue", "/api/tasks/1.1/unblock", "/", "/api/state.json", "/nothing"} {
			res, _ := f.post("POST", p, `{"reason":"x"}`, "Content-Type", "application/json", "Authorization", "Bearer "+token)
			if res.StatusCode != 405 || res.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s: POST %s = %d (Allow %q), want 405", name, p, res.StatusCode, res.Header.Get("Allow"))
			}
		}
		_, page := f.get("GET", "/?token="+token)
		if strings.Contains(page, `class="act"`) || strings.Contains(page, "coord-token") || strings.Contains(page, "acts.js") || !strings.Contains(page, "read-only") {
			t.Errorf("%s: the page offers actions", name)
		}
		if after := treeSum(t, f.dir); after != before {
			t.Errorf("%s: a POST changed the tree", name)
		}
	}
}

// TestLoopbackOnly: a token made for a loopback page (--allow-actions)
// is no use through another host name (DNS rebinding), for reads and
// writes alike.
func TestLoopbackOnly(t *testing.T) {
	f := newActsFixture(t, dashboard.Options{Token: token, LoopbackOnly: true}, true, "", "", sample()...)
	f.claim("alice", "1.1")
	if res, _ := f.get("GET", "/?token="+token, "Host", "evil.example:7777"); res.StatusCode != 403 {
		t.Errorf("a read through another host: %d, want 403", res.StatusCode)
	}
	if res, _ := f.post("POST", "/api/tasks/1.1/requeue", `{"reason":"x"}`, "Content-Type", "application/json", "Authorization", "Bearer "+token, "Host", "evil.example:7777"); res.StatusCode != 403 {
		t.Errorf("a write through another host: %d, want 403", res.StatusCode)
	}
	if res, _ := f.get("GET", "/?token="+token, "Host", "localhost:7777"); res.StatusCode != 200 {
		t.Errorf("a read through localhost: %d, want 200", res.StatusCode)
	}
}

// act posts one action as the page does and decodes the answer.
func (f *fixture) act(id, action, body string) (int, string) {
	f.t.Helper()
	res, got := f.post("POST", "/api/tasks/"+id+"/"+action, body, "Content-Type", "application/json", "Authorization", "Bearer "+token, "Origin", f.origin())
	var a struct {
		Message string `json:"message"`
	}
	json.Unmarshal([]byte(got), &a)
	return res.StatusCode, a.Message
}

// TestActs: each action through HTTP changes the project, is logged
// under the dashboard's user with the reason, and reaches an open event
// stream without a reload; a restricting supervisors list refuses the
// user (403); the page shows the buttons each task's state allows.
func TestActs(t *testing.T) {
	f := newActsFixture(t, dashboard.Options{Token: token, User: "pat"}, true, `"review_gate": true`, "",
		&coord.Task{ID: "1.1", Title: "parser"}, &coord.Task{ID: "1.2", Title: "lexer"}, &coord.Task{ID: "1.3", Title: "docs"},
		&coord.Task{ID: "1.4", Title: "client"}, &coord.Task{ID: "1.5", Title: "tests"}, &coord.Task{ID: "1.6", Title: "bench"})
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	old := f.claim("alice", "1.1")
	blocked := f.claim("carol", "1.2")
	if _, err := f.s.Block(f.ctx, app.TaskRef{Agent: coord.Agent{ID: "carol"}, TaskID: "1.2", Epoch: blocked.Epoch}, "needs the API key"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"1.3", "1.4"} {
		task := f.claim("dora", id)
		if _, err := f.s.Release(f.ctx, app.TaskRef{Agent: coord.Agent{ID: "dora"}, TaskID: id, Epoch: task.Epoch}, "done"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.s.Register(f.ctx, app.RegisterRequest{Agent: "erin"}); err != nil {
		t.Fatal(err)
	}
	if err := f.d.Build(f.ctx); err != nil {
		t.Fatal(err)
	}
	_, page := f.get("GET", "/?token="+token)
	for _, want := range []string{`<meta name="coord-token" content="` + token + `">`, `src="static/acts.js"`, `<dialog id="act"`, "acting as <b>pat</b>",
		`data-act="requeue" data-task="1.1"`, `data-act="assign" data-held="1" data-task="1.1"`, `data-act="unblock" data-task="1.2" data-holder="carol"`, `data-act="cancel" data-task="1.2"`,
		`data-act="approve" data-task="1.3"`, `data-act="reject" data-task="1.4"`, `data-act="assign" data-task="1.5"`, `<option value="erin">`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	frames := openEventsPath(t, ctx, f.srv, "/events?token="+token)
	// A frame carries only the panels that changed, and one act may reach
	// the page in two frames (the builder may run between the registry
	// commit and the log line): judge the page as it stands, every frame
	// so far applied, as the page's script applies them.
	view := map[string]string{}
	shown := func(ok func(map[string]string) bool) func(map[string]string) bool {
		return func(p map[string]string) bool { maps.Copy(view, p); return ok(view) }
	}
	waitFrame(t, frames, "the first frame", shown(func(map[string]string) bool { return true }))

	for _, c := range []struct {
		id, action, body string
		msg, log         string
		frame            func(map[string]string) bool
	}{
		{"1.1", "requeue", `{"reason":"stuck for an hour"}`, "requeued 1.1 (taken from alice, epoch 1: its next write is refused)",
			"pat ▶ requeued task 1.1 from alice (epoch 1): stuck for an hour",
			func(p map[string]string) bool {
				return strings.Contains(p["p-queue"], `data-act="assign" data-task="1.1"`) && strings.Contains(p["p-log"], "requeued task 1.1")
			}},
		{"1.5", "assign", `{"to":"erin","reason":"erin knows it"}`, "assigned 1.5 to erin", "pat ▶ assigned task 1.5 to erin: erin knows it",
			func(p map[string]string) bool { return strings.Contains(p["p-agents"], "1.5") }},
		{"1.2", "unblock", `{"reason":"key sent"}`, "unblocked 1.2 (back in the pool; carol takes it first)", "pat ▶ unblocked task 1.2: back in the pool, carol first: key sent",
			func(p map[string]string) bool { return strings.Contains(p["p-blocked"], "Nothing is blocked") }},
		{"1.3", "approve", `{}`, "approved 1.3 (reviewer pat)", "pat ▶ approved task 1.3 as its human reviewer",
			func(p map[string]string) bool { return strings.Contains(p["p-log"], "approved task 1.3") }},
		{"1.4", "reject", `{"reason":"tests missing"}`, "rejected 1.4 (back to dora)", "pat ▶ rejected task 1.4: tests missing",
			func(p map[string]string) bool { return strings.Contains(p["p-review"], "Nothing waits for review") }},
		{"1.5", "cancel", `{"reason":"not needed"}`, "cancelled 1.5", "pat ▶ cancelled task 1.5 (unclaimed): not needed",
			func(p map[string]string) bool { return strings.Contains(p["p-log"], "cancelled task 1.5") }},
	} {
		code, msg := f.act(c.id, c.action, c.body)
		if code != 200 || msg != c.msg {
			t.Fatalf("%s %s: %d %q, want 200 %q", c.action, c.id, code, msg, c.msg)
		}
		if !strings.Contains(f.logText(), c.log) {
			t.Fatalf("%s %s: the log lacks %q", c.action, c.id, c.log)
		}
		waitFrame(t, frames, c.action+" "+c.id+" on the page", shown(c.frame))
	}
	if _, err := f.s.Release(f.ctx, app.TaskRef{Agent: coord.Agent{ID: "alice"}, TaskID: "1.1", Epoch: old.Epoch}, "done"); coord.CodeOf(err) != coord.CodeLost {
		t.Fatalf("alice's release after the requeue: %v, want lost", err)
	}

	// A supervisors list without the user: refused, 403, nothing written.
	if err := f.s.SetConfigText(f.ctx, "supervisors", `["lead"]`); err != nil {
		t.Fatal(err)
	}
	before := treeSum(t, f.dir)
	res, got := f.post("POST", "/api/tasks/1.6/assign", `{"to":"erin"}`, "Content-Type", "application/json", "Authorization", "Bearer "+token)
	if res.StatusCode != 403 || !strings.Contains(got, `"code":3`) || !strings.Contains(got, "pat may not assign task 1.6") {
		t.Fatalf("a user the supervisors list leaves out: %d %s", res.StatusCode, got)
	}
	if treeSum(t, f.dir) != before {
		t.Fatal("a refused act changed the tree")
	}
}

// openEventsPath is openEvents on another path (one with the token).
func openEventsPath(t *testing.T, ctx context.Context, srv *httptest.Server, path string) <-chan map[string]string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+path, nil)
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	if res.StatusCode != 200 {
		t.Fatalf("GET %s = %d", path, res.StatusCode)
	}
	frames := make(chan map[string]string, 64)
	go events(t, res.Body, frames)
	return frames
}

// TestTaskPage: a task opened shows what a person needs to decide: why it
// waits, what the reviewer last said, its fields (another feature's too),
// its receipts and the log lines that name it (not those of a task whose
// id it prefixes); every text escaped.
func TestTaskPage(t *testing.T) {
	seed := `{"id":"r1","title":"checked <b>task</b>","receipts":[{"tree":"4b825dc","cmd":"go test ./...","exit":0,"seconds":12,"tail":"ok  \u001b[31mall\n<script>x</script>","at":"2026-01-02T03:04:05Z"},{"tree":"4b825dc","cmd":"make lint","exit":2,"seconds":1,"tail":"lint failed","at":"2026-01-02T03:05:05Z"}],"predicted_files":["src/parse.go"]}` + "\n"
	f := newActsFixture(t, dashboard.Options{Token: token}, true, `"review_gate": true, "max_rejections": 5`, seed,
		&coord.Task{ID: "w1", Title: "waits", Deps: []string{"r1"}, Description: "line one\n<img src=x onerror=alert(1)>"},
		&coord.Task{ID: "w11", Title: "prefix"})
	task := f.claim("dora", "r1")
	ref := app.TaskRef{Agent: coord.Agent{ID: "dora"}, TaskID: "r1", Epoch: task.Epoch}
	f.s.Release(f.ctx, ref, "first")
	if _, err := f.s.Reject(f.ctx, "rev", "r1", `handle "><img src=x onerror=alert(2)>`); err != nil {
		t.Fatal(err)
	}
	f.claim("erin", "w11")
	if err := f.d.Build(f.ctx); err != nil {
		t.Fatal(err)
	}
	res, page := f.get("GET", "/task?id=r1&token="+token)
	if res.StatusCode != 200 {
		t.Fatalf("GET /task?id=r1 = %d", res.StatusCode)
	}
	for _, want := range []string{"checked &lt;b&gt;task&lt;/b&gt;", "reviewer said (1 rejected since the claim): handle &#34;&gt;&lt;img src=x onerror=alert(2)&gt;",
		"go test ./...", "exit 0", "tree 4b825dc · seconds 12 · at 2026-01-02T03:04:05Z", "&lt;script&gt;x&lt;/script&gt;", "exit 2", "lint failed",
		"predicted files", "src/parse.go", "claimed task r1 (epoch 1)", "rejected task r1", `data-act="requeue" data-task="r1"`, `<meta name="coord-token"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the task page lacks %q", want)
		}
	}
	if strings.Index(page, "make lint") > strings.Index(page, "go test ./...") {
		t.Error("receipts are not newest first")
	}
	if strings.Contains(page, "<img src=x") || strings.Contains(page, "<script>x") || strings.Contains(page, "\x1b") || strings.Contains(page, "w11") {
		t.Error("the task page shows raw markup, a control character or another task's lines")
	}
	_, page = f.get("GET", "/task?id=w1&token="+token)
	for _, want := range []string{"waits: dependency r1 is not done", "depends on", "r1 (claimed)", "task?id=r1&amp;token=", "line one", "&lt;img src=x onerror=alert(1)&gt;", `data-act="assign" data-task="w1"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the task page of w1 lacks %q", want)
		}
	}
	for path, code := range map[string]int{"/task?id=nope&token=" + token: 404, "/task?id=..&token=" + token: 400, "/task?id=r1": 401} {
		if res, _ := f.get("GET", path); res.StatusCode != code {
			t.Errorf("GET %s = %d, want %d", path, res.StatusCode, code)
		}
	}
}
