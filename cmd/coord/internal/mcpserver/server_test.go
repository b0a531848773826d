package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rotd/coordination/cmd/coord/internal/workspace"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend"
	"github.com/rotd/coordination/registry/backend/backendtest"
)

// TestToolsListDefault: the default set is exactly the contract's nine
// tools, each described in one or two short sentences, and the whole
// tools/list answer on the wire stays under 6,000 bytes.
func TestToolsListDefault(t *testing.T) {
	p := seeded(t, "")
	s := connect(t, Options{Service: p.Service, Agent: agentAt("a")}, nil)
	s.wire.take() // the handshake
	res, err := s.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := s.wire.take()
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if sentences := strings.Count(tool.Description, ". ") + 1; sentences > 2 || len(tool.Description) > 160 {
			t.Errorf("tool %s: description %q is longer than two short sentences", tool.Name, tool.Description)
		}
		if tool.OutputSchema != nil {
			t.Errorf("tool %s publishes an output schema (bytes every agent reads)", tool.Name)
		}
	}
	if !slices.Equal(sortedCopy(names), sortedCopy(DefaultTools)) {
		t.Fatalf("tools %v, want %v", names, DefaultTools)
	}
	t.Logf("tools/list answer: %d bytes on the wire (%d tools)", n, len(names))
	if n >= 6000 {
		t.Fatalf("tools/list answer is %d bytes, the contract allows under 6,000", n)
	}
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// TestToolsListAll: --tools all adds exactly the contract's six.
func TestToolsListAll(t *testing.T) {
	p := seeded(t, "")
	s := connect(t, Options{Service: p.Service, Agent: agentAt("a"), All: true}, nil)
	res, err := s.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	want := append(slices.Clone(DefaultTools), MoreTools...)
	if !slices.Equal(sortedCopy(names), sortedCopy(want)) {
		t.Fatalf("tools %v, want %v", names, want)
	}
}

// TestPrimePrompt: prime is offered as a prompt carrying the prime text.
func TestPrimePrompt(t *testing.T) {
	p := seeded(t, "")
	s := connect(t, Options{Service: p.Service, Agent: agentAt("a"), Prime: "how to use coord"}, nil)
	ctx := context.Background()
	list, err := s.cs.ListPrompts(ctx, nil)
	if err != nil || len(list.Prompts) != 1 || list.Prompts[0].Name != "prime" {
		t.Fatalf("prompts %+v, %v", list, err)
	}
	got, err := s.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "prime"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 1 || got.Messages[0].Content.(*mcp.TextContent).Text != "how to use coord" {
		t.Fatalf("prime prompt %+v", got.Messages)
	}
}

// TestCycle: claim, progress, block, release through the tools; each
// result is the task exactly as the registry holds it (what the CLI's
// --json prints), and the text content is the same JSON.
func TestCycle(t *testing.T) {
	p := seeded(t, `{"id":"4.1","title":"first","priority":"high","x_custom":{"kept":true}}`+"\n"+`{"id":"4.2","title":"second"}`)
	s := connect(t, Options{Service: p.Service, Agent: agentAt("a")}, nil)

	got := s.call(t, "claim", nil).ok(t)
	jsonEqual(t, string(got.raw), p.registryTask(t, "4.1"))
	jsonEqual(t, got.text, string(got.raw))
	var claimed struct {
		ID, Status, ClaimedBy string
		Epoch                 int64
		XCustom               map[string]bool `json:"x_custom"`
	}
	got.decode(t, &claimed)
	if claimed.ID != "4.1" || claimed.Epoch != 1 || !claimed.XCustom["kept"] {
		t.Fatalf("claimed %+v (unknown registry fields must be kept)", claimed)
	}

	got = s.call(t, "progress", map[string]any{"task": "4.1", "percent": 40, "note": "half"}).ok(t)
	jsonEqual(t, string(got.raw), p.registryTask(t, "4.1"))

	got = s.call(t, "block", map[string]any{"task": "4.1", "reason": "needs a decision"}).ok(t)
	jsonEqual(t, string(got.raw), p.registryTask(t, "4.1"))

	got = s.call(t, "claim", map[string]any{"task": "4.2"}).ok(t)
	jsonEqual(t, string(got.raw), p.registryTask(t, "4.2"))
	got = s.call(t, "release", map[string]any{"task": "4.2"}).ok(t)
	jsonEqual(t, string(got.raw), p.registryTask(t, "4.2"))
	var rel struct{ Status string }
	got.decode(t, &rel)
	if rel.Status != "done" {
		t.Fatalf("released task is %s", rel.Status)
	}
	got = s.call(t, "claim", nil).ok(t)
	jsonEqual(t, string(got.raw), `{"status":"no_eligible_task"}`)
}

// TestClaimDrained: the claim tool answers as `coord claim` does when it
// gets no task: no_eligible_task while work remains (here a task still
// held), drained once no work is left at all.
func TestClaimDrained(t *testing.T) {
	p := seeded(t, `{"id":"only"}`)
	s := connect(t, Options{Service: p.Service, Agent: agentAt("a")}, nil)
	s.call(t, "claim", nil).ok(t)
	got := s.call(t, "claim", nil).ok(t)
	jsonEqual(t, string(got.raw), `{"status":"no_eligible_task"}`)
	jsonEqual(t, got.text, string(got.raw))
	s.call(t, "release", map[string]any{"task": "only", "summary": "finished"}).ok(t)
	got = s.call(t, "claim", nil).ok(t)
	jsonEqual(t, string(got.raw), `{"status":"drained"}`)
	jsonEqual(t, got.text, string(got.raw))
}

// TestStatusReadyLog: the read-only default tools.
func TestStatusReadyLog(t *testing.T) {
	p := seeded(t, `{"id":"a"}`+"\n"+`{"id":"b","deps":["a"]}`+"\n"+`{"id":"c","priority":"urgent"}`)
	s := connect(t, Options{Service: p.Service, Agent: agentAt("me")}, nil)

	var st app.StatusJSON
	s.call(t, "status", nil).ok(t).decode(t, &st)
	if st.Agent != "me" || len(st.Holding) != 0 || st.Counts["unclaimed"] != 3 || st.Drained {
		t.Fatalf("status %+v", st)
	}
	s.call(t, "claim", map[string]any{"task": "a"}).ok(t)
	s.call(t, "files", map[string]any{"lock": []string{"docs"}}).ok(t)
	got := s.call(t, "status", nil).ok(t)
	got.decode(t, &st)
	if len(st.Holding) != 1 || st.Counts["claimed"] != 1 || len(st.Locks) != 1 || st.Locks[0].Path != "docs" {
		t.Fatalf("status %s", got.raw)
	}
	jsonEqual(t, string(st.Holding[0]), p.registryTask(t, "a"))

	ready := s.call(t, "ready", map[string]any{"explain": true}).ok(t)
	jsonEqual(t, string(ready.raw), `{"ready":[{"id":"c","priority":"urgent"}],"not_ready":[{"id":"a","priority":"medium","reason":"status is claimed"},{"id":"b","priority":"medium","reason":"dependency a is not done"}]}`)

	// limit cuts each list and says how many rows it left out; 0 is
	// every row; a negative limit is a usage error
	ready = s.call(t, "ready", map[string]any{"explain": true, "limit": 1}).ok(t)
	jsonEqual(t, string(ready.raw), `{"ready":[{"id":"c","priority":"urgent"}],"not_ready":[{"id":"a","priority":"medium","reason":"status is claimed"}],"not_ready_more":1}`)
	ready = s.call(t, "ready", map[string]any{"explain": true, "limit": 0}).ok(t)
	jsonEqual(t, string(ready.raw), `{"ready":[{"id":"c","priority":"urgent"}],"not_ready":[{"id":"a","priority":"medium","reason":"status is claimed"},{"id":"b","priority":"medium","reason":"dependency a is not done"}]}`)
	if ref := s.call(t, "ready", map[string]any{"limit": -1}).refusal(t); ref.Code != 1 {
		t.Fatalf("limit -1: refusal %+v", ref)
	}

	s.call(t, "log", map[string]any{"msg": "hello from me"}).ok(t)
	var lg struct {
		Log []coord.LogEntry `json:"log"`
	}
	s.call(t, "log", map[string]any{"lines": 2}).ok(t).decode(t, &lg)
	if len(lg.Log) != 2 || !strings.Contains(lg.Log[1].Message, "hello from me") || lg.Log[1].AgentID != "me" {
		t.Fatalf("log %+v", lg.Log)
	}
	// 0 means all, as coord log -n 0 does; absent means the default.
	var all, def struct {
		Log []coord.LogEntry `json:"log"`
	}
	s.call(t, "log", map[string]any{"lines": 0}).ok(t).decode(t, &all)
	s.call(t, "log", map[string]any{}).ok(t).decode(t, &def)
	if len(all.Log) <= 2 || len(def.Log) != min(len(all.Log), app.DefaultLogLines) {
		t.Fatalf("log lines 0: %d lines, absent: %d", len(all.Log), len(def.Log))
	}
}

// TestFiles: lock (all or nothing, paths relative to the session's
// working directory), list, unlock; another session's lock is a conflict
// naming the holder.
func TestFiles(t *testing.T) {
	p := seeded(t, "")
	sub := filepath.Join(p.Root, "src")
	os.MkdirAll(sub, 0o755)
	a := connect(t, Options{Service: p.Service, Agent: agentAt("a"), Paths: workspace.NewPaths(p.Root, sub)}, nil)
	b := connect(t, Options{Service: p.Service, Agent: agentAt("b"), Paths: workspace.NewPaths(p.Root, p.Root)}, nil)

	jsonEqual(t, string(a.call(t, "files", map[string]any{"lock": []string{"x.go", filepath.Join(p.Root, "README.md")}}).ok(t).raw),
		`{"locked":["src/x.go","README.md"],"holder":"a"}`)
	ref := b.call(t, "files", map[string]any{"lock": []string{"src"}}).refusal(t)
	if ref.Code != 3 || ref.Name != "conflict" || ref.Holder != "a" {
		t.Fatalf("refusal %+v", ref)
	}
	// a ttl goes with lock only; two actions in one call are refused
	for _, args := range []map[string]any{{"ttl": "5m"}, {"unlock": []string{"x.go"}, "ttl": "5m"}, {"write": []string{"x.go"}, "ttl": "5m"},
		{"lock": []string{"y.go"}, "unlock": []string{"x.go"}}} {
		if ref := a.call(t, "files", args).refusal(t); ref.Code != 1 {
			t.Fatalf("files %v: refusal %+v, want usage", args, ref)
		}
	}
	var list struct{ Locks []coord.PathLock }
	b.call(t, "files", nil).ok(t).decode(t, &list)
	if len(list.Locks) != 2 || list.Locks[0].Path != "README.md" || list.Locks[1].Holder != "a" {
		t.Fatalf("locks %+v", list.Locks)
	}
	jsonEqual(t, string(a.call(t, "files", map[string]any{"unlock": []string{"x.go"}}).ok(t).raw), `{"unlocked":["src/x.go"]}`)
	if ref := a.call(t, "files", map[string]any{"lock": []string{"../../outside"}}).refusal(t); ref.Code != 1 {
		t.Fatalf("a path outside the project: %+v", ref)
	}
	if ref := a.call(t, "files", map[string]any{"lock": []string{"x"}, "unlock": []string{"y"}}).refusal(t); ref.Code != 1 {
		t.Fatalf("lock and unlock at once: %+v", ref)
	}
}

// TestFilesWrite: files write claims paths for the caller's task at
// once, all or nothing (what the edit hooks do before a write), a path
// another task wrote is refused with code 3 naming its agent, and the
// listing shows the write claims in force.
func TestFilesWrite(t *testing.T) {
	p := seeded(t, tasks(2))
	a := connect(t, Options{Service: p.Service, Agent: agentAt("a"), Paths: workspace.NewPaths(p.Root, p.Root)}, nil)
	b := connect(t, Options{Service: p.Service, Agent: agentAt("b"), Paths: workspace.NewPaths(p.Root, p.Root)}, nil)
	a.call(t, "claim", map[string]any{"task": "t1"}).ok(t)
	b.call(t, "claim", map[string]any{"task": "t2"}).ok(t)
	jsonEqual(t, string(a.call(t, "files", map[string]any{"write": []string{"go.mod", "src/x.go"}}).ok(t).raw),
		`{"task":"t1","claimed":["go.mod","src/x.go"],"warnings":[]}`)
	jsonEqual(t, string(a.call(t, "files", map[string]any{"write": []string{"go.mod"}}).ok(t).raw),
		`{"task":"t1","claimed":[],"warnings":[]}`)
	ref := b.call(t, "files", map[string]any{"write": []string{"README.md", "go.mod"}}).refusal(t)
	if ref.Code != 3 || ref.Holder != "a" || !strings.Contains(ref.Message, "go.mod (write-claimed by task t1 (a, claimed))") {
		t.Fatalf("refusal %+v", ref)
	}
	var list struct {
		Locks  []coord.PathLock
		Claims []coord.WriteClaimRow
	}
	b.call(t, "files", nil).ok(t).decode(t, &list)
	want := []coord.WriteClaimRow{{Path: "go.mod", TaskID: "t1", Holder: "a", Status: coord.Claimed}, {Path: "src/x.go", TaskID: "t1", Holder: "a", Status: coord.Claimed}}
	if !slices.Equal(list.Claims, want) {
		t.Fatalf("claims %+v (README.md of the refused write must not be there)", list.Claims)
	}
	if ref := a.call(t, "files", map[string]any{"write": []string{"x"}, "lock": []string{"y"}}).refusal(t); ref.Code != 1 {
		t.Fatalf("write and lock at once: %+v", ref)
	}
}

// TestFilesThroughSymlink: a symlinked folder names its target's files
// (docs/COMMANDS.md, paths): a lock through the link is the target's, and another
// session's lock through either spelling is a conflict.
func TestFilesThroughSymlink(t *testing.T) {
	p := seeded(t, "")
	os.MkdirAll(filepath.Join(p.Root, "src"), 0o755)
	if err := os.Symlink("src", filepath.Join(p.Root, "link")); err != nil {
		t.Fatal(err)
	}
	a := connect(t, Options{Service: p.Service, Agent: agentAt("a"), Paths: workspace.NewPaths(p.Root, p.Root)}, nil)
	b := connect(t, Options{Service: p.Service, Agent: agentAt("b"), Paths: workspace.NewPaths(p.Root, filepath.Join(p.Root, "link"))}, nil)
	jsonEqual(t, string(a.call(t, "files", map[string]any{"lock": []string{"link/x.go"}}).ok(t).raw),
		`{"locked":["src/x.go"],"holder":"a"}`)
	for _, path := range []string{"x.go", filepath.Join(p.Root, "link", "x.go"), "../src/x.go"} {
		if ref := b.call(t, "files", map[string]any{"lock": []string{path}}).refusal(t); ref.Code != 3 || ref.Holder != "a" {
			t.Fatalf("lock %s: %+v; want a conflict with a", path, ref)
		}
	}
}

// TestRefusals: every exit code coord produces comes back as a tool error
// whose structured content is {code, name, message} (and holder).
func TestRefusals(t *testing.T) {
	p := seeded(t, tasks(2), func(o *backend.Options) { o.LockWait = 300 * time.Millisecond })
	a := connect(t, Options{Service: p.Service, Agent: agentAt("a")}, nil)
	b := connect(t, Options{Service: p.Service, Agent: agentAt("b")}, nil)
	a.call(t, "claim", map[string]any{"task": "t1"}).ok(t)

	check := func(what string, r result, code int, name, holder string) {
		t.Helper()
		ref := r.refusal(t)
		if ref.Code != code || ref.Name != name || ref.Holder != holder || ref.Message == "" {
			t.Errorf("%s: refusal %+v, want code %d %s holder %q", what, ref, code, name, holder)
		}
		jsonEqual(t, r.text, string(r.raw))
	}
	check("bad task id", b.call(t, "claim", map[string]any{"task": "../../etc/passwd"}), 1, "usage", "")
	check("missing required argument", b.call(t, "progress", map[string]any{"task": "t1"}), 1, "usage", "")
	check("unknown argument", b.call(t, "claim", map[string]any{"bogus": 1}), 1, "usage", "")
	check("bad timeout", b.call(t, "wait", map[string]any{"timeout": "soon"}), 1, "usage", "")
	check("claim held by another", b.call(t, "claim", map[string]any{"task": "t1"}), 3, "conflict", "a")
	check("release by a non-holder", b.call(t, "release", map[string]any{"task": "t1"}), 6, "lost", "a")
	check("progress out of range", a.call(t, "progress", map[string]any{"task": "t1", "percent": 101}), 1, "usage", "")

	// 1: text over its bound, and nothing written: the task
	// stays as it was and the log gets no line.
	long := strings.Repeat("r", coord.MaxNote+1)
	before, lines := p.registryTask(t, "t1"), logLines(t, p)
	check("block reason over the bound", a.call(t, "block", map[string]any{"task": "t1", "reason": long}), 1, "usage", "")
	check("release summary over the bound", a.call(t, "release", map[string]any{"task": "t1", "summary": long}), 1, "usage", "")
	check("progress note over the bound", a.call(t, "progress", map[string]any{"task": "t1", "percent": 5, "note": long}), 1, "usage", "")
	check("log message over the bound", a.call(t, "log", map[string]any{"msg": long}), 1, "usage", "")
	if after := p.registryTask(t, "t1"); after != before {
		t.Errorf("a refused text changed the task: %s, was %s", after, before)
	}
	if after := logLines(t, p); after != lines {
		t.Errorf("a refused text reached the log: %d lines, were %d", after, lines)
	}

	// 4: the registry's flock held elsewhere longer than the lock wait.
	fl := flock.New(filepath.Join(p.Root, ".rotd", "coordination", ".lock", "registry.lock"))
	if err := fl.Lock(); err != nil {
		t.Fatal(err)
	}
	check("registry lock held", b.call(t, "claim", nil), 4, "E_LOCK_TIMEOUT", "")
	fl.Unlock()

	// 2: an unreadable registry.
	reg := filepath.Join(p.Root, ".rotd", "coordination", "active_work_registry.json")
	good, _ := os.ReadFile(reg)
	os.WriteFile(reg, []byte("{not json"), 0o644)
	corrupt := b.call(t, "claim", nil)
	check("corrupt registry", corrupt, 2, "io", "")
	if msg := corrupt.refusal(t).Message; !strings.Contains(msg, "coord doctor --repair") {
		t.Errorf("a corrupt registry's refusal does not name coord doctor --repair: %s", msg)
	}
	os.WriteFile(reg, good, 0o644)
	b.call(t, "claim", map[string]any{"task": "t2"}).ok(t)
}

// TestRefusalOf covers the codes no tool call here can provoke: 5 (which
// coord documents but never produces) and 130 (a call cancelled by its
// client: the client has gone by the time it could read the answer).
func TestRefusalOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
		name string
	}{
		{fail(coord.Errorf(coord.CodeLockStale, "stale")), 5, "E_LOCK_STALE"},
		{fail(&coord.Error{Code: coord.CodeInterrupted, Msg: "interrupted", Err: coord.ErrInterrupted}), 130, "interrupted"},
		{fail(fmt.Errorf("waiting: %w", context.Canceled)), 130, "interrupted"},
		{fail(errors.New("disk on fire")), 2, "io"},
		{errors.New(`validating "arguments": missing`), 1, "usage"},
		{fail(&coord.Error{Code: coord.CodeLockTimeout, Msg: "timed out", Detail: `{"holder":"b","since":"x","pid":1}`}), 4, "E_LOCK_TIMEOUT"},
	} {
		r := RefusalOf(c.err)
		if r.Code != c.code || r.Name != c.name {
			t.Errorf("%v: %+v, want %d %s", c.err, r, c.code, c.name)
		}
	}
	if r := RefusalOf(fail(&coord.Error{Code: coord.CodeLockTimeout, Msg: "timed out", Detail: `{"holder":"b"}`})); r.Holder != "b" {
		t.Errorf("a contended flock's holder: %+v", r)
	}
	for _, c := range coord.ExitCodes {
		if c.Code == 0 {
			continue
		}
		if r := RefusalOf(fail(coord.Errorf(c.Code, "x"))); r.Code != int(c.Code) || r.Name != c.Name {
			t.Errorf("code %d: %+v", c.Code, r)
		}
	}
}

// TestEpochRemembered: release without an epoch uses the one this session
// claimed at, so a session whose task was handed back and reclaimed (by
// a second session of the same agent) is refused with lost, not allowed
// to finish its successor's work.
func TestEpochRemembered(t *testing.T) {
	ctx := context.Background()
	p := seeded(t, tasks(1))
	first := connect(t, Options{Service: p.Service, Agent: agentAt("a")}, nil)
	first.call(t, "claim", nil).ok(t)
	if _, err := p.Service.HandBack(ctx, app.TaskRef{Agent: agentAt("a"), TaskID: "t1", Epoch: coord.NoEpoch}, "session ended"); err != nil {
		t.Fatal(err)
	}
	second := connect(t, Options{Service: p.Service, Agent: agentAt("a")}, nil)
	second.call(t, "claim", nil).ok(t)
	if ref := first.call(t, "release", map[string]any{"task": "t1"}).refusal(t); ref.Code != 6 {
		t.Fatalf("stale session's release: %+v", ref)
	}
	second.call(t, "release", map[string]any{"task": "t1"}).ok(t)
}

// TestWaitProgress: wait blocks, sends progress notifications while it
// waits, and returns what `wait --json` prints once a task is eligible.
func TestWaitProgress(t *testing.T) {
	ctx := context.Background()
	p := seeded(t, `{"id":"a"}`+"\n"+`{"id":"b","deps":["a"]}`+"\n"+`{"id":"z","deps":["b"]}`)
	var notes atomic.Int32
	noted := make(chan struct{}, 100)
	copt := &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		if req.Params.ProgressToken == "w1" && req.Params.Total == 60 && strings.Contains(req.Params.Message, "eligible") {
			notes.Add(1)
			noted <- struct{}{}
		}
	}}
	holder := connect(t, Options{Service: p.Service, Agent: agentAt("holder")}, nil)
	holder.call(t, "claim", map[string]any{"task": "a"}).ok(t)
	w := connect(t, Options{Service: p.Service, Agent: agentAt("w"), ProgressEvery: 20 * time.Millisecond}, copt)

	done := make(chan result, 1)
	go func() { done <- w.callCtx(ctx, t, "wait", map[string]any{"timeout": "60s"}, "w1") }()
	for i := 0; i < 2; i++ { // the waiter is waiting and says so
		select {
		case <-noted:
		case r := <-done:
			t.Fatalf("wait returned before b was eligible: %s", r.raw)
		case <-time.After(60 * time.Second):
			t.Fatal("no progress notification within 60s")
		}
	}
	holder.call(t, "release", map[string]any{"task": "a"}).ok(t)
	select {
	case r := <-done:
		jsonEqual(t, string(r.ok(t).raw), `{"status":"eligible","task":"b"}`)
	case <-time.After(60 * time.Second):
		t.Fatal("wait did not return within 60s of b becoming eligible")
	}
	if notes.Load() < 2 {
		t.Fatalf("%d progress notifications", notes.Load())
	}
	// The named task changing state: b is toggled between claimed and
	// blocked until the waiter reports a change, so whatever state it
	// first saw, the next toggle is a change (no timing assumed).
	w.call(t, "claim", map[string]any{"task": "b"}).ok(t)
	go func() { done <- holder.call(t, "wait", map[string]any{"task": "b", "timeout": "60s"}) }()
	var changed result
	blocked := false
	for i := 0; changed.raw == nil; i++ {
		blocked = i%2 == 0
		if blocked {
			w.call(t, "block", map[string]any{"task": "b", "reason": "toggle"}).ok(t)
		} else {
			if _, err := p.Service.Unblock(ctx, app.TaskRef{Agent: agentAt("w"), TaskID: "b", Epoch: coord.NoEpoch}); err != nil {
				t.Fatal(err)
			}
			w.call(t, "claim", map[string]any{"task": "b"}).ok(t) // back in the pool, w first
		}
		select {
		case changed = <-done:
		case <-time.After(time.Second):
			if i > 60 {
				t.Fatal("wait --task never saw b change")
			}
		}
	}
	var ch struct{ Status, Task, Was string }
	changed.ok(t).decode(t, &ch)
	if ch.Task != "b" || ch.Status == ch.Was || !strings.Contains("claimed blocked unclaimed", ch.Status) || !strings.Contains("claimed blocked unclaimed", ch.Was) {
		t.Fatalf("wait --task: %s", changed.raw)
	}
	if blocked {
		if _, err := p.Service.Unblock(ctx, app.TaskRef{Agent: agentAt("w"), TaskID: "b", Epoch: coord.NoEpoch}); err != nil {
			t.Fatal(err)
		}
		w.call(t, "claim", map[string]any{"task": "b"}).ok(t)
	}
	w.call(t, "release", map[string]any{"task": "b"}).ok(t)
	// No work left at all.
	w.call(t, "claim", map[string]any{"task": "z"}).ok(t)
	w.call(t, "release", map[string]any{"task": "z"}).ok(t)
	jsonEqual(t, string(w.call(t, "wait", nil).ok(t).raw), `{"status":"drained"}`)
}

// waitingOn waits (up to 60 s) until agent's heartbeat exists: its wait
// has begun (what the test does next is right whenever it happens).
func waitingOn(t testing.TB, p *project, agent string) {
	t.Helper()
	backendtest.Wait(t, "agent "+agent+" to beat", func() bool {
		rows, err := p.Service.Agents(context.Background(), 0)
		if err == nil {
			for _, r := range rows {
				if r.Agent == agent && r.LastBeat != nil {
					return true
				}
			}
		}
		return false
	})
}

// TestWaitBounded: a wait gives up at its timeout (conflict), is clamped
// to MaxWait, and ends when its client cancels the call.
func TestWaitBounded(t *testing.T) {
	p := seeded(t, `{"id":"a"}`+"\n"+`{"id":"b","deps":["a"]}`)
	holder := connect(t, Options{Service: p.Service, Agent: agentAt("holder")}, nil)
	holder.call(t, "claim", map[string]any{"task": "a"}).ok(t)
	w := connect(t, Options{Service: p.Service, Agent: agentAt("w"), MaxWait: 200 * time.Millisecond}, nil)
	ref := w.call(t, "wait", map[string]any{"timeout": "100ms"}).refusal(t)
	if ref.Code != 3 || !strings.Contains(ref.Message, "timed out") {
		t.Fatalf("timeout: %+v", ref)
	}
	ref = w.call(t, "wait", map[string]any{"timeout": "24h"}).refusal(t) // clamped: returns
	if ref.Code != 3 || !strings.Contains(ref.Message, "200ms") {
		t.Fatalf("clamped wait: %+v", ref)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	long := connect(t, Options{Service: p.Service, Agent: agentAt("long")}, nil)
	go func() {
		_, err := long.cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{"timeout": "10m"}})
		errc <- err
	}()
	waitingOn(t, p, "long")
	cancel()
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("a cancelled wait returned a result")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("a cancelled wait did not end")
	}
	long.call(t, "status", nil).ok(t) // the session still serves
}

// TestMoreTools: the tools --tools all adds.
func TestMoreTools(t *testing.T) {
	p := seeded(t, tasks(2))
	writeFile(t, p.Root, ".rotd/coordination/config.json", `{"review_gate": true}`)
	p = reopen(t, p.Root, "")
	a := connect(t, Options{Service: p.Service, Agent: agentAt("a"), All: true}, nil)
	r := connect(t, Options{Service: p.Service, Agent: agentAt("r"), All: true}, nil)

	var ts struct{ Tasks []json.RawMessage }
	a.call(t, "tasks", nil).ok(t).decode(t, &ts)
	if len(ts.Tasks) != 2 {
		t.Fatalf("tasks %d", len(ts.Tasks))
	}
	jsonEqual(t, string(ts.Tasks[0]), p.registryTask(t, "t1"))
	a.call(t, "claim", map[string]any{"task": "t1"}).ok(t)
	a.call(t, "claim", map[string]any{"task": "t2"}).ok(t)
	a.call(t, "release", map[string]any{"task": "t1"}).ok(t)
	a.call(t, "release", map[string]any{"task": "t2"}).ok(t)
	a.call(t, "tasks", map[string]any{"status": "review"}).ok(t).decode(t, &ts)
	if len(ts.Tasks) != 2 {
		t.Fatalf("in review: %d", len(ts.Tasks))
	}
	if ref := a.call(t, "review", map[string]any{"task": "t1", "action": "approve"}).refusal(t); ref.Code != 3 {
		t.Fatalf("self-approval: %+v", ref)
	}
	got := r.call(t, "review", map[string]any{"task": "t1", "action": "approve"}).ok(t)
	jsonEqual(t, string(got.raw), p.registryTask(t, "t1"))
	got = r.call(t, "review", map[string]any{"task": "t2", "action": "reject", "reason": "tests fail"}).ok(t)
	jsonEqual(t, string(got.raw), p.registryTask(t, "t2"))
	if ref := r.call(t, "review", map[string]any{"task": "t2", "action": "maybe"}).refusal(t); ref.Code != 1 {
		t.Fatalf("bad action: %+v", ref)
	}

	var ag struct{ Agents []coord.AgentView }
	r.call(t, "agents", nil).ok(t).decode(t, &ag)
	if len(ag.Agents) != 2 {
		t.Fatalf("agents %+v", ag)
	}

	var en coord.KVEntry
	a.call(t, "kv", map[string]any{"op": "set", "key": "k", "value": map[string]int{"n": 1}, "ttl": "1m"}).ok(t).decode(t, &en)
	if en.Rev != 1 || string(en.Value) != `{"n":1}` || en.UpdatedBy != "a" {
		t.Fatalf("kv set %+v", en)
	}
	if ref := r.call(t, "kv", map[string]any{"op": "set", "key": "k", "value": 2, "ttl": "1m", "expect_absent": true}).refusal(t); ref.Code != 3 {
		t.Fatalf("kv cas: %+v", ref)
	}
	r.call(t, "kv", map[string]any{"op": "get", "key": "k"}).ok(t).decode(t, &en)
	var ls struct{ Keys []coord.KVEntry }
	r.call(t, "kv", map[string]any{"op": "ls"}).ok(t).decode(t, &ls)
	if len(ls.Keys) != 1 {
		t.Fatalf("kv ls %+v", ls)
	}
	jsonEqual(t, string(r.call(t, "kv", map[string]any{"op": "del", "key": "k"}).ok(t).raw), `{"key":"k","deleted":true}`)
	if ref := r.call(t, "kv", map[string]any{"op": "get", "key": "k"}).refusal(t); ref.Code != 3 {
		t.Fatalf("kv get absent: %+v", ref)
	}

	var l coord.Lease
	a.call(t, "lease", map[string]any{"op": "acquire", "name": "deploy", "ttl": "1h"}).ok(t).decode(t, &l)
	if l.Holder != "a" || l.Epoch != 1 {
		t.Fatalf("lease %+v", l)
	}
	if ref := r.call(t, "lease", map[string]any{"op": "acquire", "name": "deploy"}).refusal(t); ref.Code != 3 || ref.Holder != "a" {
		t.Fatalf("held lease: %+v", ref)
	}
	a.call(t, "lease", map[string]any{"op": "renew", "name": "deploy", "epoch": 1}).ok(t)
	var ll struct{ Leases []coord.Lease }
	r.call(t, "lease", map[string]any{"op": "list"}).ok(t).decode(t, &ll)
	if len(ll.Leases) != 1 {
		t.Fatalf("leases %+v", ll)
	}
	jsonEqual(t, string(a.call(t, "lease", map[string]any{"op": "release", "name": "deploy"}).ok(t).raw), `{"released":"deploy"}`)

	var doc struct {
		OK       bool
		Problems []coord.Problem
	}
	a.call(t, "doctor", nil).ok(t).decode(t, &doc)
	if !doc.OK || len(doc.Problems) != 0 {
		t.Fatalf("doctor %+v", doc)
	}
}

// TestEveryCallBeats: any tool call moves the agent's heartbeat.
func TestEveryCallBeats(t *testing.T) {
	p := seeded(t, "")
	s := connect(t, Options{Service: p.Service, Agent: agentAt("reader")}, nil)
	s.call(t, "log", nil).ok(t)
	rows, err := p.Service.Agents(context.Background(), 0)
	if err != nil || len(rows) != 1 || rows[0].Agent != "reader" || !rows[0].Alive {
		t.Fatalf("agents after one call: %+v %v", rows, err)
	}
}

// TestRefusedCallLeavesNoTrace: a refused call does not beat: the agent
// of a session whose only calls were refused is nowhere.
func TestRefusedCallLeavesNoTrace(t *testing.T) {
	p := seeded(t, tasks(1))
	s := connect(t, Options{Service: p.Service, Agent: agentAt("ghost")}, nil)
	if ref := s.call(t, "claim", map[string]any{"task": "typo"}).refusal(t); ref.Code != 3 {
		t.Fatalf("claim of a task that is not there: %+v", ref)
	}
	if ref := s.call(t, "release", map[string]any{"task": "t1"}).refusal(t); ref.Code != 6 {
		t.Fatalf("release of a task not held: %+v", ref)
	}
	rows, err := p.Service.Agents(context.Background(), 0)
	if err != nil || len(rows) != 0 {
		t.Fatalf("agents after refused calls: %+v %v", rows, err)
	}
}

// TestSelfFencing: a session holding a task keeps it alive in the
// background; when its beats fail (here the heartbeat directory is
// replaced by a file: every beat fails, as on a full disk) for half of
// stale_after, the task is fenced: the session says so on stderr, and
// every later call on the task answers code 6. Once beats succeed again
// the task is handed back; calls on it stay refused until the session
// claims it again.
func TestSelfFencing(t *testing.T) {
	root := t.TempDir()
	coordDir := filepath.Join(root, ".rotd", "coordination")
	if err := os.MkdirAll(coordDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(coordDir, "config.json"), []byte(`{"stale_after": "2s"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := reopen(t, root, tasks(1))
	var mu sync.Mutex
	var warnings []string
	warned := func(sub string) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, w := range warnings {
			if strings.Contains(w, sub) {
				return true
			}
		}
		return false
	}
	s := connect(t, Options{Service: p.Service, Agent: agentAt("a"), Warn: func(w string) {
		mu.Lock()
		warnings = append(warnings, w)
		mu.Unlock()
	}}, nil)
	s.call(t, "claim", map[string]any{"task": "t1"}).ok(t)

	beats := filepath.Join(coordDir, "heartbeat")
	if err := os.RemoveAll(beats); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(beats, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !backendtest.WaitFor(func() bool { return warned("task t1: no successful beat for ") }) {
		t.Fatalf("no fence within 60s; warnings %q", warnings)
	}
	for _, call := range []struct {
		name string
		args map[string]any
	}{{"release", map[string]any{"task": "t1"}}, {"progress", map[string]any{"task": "t1", "percent": 50}}, {"block", map[string]any{"task": "t1", "reason": "x"}}} {
		if ref := s.call(t, call.name, call.args).refusal(t); ref.Code != 6 || !strings.Contains(ref.Message, "no successful beat") {
			t.Fatalf("%s of a fenced task: %+v", call.name, ref)
		}
	}
	if err := os.Remove(beats); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(beats, 0o755); err != nil {
		t.Fatal(err)
	}
	handedBack := func() bool {
		list, err := p.Service.Tasks(context.Background(), app.ListRequest{})
		return err == nil && len(list) == 1 && list[0].Status == coord.Unclaimed
	}
	if !backendtest.WaitFor(handedBack) {
		t.Fatal("the fenced task was not handed back within 60s of beats working again")
	}
	if ref := s.call(t, "release", map[string]any{"task": "t1"}).refusal(t); ref.Code != 6 {
		t.Fatalf("release after the hand-back: %+v", ref)
	}
	s.call(t, "claim", map[string]any{"task": "t1"}).ok(t)
	s.call(t, "release", map[string]any{"task": "t1"}).ok(t)
}

// TestAgentCost measures the bytes an agent reads for one cycle through
// MCP: the tools/list answer, a claim and a release (the README's
// figure; the CLI's is measured in cmd/coord).
func TestAgentCost(t *testing.T) {
	p := seeded(t, `{"id":"4.2","title":"Preamble Editor Modal","priority":"high"}`)
	s := connect(t, Options{Service: p.Service, Agent: agentAt("agent-a")}, nil)
	hello := s.wire.take()
	if _, err := s.cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	list := s.wire.take()
	s.call(t, "claim", nil).ok(t)
	claim := s.wire.take()
	s.call(t, "release", map[string]any{"task": "4.2", "summary": "done"}).ok(t)
	release := s.wire.take()
	t.Logf("bytes read by the agent: initialize %d, tools/list %d, claim %d, release %d; cycle (tools/list+claim+release) %d",
		hello, list, claim, release, list+claim+release)
}

// TestReviewNotesReachTheOwner: a reviewer's reject reason reaches the
// owner through the tools: its next claim gives the task back with
// review_notes, and status shows them; at max_rejections the review tool
// blocks the task instead.
func TestReviewNotesReachTheOwner(t *testing.T) {
	p := seeded(t, tasks(2))
	writeFile(t, p.Root, ".rotd/coordination/config.json", `{"review_gate": true, "max_rejections": 2}`)
	p = reopen(t, p.Root, "")
	a := connect(t, Options{Service: p.Service, Agent: agentAt("a")}, nil)
	r := connect(t, Options{Service: p.Service, Agent: agentAt("r"), All: true}, nil)
	a.call(t, "claim", map[string]any{"task": "t1"}).ok(t)
	a.call(t, "release", map[string]any{"task": "t1"}).ok(t)
	r.call(t, "review", map[string]any{"task": "t1", "action": "reject", "reason": "cover the error path"}).ok(t)
	var task struct {
		ID          string `json:"id"`
		Status      string `json:"status"`
		ReviewNotes string `json:"review_notes"`
		Blocked     string `json:"blocked_reason"`
	}
	a.call(t, "claim", nil).ok(t).decode(t, &task)
	if task.ID != "t1" || task.Status != "claimed" || task.ReviewNotes != "cover the error path" {
		t.Fatalf("claim after a rejection: %+v", task)
	}
	var st struct{ Holding []json.RawMessage }
	a.call(t, "status", nil).ok(t).decode(t, &st)
	if len(st.Holding) != 1 || !strings.Contains(string(st.Holding[0]), `"review_notes":"cover the error path"`) {
		t.Fatalf("status: %s", st.Holding)
	}
	a.call(t, "release", map[string]any{"task": "t1"}).ok(t)
	r.call(t, "review", map[string]any{"task": "t1", "action": "reject", "reason": "still not"}).ok(t).decode(t, &task)
	if task.Status != "blocked" || task.Blocked != "rejected 2 times: still not" {
		t.Fatalf("second rejection: %+v", task)
	}
}

// logLines counts the project's log lines.
func logLines(t testing.TB, p *project) int {
	t.Helper()
	n := 0
	if _, err := p.Service.LogRead(context.Background(), 0, func(string) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestStatusConflicts: the status tool names the conflicts a scan
// recorded for the agent's work in flight (its finished work not yet
// landed included), from its side, and none of other agents'.
func TestStatusConflicts(t *testing.T) {
	root := backendtest.Init(t, backendtest.Options{}).Root
	reg := `{"version": 1, "tasks": [
		{"id": "4.2", "status": "claimed", "claimed_by": "me", "epoch": 1, "branch": "coord/me",
		 "conflicts": [{"with": "4.3", "files": ["z.txt"], "since": "2030-01-01T00:00:00Z"}]},
		{"id": "4.1", "status": "done", "claimed_by": "me", "epoch": 3, "branch": "coord/me", "head": "abcdef12",
		 "conflicts": [{"with": "main", "files": ["a.go"], "since": "2030-01-01T00:00:00Z", "told": true}]},
		{"id": "4.3", "status": "claimed", "claimed_by": "bob", "epoch": 2, "branch": "coord/bob",
		 "conflicts": [{"with": "4.2", "files": ["z.txt"], "since": "2030-01-01T00:00:00Z"}]}]}`
	if err := os.WriteFile(filepath.Join(root, coord.TreeDir, "active_work_registry.json"), []byte(reg), 0o644); err != nil {
		t.Fatal(err)
	}
	p := reopen(t, root, "")
	s := connect(t, Options{Service: p.Service, Agent: agentAt("me")}, nil)
	got := s.call(t, "status", nil).ok(t)
	var st struct {
		Conflicts json.RawMessage `json:"conflicts"`
	}
	got.decode(t, &st)
	jsonEqual(t, string(st.Conflicts), `[{"task":"4.2","with":"4.3","files":["z.txt"]},{"task":"4.1","with":"main","files":["a.go"]}]`)
	other := connect(t, Options{Service: p.Service, Agent: agentAt("carol")}, nil)
	other.call(t, "status", nil).ok(t).decode(t, &st)
	jsonEqual(t, string(st.Conflicts), `[]`)
}

// TestAct: the act tool (with --tools all) does a supervisor's acts as
// the CLI does: unblock returns a blocked task to the pool, its owner
// first; cancel takes a task out of the work; requeue frees a held one;
// each logged with who asked and why. A bad action is a usage refusal.
func TestAct(t *testing.T) {
	p := seeded(t, tasks(3))
	a := connect(t, Options{Service: p.Service, Agent: agentAt("a"), All: true}, nil)
	lead := connect(t, Options{Service: p.Service, Agent: agentAt("lead"), All: true}, nil)
	a.call(t, "claim", map[string]any{"task": "t1"}).ok(t)
	a.call(t, "block", map[string]any{"task": "t1", "reason": "stuck"}).ok(t)
	if ref := lead.call(t, "act", map[string]any{"task": "t1", "action": "unblock"}).refusal(t); ref.Code != 1 {
		t.Fatalf("unblock another's task without a reason: %+v", ref)
	}
	var got struct{ Status, Owner string }
	lead.call(t, "act", map[string]any{"task": "t1", "action": "unblock", "reason": "decided"}).ok(t).decode(t, &got)
	if got.Status != "unclaimed" || got.Owner != "a" {
		t.Fatalf("unblocked: %+v", got)
	}
	lead.call(t, "act", map[string]any{"task": "t2", "action": "cancel", "reason": "not needed"}).ok(t).decode(t, &got)
	if got.Status != "cancelled" {
		t.Fatalf("cancelled: %+v", got)
	}
	a.call(t, "claim", map[string]any{"task": "t3"}).ok(t)
	lead.call(t, "act", map[string]any{"task": "t3", "action": "requeue", "reason": "a is slow"}).ok(t).decode(t, &got)
	if got.Status != "unclaimed" {
		t.Fatalf("requeued: %+v", got)
	}
	if ref := lead.call(t, "act", map[string]any{"task": "t3", "action": "drop"}).refusal(t); ref.Code != 1 {
		t.Fatalf("an unknown action: %+v", ref)
	}
	var text []string
	if _, err := p.Service.LogRead(context.Background(), 0, func(line string) error { text = append(text, line); return nil }); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(text, "\n")
	for _, want := range []string{"lead ▶ unblocked task t1: back in the pool, a first: decided", "lead ▶ cancelled task t2 (unclaimed): not needed", "lead ▶ requeued task t3 from a"} {
		if !strings.Contains(all, want) {
			t.Fatalf("the log lacks %q:\n%s", want, all)
		}
	}
}
