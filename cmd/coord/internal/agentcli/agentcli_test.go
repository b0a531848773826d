//go:build !race

// The agents' CLIs are many processes (node, a native binary, coord's
// hooks and MCP server, git): the race detector sees none of them, so
// this file is built only without it.

package agentcli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rotd/coordination/registry/backend/backendtest"
)

// sessionBound is the time a CLI's session may take (the script is a few
// turns of a few seconds each): run --loop is stopped once it has run
// that long for each task.
const sessionBound = 3 * time.Minute

// agentName is the coord agent every session runs as.
const agentName = "alice"

// tasks are the tasks each CLI works through under one run --loop.
var tasks = []string{"1", "2"}

// cli is how one agent's CLI runs headless against the scripted model.
type cli struct {
	name string // coord setup's name for it
	bin  string // its command
	// configure writes what the CLI needs in the session's own HOME (or
	// CODEX_HOME) and returns the environment it adds and the command
	// line run starts (sh: $prompt holds the prompt).
	configure func(t *testing.T, s *session) (env []string, line string)
}

var clis = []cli{
	{"claude", "claude", configureClaude},
	{"codex", "codex", configureCodex},
	{"gemini", "gemini", configureGemini},
}

// dummyKey is the only key any CLI gets: the scripted model takes any.
const dummyKey = "coord-test-dummy-key"

// configureClaude: Claude Code 2.1 reads ANTHROPIC_BASE_URL and
// ANTHROPIC_API_KEY (a key in the environment needs no approval in -p
// mode) and the project's .claude/settings.json hooks. -p runs one
// prompt without a terminal; --permission-mode acceptEdits lets the
// Write tool write in the working directory and --allowedTools Bash lets
// the shell run (--dangerously-skip-permissions is refused as root).
// The project's MCP server (.mcp.json) is approved in the user settings
// of the session's HOME, as setup's next: step says.
func configureClaude(t *testing.T, s *session) ([]string, string) {
	writeFile(t, filepath.Join(s.home, ".claude", "settings.json"), `{"enableAllProjectMcpServers": true}`+"\n")
	return []string{
			"ANTHROPIC_BASE_URL=" + s.model.URL,
			"ANTHROPIC_API_KEY=" + dummyKey,
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
			"DISABLE_AUTOUPDATER=1",
		},
		shellQuote(s.cliPath) + ` -p "$prompt" --permission-mode acceptEdits --allowedTools Bash`
}

// configureCodex: Codex CLI 0.171 takes a model provider of its own from
// CODEX_HOME/config.toml (base_url, wire_api "responses", the key's
// variable) and reads the project's .codex/config.toml and hooks.json
// only in a trusted project (trust_level "trusted" for the worktree).
// The model is one of its built-in catalog, gpt-5.5, for which Codex
// offers its apply_patch edit tool (for a name it does not know it
// offers none, and the edit hook would never run). codex exec runs one
// prompt; --dangerously-bypass-approvals-and-sandbox lets the shell
// commit (the sandbox keeps .git of a linked worktree read-only), and
// --dangerously-bypass-hook-trust runs the project's hooks without the
// review its TUI asks for ("Trust all and continue"), which exec
// cannot show: exec skips untrusted hooks without a word.
func configureCodex(t *testing.T, s *session) ([]string, string) {
	codexHome := filepath.Join(s.home, ".codex")
	writeFile(t, filepath.Join(codexHome, "config.toml"), fmt.Sprintf(`model = "gpt-5.5"
model_provider = "scripted"
check_for_update_on_startup = false

[model_providers.scripted]
name = "scripted model"
base_url = %q
wire_api = "responses"
env_key = "CODEX_SCRIPTED_API_KEY"

[projects.%q]
trust_level = "trusted"
`, s.model.URL+"/v1", s.worktree))
	return []string{"CODEX_HOME=" + codexHome, "CODEX_SCRIPTED_API_KEY=" + dummyKey},
		shellQuote(s.cliPath) + ` exec --dangerously-bypass-approvals-and-sandbox --dangerously-bypass-hook-trust "$prompt"`
}

// configureGemini: Gemini CLI 0.61 sends to GOOGLE_GEMINI_BASE_URL with
// GEMINI_API_KEY when the user settings choose the API key (with the
// base URL alone it would choose its "gateway" auth, which -p refuses as
// "Invalid auth method selected"). It reads the project's
// .gemini/settings.json (hooks, MCP server) only in a trusted folder:
// GEMINI_CLI_TRUST_WORKSPACE=true. -p runs one prompt; --approval-mode
// yolo runs every tool without asking.
func configureGemini(t *testing.T, s *session) ([]string, string) {
	writeFile(t, filepath.Join(s.home, ".gemini", "settings.json"), `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
  "privacy": {"usageStatisticsEnabled": false}
}
`)
	return []string{"GEMINI_API_KEY=" + dummyKey, "GOOGLE_GEMINI_BASE_URL=" + s.model.URL, "GEMINI_CLI_TRUST_WORKSPACE=true"},
		shellQuote(s.cliPath) + ` -p "$prompt" --approval-mode yolo`
}

// TestAgentCLIs drives each agent's real CLI through whole sessions as
// the README has a user run them: a repository with coord's hooks and
// MCP server installed by coord setup (and committed), the agent in its
// own worktree, `coord run --loop -- sh -c '<cli> … "Do coord task
// $COORD_TASK …"'` working through two tasks, then `coord land`. The
// model is the scripted one: it writes work-ID.txt with the CLI's edit
// tool, commits through the shell tool, and answers.
//
// What must hold, for each CLI: the hooks ran (the session-start
// context reached the model); each task ran in exactly one session, was
// released by run and never handed back by a hook; no hook asked the
// model to release a task that run holds; run --loop drained (exit 0);
// the edit hook claimed work-ID.txt for the task; the shell saw
// COORD_AGENT and COORD_TASK; both tasks landed on main.
func TestAgentCLIs(t *testing.T) {
	dirs := os.Getenv("COORD_AGENT_CLIS")
	if dirs == "" {
		t.Skip("skipped: set COORD_AGENT_CLIS to the directory holding claude, codex and gemini (make test-agents installs them)")
	}
	backendtest.NeedGit(t)
	coordBin := buildCoord(t)
	for _, c := range clis {
		t.Run(c.name, func(t *testing.T) {
			path := findCLI(dirs, c.bin)
			if path == "" {
				t.Skipf("skipped: %s is not installed (not in %s, not on PATH)", c.bin, dirs)
			}
			runCLI(t, c, coordBin, path)
		})
	}
}

// findCLI returns bin's path in one of dirs (a PATH-like list), else on
// PATH ("": nowhere).
func findCLI(dirs, bin string) string {
	for _, d := range filepath.SplitList(dirs) {
		p := filepath.Join(d, bin)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	if p, err := exec.LookPath(bin); err == nil {
		return p
	}
	return ""
}

// buildCoord builds the coord binary the sessions run (run, the hooks,
// the MCP server) into a directory of the test's.
func buildCoord(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "coord")
	out, err := exec.Command(goTool, "build", "-o", bin, "github.com/rotd/coordination/cmd/coord").CombinedOutput()
	if err != nil {
		t.Fatalf("go build coord: %v\n%s", err, out)
	}
	return bin
}

// session is one CLI's run: its directories, environment and model.
type session struct {
	cli      cli
	cliPath  string
	coord    string // the coord binary
	repo     string // the main worktree, on main
	worktree string // the agent's
	home     string // HOME (and the CLIs' configuration)
	env      []string
	model    *scriptedModel
}

// baseEnv is the process environment without what could reach a real
// account or another project (identities, keys, endpoints, the user's
// configuration), with HOME and the XDG directories in the session's
// own, coord and the CLI first on PATH, and git as the tests run it.
func baseEnv(s *session) []string {
	drop := []string{"COORD_", "ROTD_", "ANTHROPIC_", "CLAUDE", "OPENAI_", "CODEX_", "GEMINI_", "GOOGLE_", "XDG_", "HOME=", "PATH=", "PWD=", "OLDPWD=", "GIT_"}
	var env []string
	for _, kv := range os.Environ() {
		keep := true
		for _, p := range drop {
			keep = keep && !strings.HasPrefix(kv, p)
		}
		if keep {
			env = append(env, kv)
		}
	}
	env = append(env,
		"HOME="+s.home,
		"XDG_CONFIG_HOME="+filepath.Join(s.home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(s.home, ".cache"),
		"XDG_DATA_HOME="+filepath.Join(s.home, ".local", "share"),
		"XDG_STATE_HOME="+filepath.Join(s.home, ".local", "state"),
		"PATH="+filepath.Dir(s.coord)+string(os.PathListSeparator)+filepath.Dir(s.cliPath)+string(os.PathListSeparator)+os.Getenv("PATH"),
	)
	return append(env, backendtest.GitEnv...)
}

// result is what one coord command did.
type result struct {
	stdout, stderr string
	code           int
}

// run runs coord in dir with the session's environment (and extra),
// stdin on its standard input, and returns what it did; a command that
// could not start fails t.
func (s *session) run(t *testing.T, dir string, stdin string, extra []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(s.coord, args...)
	cmd.Dir = dir
	cmd.Env = append(append([]string(nil), s.env...), extra...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("coord %s: %v", strings.Join(args, " "), err)
	}
	return result{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
}

// must is run that fails t unless coord exits 0.
func (s *session) must(t *testing.T, dir string, args ...string) string {
	t.Helper()
	r := s.run(t, dir, "", nil, args...)
	if r.code != 0 {
		t.Fatalf("%s: coord %s: exit %d\n%s%s", s.cli.name, strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

func runCLI(t *testing.T, c cli, coordBin, cliPath string) {
	root := t.TempDir()
	s := &session{cli: c, cliPath: cliPath, coord: coordBin,
		repo: filepath.Join(root, "repo"), worktree: filepath.Join(root, "wt-"+agentName), home: filepath.Join(root, "home"),
		model: newScriptedModel(t)}
	s.env = baseEnv(s)
	if err := os.MkdirAll(s.home, 0o755); err != nil {
		t.Fatal(err)
	}

	// A repository with one commit on main, coord's tree, two tasks,
	// coord's hooks and MCP server for the CLI (committed, as the README
	// says, so that the agent's worktree has them), the agent's worktree.
	if err := os.MkdirAll(s.repo, 0o755); err != nil {
		t.Fatal(err)
	}
	backendtest.Git(t, s.repo, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(s.repo, "README.md"), "# a project\n")
	backendtest.Git(t, s.repo, "add", "README.md")
	backendtest.Git(t, s.repo, "commit", "-q", "-m", "initial")
	s.must(t, s.repo, "init")
	var seed strings.Builder
	for _, id := range tasks {
		fmt.Fprintf(&seed, `{"id":%q,"title":"Write %s"}`+"\n", id, workFile(id))
	}
	if r := s.run(t, s.repo, seed.String(), nil, "seed-tasks", "--stdin"); r.code != 0 {
		t.Fatalf("coord seed-tasks: exit %d\n%s", r.code, r.stderr)
	}
	s.must(t, s.repo, "setup", c.name)
	backendtest.Git(t, s.repo, "add", "-A")
	backendtest.Git(t, s.repo, "commit", "-q", "-m", "coord setup "+c.name)
	s.must(t, s.repo, "worktree", "add", agentName, "--path", s.worktree)

	extra, line := c.configure(t, s)
	s.env = append(s.env, extra...)

	// A lander beside the agent, as a team runs one: run --loop drains
	// only once its released work has landed.
	lander := s.start(t, s.repo, nil, "land", "--watch")
	t.Cleanup(lander.stop)

	// run --loop in the agent's worktree, the README's combination.
	script := `prompt="Do coord task $COORD_TASK in $PWD: write ` + workFile("$COORD_TASK") +
		` with your edit tool, commit it with git, then stop." && exec ` + line
	run := s.loop(t, script)
	defer func() {
		lander.stop()
		s.saveArtifacts(t, run, lander)
	}()
	t.Logf("%s: run --loop exited %d%s; the model's requests:\n%s", c.name, run.code, run.stopped, s.model.Summary())
	t.Logf("%s: run --loop's stderr (last lines):\n%s", c.name, lastLines(run.stderr, 40))

	log := s.logEntries(t)
	if st := backendtest.Git(t, s.worktree, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Logf("%s: left uncommitted in the worktree after run --loop:\n%s", c.name, st)
	}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	// The hooks ran at all: the session-start context reached the model.
	if len(s.model.Reached("This session is coord agent "+agentName)) == 0 {
		bad("the SessionStart hook's context (%q) never reached the model: coord's hooks did not run in the session", "This session is coord agent "+agentName)
	}
	outcomes := sessionOutcomes(run.stderr)
	sessions := s.model.Sessions()
	for _, id := range tasks {
		if sessions[id] == 0 {
			bad("task %s never ran", id)
			continue
		}
		first := "run said nothing of it" // how run ended the task's first session
		if len(outcomes[id]) > 0 && outcomes[id][0] != "" {
			first = strconv.Quote(outcomes[id][0])
		}
		handedBack := handBacks(log, id, run.stopped != "")
		for _, why := range handedBack {
			by := fmt.Sprintf("with the reason %q", why.reason)
			if why.reason == "session ended" {
				by = "by the SessionEnd hook at the end of its session"
			}
			bad("task %s handed back %s (%s); run's release then failed: %s", id, by, times(why.n), first)
		}
		startRE := regexp.MustCompile(`You hold task ` + regexp.QuoteMeta(id) + ` \(.{0,300}?Finish it \(release\)`)
		if r := s.model.Matched(startRE); len(r) > 0 {
			bad("the SessionStart hook told the model to finish (release) task %s, which run holds and releases itself (in %d of the model's turns)", id, len(r))
		}
		if r := s.model.Reached("you still hold task " + id + " "); len(r) > 0 {
			bad("the Stop hook told the model to release or block task %s, which run holds and releases itself (in %d of the model's turns)", id, len(r))
		}
		if n := sessions[id]; n > 1 {
			bad("task %s ran in %d sessions: run --loop took it again after %s", id, n, first)
		}
		released := len(outcomes[id]) > 0 && regexp.MustCompile(`^coord: run: released `+regexp.QuoteMeta(id)+`\b`).MatchString(outcomes[id][0])
		if !released && len(handedBack) == 0 {
			bad("run did not release task %s: %s", id, first)
		}
		if n := countPrefix(log, "released task "+id); released && n != 1 {
			bad("task %s: the log has %d 'released task %s' lines, want 1", id, n, id)
		}
	}
	switch {
	case run.stopped != "":
		bad("run --loop %s", strings.TrimPrefix(run.stopped, "; "))
	case run.code != 0:
		bad("run --loop exited %d: %s", run.code, lastLines(run.stderr, 1))
	case !strings.Contains(run.stdout, `"drained"`):
		bad("run --loop exited 0 without saying drained")
	}
	if len(problems) > 0 {
		t.Logf("%s: coord log:\n%s", c.name, formatLog(log))
		for _, p := range problems {
			t.Errorf("%s: %s", c.name, p)
		}
		return
	}

	// Each session: the edit hook claimed the file for the task, the shell
	// saw run's environment.
	byID := s.tasks(t)
	for _, id := range tasks {
		if !contains(byID[id].TouchedFiles, workFile(id)) {
			bad("task %s: the edit hook did not claim %s (touched_files %v)", id, workFile(id), byID[id].TouchedFiles)
		}
		want := envMarker + " COORD_AGENT=" + agentName + " COORD_TASK=" + id
		if len(s.model.Reached(want)) == 0 {
			bad("task %s: the shell tool did not see run's environment: want %q in its output, saw %s", id, want, s.envSeen())
		}
	}

	// Landing: every task on main.
	allLanded := func() bool {
		rows := s.tasks(t)
		for _, id := range tasks {
			if rows[id].LandedCommit == "" {
				return false
			}
		}
		return true
	}
	backendtest.WaitFor(allLanded)
	lander.stop()
	t.Logf("%s: coord land --watch (stopped once the tasks landed or %s passed): exit %d\n%s%s",
		c.name, backendtest.Timeout, lander.code(), lander.stdout.String(), lander.stderr.String())
	byID = s.tasks(t)
	t.Logf("%s: main after the landings:\n%s", c.name, backendtest.Git(t, s.repo, "log", "--stat", "--format=%h %s", "main"))
	mainLog := backendtest.Git(t, s.repo, "log", "--format=%s", "main")
	for _, id := range tasks {
		if byID[id].LandedCommit == "" {
			bad("task %s did not land (status %s, no landed_commit; the lander said: %s)", id, byID[id].Status, lastLines(lander.stderr.String()+lander.stdout.String(), 1))
		}
		if !strings.Contains(mainLog, commitSubject(id)) {
			bad("main does not hold the commit %q", commitSubject(id))
		}
	}
	for _, p := range problems {
		t.Errorf("%s: %s", c.name, p)
	}
}

// saveArtifacts keeps, when COORD_ARTIFACTS names a directory, what the
// session did under COORD_ARTIFACTS/agentcli/CLI: the output of run and
// of the lander, coord's log, and every request the model got
// (requests/NNN-API-REPLY.json), where the hooks' outputs the CLI gave
// the model can be read.
func (s *session) saveArtifacts(t *testing.T, run loopRun, lander *proc) {
	base := os.Getenv("COORD_ARTIFACTS")
	if base == "" {
		return
	}
	dir := filepath.Join(base, "agentcli", s.cli.name)
	os.RemoveAll(dir)
	writeFile(t, filepath.Join(dir, "run.stdout"), run.stdout)
	writeFile(t, filepath.Join(dir, "run.stderr"), run.stderr)
	writeFile(t, filepath.Join(dir, "lander.stdout"), lander.stdout.String())
	writeFile(t, filepath.Join(dir, "lander.stderr"), lander.stderr.String())
	writeFile(t, filepath.Join(dir, "coord.log"), formatLog(s.logEntries(t)))
	writeFile(t, filepath.Join(dir, "requests.txt"), s.model.Summary())
	for i, r := range s.model.Requests() {
		writeFile(t, filepath.Join(dir, "requests", fmt.Sprintf("%03d-%s-%s.json", i+1, r.API, r.Reply)), r.Body)
	}
	t.Logf("%s: the session's output and the model's requests are in %s", s.cli.name, dir)
}

// proc is a coord process the test runs in the background, in a
// process group of its own.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr lockedBuffer
	done           chan struct{}
	once           sync.Once
}

// start starts coord in dir with the session's environment (and extra).
func (s *session) start(t *testing.T, dir string, extra []string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(s.coord, args...), done: make(chan struct{})}
	p.cmd.Dir = dir
	p.cmd.Env = append(append([]string(nil), s.env...), extra...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("coord %s: %v", strings.Join(args, " "), err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	return p
}

// stop ends p, if it still runs: SIGTERM (on which run hands its task
// back and stops the session, and the lander finishes), SIGKILL to its
// group 30 s later. It returns once p has exited.
func (p *proc) stop() {
	p.once.Do(func() {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		}
	})
	<-p.done
}

// code is p's exit status (-1: killed by a signal); p has exited.
func (p *proc) code() int { return p.cmd.ProcessState.ExitCode() }

// loopRun is how run --loop ended.
type loopRun struct {
	code           int
	stdout, stderr string
	stopped        string // "": it ended by itself; else why the test stopped it
}

// loop runs `coord run --loop -- sh -c script` as the agent in its
// worktree until it exits. The test stops it when a task starts a
// second session (the loop took it again: it would go on forever) or
// when it runs past sessionBound for each task.
func (s *session) loop(t *testing.T, script string) loopRun {
	p := s.start(t, s.worktree, []string{"COORD_AGENT=" + agentName}, "run", "--loop", "--", "sh", "-c", script)
	defer p.stop()
	var stopped string
	bound := time.After(sessionBound * time.Duration(len(tasks)))
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case <-p.done:
			break wait
		case <-bound:
			stopped = fmt.Sprintf("; was stopped: still running after %s (%s a task)", sessionBound*time.Duration(len(tasks)), sessionBound)
			break wait
		case <-tick.C:
			for _, id := range tasks {
				if n := s.model.Sessions()[id]; n > 1 {
					stopped = fmt.Sprintf("; was stopped: it took task %s again for a session %d (it would loop on it forever)", id, n)
					break wait
				}
			}
		}
	}
	p.stop()
	return loopRun{code: p.code(), stdout: p.stdout.String(), stderr: p.stderr.String(), stopped: stopped}
}

// sessionOutcomes reads run's stderr: for each task, how run ended each
// of its sessions: the last coord line before run claims again or ends
// (run speaks after the session's process exits; a hook's line, which
// a CLI may show, comes before), "" when there is none.
func sessionOutcomes(stderr string) map[string][]string {
	claimed := regexp.MustCompile(`^coord: run: claimed ([A-Za-z0-9._-]+)`)
	out := map[string][]string{}
	task, last := "", ""
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "coord: ") || strings.HasPrefix(l, "coord: run: waiting for ") {
			continue // not run's word on the session (waiting: between sessions)
		}
		if m := claimed.FindStringSubmatch(l); m != nil {
			if task != "" {
				out[task] = append(out[task], last)
			}
			task, last = m[1], ""
			continue
		}
		last = l
	}
	if task != "" {
		out[task] = append(out[task], last)
	}
	return out
}

// handBack is a reason a task was handed back for, and how often.
type handBack struct {
	reason string
	n      int
}

// handBacks returns the reasons task id was handed back for, in the
// order of the log; a signal's hand-back is left out when the test
// stopped run (run hands its task back on SIGTERM).
func handBacks(log []logEntry, id string, stopped bool) []handBack {
	var out []handBack
	prefix := "handed back task " + id + " ("
	for _, e := range log {
		rest, ok := strings.CutPrefix(e.Message, prefix)
		if !ok {
			continue
		}
		reason, _, _ := strings.Cut(rest, ")")
		if stopped && strings.HasPrefix(reason, "interrupted by SIG") {
			continue
		}
		if i := len(out) - 1; i >= 0 && out[i].reason == reason {
			out[i].n++
			continue
		}
		out = append(out, handBack{reason, 1})
	}
	return out
}

func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return strconv.Itoa(n) + " times"
}

// logEntry is a line of coord log --json.
type logEntry struct {
	AgentID string `json:"agent_id"`
	Message string `json:"message"`
}

func (s *session) logEntries(t *testing.T) []logEntry {
	t.Helper()
	var out []logEntry
	sc := bufio.NewScanner(strings.NewReader(s.must(t, s.repo, "log", "--json")))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e logEntry
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

func formatLog(log []logEntry) string {
	var b strings.Builder
	for _, e := range log {
		fmt.Fprintf(&b, "  %s ▶ %s\n", e.AgentID, e.Message)
	}
	return b.String()
}

func countPrefix(log []logEntry, prefix string) int {
	n := 0
	for _, e := range log {
		if e.Message == prefix || strings.HasPrefix(e.Message, prefix+" ") || strings.HasPrefix(e.Message, prefix+":") {
			n++
		}
	}
	return n
}

// taskRow is what the test reads of coord ls --json.
type taskRow struct {
	ID           string   `json:"id"`
	Status       string   `json:"status"`
	TouchedFiles []string `json:"touched_files"`
	LandedCommit string   `json:"landed_commit"`
}

func (s *session) tasks(t *testing.T) map[string]taskRow {
	t.Helper()
	var rows []taskRow
	out := s.must(t, s.repo, "ls", "--json")
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("coord ls --json: %v\n%s", err, out)
	}
	m := map[string]taskRow{}
	for _, r := range rows {
		m[r.ID] = r
	}
	return m
}

// envSeen says what the script's shell command printed, as the model
// read it ("nothing" when no output reached it).
func (s *session) envSeen() string {
	re := regexp.MustCompile(regexp.QuoteMeta(envMarker) + ` COORD_AGENT=[^ \\"]* COORD_TASK=[^ \\"]*`)
	seen := map[string]bool{}
	for _, r := range s.model.Requests() {
		for _, m := range re.FindAllString(r.Body, -1) {
			seen[strconv.Quote(m)] = true
		}
	}
	if len(seen) == 0 {
		return "nothing"
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// lockedBuffer is a bytes.Buffer safe for a process's output and a
// reader at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
