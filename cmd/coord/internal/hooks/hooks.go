package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rotd/coordination/cmd/coord/internal/workspace"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/fsops"
	"github.com/rotd/coordination/internal/gitrepo"
)

// Exit statuses of a hook.
const (
	ExitOK      = 0 // go ahead (stdout may carry the agent's JSON)
	ExitWarning = 1 // coord's own trouble: every agent shows it and goes on
	ExitBlock   = 2 // the agents' blocking status: the edit is refused
)

// ConnectTimeout bounds a hook's connection to a remote backend (a NATS
// hub), shorter than a command's: a hook runs before every edit, and a
// hub that is down must cost each edit a short stall and a one-line
// warning, not the 8 s a command allows. A hub answers a healthy
// connection in milliseconds on a LAN and well under a second across
// the world.
const ConnectTimeout = 2 * time.Second

// Agents are the agents coord has hooks for.
var Agents = []string{"claude", "codex", "gemini"}

// kind is what coord does for an event, whatever the agent calls it.
type kind int

const (
	start kind = iota + 1
	edit
	after
	stop
	end
)

// event is one of an agent's hook events and what coord does for it.
type event struct {
	name string
	kind kind
}

// events are, for each agent, every event it has for session start, the
// edit tools, after a tool, stop and session end, in the order setup
// installs them (the agents as they ship: Claude Code 2.1.197, Codex CLI
// 0.171.0, Gemini CLI 0.61.0). Claude Code sends a tool that failed to
// PostToolUseFailure instead of PostToolUse; Codex has SessionEnd.
var events = map[string][]event{
	"claude": {{"SessionStart", start}, {"PreToolUse", edit}, {"PostToolUse", after}, {"PostToolUseFailure", after}, {"Stop", stop}, {"SessionEnd", end}},
	"codex":  {{"SessionStart", start}, {"PreToolUse", edit}, {"PostToolUse", after}, {"Stop", stop}, {"SessionEnd", end}},
	"gemini": {{"SessionStart", start}, {"BeforeTool", edit}, {"AfterTool", after}, {"AfterAgent", stop}, {"SessionEnd", end}},
}

// Events returns the event names coord handles for agent, in the order
// setup installs them.
func Events(agent string) []string {
	var out []string
	for _, e := range events[agent] {
		out = append(out, e.name)
	}
	return out
}

// ErrNoProject is what Open returns when the session stands in no
// coordinated project: the hooks then have nothing to do.
var ErrNoProject = errors.New("no coordination tree")

// Project is the project a hook acts on, opened as the session's agent.
type Project struct {
	Service *app.Service
	Agent   string // the session's identity
	Root    string // the project root (where .rotd is)
	// Merger is the project's repository for conflict scans (nil: no
	// scan from the hooks).
	Merger func() (app.Merger, error)
}

// Options are what a hook run needs from the CLI.
type Options struct {
	Agent string // claude, codex or gemini
	Event string // the agent's event name; "": the payload's hook_event_name
	Stdin io.Reader
	// Stdout receives only the agent's JSON; Stderr what people and, on a
	// refusal, the model read.
	Stdout, Stderr io.Writer
	// Getenv reads the environment (nil: os.Getenv).
	Getenv func(string) string
	// Open opens the project for a session standing in dir (ErrNoProject
	// when there is none).
	Open func(ctx context.Context, dir string) (*Project, error)
	// Prime is the text given at session start ("": app.Prime).
	Prime string
}

// payload is what the agents send: the fields coord reads, in the three
// agents' common shape (unknown fields ignored).
type payload struct {
	SessionID      string          `json:"session_id"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	StopHookActive bool            `json:"stop_hook_active"`
	Source         string          `json:"source"` // SessionStart: startup, resume, clear, compact
	Reason         string          `json:"reason"` // SessionEnd: exit, clear, resume, logout, other, …
}

// maxPayload bounds what a hook reads from stdin (a patch can be large).
const maxPayload = 64 << 20

// Run runs one hook and returns its exit status.
func Run(ctx context.Context, opt Options) int {
	if opt.Getenv == nil {
		opt.Getenv = os.Getenv
	}
	if opt.Prime == "" {
		opt.Prime = app.Prime
	}
	h := &hook{opt: opt}
	code, err := h.run(ctx)
	if err != nil {
		what := "the tool goes ahead"
		if h.kind == start || h.kind == stop || h.kind == end {
			what = "the session goes on"
		}
		fmt.Fprintf(opt.Stderr, "coord: hook %s %s: %s (%s)\n", opt.Agent, h.eventName, coord.OneLine(err.Error()), what)
		return ExitWarning
	}
	return code
}

type hook struct {
	opt       Options
	kind      kind
	eventName string
	p         payload
}

func (h *hook) run(ctx context.Context) (int, error) {
	h.eventName = h.opt.Event
	names, ok := events[h.opt.Agent]
	if !ok {
		return 0, fmt.Errorf("unknown agent %q (one of %s)", h.opt.Agent, strings.Join(Agents, ", "))
	}
	body, err := io.ReadAll(io.LimitReader(h.opt.Stdin, maxPayload+1))
	if err != nil {
		return 0, fmt.Errorf("reading the payload: %v", err)
	}
	if len(body) > maxPayload {
		return 0, fmt.Errorf("payload larger than %d bytes", maxPayload)
	}
	if err := json.Unmarshal(body, &h.p); err != nil {
		return 0, fmt.Errorf("the payload on stdin is not the agent's JSON: %v", err)
	}
	if h.eventName == "" {
		h.eventName = h.p.HookEventName
	}
	for _, e := range names {
		if strings.EqualFold(e.name, h.eventName) {
			h.kind, h.eventName = e.kind, e.name
		}
	}
	if h.kind == 0 {
		return 0, fmt.Errorf("event %q is not one coord handles for %s (%s)", h.eventName, h.opt.Agent, strings.Join(Events(h.opt.Agent), ", "))
	}
	switch h.kind {
	case start:
		return h.start(ctx)
	case edit:
		return h.edit(ctx)
	case after:
		return h.after(ctx)
	case stop:
		return h.stop(ctx)
	}
	return h.end(ctx)
}

// dir is where the session stands: the project directory the agent names
// (workspace.ProjectDir, as the MCP server takes it), else the payload's
// cwd, else the process's.
func (h *hook) dir() string {
	if d := workspace.ProjectDir(h.opt.Agent, h.opt.Getenv); d != "" {
		return d
	}
	if h.p.Cwd != "" {
		return h.p.Cwd
	}
	wd, _ := os.Getwd()
	return wd
}

// open opens the project; ok is false when there is none.
func (h *hook) open(ctx context.Context) (*Project, bool, error) {
	p, err := h.opt.Open(ctx, h.dir())
	if errors.Is(err, ErrNoProject) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return p, true, nil
}

// quiet is the stdout of a hook with nothing to say: nothing, except for
// Gemini, whose stdout must be JSON.
func (h *hook) quiet() {
	if h.opt.Agent == "gemini" {
		fmt.Fprintln(h.opt.Stdout, "{}")
	}
}

func (h *hook) writeJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(h.opt.Stdout, "%s\n", b)
	return err
}

// --- session start ------------------------------------------------------

func (h *hook) start(ctx context.Context) (int, error) {
	p, ok, err := h.open(ctx)
	if err != nil {
		return 0, err
	}
	if !ok {
		fmt.Fprintf(h.opt.Stderr, "coord: no coordination tree for %s; coord's hooks do nothing here (run 'coord init' in the project root)\n", h.dir())
		h.quiet()
		return ExitOK, nil
	}
	v, err := p.Service.Status(ctx, p.Agent)
	if err != nil {
		return 0, err
	}
	if len(v.Holding) > 0 { // a resumed session: its heartbeat counts from now
		if err := p.Service.Beat(ctx, p.Agent, nil); err != nil {
			return 0, err
		}
	}
	if err := h.exportAgent(p.Agent); err != nil {
		return 0, err
	}
	return ExitOK, h.writeJSON(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName":     "SessionStart",
		"additionalContext": StartContext(h.opt.Prime, v, h.underRun()),
	}})
}

// StartContext is what a session is told at its start: the prime text,
// its identity, and what it holds (with why, for work sent back to it).
// Inside coord run (run: the task it holds), the session works on that
// task only, and run releases it: the session is told to commit its
// work and finish, not to release.
func StartContext(prime string, v app.StatusView, run string) string {
	var b strings.Builder
	b.WriteString(strings.TrimRight(prime, "\n"))
	fmt.Fprintf(&b, "\n\nThis session is coord agent %s (the coord MCP tools and coord commands act as it).", v.Agent)
	for _, t := range v.Holding {
		if run != "" && t.ID != run {
			continue // coord run takes its other work up in turn
		}
		fmt.Fprintf(&b, "\nYou hold task %s (epoch %d, %s, %d%%)", t.ID, t.Epoch, t.Status, t.Progress)
		if t.Title != "" {
			fmt.Fprintf(&b, ": %s", coord.OneLine(t.Title))
		}
		if run != "" {
			b.WriteString(". coord run gave it to this session: do it, commit your work on this branch, and finish; run releases it (or block it with a reason if it cannot be done).")
		} else {
			b.WriteString(". Finish it (release) or block it with a reason.")
		}
		if t.ReviewNotes != "" { // sent back: rejected, a review made void, a landing refused
			fmt.Fprintf(&b, " It was sent back to you: %s.", strings.TrimRight(coord.OneLine(t.ReviewNotes), "."))
		}
	}
	for _, l := range v.Locks {
		fmt.Fprintf(&b, "\nYou hold a path lock on %s.", l.Path)
	}
	if v.Drained {
		b.WriteString("\nNo work is left in the registry.")
	}
	return b.String() + "\n"
}

// exportAgent appends `export COORD_AGENT=ID` to the env file the agent
// names for its session (Claude: CLAUDE_ENV_FILE; Codex: CODEX_ENV_FILE
// or CLAUDE_ENV_FILE), so its shell commands act as the same agent.
// Gemini has no such file.
func (h *hook) exportAgent(agent string) error {
	var name string
	switch h.opt.Agent {
	case "claude":
		name = h.opt.Getenv("CLAUDE_ENV_FILE")
	case "codex":
		if name = h.opt.Getenv("CODEX_ENV_FILE"); name == "" {
			name = h.opt.Getenv("CLAUDE_ENV_FILE")
		}
	}
	if name == "" {
		return nil
	}
	// Through fsops: a FIFO, socket, device or directory there is refused
	// at once, never waited on (a FIFO without a reader held the session
	// start forever).
	line := "export COORD_AGENT=" + agent + "\n" // ids are [A-Za-z0-9_-]: no quoting needed
	if err := fsops.AppendFile(name, []byte(line), 0o600); err != nil {
		return fmt.Errorf("cannot export COORD_AGENT to %s: %v", name, err)
	}
	return nil
}

// --- before an edit -----------------------------------------------------

func (h *hook) edit(ctx context.Context) (int, error) {
	files := EditedFiles(h.p.ToolName, h.p.ToolInput)
	if len(files) == 0 {
		h.quiet()
		return ExitOK, nil
	}
	p, ok, err := h.open(ctx)
	if err != nil || !ok {
		if err == nil {
			h.quiet()
		}
		return ExitOK, err
	}
	cwd := h.p.Cwd
	if cwd == "" {
		cwd = h.dir()
	}
	m := workspace.NewPaths(p.Root, cwd)
	var paths []string
	for _, f := range files {
		if !filepath.IsAbs(f) {
			// Joined as text, never cleaned: a ".." after a symbolic
			// link is resolved as the kernel resolves it (EditPaths).
			f = cwd + string(filepath.Separator) + f
		}
		rps, err := m.EditPaths(f) // the file and, through a link to a file, its target
		if err != nil {
			continue // outside the project (or the root itself, or through a link out of it): not coord's
		}
		paths = append(paths, rps...)
	}
	if len(paths) == 0 {
		h.quiet()
		return ExitOK, nil
	}
	// The write claims the paths for the task the agent works on (all or
	// nothing), or is refused naming whoever holds one of them.
	plan, err := p.Service.WriteClaimFor(ctx, p.Agent, h.working(cwd), paths)
	if coord.CodeOf(err) == coord.CodeLost {
		// A fenced writer: its task was taken from it. The edit is refused
		// as any conflict is (the agents' blocking status), saying so.
		msg := err.Error()
		var ce *coord.Error
		if errors.As(err, &ce) {
			msg = ce.Msg
		}
		fmt.Fprintf(h.opt.Stderr, "coord: edit refused: %s. Stop working on it.\n", strings.TrimPrefix(coord.OneLine(msg), "write refused: "))
		return ExitBlock, nil
	}
	if refused := plan.Refused(); err != nil && len(refused) > 0 && coord.CodeOf(err) == coord.CodeConflict {
		fmt.Fprint(h.opt.Stderr, Refusal(refused))
		return ExitBlock, nil
	}
	if err != nil {
		return 0, err
	}
	// What the writer is told, the edit going ahead: the holders
	// write_claims: warn only names, and the tasks predicted to touch
	// the files (a prediction never refuses a write, docs/PLANNING.md). An
	// agent reads neither on stderr at exit 0: both go in added context.
	var lines []string
	for _, hit := range plan.Hits { // only warnings are left
		line := fmt.Sprintf("coord: warning: %s; the edit goes ahead (write_claims: warn)", coord.OneLine(hit.String()))
		fmt.Fprintln(h.opt.Stderr, line)
		lines = append(lines, line)
	}
	if notes := plan.Notes(); len(notes) > 0 {
		lines = append(lines, PredictedContext(notes))
	}
	if len(lines) > 0 {
		text := strings.Join(lines, "\n")
		if h.opt.Agent == "gemini" {
			// Gemini CLI (0.61.0) reads no added context from BeforeTool
			// (only a denial's reason reaches the model): the text waits
			// for the edit's AfterTool, which appends it to the tool's
			// result; the user sees it at once.
			h.stashNotes(lines)
			return ExitOK, h.writeJSON(map[string]any{"systemMessage": text})
		}
		return ExitOK, h.writeJSON(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName":     h.eventName,
			"additionalContext": text,
		}})
	}
	h.quiet()
	return ExitOK, nil
}

// working says which task the session works on: the one coord run gave
// it (COORD_TASK), else the one whose branch the session's worktree has
// checked out (read without a git process).
func (h *hook) working(cwd string) coord.Working {
	if id := h.opt.Getenv(coord.EnvTask); id != "" && coord.ValidTaskID(id) == nil {
		return coord.Working{Task: id}
	}
	return coord.Working{Branch: gitrepo.HeadBranch(cwd)}
}

// underRun reports whether the session runs inside coord run (COORD_TASK
// names the task run holds): run takes, releases and hands back tasks,
// not the session's hooks.
func (h *hook) underRun() string {
	if id := h.opt.Getenv(coord.EnvTask); coord.ValidTaskID(id) == nil {
		return id
	}
	return ""
}

// PredictedContext is the one line an agent reads when it writes a file
// that coord plan predicted for another agent's task in flight.
func PredictedContext(notes []coord.PredictedNote) string {
	var parts []string
	for _, n := range notes {
		parts = append(parts, n.String())
	}
	return "coord: note: " + coord.OneLine(strings.Join(parts, "; ")) + ". The edit goes ahead; if your change meets that task's, say so (coord msg) or pick other work."
}

// Refusal is what an agent reads when its edit is refused: one line per
// file naming the holder and the task, and what to do.
func Refusal(hits []coord.GuardHit) string {
	var b strings.Builder
	seen := map[string]bool{}
	for _, h := range hits {
		line := ""
		switch {
		case h.Claimed != "":
			line = fmt.Sprintf("%s was written by %s", h.Path, claimWho(h))
		case h.TaskID != "":
			line = fmt.Sprintf("%s is in the files of task %s, held by %s", h.Path, h.TaskID, h.Holder)
		case h.LockTask != "":
			line = fmt.Sprintf("%s is under %s's path lock on %s (task %s)", h.Path, h.Holder, h.Lock, h.LockTask)
		default:
			line = fmt.Sprintf("%s is under %s's path lock on %s (no task)", h.Path, h.Holder, h.Lock)
		}
		if !seen[line] {
			seen[line] = true
			fmt.Fprintf(&b, "coord: edit refused: %s.\n", coord.OneLine(line))
		}
	}
	b.WriteString("coord: leave the file to its holder: pick other work (coord ready) or wait until it is released (a file another task wrote stays its own until that work has landed).\n")
	return b.String()
}

// claimWho names the task holding a write claim for an agent reading a
// refusal: "task 4.3 (bob), still in flight", or for finished work "task
// 4.3 (bob), done and not yet landed".
func claimWho(h coord.GuardHit) string {
	state := "still in progress"
	switch h.Status {
	case coord.Done:
		state = "done and not yet landed"
	case coord.Review:
		state = "in review"
	case coord.Blocked:
		state = "blocked"
	}
	return fmt.Sprintf("task %s (%s), %s", h.TaskID, h.Holder, state)
}

// --- after a tool -------------------------------------------------------

func (h *hook) after(ctx context.Context) (int, error) {
	p, ok, err := h.open(ctx)
	if err != nil || !ok {
		if err == nil {
			h.quiet()
		}
		return ExitOK, err
	}
	if err := p.Service.Beat(ctx, p.Agent, nil); err != nil {
		return 0, err
	}
	h.scanIfMoved(ctx, p)
	// The conflicts found for the agent's work since it was last told
	// (coord conflicts, watch, schedule, a scan just above): one line,
	// once.
	told, err := p.Service.TellConflicts(ctx, p.Agent)
	if err != nil {
		return 0, err
	}
	var lines []string
	if h.opt.Agent == "gemini" && len(EditedFiles(h.p.ToolName, h.p.ToolInput)) > 0 {
		lines = h.takeNotes() // the notes this session's BeforeTool kept
	}
	if len(told) > 0 {
		lines = append(lines, ConflictContext(told))
	}
	if len(lines) == 0 {
		h.quiet()
		return ExitOK, nil
	}
	return ExitOK, h.writeJSON(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName":     h.eventName,
		"additionalContext": strings.Join(lines, "\n"),
	}})
}

// notesFile is the file, in the session's worktree's git directory,
// where a Gemini session's BeforeTool keeps the predicted notes its
// AfterTool delivers (one per line; one file per session).
func (h *hook) notesFile() (gitDir, name string) {
	cwd := h.p.Cwd
	if cwd == "" {
		cwd = h.dir()
	}
	_, gitDir = gitrepo.HeadCommit(cwd)
	id := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return -1
	}, h.p.SessionID)
	if len(id) > 64 {
		id = id[:64]
	}
	return gitDir, "coord-hook-notes-" + id
}

// stashNotes keeps lines for the session's next AfterTool of an edit
// tool. Outside a git repository there is nowhere to keep them: the
// user still sees them (systemMessage), and stderr says the model won't.
func (h *hook) stashNotes(lines []string) {
	gitDir, name := h.notesFile()
	err := errors.New("not in a git repository")
	if gitDir != "" {
		var t *fsops.Tree
		if t, err = fsops.OpenTree(gitDir); err == nil {
			var b strings.Builder
			for _, l := range lines {
				b.WriteString(coord.OneLine(l) + "\n")
			}
			err = t.AppendLine(name, []byte(b.String()))
			t.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(h.opt.Stderr, "coord: warning: the note cannot wait for AfterTool (%s): only the user sees it\n", coord.OneLine(err.Error()))
	}
}

// takeNotes returns and removes the notes the session's BeforeTool
// kept. The file is renamed aside before it is read, so a note a
// parallel edit appends meanwhile starts a new file and waits for the
// next AfterTool instead of being lost.
func (h *hook) takeNotes() []string {
	gitDir, name := h.notesFile()
	if gitDir == "" {
		return nil
	}
	t, err := fsops.OpenTree(gitDir)
	if err != nil {
		return nil
	}
	defer t.Close()
	taken := fmt.Sprintf("%s.taken-%d", name, os.Getpid())
	if t.Rename(name, taken) != nil {
		return nil // none kept (the common case: one failed rename)
	}
	b, err := t.ReadFile(taken, 1<<20)
	t.Remove(taken)
	if err != nil {
		fmt.Fprintf(h.opt.Stderr, "coord: warning: notes kept for this session unreadable: %s\n", coord.OneLine(err.Error()))
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// headSeen is the file in a worktree's git directory that holds the
// HEAD the last after-tool hook there scanned at.
const headSeen = "coord-hook-head"

// scanIfMoved scans the work in flight for conflicts when the session's
// worktree has moved its HEAD since an after-tool hook there last saw it
// (the agent committed, checked out, reset): the agent is then told of
// a conflict its commit made at once, whether or not watch or schedule
// runs. Telling whether HEAD moved reads git's files (no process); the
// scan (a git run for the tips, merges only of the pairs that moved)
// runs once per move. A scan that fails is said on stderr and not
// retried until HEAD moves again.
func (h *hook) scanIfMoved(ctx context.Context, p *Project) {
	if p.Merger == nil {
		return
	}
	cwd := h.p.Cwd
	if cwd == "" {
		cwd = h.dir()
	}
	head, gitDir := gitrepo.HeadCommit(cwd)
	if head == "" {
		return
	}
	if b, err := fsops.ReadFile(filepath.Join(gitDir, headSeen), 256); err == nil && strings.TrimSpace(string(b)) == head {
		return
	}
	m, err := p.Merger()
	if err == nil {
		_, err = p.Service.Conflicts(ctx, m)
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(h.opt.Stderr, "coord: warning: no conflict scan after HEAD moved: %s\n", coord.OneLine(err.Error()))
	}
	if t, err := fsops.OpenTree(gitDir); err == nil {
		t.WriteFile(headSeen, []byte(head+"\n"), 0o644)
		t.Close()
	}
}

// ConflictContext is the line an agent's context gets when its work
// conflicts: each conflict's sentence, on one line.
func ConflictContext(told []coord.Notice) string {
	parts := make([]string, len(told))
	for i, n := range told {
		parts[i] = n.String()
	}
	return coord.OneLine(strings.Join(parts, " "))
}

// --- stop ---------------------------------------------------------------

func (h *hook) stop(ctx context.Context) (int, error) {
	if h.p.StopHookActive { // already continuing because of a stop hook: let it stop
		h.quiet()
		return ExitOK, nil
	}
	p, ok, err := h.open(ctx)
	if err != nil || !ok {
		if err == nil {
			h.quiet()
		}
		return ExitOK, err
	}
	decision := "block"
	if h.opt.Agent == "gemini" {
		decision = "deny" // AfterAgent: a new turn with the reason as its prompt
	}
	if id := h.underRun(); id != "" {
		// coord run releases the task when the session ends: what it
		// cannot carry is work left uncommitted.
		left, err := p.Service.LeftUncommitted(ctx, id)
		if err != nil || len(left) == 0 {
			h.quiet()
			return ExitOK, err
		}
		return ExitOK, h.writeJSON(map[string]string{"decision": decision, "reason": CommitReason(id, left)})
	}
	v, err := p.Service.Status(ctx, p.Agent)
	if err != nil {
		return 0, err
	}
	var held []*coord.Task
	for _, t := range v.Holding {
		if t.Status == coord.Claimed {
			held = append(held, t)
		}
	}
	if len(held) == 0 {
		h.quiet()
		return ExitOK, nil
	}
	return ExitOK, h.writeJSON(map[string]string{"decision": decision, "reason": StopReason(held)})
}

// CommitReason asks an agent that stops under coord run with work left
// uncommitted on its task's branch to commit it: run releases what is
// committed, and blocks a task whose work is not.
func CommitReason(task string, left []string) string {
	if len(left) > 5 {
		left = append(left[:5:5], fmt.Sprintf("and %d more", len(left)-5))
	}
	return fmt.Sprintf("coord: task %s has uncommitted changes (%s): commit them (git add -A && git commit -m \"...\"); coord run releases the task when you finish.",
		task, strings.Join(left, ", "))
}

// StopReason asks an agent that stops while holding tasks to finish them.
func StopReason(held []*coord.Task) string {
	var b strings.Builder
	for i, t := range held {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "coord: you still hold task %s (epoch %d).", t.ID, t.Epoch)
	}
	t := held[0]
	fmt.Fprintf(&b, " If it is done, release it (the release tool, or coord release %s --epoch %d --summary \"what changed\");"+
		" if it cannot go on, block it with the reason (the block tool, or coord block %s --epoch %d --reason \"why\"); otherwise keep working on it.",
		t.ID, t.Epoch, t.ID, t.Epoch)
	return b.String()
}

// --- session end --------------------------------------------------------

// sessionGoesOn are the SessionEnd reasons after which the same agent
// goes on in the same process: /clear starts a fresh conversation and
// /resume switches to another one (Claude Code; Gemini's /clear too);
// the next SessionStart tells it what it holds.
var sessionGoesOn = map[string]bool{"clear": true, "resume": true}

func (h *hook) end(ctx context.Context) (int, error) {
	if sessionGoesOn[h.p.Reason] {
		h.quiet()
		return ExitOK, nil
	}
	p, ok, err := h.open(ctx)
	if err != nil || !ok {
		if err == nil {
			h.quiet()
		}
		return ExitOK, err
	}
	v, err := p.Service.Status(ctx, p.Agent)
	if err != nil {
		return 0, err
	}
	var errs []error
	holding := v.Holding
	if h.underRun() != "" {
		holding = nil // coord run releases, blocks or hands back its tasks itself
	}
	for _, t := range holding {
		got, err := p.Service.HandBack(ctx, app.TaskRef{Agent: coord.Agent{ID: p.Agent}, TaskID: t.ID, Epoch: t.Epoch}, "session ended")
		if err != nil {
			errs = append(errs, fmt.Errorf("task %s: %w", t.ID, err))
			continue
		}
		fmt.Fprintf(h.opt.Stderr, "coord: the session ended: task %s handed back (%s)\n", got.ID, got.Status)
	}
	// Path locks taken without a task go with the session too.
	if len(v.Locks) > 0 {
		var paths []string
		for _, l := range v.Locks {
			paths = append(paths, l.Path)
		}
		if _, err := p.Service.UnlockPaths(ctx, p.Agent, paths); err != nil {
			errs = append(errs, err)
		}
	}
	h.quiet()
	return ExitOK, errors.Join(errs...)
}
