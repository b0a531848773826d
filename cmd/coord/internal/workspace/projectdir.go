package workspace

import "path/filepath"

// projectDirVars are the variables each agent sets to name its session's
// project directory, in the order they are read (checked against the
// shipping CLIs; docs/AGENTS.md lists the versions). Claude Code sets
// CLAUDE_PROJECT_DIR for its hooks and MCP servers. Gemini CLI sets
// GEMINI_PROJECT_DIR, and CLAUDE_PROJECT_DIR to the same directory for
// compatibility, for its hooks (not for MCP servers). Codex sets neither:
// a CLAUDE_PROJECT_DIR it passes on was inherited from a Claude session
// around it and names another project. The empty agent is a caller that
// does not know which agent started it (the MCP server, which any of
// them may run): it reads both, Gemini's first.
var projectDirVars = map[string][]string{
	"claude": {"CLAUDE_PROJECT_DIR"},
	"gemini": {"GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"},
	"codex":  nil,
	"":       {"GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"},
}

// ProjectDir is the directory agent (claude, codex, gemini, or "" when
// the caller does not know) names through getenv as where its session
// stands, or "" when it names none: the one rule the hooks and the MCP
// server resolve the working directory by (docs/AGENTS.md). Only an
// absolute path counts; an agent it does not know names none.
func ProjectDir(agent string, getenv func(string) string) string {
	for _, v := range projectDirVars[agent] {
		if d := getenv(v); d != "" && filepath.IsAbs(d) {
			return d
		}
	}
	return ""
}
