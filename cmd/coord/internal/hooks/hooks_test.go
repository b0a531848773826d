package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rotd/coordination/cmd/coord/internal/workspace"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/internal/gitrepo"
	"github.com/rotd/coordination/registry/backend/backendtest"
)

// project is a coordination tree in a temporary directory
// (backendtest), with task "ed" (files src/editor/**) and task "docs"
// (files docs/**) seeded.
type project struct{ *backendtest.Project }

const seed = `{"id":"ed","title":"Editor modal","files":["src/editor/**"]}
{"id":"docs","title":"Docs","files":["docs/**"]}
{"id":"free","title":"Free"}
`

// seeded is a fresh project with config.json's content config ("": the
// template's) and the tasks of seed.
func seeded(t testing.TB, config string) *project {
	t.Helper()
	return &project{backendtest.NewProject(t, backendtest.Options{Config: config, Seed: seed})}
}

// claim claims task id for agent.
func (p *project) claim(t testing.TB, agent, id string) *coord.Task {
	t.Helper()
	res, err := p.Service.Claim(context.Background(), app.ClaimRequest{Agent: coord.Agent{ID: agent}, TaskID: id})
	if err != nil || res.Task == nil {
		t.Fatalf("claim %s as %s: %v", id, agent, err)
	}
	return res.Task
}

func (p *project) task(t testing.TB, id string) *coord.Task {
	t.Helper()
	ts, err := p.Service.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range ts {
		if task.ID == id {
			return task
		}
	}
	t.Fatalf("no task %s", id)
	return nil
}

// opener opens p as agent for a session standing where the CLI would
// find p (under its root, or in a linked worktree of its repository).
func (p *project) opener(agent string) func(context.Context, string) (*Project, error) {
	return func(_ context.Context, dir string) (*Project, error) {
		root, err := workspace.FindRoot("", false, dir, true)
		if err != nil {
			return nil, ErrNoProject
		}
		if r1, _ := filepath.EvalSymlinks(root); r1 != mustEval(p.Root) {
			return nil, ErrNoProject
		}
		return &Project{Service: p.Service, Agent: agent, Root: p.Root}, nil
	}
}

func mustEval(p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return p
	}
	return r
}

// outcome is what a hook run did.
type outcome struct {
	code           int
	stdout, stderr string
}

// fire feeds the fixture testdata/<agent>/<name>.json to the hook.
func fire(t testing.TB, p *project, agent, name, as string, env map[string]string) outcome {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", agent, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	cwd := p.Root
	if env["CWD"] != "" {
		cwd = env["CWD"]
	}
	body := strings.NewReplacer("$ROOT", p.Root, "$CWD", cwd).Replace(string(raw))
	return fireRaw(t, p, agent, "", body, as, env)
}

func fireRaw(t testing.TB, p *project, agent, event, body, as string, env map[string]string) outcome {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), Options{
		Agent: agent, Event: event, Stdin: strings.NewReader(body), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return env[k] },
		Open:   p.opener(as),
		Prime:  "PRIME TEXT",
	})
	return outcome{code, out.String(), errb.String()}
}

// quiet checks a go-ahead with nothing to say: exit 0, no stderr, and on
// stdout nothing (Gemini: {}, its stdout must be JSON).
func (o outcome) quiet(t testing.TB, agent string) {
	t.Helper()
	want := ""
	if agent == "gemini" {
		want = "{}\n"
	}
	if o.code != 0 || o.stdout != want || o.stderr != "" {
		t.Fatalf("want a quiet go-ahead, got exit %d stdout %q stderr %q", o.code, o.stdout, o.stderr)
	}
}

func (o outcome) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(o.stdout), &m); err != nil {
		t.Fatalf("stdout is not one JSON object: %q (%v)", o.stdout, err)
	}
	return m
}

// TestSessionStart: every agent gets the prime text, its identity and what
// it holds as added context; Claude and Codex get COORD_AGENT exported
// through their env file.
func TestSessionStart(t *testing.T) {
	for _, agent := range Agents {
		t.Run(agent, func(t *testing.T) {
			p := seeded(t, "")
			p.claim(t, "me", "ed")
			envFile := filepath.Join(t.TempDir(), "env")
			env := map[string]string{"CLAUDE_ENV_FILE": envFile}
			if agent == "codex" {
				env = map[string]string{"CODEX_ENV_FILE": envFile}
			}
			o := fire(t, p, agent, "SessionStart", "me", env)
			if o.code != 0 || o.stderr != "" {
				t.Fatalf("exit %d stderr %q", o.code, o.stderr)
			}
			hso, _ := o.json(t)["hookSpecificOutput"].(map[string]any)
			ctxText, _ := hso["additionalContext"].(string)
			if hso["hookEventName"] != "SessionStart" || !strings.HasPrefix(ctxText, "PRIME TEXT") ||
				!strings.Contains(ctxText, "coord agent me") || !strings.Contains(ctxText, "You hold task ed (epoch 1, claimed, 0%): Editor modal") {
				t.Fatalf("output %s", o.stdout)
			}
			b, _ := os.ReadFile(envFile)
			if want := "export COORD_AGENT=me\n"; agent != "gemini" && string(b) != want {
				t.Fatalf("env file %q, want %q", b, want)
			} else if agent == "gemini" && len(b) != 0 {
				t.Fatalf("gemini has no env file, yet %q was written", b)
			}
		})
	}
}

// TestEditRefused: an edit of a file in the files of a task another agent
// holds, or under its path lock, is refused with exit 2 and a message
// naming the holder and the task; the agent's own task's files, and free
// files, go ahead.
func TestEditRefused(t *testing.T) {
	cases := []struct {
		agent, fixture string
		blocked        []string // what stderr must name; none: go ahead
	}{
		{"claude", "PreToolUse-Edit", []string{"src/editor/modal.ts is in the files of task ed, held by other"}},
		{"claude", "PreToolUse-MultiEdit", []string{"task ed, held by other"}},
		{"claude", "PreToolUse-NotebookEdit", []string{"src/editor/analysis.ipynb", "task ed"}},
		{"claude", "PreToolUse-Write", []string{"docs/notes.md is under other's path lock on docs (task ed)"}},
		{"codex", "PreToolUse-apply_patch", []string{"docs/new.md is under other's path lock on docs", "src/editor/modal.ts is in the files of task ed", "held by other"}},
		{"codex", "PreToolUse-apply_patch-move", []string{"docs/guide.md", "docs/readme-draft.md"}},
		{"gemini", "BeforeTool-write_file", []string{"src/editor/modal.ts", "task ed, held by other"}},
		{"gemini", "BeforeTool-replace", []string{"docs/notes.md", "other's path lock on docs"}},
	}
	for _, c := range cases {
		t.Run(c.agent+"/"+c.fixture, func(t *testing.T) {
			p := seeded(t, "")
			p.claim(t, "other", "ed")
			if _, err := p.Service.LockPaths(context.Background(), "other", []string{"docs"}, 0); err != nil {
				t.Fatal(err)
			}
			o := fire(t, p, c.agent, c.fixture, "me", nil)
			if o.code != ExitBlock || o.stdout != "" {
				t.Fatalf("exit %d stdout %q, want 2 and nothing on stdout", o.code, o.stdout)
			}
			for _, w := range c.blocked {
				if !strings.Contains(o.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, o.stderr)
				}
			}
			// The holder itself edits freely.
			fire(t, p, c.agent, c.fixture, "other", nil).quiet(t, c.agent)
		})
	}
	// Nothing held by anyone: everything goes ahead.
	for _, agent := range Agents {
		p := seeded(t, "")
		for _, f := range map[string][]string{"claude": {"PreToolUse-Edit", "PreToolUse-Write"}, "codex": {"PreToolUse-apply_patch"}, "gemini": {"BeforeTool-write_file"}}[agent] {
			fire(t, p, agent, f, "me", nil).quiet(t, agent)
		}
	}
}

// TestEditPaths: relative paths are the session's cwd's; a file outside
// the project is not coord's; a session in a linked git worktree is
// guarded by repository path like the main checkout.
func TestEditPaths(t *testing.T) {
	p := seeded(t, "")
	p.claim(t, "other", "ed")
	sub := filepath.Join(p.Root, "src")
	os.MkdirAll(sub, 0o755)
	patch := func(path string) string {
		b, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "cwd": sub, "tool_name": "apply_patch",
			"tool_input": map[string]string{"command": "*** Begin Patch\n*** Update File: " + path + "\n*** End Patch\n"}})
		return string(b)
	}
	if o := fireRaw(t, p, "codex", "", patch("editor/x.ts"), "me", nil); o.code != ExitBlock {
		t.Fatalf("relative to cwd src/: %+v", o)
	}
	fireRaw(t, p, "codex", "", patch("other/x.ts"), "me", nil).quiet(t, "codex")
	fireRaw(t, p, "codex", "", patch("/etc/passwd"), "me", nil).quiet(t, "codex")
	fireRaw(t, p, "codex", "", patch("../../../../outside"), "me", nil).quiet(t, "codex")

	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git: the worktree case needs it")
	}
	gitRun := func(dir string, args ...string) { t.Helper(); backendtest.Git(t, dir, args...) }
	gitRun(p.Root, "init", "-q")
	os.WriteFile(filepath.Join(p.Root, "README"), []byte("x"), 0o644)
	gitRun(p.Root, "add", "README")
	gitRun(p.Root, "commit", "-q", "-m", "x")
	wt := filepath.Join(t.TempDir(), "wt")
	gitRun(p.Root, "worktree", "add", "-q", wt)
	body, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "cwd": wt, "tool_name": "Edit",
		"tool_input": map[string]string{"file_path": filepath.Join(wt, "src", "editor", "modal.ts")}})
	o := fireRaw(t, p, "claude", "", string(body), "me", nil)
	if o.code != ExitBlock || !strings.Contains(o.stderr, "src/editor/modal.ts is in the files of task ed") {
		t.Fatalf("edit in a linked worktree: %+v", o)
	}
}

// TestAfterToolBeats: after a tool the agent's heartbeat exists and moves.
func TestAfterToolBeats(t *testing.T) {
	// Claude Code sends a failed tool to PostToolUseFailure, not
	// PostToolUse: a failing tool is work too.
	for _, c := range []struct{ agent, fixture string }{
		{"claude", "PostToolUse"}, {"claude", "PostToolUseFailure"}, {"codex", "PostToolUse"}, {"gemini", "AfterTool"},
	} {
		p := seeded(t, "")
		fire(t, p, c.agent, c.fixture, "me", nil).quiet(t, c.agent)
		rows, err := p.Service.Agents(context.Background(), 0)
		if err != nil || len(rows) != 1 || rows[0].Agent != "me" || !rows[0].Alive {
			t.Fatalf("%s %s: agents after the hook: %+v %v", c.agent, c.fixture, rows, err)
		}
	}
}

// TestAfterToolTellsConflicts: a conflict a scan recorded for the
// agent's task reaches the agent's context once, as one line of added
// context in its agent's convention (the same shape for all three:
// hookSpecificOutput.additionalContext, with the event's name); the
// next tool call is quiet again, and another agent is told nothing.
func TestAfterToolTellsConflicts(t *testing.T) {
	const reg = `{"version": 1, "tasks": [
		{"id": "4.2", "status": "claimed", "claimed_by": "me", "epoch": 1, "branch": "coord/me",
		 "conflicts": [{"with": "4.3", "files": ["z.txt"], "since": "2030-01-01T00:00:00Z"},
		               {"with": "main", "files": ["a.go", "b.go"], "since": "2030-01-01T00:00:00Z"}]},
		{"id": "4.3", "status": "claimed", "claimed_by": "bob", "epoch": 2, "branch": "coord/bob",
		 "conflicts": [{"with": "4.2", "files": ["z.txt"], "since": "2030-01-01T00:00:00Z", "told": true}]}]}`
	want := "coord: your change to z.txt (task 4.2) now conflicts with task 4.3 (bob); coordinate or rebase " +
		"coord: your change to a.go and b.go (task 4.2) now conflicts with main; merge main into your branch (or rebase on it) and resolve"
	for _, c := range []struct{ agent, fixture string }{
		{"claude", "PostToolUse"}, {"claude", "PostToolUseFailure"}, {"codex", "PostToolUse"}, {"gemini", "AfterTool"},
	} {
		t.Run(c.agent+"/"+c.fixture, func(t *testing.T) {
			root := backendtest.Init(t, backendtest.Options{}).Root
			if err := os.WriteFile(filepath.Join(root, coord.TreeDir, "active_work_registry.json"), []byte(reg), 0o644); err != nil {
				t.Fatal(err)
			}
			p := &project{backendtest.NewProject(t, backendtest.Options{Root: root})}
			o := fire(t, p, c.agent, c.fixture, "me", nil)
			if o.code != 0 || o.stderr != "" {
				t.Fatalf("exit %d, stderr %q", o.code, o.stderr)
			}
			if strings.Count(o.stdout, "\n") != 1 {
				t.Errorf("stdout is not one line: %q", o.stdout)
			}
			out, _ := o.json(t)["hookSpecificOutput"].(map[string]any)
			if out["hookEventName"] != c.fixture || out["additionalContext"] != want {
				t.Errorf("hookSpecificOutput %q", out)
			}
			for _, cf := range p.task(t, "4.2").Conflicts {
				if !cf.Told {
					t.Errorf("not marked told: %+v", cf)
				}
			}
			fire(t, p, c.agent, c.fixture, "me", nil).quiet(t, c.agent)
			fire(t, p, c.agent, c.fixture, "bob", nil).quiet(t, c.agent)
		})
	}
}

// TestStop: an agent that stops while it holds a claimed task is told to
// release or block it, in its agent's convention, once: never when the
// stop is already a stop hook's doing.
func TestStop(t *testing.T) {
	for agent, fx := range map[string][2]string{"claude": {"Stop", "Stop-active"}, "codex": {"Stop", "Stop-active"}, "gemini": {"AfterAgent", "AfterAgent-active"}} {
		t.Run(agent, func(t *testing.T) {
			p := seeded(t, "")
			fire(t, p, agent, fx[0], "me", nil).quiet(t, agent) // nothing held
			p.claim(t, "me", "ed")
			o := fire(t, p, agent, fx[0], "me", nil)
			if o.code != 0 || o.stderr != "" {
				t.Fatalf("exit %d stderr %q", o.code, o.stderr)
			}
			m := o.json(t)
			want := "block"
			if agent == "gemini" {
				want = "deny"
			}
			reason, _ := m["reason"].(string)
			if m["decision"] != want || !strings.Contains(reason, "you still hold task ed (epoch 1)") ||
				!strings.Contains(reason, "coord release ed --epoch 1") || !strings.Contains(reason, "coord block ed --epoch 1") {
				t.Fatalf("stop output %s", o.stdout)
			}
			fire(t, p, agent, fx[1], "me", nil).quiet(t, agent) // the loop guard
			// A blocked task is dealt with: stopping is fine.
			if _, err := p.Service.Block(context.Background(), app.TaskRef{Agent: coord.Agent{ID: "me"}, TaskID: "ed", Epoch: coord.NoEpoch}, "waiting"); err != nil {
				t.Fatal(err)
			}
			fire(t, p, agent, fx[0], "me", nil).quiet(t, agent)
		})
	}
}

// TestSessionEnd: held tasks go back as on_stale says, with their path
// locks, for every agent (Codex has SessionEnd since 0.171); /clear and
// /resume keep them (the same agent goes on in the same process).
func TestSessionEnd(t *testing.T) {
	for _, agent := range Agents {
		t.Run(agent, func(t *testing.T) {
			p := seeded(t, "")
			p.claim(t, "me", "ed")
			p.claim(t, "me", "docs")
			ctx := context.Background()
			if _, err := p.Service.Progress(ctx, app.TaskRef{Agent: coord.Agent{ID: "me"}, TaskID: "docs", Epoch: coord.NoEpoch}, 30, ""); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Service.LockPaths(ctx, "me", []string{"README.md"}, 0); err != nil {
				t.Fatal(err)
			}
			if agent == "claude" {
				for _, fx := range []string{"SessionEnd-clear", "SessionEnd-resume"} {
					o := fire(t, p, agent, fx, "me", nil)
					o.quiet(t, agent)
					if p.task(t, "ed").ClaimedBy != "me" {
						t.Fatalf("%s handed the task back", fx)
					}
				}
			}
			o := fire(t, p, agent, "SessionEnd", "me", nil)
			if o.code != 0 || !strings.Contains(o.stderr, "task ed handed back (unclaimed)") {
				t.Fatalf("exit %d stdout %q stderr %q", o.code, o.stdout, o.stderr)
			}
			for _, id := range []string{"ed", "docs"} {
				if tk := p.task(t, id); tk.Status != coord.Unclaimed || tk.ClaimedBy != "" {
					t.Errorf("task %s after the session ended: %s by %q", id, tk.Status, tk.ClaimedBy)
				}
			}
			locks, _ := p.Service.PathLocks(ctx)
			if len(locks) != 0 {
				t.Errorf("path locks left: %+v", locks)
			}
		})
	}
	// on_stale block-if-progress: a task with progress is blocked, not freed.
	p := seeded(t, `{"on_stale":"block-if-progress"}`)
	p.claim(t, "me", "ed")
	if _, err := p.Service.Progress(context.Background(), app.TaskRef{Agent: coord.Agent{ID: "me"}, TaskID: "ed", Epoch: coord.NoEpoch}, 40, ""); err != nil {
		t.Fatal(err)
	}
	fire(t, p, "claude", "SessionEnd", "me", nil)
	if tk := p.task(t, "ed"); tk.Status != coord.Blocked || !strings.Contains(tk.BlockedReason, "session ended at 40% progress") {
		t.Fatalf("block-if-progress: %s %q", tk.Status, tk.BlockedReason)
	}
}

// TestOwnErrorsNeverBlock: a bad payload, an unknown event, an unreadable
// registry: one line on stderr, exit 1 (a warning to every agent), never
// 2, and nothing on stdout.
func TestOwnErrorsNeverBlock(t *testing.T) {
	p := seeded(t, "")
	check := func(what string, o outcome, want string) {
		t.Helper()
		if o.code != ExitWarning || o.stdout != "" || !strings.HasPrefix(o.stderr, "coord: hook ") || strings.Count(o.stderr, "\n") != 1 || !strings.Contains(o.stderr, want) {
			t.Errorf("%s: exit %d stdout %q stderr %q", what, o.code, o.stdout, o.stderr)
		}
	}
	check("malformed payload", fireRaw(t, p, "claude", "PreToolUse", "{not json", "me", nil), "not the agent's JSON")
	check("unknown event", fireRaw(t, p, "claude", "", `{"hook_event_name":"Teleport"}`, "me", nil), `event "Teleport"`)
	check("unknown agent", fireRaw(t, p, "cursor", "", `{}`, "me", nil), `unknown agent "cursor"`)
	reg := filepath.Join(p.Root, ".rotd", "coordination", "active_work_registry.json")
	os.WriteFile(reg, []byte("{broken"), 0o644)
	edit := `{"hook_event_name":"PreToolUse","cwd":"` + p.Root + `","tool_name":"Write","tool_input":{"file_path":"` + p.Root + `/src/editor/a.ts"}}`
	check("corrupt registry", fireRaw(t, p, "claude", "", edit, "me", nil), "the tool goes ahead")
	opener := func(context.Context, string) (*Project, error) {
		return nil, errors.New("backend nats://x unreachable")
	}
	var out, errb bytes.Buffer
	code := Run(context.Background(), Options{Agent: "gemini", Stdin: strings.NewReader(`{"hook_event_name":"SessionStart"}`), Stdout: &out, Stderr: &errb, Open: opener})
	check("open fails", outcome{code, out.String(), errb.String()}, "the session goes on")
}

// TestNoProject: outside a coordinated project the hooks do nothing
// (session start says why on stderr).
func TestNoProject(t *testing.T) {
	none := func(context.Context, string) (*Project, error) { return nil, ErrNoProject }
	run := func(agent, body string) outcome {
		var out, errb bytes.Buffer
		code := Run(context.Background(), Options{Agent: agent, Stdin: strings.NewReader(body), Stdout: &out, Stderr: &errb, Open: none,
			Getenv: func(string) string { return "" }})
		return outcome{code, out.String(), errb.String()}
	}
	edit := `{"hook_event_name":"PreToolUse","cwd":"/tmp","tool_name":"Write","tool_input":{"file_path":"/tmp/x"}}`
	run("claude", edit).quiet(t, "claude")
	run("claude", `{"hook_event_name":"PostToolUse","cwd":"/tmp"}`).quiet(t, "claude")
	run("claude", `{"hook_event_name":"Stop","cwd":"/tmp"}`).quiet(t, "claude")
	o := run("gemini", `{"hook_event_name":"SessionStart","cwd":"/tmp"}`)
	if o.code != 0 || o.stdout != "{}\n" || !strings.Contains(o.stderr, "no coordination tree") {
		t.Fatalf("session start outside a project: %+v", o)
	}
}

// TestProjectDir: Claude's and Gemini's project directory decides where
// the session stands (as for the MCP server), Codex's payload cwd.
func TestProjectDir(t *testing.T) {
	for _, c := range []struct {
		agent string
		env   map[string]string
		want  string
	}{
		{"claude", map[string]string{"CLAUDE_PROJECT_DIR": "/proj"}, "/proj"},
		{"gemini", map[string]string{"GEMINI_PROJECT_DIR": "/gem", "CLAUDE_PROJECT_DIR": "/proj"}, "/gem"},
		{"codex", map[string]string{"CLAUDE_PROJECT_DIR": "/proj"}, "/cwd"},
		{"claude", nil, "/cwd"},
	} {
		var got string
		opener := func(_ context.Context, dir string) (*Project, error) { got = dir; return nil, ErrNoProject }
		var out, errb bytes.Buffer
		Run(context.Background(), Options{Agent: c.agent, Stdin: strings.NewReader(`{"hook_event_name":"SessionStart","cwd":"/cwd"}`),
			Stdout: &out, Stderr: &errb, Open: opener, Getenv: func(k string) string { return c.env[k] }})
		if got != c.want {
			t.Errorf("%s %v: opened %q, want %q", c.agent, c.env, got, c.want)
		}
	}
}

// TestEvents: every event each agent has for session start, the edit
// tools, after a tool, stop and session end is one coord handles, in a
// fixed order (setup installs them in it).
func TestEvents(t *testing.T) {
	want := map[string]string{
		"claude": "SessionStart PreToolUse PostToolUse PostToolUseFailure Stop SessionEnd",
		"codex":  "SessionStart PreToolUse PostToolUse Stop SessionEnd",
		"gemini": "SessionStart BeforeTool AfterTool AfterAgent SessionEnd",
	}
	for _, agent := range Agents {
		for i := 0; i < 20; i++ { // the order never varies
			if got := strings.Join(Events(agent), " "); got != want[agent] {
				t.Fatalf("Events(%s) = %q, want %q", agent, got, want[agent])
			}
		}
	}
}

func TestPatchFiles(t *testing.T) {
	got := PatchFiles("apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a/new.go\n+x\n*** Update File: b.go\n*** Move to: c.go\n@@\n-*** Update File: not-a-header\n*** Delete File: d.go\r\n*** Update File: b.go\n*** End Patch\nEOF\n")
	want := []string{"a/new.go", "b.go", "c.go", "d.go"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("PatchFiles = %q, want %q", got, want)
	}
	if got := EditedFiles("apply_patch", json.RawMessage(`"*** Begin Patch\n*** Update File: x.go\n*** End Patch"`)); len(got) != 1 || got[0] != "x.go" {
		t.Fatalf("freeform apply_patch input: %q", got)
	}
	if got := EditedFiles("Bash", json.RawMessage(`{"command":"echo '*** Update File: x'"}`)); len(got) != 0 {
		t.Fatalf("a shell command is no patch: %q", got)
	}
}

func FuzzPatchFiles(f *testing.F) {
	f.Add("*** Begin Patch\n*** Update File: a.go\n*** Move to: b.go\n*** End Patch\n")
	f.Add("*** Add File: \n*** Delete File:  x \r\n")
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range PatchFiles(s) {
			if p == "" || strings.ContainsAny(p, "\n\x00") || p != strings.TrimSpace(p) {
				t.Fatalf("PatchFiles(%q) gave %q", s, p)
			}
		}
		EditedFiles("apply_patch", json.RawMessage(s))
	})
}

// BenchmarkEditHook is the pre-edit hook in process when nothing is held:
// open excluded (the CLI's), read the payload, map the path, guard.
func BenchmarkEditHook(b *testing.B) {
	p := seeded(b, "")
	body := `{"hook_event_name":"PreToolUse","cwd":"` + p.Root + `","tool_name":"Edit","tool_input":{"file_path":"` + p.Root + `/src/editor/modal.ts"}}`
	open := p.opener("me")
	for b.Loop() {
		var out, errb bytes.Buffer
		if code := Run(context.Background(), Options{Agent: "claude", Stdin: strings.NewReader(body), Stdout: &out, Stderr: &errb, Open: open,
			Getenv: func(string) string { return "" }}); code != 0 {
			b.Fatal(code, errb.String())
		}
	}
}

// TestWriteClaims: every agent's edit payload claims the paths it writes
// for the task its agent holds, at the first write, all or nothing; a
// second agent's write of a claimed path is refused through its own
// agent's payload (exit 2, naming the holder and the task), and claims
// nothing, not even its other paths; a write the task already claimed
// commits nothing.
func TestWriteClaims(t *testing.T) {
	const two = `{"id":"a","title":"A"}
{"id":"b","title":"B"}
`
	cases := []struct {
		agent, fixture string
		paths          []string // what the payload writes, as repository paths
	}{
		{"claude", "PreToolUse-Edit", []string{"src/editor/modal.ts"}},
		{"claude", "PreToolUse-Write", []string{"docs/notes.md"}},
		{"claude", "PreToolUse-MultiEdit", []string{"src/editor/modal.ts"}},
		{"claude", "PreToolUse-NotebookEdit", []string{"src/editor/analysis.ipynb"}},
		{"codex", "PreToolUse-apply_patch", []string{"docs/new.md", "old/unused.ts", "src/editor/modal.ts"}},
		{"codex", "PreToolUse-apply_patch-move", []string{"docs/guide.md", "docs/readme-draft.md"}},
		{"gemini", "BeforeTool-write_file", []string{"src/editor/modal.ts"}},
		{"gemini", "BeforeTool-replace", []string{"docs/notes.md"}},
	}
	for _, c := range cases {
		t.Run(c.agent+"/"+c.fixture, func(t *testing.T) {
			p := &project{backendtest.NewProject(t, backendtest.Options{Seed: two})}
			p.claim(t, "first", "a")
			p.claim(t, "second", "b")
			fire(t, p, c.agent, c.fixture, "first", nil).quiet(t, c.agent)
			if got := p.task(t, "a").TouchedFiles; !slices.Equal(got, c.paths) {
				t.Fatalf("a's touched files %q, want %q", got, c.paths)
			}
			// The second writer is refused through its own agent's hook.
			o := fire(t, p, c.agent, c.fixture, "second", nil)
			if o.code != ExitBlock || o.stdout != "" ||
				!strings.Contains(o.stderr, c.paths[0]+" was written by task a (first), still in progress") {
				t.Fatalf("second writer: exit %d stdout %q stderr %q", o.code, o.stdout, o.stderr)
			}
			if got := p.task(t, "b").TouchedFiles; len(got) != 0 {
				t.Fatalf("a refused write claimed %q", got)
			}
			// A write the task already claimed is one read, no commit.
			reg := filepath.Join(p.Root, ".rotd", "coordination", "active_work_registry.json")
			before, _ := os.ReadFile(reg)
			fire(t, p, c.agent, c.fixture, "first", nil).quiet(t, c.agent)
			if after, _ := os.ReadFile(reg); !bytes.Equal(before, after) {
				t.Fatal("a write to paths already claimed changed the registry")
			}
		})
	}
	// All or nothing: a patch of a free file and a claimed one claims
	// neither.
	p := &project{backendtest.NewProject(t, backendtest.Options{Seed: two})}
	p.claim(t, "first", "a")
	p.claim(t, "second", "b")
	fire(t, p, "claude", "PreToolUse-Edit", "first", nil).quiet(t, "claude")
	if o := fire(t, p, "codex", "PreToolUse-apply_patch", "second", nil); o.code != ExitBlock {
		t.Fatalf("patch over a claimed file: %+v", o)
	}
	if got := p.task(t, "b").TouchedFiles; len(got) != 0 {
		t.Fatalf("the free files of a refused patch were claimed: %q", got)
	}
	// An agent between tasks is refused too (write_claims_untasked guard)
	// and claims nothing.
	if o := fire(t, p, "gemini", "BeforeTool-write_file", "human", nil); o.code != ExitBlock || o.stdout != "" {
		t.Fatalf("untasked writer: %+v", o)
	}
	// Handed back: the claims go with the task.
	if _, err := p.Service.HandBack(context.Background(), app.TaskRef{Agent: coord.Agent{ID: "first"}, TaskID: "a", Epoch: coord.NoEpoch}, "session ended"); err != nil {
		t.Fatal(err)
	}
	fire(t, p, "gemini", "BeforeTool-write_file", "second", nil).quiet(t, "gemini")
}

// TestWriteClaimsWarnAndOff: with write_claims warn the second writer
// goes ahead, told who else wrote the file, and both tasks hold it; with
// off nothing is claimed.
func TestWriteClaimsWarnAndOff(t *testing.T) {
	const two = `{"id":"a"}
{"id":"b"}
`
	p := &project{backendtest.NewProject(t, backendtest.Options{Seed: two, Config: `{"write_claims":"warn"}`})}
	p.claim(t, "first", "a")
	p.claim(t, "second", "b")
	fire(t, p, "claude", "PreToolUse-Edit", "first", nil).quiet(t, "claude")
	o := fire(t, p, "claude", "PreToolUse-Edit", "second", nil)
	const warning = "coord: warning: src/editor/modal.ts (write-claimed by task a (first, claimed)); the edit goes ahead (write_claims: warn)"
	// The model reads the warning only as added context: Claude Code and
	// Codex drop a hook's stderr at exit 0.
	if want := `{"hookSpecificOutput":{"additionalContext":"` + warning + `","hookEventName":"PreToolUse"}}` + "\n"; o.code != 0 || o.stdout != want || o.stderr != warning+"\n" {
		t.Fatalf("warn: %+v", o)
	}
	if got := p.task(t, "b").TouchedFiles; !slices.Equal(got, []string{"src/editor/modal.ts"}) {
		t.Fatalf("warn records the claim: %q", got)
	}
	if _, err := exec.LookPath("git"); err == nil { // Gemini: the user at once, the model with AfterTool
		p = &project{backendtest.NewProject(t, backendtest.Options{Seed: two, Config: `{"write_claims":"warn"}`})}
		if out, err := exec.Command("git", "init", "-q", p.Root).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
		p.claim(t, "first", "a")
		p.claim(t, "second", "b")
		fire(t, p, "gemini", "BeforeTool-write_file", "first", nil).quiet(t, "gemini")
		o = fire(t, p, "gemini", "BeforeTool-write_file", "second", nil)
		if want := `{"systemMessage":"` + warning + `"}` + "\n"; o.code != 0 || o.stdout != want {
			t.Fatalf("gemini warn: %+v", o)
		}
		o = fire(t, p, "gemini", "AfterTool-write_file", "second", nil)
		if want := `{"hookSpecificOutput":{"additionalContext":"` + warning + `","hookEventName":"AfterTool"}}` + "\n"; o.code != 0 || o.stdout != want || o.stderr != "" {
			t.Fatalf("gemini warn after the tool: %+v", o)
		}
	}

	p = &project{backendtest.NewProject(t, backendtest.Options{Seed: two, Config: `{"write_claims":"off"}`})}
	p.claim(t, "first", "a")
	p.claim(t, "second", "b")
	fire(t, p, "claude", "PreToolUse-Edit", "first", nil).quiet(t, "claude")
	fire(t, p, "claude", "PreToolUse-Edit", "second", nil).quiet(t, "claude")
	if a, b := p.task(t, "a").TouchedFiles, p.task(t, "b").TouchedFiles; len(a)+len(b) != 0 {
		t.Fatalf("off claims nothing: %q %q", a, b)
	}
}

// TestEditPredicted: a write to a file that coord plan predicted for
// another agent's task in flight is never refused: the writer gets one
// line of added context naming that task, at its first write of the
// file (later writes are quiet), in every agent's convention; with
// predicted_files off, nothing.
func TestEditPredicted(t *testing.T) {
	const two = `{"id":"a","title":"modal"}
{"id":"b","title":"other"}
`
	for _, c := range []struct{ agent, fixture string }{
		// Gemini: TestEditPredictedGemini (its BeforeTool has no added context).
		{"claude", "PreToolUse-Edit"}, {"codex", "PreToolUse-apply_patch"},
	} {
		t.Run(c.agent, func(t *testing.T) {
			p := &project{backendtest.NewProject(t, backendtest.Options{Seed: two})}
			predict(t, p, "a", "src/editor/modal.ts")
			p.claim(t, "first", "a")
			p.claim(t, "second", "b")
			o := fire(t, p, c.agent, c.fixture, "second", nil)
			if o.code != 0 || o.stderr != "" {
				t.Fatalf("a prediction refused or warned: %+v", o)
			}
			hso, _ := o.json(t)["hookSpecificOutput"].(map[string]any)
			note, _ := hso["additionalContext"].(string)
			if !strings.HasPrefix(note, "coord: note: src/editor/modal.ts was predicted for task a (first), in flight") || strings.Contains(note, "\n") {
				t.Fatalf("note %q", note)
			}
			if got := p.task(t, "b").TouchedFiles; !slices.Contains(got, "src/editor/modal.ts") {
				t.Fatalf("the write was not claimed for b: %q", got)
			}
			fire(t, p, c.agent, c.fixture, "second", nil).quiet(t, c.agent)
		})
	}
	p := &project{backendtest.NewProject(t, backendtest.Options{Seed: two, Config: `{"predicted_files":"off"}`})}
	predict(t, p, "a", "src/editor/modal.ts")
	p.claim(t, "first", "a")
	p.claim(t, "second", "b")
	fire(t, p, "claude", "PreToolUse-Edit", "second", nil).quiet(t, "claude")
}

// predict records paths as task id's predicted_files, as coord plan
// does.
func predict(t *testing.T, p *project, id string, paths ...string) {
	t.Helper()
	err := p.Backend.Tasks().Update(context.Background(), func(tx *coord.Txn) error {
		tx.RecordPredictions([]coord.Prediction{{Task: id, Paths: paths}})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// predictedNote is the note TestEditPredictedGolden's writer reads.
const predictedNote = "coord: note: src/editor/modal.ts was predicted for task a (first), in flight. " +
	"The edit goes ahead; if your change meets that task's, say so (coord msg) or pick other work."

// TestEditPredictedGolden: the predicted note in the exact shape each
// agent's client hands to the model (as shipped: Claude Code 2.1.197 and
// Codex CLI 0.171.0 read hookSpecificOutput.additionalContext on
// PreToolUse; Gemini CLI 0.61.0 reads none on BeforeTool, so the user
// gets it as systemMessage and the model with the edit's AfterTool,
// appended to the tool's result, once).
func TestEditPredictedGolden(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git: Gemini's note waits in the git directory")
	}
	const two = `{"id":"a","title":"modal"}
{"id":"b","title":"other"}
`
	hso := func(event string) string {
		b, _ := json.Marshal(predictedNote)
		return `{"hookSpecificOutput":{"additionalContext":` + string(b) + `,"hookEventName":"` + event + `"}}` + "\n"
	}
	type step struct{ fixture, stdout string }
	for _, c := range []struct {
		agent string
		steps []step
	}{
		{"claude", []step{{"PreToolUse-Edit", hso("PreToolUse")}, {"PostToolUse", ""}, {"PreToolUse-Edit", ""}}},
		{"codex", []step{{"PreToolUse-apply_patch", hso("PreToolUse")}, {"PostToolUse", ""}, {"PreToolUse-apply_patch", ""}}},
		{"gemini", []step{
			{"BeforeTool-write_file", `{"systemMessage":"` + predictedNote + `"}` + "\n"},
			{"AfterTool", "{}\n"}, // not an edit: the note waits for the edit's own AfterTool
			{"AfterTool-write_file", hso("AfterTool")},
			{"AfterTool-write_file", "{}\n"}, // once
			{"BeforeTool-write_file", "{}\n"},
		}},
	} {
		t.Run(c.agent, func(t *testing.T) {
			p := &project{backendtest.NewProject(t, backendtest.Options{Seed: two})}
			if out, err := exec.Command("git", "init", "-q", p.Root).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			predict(t, p, "a", "src/editor/modal.ts")
			p.claim(t, "first", "a")
			p.claim(t, "second", "b")
			for i, s := range c.steps {
				o := fire(t, p, c.agent, s.fixture, "second", nil)
				if o.code != 0 || o.stderr != "" || o.stdout != s.stdout {
					t.Fatalf("step %d %s: exit %d stderr %q\nstdout %q\nwant   %q", i, s.fixture, o.code, o.stderr, o.stdout, s.stdout)
				}
			}
		})
	}
}

// TestEditPredictedGeminiNoGit: outside a git repository a Gemini
// session's note has nowhere to wait for AfterTool: the user still sees
// it, and stderr says the model will not.
func TestEditPredictedGeminiNoGit(t *testing.T) {
	p := &project{backendtest.NewProject(t, backendtest.Options{Seed: `{"id":"a"}
{"id":"b"}
`})}
	if _, gitDir := gitrepo.HeadCommit(p.Root); gitDir != "" {
		t.Skip("the temporary directory is inside a git repository")
	}
	predict(t, p, "a", "src/editor/modal.ts")
	p.claim(t, "first", "a")
	p.claim(t, "second", "b")
	o := fire(t, p, "gemini", "BeforeTool-write_file", "second", nil)
	if o.code != 0 || o.stdout != `{"systemMessage":"`+predictedNote+`"}`+"\n" || !strings.Contains(o.stderr, "only the user sees it") {
		t.Fatalf("%+v", o)
	}
	fire(t, p, "gemini", "AfterTool-write_file", "second", nil).quiet(t, "gemini")
}

// TestUnderRun: a session coord run started (COORD_TASK names the task
// run holds) leaves that task to run, for every agent: session end hands
// nothing back, stop asks for no release (it asks only to commit work
// left uncommitted), session start tells it to commit and finish, not to
// release; an edit claims its file for COORD_TASK, not for another task
// the agent holds.
func TestUnderRun(t *testing.T) {
	stops := map[string]string{"claude": "Stop", "codex": "Stop", "gemini": "AfterAgent"}
	for _, agent := range Agents {
		t.Run(agent, func(t *testing.T) {
			p := seeded(t, "")
			p.claim(t, "me", "free") // sent back to it earlier, say: another task it holds
			p.claim(t, "me", "ed")
			run := map[string]string{"COORD_TASK": "ed"}
			start := fire(t, p, agent, "SessionStart", "me", run)
			ctx, _ := start.json(t)["hookSpecificOutput"].(map[string]any)
			text, _ := ctx["additionalContext"].(string)
			if !strings.Contains(text, "You hold task ed") || strings.Contains(text, "Finish it (release)") ||
				strings.Contains(text, "task free") || !strings.Contains(text, "run releases it") {
				t.Fatalf("session start under run: %q", text)
			}
			fire(t, p, agent, stops[agent], "me", run).quiet(t, agent)
			o := fire(t, p, agent, "SessionEnd", "me", run)
			if o.code != 0 || strings.Contains(o.stderr, "handed back") {
				t.Fatalf("session end under run: exit %d stderr %q", o.code, o.stderr)
			}
			for _, id := range []string{"ed", "free"} {
				if tk := p.task(t, id); tk.Status != coord.Claimed || tk.ClaimedBy != "me" {
					t.Fatalf("task %s after the session ended under run: %s by %q", id, tk.Status, tk.ClaimedBy)
				}
			}
			// Without COORD_TASK the same hooks hand back and ask to release.
			if o := fire(t, p, agent, "SessionEnd", "me", nil); !strings.Contains(o.stderr, "task ed handed back") {
				t.Fatalf("session end outside run: %q", o.stderr)
			}
		})
	}
}

// TestEditClaimsForRunTask: inside coord run, a write is claimed for
// COORD_TASK, whichever task the agent holds first.
func TestEditClaimsForRunTask(t *testing.T) {
	p := seeded(t, "")
	p.claim(t, "me", "docs") // first in the registry
	p.claim(t, "me", "free")
	o := fireRaw(t, p, "claude", "PreToolUse", `{"session_id":"s","cwd":"`+p.Root+`","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"`+p.Root+`/notes.md","content":"x"}}`,
		"me", map[string]string{"COORD_TASK": "free"})
	if o.code != 0 {
		t.Fatalf("edit: %+v", o)
	}
	if got := p.task(t, "free").TouchedFiles; !slices.Equal(got, []string{"notes.md"}) {
		t.Fatalf("free touched %v, want notes.md", got)
	}
	if got := p.task(t, "docs").TouchedFiles; len(got) != 0 {
		t.Fatalf("docs touched %v", got)
	}
}
