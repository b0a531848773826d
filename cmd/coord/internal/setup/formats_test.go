package setup

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// The agents' formats as they ship, checked against Claude Code 2.1.197,
// Codex CLI 0.171.0 and Gemini CLI 0.61.0 from npm (README "versions
// checked"): the hook events each one reads (an event it does not know it
// skips without a word), and the shapes of its hook and MCP entries.
// Nothing of theirs is vendored: these are Go transcriptions.
var (
	// Claude Code: the event list in its binary.
	claudeEvents = []string{"PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "Notification", "UserPromptSubmit",
		"UserPromptExpansion", "SessionStart", "SessionEnd", "Stop", "StopFailure", "SubagentStart", "SubagentStop", "PreCompact",
		"PostCompact", "PermissionRequest", "PermissionDenied", "Setup", "TeammateIdle", "TaskCreated", "TaskCompleted", "Elicitation",
		"ElicitationResult", "ConfigChange", "WorktreeCreate", "WorktreeRemove", "InstructionsLoaded", "CwdChanged", "FileChanged", "MessageDisplay"}
	// Codex: its hooks/list event names (app-server protocol), as hooks.json keys.
	codexEvents = []string{"PreModelRequest", "PostModelRequest", "PreToolUse", "PermissionRequest", "PostToolUse", "PreCompact",
		"PostCompact", "SessionStart", "SessionEnd", "UserPromptSubmit", "SubagentStart", "SubagentStop", "Stop", "Interrupt"}
	// Gemini CLI: docs/hooks/reference.md in its package.
	geminiEvents = []string{"BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent", "Notification", "SessionStart", "SessionEnd",
		"PreCompress", "BeforeModel", "AfterModel", "BeforeToolSelection"}
)

// lifecycle are, per agent, the events it has for session start, before
// and after a tool, stop and session end: coord installs every one.
// Left out on purpose: Claude's StopFailure (a turn ended by an API
// error; its output and exit status are ignored, so it cannot ask for a
// release), PostToolBatch (PostToolUse already runs for each tool) and
// SubagentStop (a subagent's end is not the session's).
var lifecycle = map[string][]string{
	"claude": {"SessionStart", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd"},
	"codex":  {"SessionStart", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"},
	"gemini": {"SessionStart", "BeforeTool", "AfterTool", "AfterAgent", "SessionEnd"},
}

// TestAgentEvents: setup installs every lifecycle event each agent has,
// and only events the agent knows.
func TestAgentEvents(t *testing.T) {
	known := map[string][]string{"claude": claudeEvents, "codex": codexEvents, "gemini": geminiEvents}
	for _, agent := range Agents {
		if got := Events(agent); !slices.Equal(got, lifecycle[agent]) {
			t.Errorf("%s: setup installs %v, want %v", agent, got, lifecycle[agent])
		}
		for _, e := range Events(agent) {
			if !slices.Contains(known[agent], e) {
				t.Errorf("%s has no hook event %q", agent, e)
			}
		}
	}
}

// strict decodes data into v, refusing unknown fields (as Codex reads
// hooks.json, and as the tests read the others: a key coord writes that
// the agent does not define is a mistake).
func strict(t *testing.T, name string, data []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s does not have the agent's shape: %v\n%s", name, err, data)
	}
}

// handler is one hook entry of an agent's format.
type handler interface{ typeAndCommand() (string, string) }

type hookGroup[H handler] struct {
	Matcher *string `json:"matcher"`
	Hooks   []H     `json:"hooks"`
}

// Codex 0.171's hooks.json (codex-rs/config HooksFile, deny_unknown_fields
// at the top; a handler is tagged by type).
type codexHooksFile struct {
	Hooks map[string][]hookGroup[codexHandler] `json:"hooks"`
}

type codexHandler struct {
	Type           string  `json:"type"`
	Command        string  `json:"command"`
	CommandWindows *string `json:"commandWindows"`
	Timeout        *uint64 `json:"timeout"` // seconds
	Async          bool    `json:"async"`
	StatusMessage  *string `json:"statusMessage"`
}

func (h codexHandler) typeAndCommand() (string, string) { return h.Type, h.Command }

// Claude Code's hooks in settings.json.
type claudeSettingsHooks struct {
	Hooks map[string][]hookGroup[claudeHandler] `json:"hooks"`
}

type claudeHandler struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout *int   `json:"timeout"` // seconds
}

func (h claudeHandler) typeAndCommand() (string, string) { return h.Type, h.Command }

// Gemini CLI's settings.json: hooks (docs/hooks/reference.md) and
// mcpServers (docs/tools/mcp-server.md).
type geminiSettingsFile struct {
	Hooks      map[string][]hookGroup[geminiHandler] `json:"hooks"`
	MCPServers map[string]struct {
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
		Timeout int               `json:"timeout"` // milliseconds
	} `json:"mcpServers"`
}

type geminiHandler struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Command     string `json:"command"`
	Timeout     *int   `json:"timeout"` // milliseconds
	Description string `json:"description"`
}

func (h geminiHandler) typeAndCommand() (string, string) { return h.Type, h.Command }

// Claude Code's .mcp.json (what claude mcp add --scope project writes).
type claudeMCPFile struct {
	MCPServers map[string]struct {
		Type    string            `json:"type"`
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
	} `json:"mcpServers"`
}

// checkGroups checks that every event is one the agent has, every
// handler a command that runs coord's hook for it, every matcher a valid
// regular expression.
func checkGroups[H handler](t *testing.T, agent string, hooks map[string][]hookGroup[H]) {
	t.Helper()
	for event, groups := range hooks {
		for _, g := range groups {
			if g.Matcher != nil {
				if _, err := regexp.Compile(*g.Matcher); err != nil {
					t.Errorf("%s %s: matcher %q: %v", agent, event, *g.Matcher, err)
				}
			}
			for _, h := range g.Hooks {
				typ, cmd := h.typeAndCommand()
				if typ != "command" || cmd != "coord hook "+agent+" "+event {
					t.Errorf("%s %s: handler %q %q", agent, event, typ, cmd)
				}
			}
		}
	}
	got := make([]string, 0, len(hooks))
	for e := range hooks {
		got = append(got, e)
	}
	slices.Sort(got)
	want := slices.Clone(lifecycle[agent])
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s: events %v, want %v", agent, got, want)
	}
}

// TestAgentFormats: the files setup writes from scratch have each
// agent's own shape.
func TestAgentFormats(t *testing.T) {
	for _, agent := range Agents {
		t.Run(agent, func(t *testing.T) {
			dir := t.TempDir()
			mustRun(t, dir, agent, false, false)
			files := snapshot(t, dir)
			switch agent {
			case "claude":
				var mcp claudeMCPFile
				strict(t, claudeMCP, []byte(files[claudeMCP]), &mcp)
				if s := mcp.MCPServers["coord"]; s.Type != "stdio" || s.Command != "coord" || !slices.Equal(s.Args, []string{"mcp"}) {
					t.Errorf(".mcp.json coord: %+v", s)
				}
				var st claudeSettingsHooks
				strict(t, claudeSettings, []byte(files[claudeSettings]), &st)
				checkGroups(t, agent, st.Hooks)
			case "codex":
				var hf codexHooksFile
				strict(t, codexHooks, []byte(files[codexHooks]), &hf)
				checkGroups(t, agent, hf.Hooks)
				// config.toml: the server with keys Codex defines, and no
				// feature flag (codex_hooks is deprecated; hooks is on).
				var cfg struct {
					MCPServers map[string]struct {
						Command        string   `toml:"command"`
						Args           []string `toml:"args"`
						ToolTimeoutSec int      `toml:"tool_timeout_sec"`
						EnvVars        []string `toml:"env_vars"`
					} `toml:"mcp_servers"`
				}
				dec := toml.NewDecoder(strings.NewReader(files[codexConfig]))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&cfg); err != nil {
					t.Fatalf("config.toml: %v\n%s", err, files[codexConfig])
				}
				if s := cfg.MCPServers["coord"]; s.Command != "coord" || !slices.Equal(s.Args, []string{"mcp"}) || s.ToolTimeoutSec != toolTimeoutSec {
					t.Errorf("config.toml coord: %+v", s)
				}
			case "gemini":
				var gs geminiSettingsFile
				strict(t, geminiSettings, []byte(files[geminiSettings]), &gs)
				checkGroups(t, agent, gs.Hooks)
				if s := gs.MCPServers["coord"]; s.Command != "coord" || s.Timeout != toolTimeoutSec*1000 {
					t.Errorf("gemini coord server: %+v", s)
				}
			}
		})
	}
}
