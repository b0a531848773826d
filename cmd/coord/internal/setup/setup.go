package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/rotd/coordination/cmd/coord/internal/workspace"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// Agents are the agents setup knows.
var Agents = []string{"claude", "codex", "gemini"}

// The files setup edits, relative to the repository.
const (
	claudeMCP      = ".mcp.json"
	claudeSettings = ".claude/settings.json"
	codexConfig    = ".codex/config.toml"
	codexHooks     = ".codex/hooks.json"
	geminiSettings = ".gemini/settings.json"
)

// Files returns the files setup writes for agent, in order.
func Files(agent string) []string {
	switch agent {
	case "claude":
		return []string{claudeMCP, claudeSettings}
	case "codex":
		return []string{codexConfig, codexHooks}
	case "gemini":
		return []string{geminiSettings}
	}
	return nil
}

// toolTimeoutSec is the MCP tool timeout setup gives Codex and Gemini
// (app.ToolTimeout: the longest wait and a minute to spare), in seconds.
const toolTimeoutSec = int(app.ToolTimeout / time.Second)

// Options say what setup does.
type Options struct {
	Agent   string   // claude, codex or gemini
	Dir     string   // the repository's top directory, where the files go
	Command string   // the coord command the agents run ("" : coord)
	DryRun  bool     // print the change, write nothing
	Remove  bool     // take out what setup added
	Notes   []string // more notes for people, printed with setup's own
	Stdout  io.Writer
}

// hook is one hook setup installs: the agent's event and its matcher.
type hook struct{ event, matcher string }

// hooksOf are the hooks of each agent, in the order they are installed:
// every event the agent has for session start, the edit tools, after a
// tool, stop and session end (package hooks handles the same list). As
// the agents ship: Claude Code 2.1.197 sends a failed tool to
// PostToolUseFailure instead of PostToolUse; Codex CLI 0.171.0 has
// SessionEnd, and its edit tool is apply_patch (called directly or from
// its code-mode exec tool, the hook sees apply_patch either way); Gemini
// CLI 0.61.0 edits with write_file and replace.
var hooksOf = map[string][]hook{
	"claude": {{"SessionStart", ""}, {"PreToolUse", "Edit|Write|MultiEdit|NotebookEdit"}, {"PostToolUse", ""}, {"PostToolUseFailure", ""}, {"Stop", ""}, {"SessionEnd", ""}},
	"codex":  {{"SessionStart", ""}, {"PreToolUse", "apply_patch"}, {"PostToolUse", ""}, {"Stop", ""}, {"SessionEnd", ""}},
	"gemini": {{"SessionStart", ""}, {"BeforeTool", "write_file|replace"}, {"AfterTool", ""}, {"AfterAgent", ""}, {"SessionEnd", ""}},
}

// Events returns the hook events setup installs for agent, in order.
func Events(agent string) []string {
	var out []string
	for _, h := range hooksOf[agent] {
		out = append(out, h.event)
	}
	return out
}

type setup struct {
	opt   Options
	notes []string
	// found are the containers of the JSON file being edited that setup
	// found empty and filled (see foundEmpty), by path.
	found map[string]bool
}

// foundEmpty reports whether the object or list at path (keys from the
// top) was there, empty, before setup put coord's entries in it, so that
// taking them out leaves it there, as "mcpServers": {} stays where claude
// mcp remove left it. Setup keeps no record: it writes entries into a
// container it found empty in the other layout than the one it gives a
// container it creates there (on one line in a file laid out over many
// lines, and the other way round), and reads that layout back.
func (s *setup) foundEmpty(path ...string) bool {
	return s.found[strings.Join(path, "\x00")]
}

func (s *setup) note(format string, args ...any) {
	s.notes = append(s.notes, fmt.Sprintf(format, args...))
}

// change is one file's new content (removed: the file goes).
type change struct {
	rel      string
	old, new []byte
	existed  bool
	removed  bool
	what     string // what changed, for people
}

// Run edits the agent's files as opt says and reports on opt.Stdout.
func Run(opt Options) error {
	if opt.Command == "" {
		opt.Command = "coord"
	}
	if _, ok := hooksOf[opt.Agent]; !ok {
		return coord.Errorf(coord.CodeUsage, "setup: unknown agent %q (one of %s)", opt.Agent, strings.Join(Agents, ", "))
	}
	s := &setup{opt: opt, notes: append([]string(nil), opt.Notes...)}
	changes, err := s.plan()
	if err != nil {
		return err
	}
	w := opt.Stdout
	if opt.DryRun {
		if len(changes) == 0 {
			fmt.Fprintf(w, "coord setup %s: nothing to change\n", opt.Agent)
		}
		for _, c := range changes {
			fmt.Fprint(w, unifiedDiff(c.rel, c.old, c.new, c.existed, !c.removed))
		}
		return nil
	}
	for _, c := range changes {
		var err error
		if c.removed {
			err = workspace.RemoveProjectFile(opt.Dir, c.rel)
		} else {
			err = workspace.WriteProjectFile(opt.Dir, c.rel, c.new)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s %s\n", c.what, c.rel)
	}
	if len(changes) == 0 {
		fmt.Fprintf(w, "coord setup %s: nothing to change (%s)\n", opt.Agent, strings.Join(Files(opt.Agent), ", "))
	}
	for _, n := range s.notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if !opt.Remove {
		fmt.Fprintf(w, "next: %s\n", NextStep(opt.Agent, opt.Dir))
	}
	return nil
}

// NextStep is the one thing the user still does before the agent runs
// coord: each agent keeps a project's new MCP server or hooks off until
// the user approves them (checked against the shipping CLIs).
func NextStep(agent, dir string) string {
	switch agent {
	case "claude":
		return "start claude in " + dir + ` and approve the project's MCP server coord when it asks ("Use this MCP server", or /mcp); until then claude mcp list shows it as Pending approval (without a prompt: add "enabledMcpjsonServers": ["coord"] to .claude/settings.local.json)`
	case "codex":
		return "start codex in " + dir + `, trust the folder when it asks, then choose "Trust all and continue" when it lists coord's hooks for review (or /hooks); until then Codex reads neither .codex/config.toml nor .codex/hooks.json (codex mcp list shows no coord), and codex exec skips untrusted hooks without a word (review them again after a setup that changes them)`
	case "gemini":
		return "start gemini in " + dir + ` and choose "Trust folder" (or /permissions); until then Gemini ignores .gemini/settings.json: the coord MCP server stays disabled and the hooks do not run (headless: GEMINI_CLI_TRUST_WORKSPACE=true or --skip-trust)`
	}
	return ""
}

// plan computes every file's change, writing nothing.
func (s *setup) plan() ([]change, error) {
	var out []change
	add := func(c *change, err error) error {
		if err != nil {
			return err
		}
		if c != nil {
			out = append(out, *c)
		}
		return nil
	}
	var err error
	switch s.opt.Agent {
	case "claude":
		if err = add(s.editJSON(claudeMCP, s.mcpServer)); err == nil {
			err = add(s.editJSON(claudeSettings, s.hooks))
		}
		if !s.opt.Remove {
			s.note("the hooks in %s apply from the next claude session", claudeSettings)
		}
	case "codex":
		if err = add(s.editText(codexConfig, s.editCodexConfig)); err == nil {
			err = add(s.editJSON(codexHooks, s.hooks))
		}
	case "gemini":
		err = add(s.editJSON(geminiSettings, func(o *object) error {
			if err := s.mcpServer(o); err != nil {
				return err
			}
			return s.hooks(o)
		}))
	}
	if err != nil {
		return nil, err
	}
	if !s.opt.Remove {
		s.note("a write through a shell command bypasses the edit hooks: keep coord guard as the pre-commit hook (README)")
	}
	return out, nil
}

// editText computes the change of one text file by edit.
func (s *setup) editText(rel string, edit func(old []byte, remove bool) ([]byte, error)) (*change, error) {
	old, existed, err := workspace.ReadProjectFile(s.opt.Dir, rel)
	if err != nil {
		return nil, err
	}
	if !existed && s.opt.Remove {
		return nil, nil
	}
	neu, err := edit(old, s.opt.Remove)
	if err != nil {
		return nil, err
	}
	if string(neu) == string(old) && existed {
		return nil, nil
	}
	return s.changed(rel, old, neu, existed, strings.TrimSpace(string(neu)) == ""), nil
}

// editJSON computes the change of one JSON file by edit, keeping every
// key setup does not own, in order. An existing file is edited as text
// (reconcile): only coord's entries change, the rest stays byte for byte.
// Gemini's settings may hold comments (Gemini strips them); they are kept.
func (s *setup) editJSON(rel string, edit func(*object) error) (*change, error) {
	old, existed, err := workspace.ReadProjectFile(s.opt.Dir, rel)
	if err != nil {
		return nil, err
	}
	if !existed && s.opt.Remove {
		return nil, nil
	}
	comments := rel == geminiSettings
	root, err := parseJSONText(old, comments)
	if errors.Is(err, errComments) {
		return nil, coord.Errorf(coord.CodeConflict, "%s has comments, which the agent does not read in this file", rel).
			WithHint("remove them, or add coord's entries by hand (coord setup %s --dry-run on a copy without comments shows them)", s.opt.Agent)
	}
	if err != nil {
		return nil, coord.Errorf(coord.CodeConflict, "%s is not a JSON object setup can merge: %v", rel, err).
			WithHint("fix the file, or add coord's entries by hand")
	}
	doc := newObject()
	s.found = map[string]bool{}
	if root != nil {
		doc = root.model(old).(*object)
		markFound(old, root, nil, true, s.found)
	}
	if err := edit(doc); err != nil {
		return nil, err
	}
	var neu []byte
	switch {
	case root != nil:
		if neu, err = reconcile(old, doc, comments); err != nil {
			return nil, fmt.Errorf("%s: %w", rel, err)
		}
	case len(doc.keys) > 0:
		neu = marshal(doc)
	default:
		return nil, nil // nothing there, nothing to add
	}
	if existed && bytes.Equal(old, neu) {
		return nil, nil
	}
	// A file left holding nothing ({} and space) goes, unless it was there,
	// empty, before setup.
	empty := strings.TrimSpace(string(neu)) == "{}" && !s.foundEmpty()
	return s.changed(rel, old, neu, existed, s.opt.Remove && empty), nil
}

// markFound records, by path, the objects and lists laid out otherwise
// than setup lays out a container it creates under their parent (the
// parent's layout; a file's top level: over many lines): setup found them
// empty (see foundEmpty).
func markFound(data []byte, n *jnode, path []string, created bool, out map[string]bool) {
	if n.kind != '{' && n.kind != '[' || firstChild(n) < 0 {
		return
	}
	multi := multiLine(data, n)
	if multi != created {
		out[strings.Join(path, "\x00")] = true
	}
	for _, m := range n.members {
		markFound(data, m.val, append(path[:len(path):len(path)], m.key), multi, out)
	}
}

func (s *setup) changed(rel string, old, neu []byte, existed, removed bool) *change {
	c := &change{rel: rel, old: old, new: neu, existed: existed, removed: removed}
	switch {
	case removed:
		c.new, c.what = nil, "removed"
	case !existed:
		c.what = "created"
	default:
		c.what = "updated"
	}
	return c
}

// --- the MCP server -----------------------------------------------------

// oursMCP reports whether a server entry runs coord's MCP server.
func (s *setup) oursMCP(command, args any) bool {
	if !s.isCoord(str(command)) {
		return false
	}
	switch a := args.(type) {
	case []any:
		for _, x := range a {
			if str(x) == "mcp" {
				return true
			}
		}
	}
	return false
}

// isCoord reports whether a command names coord (or the command setup
// was told to write).
func (s *setup) isCoord(cmd string) bool {
	base := filepath.Base(cmd)
	return base == "coord" || base == "rotd" || cmd == s.opt.Command || base == filepath.Base(s.opt.Command)
}

// words are the command line that runs coord: the command, and "coord"
// after it when the binary is rotd ('rotd coord …' is 'coord …').
func (s *setup) words() []string {
	if filepath.Base(s.opt.Command) == "rotd" {
		return []string{s.opt.Command, "coord"}
	}
	return []string{s.opt.Command}
}

// mcpArgs are the arguments of coord's MCP server entry.
func (s *setup) mcpArgs() []any {
	var out []any
	for _, w := range s.words()[1:] {
		out = append(out, w)
	}
	return append(out, "mcp")
}

// mcpServer adds (or with Remove takes out) mcpServers.coord, keeping any
// key the user added to coord's entry.
func (s *setup) mcpServer(doc *object) error {
	rel := Files(s.opt.Agent)[0]
	if s.opt.Agent == "gemini" {
		rel = geminiSettings
	}
	v, _ := doc.get("mcpServers")
	servers, isObj := v.(*object)
	if v != nil && !isObj {
		return coord.Errorf(coord.CodeConflict, "%s: mcpServers is not an object", rel)
	}
	if servers == nil {
		if s.opt.Remove {
			return nil
		}
		servers = newObject()
		doc.set("mcpServers", servers)
	}
	cur, has := servers.get("coord")
	entry, _ := cur.(*object)
	if has && (entry == nil || !s.oursMCP(entry.vals["command"], entry.vals["args"])) {
		if s.opt.Remove {
			return nil // not ours: left alone
		}
		return coord.Errorf(coord.CodeConflict, "%s already has an MCP server named coord that does not run %s mcp", rel, s.opt.Command).
			WithHint("rename or remove mcpServers.coord there, then run coord setup %s again", s.opt.Agent)
	}
	if s.opt.Remove {
		if !has {
			return nil // nothing of coord's here
		}
		servers.del("coord")
		if len(servers.keys) == 0 && !s.foundEmpty("mcpServers") {
			doc.del("mcpServers")
		}
		return nil
	}
	if entry == nil {
		entry = newObject()
	}
	if s.opt.Agent == "claude" {
		entry.set("type", "stdio")
	}
	entry.set("command", s.opt.Command)
	entry.set("args", s.mcpArgs())
	if s.opt.Agent == "gemini" {
		entry.set("timeout", json.Number(fmt.Sprint(toolTimeoutSec*1000)))
	}
	servers.set("coord", entry)
	return nil
}

// --- the hooks ----------------------------------------------------------

// hookCommand is the command line of one of coord's hooks.
func (s *setup) hookCommand(event string) string {
	var b strings.Builder
	for _, w := range s.words() {
		b.WriteString(workspace.ShellQuote(w) + " ")
	}
	return b.String() + "hook " + s.opt.Agent + " " + event
}

// ourHook reports whether a hook entry runs coord's hook for this agent.
func (s *setup) ourHook(h *object) bool {
	f := shellWords(str(h.vals["command"]))
	if len(f) >= 2 && filepath.Base(f[0]) == "rotd" && f[1] == "coord" {
		f = f[1:]
	}
	return len(f) >= 3 && s.isCoord(f[0]) && f[1] == "hook" && f[2] == s.opt.Agent
}

// shellWords splits a command line as sh would split a simple one (quotes
// and backslashes; no expansion), enough to read back what hookCommand
// wrote.
func shellWords(line string) []string {
	var out []string
	var w strings.Builder
	in, quote := false, rune(0)
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				w.WriteRune(r)
			}
		case quote == '"':
			switch {
			case r == '"':
				quote = 0
			case r == '\\' && i+1 < len(rs) && strings.ContainsRune("$`\"\\", rs[i+1]):
				i++
				w.WriteRune(rs[i])
			default:
				w.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '\\' && i+1 < len(rs):
			i++
			w.WriteRune(rs[i])
			in = true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				out = append(out, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, w.String())
	}
	return out
}

// desiredHook is coord's hook entry for an event, on top of the user's
// own copy of it (whose other keys, such as a timeout, are kept).
func (s *setup) desiredHook(event string, base *object) *object {
	h := base
	if h == nil {
		h = newObject()
	}
	if s.opt.Agent == "gemini" {
		h.set("name", "coord-"+strings.ToLower(event))
	}
	h.set("type", "command")
	h.set("command", s.hookCommand(event))
	return h
}

// hooks installs (or with Remove takes out) coord's hooks: in each event,
// one group holding coord's hook alone, kept where it stands on a
// re-run; coord's hooks anywhere else are taken out, and groups and
// events only coord's hooks filled go with them.
func (s *setup) hooks(doc *object) error {
	v, _ := doc.get("hooks")
	hooks, isObj := v.(*object)
	if v != nil && !isObj {
		return coord.Errorf(coord.CodeConflict, "%s: hooks is not an object", Files(s.opt.Agent)[len(Files(s.opt.Agent))-1])
	}
	if hooks == nil {
		if s.opt.Remove {
			return nil
		}
		hooks = newObject()
		doc.set("hooks", hooks)
	}
	want := map[string]hook{}
	if !s.opt.Remove {
		for _, h := range hooksOf[s.opt.Agent] {
			want[h.event] = h
		}
	}
	emptied := false // coord's entries were all an event held
	for _, event := range append([]string(nil), hooks.keys...) {
		groups, ok := hooks.vals[event].([]any)
		if !ok {
			continue // not an event list (Gemini's "disabled", say)
		}
		h, wanted := want[event]
		kept, placed, touched := s.rewriteGroups(groups, event, h, wanted)
		if wanted && !placed {
			kept = append(kept, s.group(event, h, nil))
			touched = true
		}
		delete(want, event)
		if !touched {
			continue
		}
		if len(kept) == 0 && !s.foundEmpty("hooks", event) {
			hooks.del(event)
			emptied = true
		} else {
			hooks.set(event, kept)
		}
	}
	for _, h := range hooksOf[s.opt.Agent] { // events with no list yet, in order
		if _, ok := want[h.event]; ok {
			hooks.set(h.event, []any{s.group(h.event, h, nil)})
		}
	}
	if len(hooks.keys) == 0 && emptied && !s.foundEmpty("hooks") {
		doc.del("hooks")
	}
	return nil
}

// group is coord's matcher group for an event.
func (s *setup) group(event string, h hook, base *object) *object {
	g := base
	if g == nil {
		g = newObject()
	}
	if h.matcher != "" {
		g.set("matcher", h.matcher)
	} else {
		g.del("matcher")
	}
	var first *object
	if hs, ok := g.vals["hooks"].([]any); ok {
		for _, x := range hs {
			if o, ok := x.(*object); ok && s.ourHook(o) && first == nil {
				first = o
			}
		}
	}
	g.set("hooks", []any{s.desiredHook(event, first)})
	return g
}

// rewriteGroups takes coord's hooks out of an event's groups, except that
// the first group holding only coord's hooks becomes coord's group (when
// the event is wanted). It reports whether coord's group was placed and
// whether anything changed.
func (s *setup) rewriteGroups(groups []any, event string, h hook, wanted bool) (kept []any, placed, touched bool) {
	for _, g := range groups {
		grp, ok := g.(*object)
		var hs []any
		if ok {
			hs, ok = grp.vals["hooks"].([]any)
		}
		if !ok {
			kept = append(kept, g)
			continue
		}
		var others []any
		mine := 0
		for _, x := range hs {
			if o, ok := x.(*object); ok && s.ourHook(o) {
				mine++
				continue
			}
			others = append(others, x)
		}
		switch {
		case mine == 0:
			kept = append(kept, g)
		case len(others) == 0 && wanted && !placed:
			kept = append(kept, s.group(event, h, grp))
			placed, touched = true, true
		case len(others) == 0:
			touched = true // a group only coord's hooks filled goes
		default:
			grp.set("hooks", others)
			kept = append(kept, grp)
			touched = true
		}
	}
	return kept, placed, touched
}
