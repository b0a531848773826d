package setup

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/registry/workspace"
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

// toolTimeoutSec is the MCP tool timeout setup gives Codex and Gemini: the
// longest wait (10 minutes) and a minute to spare.
const toolTimeoutSec = 660

// Options say what setup does.
type Options struct {
	Agent   string // claude, codex or gemini
	Dir     string // the repository's top directory, where the files go
	Command string // the coord command the agents run ("" : coord)
	DryRun  bool   // print the change, write nothing
	Remove  bool   // take out what setup added
	Stdout  io.Writer
}

// hook is one hook setup installs: the agent's event and its matcher.
type hook struct{ event, matcher string }

// hooksOf are the hooks of each agent: session start, the edit tools,
// after every tool, stop, session end (Codex has none).
var hooksOf = map[string][]hook{
	"claude": {{"SessionStart", ""}, {"PreToolUse", "Edit|Write|MultiEdit|NotebookEdit"}, {"PostToolUse", ""}, {"Stop", ""}, {"SessionEnd", ""}},
	"codex":  {{"SessionStart", ""}, {"PreToolUse", "apply_patch"}, {"PostToolUse", ""}, {"Stop", ""}},
	"gemini": {{"SessionStart", ""}, {"BeforeTool", "write_file|replace"}, {"AfterTool", ""}, {"AfterAgent", ""}, {"SessionEnd", ""}},
}

type setup struct {
	opt   Options
	notes []string
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
	s := &setup{opt: opt}
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
	return nil
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
			s.note("Claude Code asks once to approve the project's MCP server in %s; the hooks in %s apply from the next session", claudeMCP, claudeSettings)
		}
	case "codex":
		if err = add(s.editText(codexConfig, s.editCodexConfig)); err == nil {
			err = add(s.editJSON(codexHooks, s.hooks))
		}
		if !s.opt.Remove {
			s.note("Codex reads %s and %s only in a project you trust; Codex has no session-end hook, so a task left held is freed by the stale sweep", codexConfig, codexHooks)
		}
	case "gemini":
		err = add(s.editJSON(geminiSettings, func(o *object) error {
			if err := s.mcpServer(o); err != nil {
				return err
			}
			return s.hooks(o)
		}))
		if !s.opt.Remove {
			s.note("Gemini CLI runs project hooks when its hooks system is on (/hooks panel shows it)")
		}
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
// key setup does not own, in order.
func (s *setup) editJSON(rel string, edit func(*object) error) (*change, error) {
	old, existed, err := workspace.ReadProjectFile(s.opt.Dir, rel)
	if err != nil {
		return nil, err
	}
	if !existed && s.opt.Remove {
		return nil, nil
	}
	if hasComments(old) {
		return nil, coord.Errorf(coord.CodeConflict, "%s has comments; coord setup cannot merge it without losing them", rel).
			WithHint("add coord's entries by hand (coord setup %s --dry-run on a copy without comments shows them)", s.opt.Agent)
	}
	doc, err := parseObject(old)
	if err != nil {
		return nil, coord.Errorf(coord.CodeConflict, "%s is not a JSON object setup can merge: %v", rel, err).
			WithHint("fix the file, or add coord's entries by hand")
	}
	if err := edit(doc); err != nil {
		return nil, err
	}
	neu := marshal(doc)
	empty := len(doc.keys) == 0
	if existed && sameJSON(old, neu) {
		return nil, nil
	}
	if !existed && empty {
		return nil, nil
	}
	return s.changed(rel, old, neu, existed, s.opt.Remove && empty), nil
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
		servers.del("coord")
		if len(servers.keys) == 0 {
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
	entry.set("args", []any{"mcp"})
	if s.opt.Agent == "gemini" {
		entry.set("timeout", json.Number(fmt.Sprint(toolTimeoutSec*1000)))
	}
	servers.set("coord", entry)
	return nil
}

// --- the hooks ----------------------------------------------------------

// hookCommand is the command line of one of coord's hooks.
func (s *setup) hookCommand(event string) string {
	return workspace.ShellQuote(s.opt.Command) + " hook " + s.opt.Agent + " " + event
}

// ourHook reports whether a hook entry runs coord's hook for this agent.
func (s *setup) ourHook(h *object) bool {
	f := strings.Fields(str(h.vals["command"]))
	if len(f) >= 2 && filepath.Base(f[0]) == "rotd" && f[1] == "coord" {
		f = f[1:]
	}
	return len(f) >= 3 && s.isCoord(strings.Trim(f[0], `'"`)) && f[1] == "hook" && f[2] == s.opt.Agent
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
		if len(kept) == 0 {
			hooks.del(event)
		} else {
			hooks.set(event, kept)
		}
	}
	for _, h := range hooksOf[s.opt.Agent] { // events with no list yet, in order
		if _, ok := want[h.event]; ok {
			hooks.set(h.event, []any{s.group(h.event, h, nil)})
		}
	}
	if len(hooks.keys) == 0 {
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
