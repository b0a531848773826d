package workspace

import "testing"

// TestProjectDir: where a session stands, by the variables its agent
// sets; the hooks (which know their agent) and the MCP server (which does
// not) both ask ProjectDir.
func TestProjectDir(t *testing.T) {
	both := map[string]string{"GEMINI_PROJECT_DIR": "/gem", "CLAUDE_PROJECT_DIR": "/proj"}
	rows := []struct {
		agent string
		env   map[string]string
		want  string
	}{
		{"claude", map[string]string{"CLAUDE_PROJECT_DIR": "/proj"}, "/proj"},
		{"claude", map[string]string{"GEMINI_PROJECT_DIR": "/gem"}, ""},
		{"gemini", both, "/gem"},
		{"gemini", map[string]string{"CLAUDE_PROJECT_DIR": "/proj"}, "/proj"},
		{"codex", both, ""},
		{"", both, "/gem"},
		{"", map[string]string{"CLAUDE_PROJECT_DIR": "/proj"}, "/proj"},
		{"", map[string]string{"GEMINI_PROJECT_DIR": "/gem"}, "/gem"},
		{"", nil, ""},
		{"", map[string]string{"GEMINI_PROJECT_DIR": "gem", "CLAUDE_PROJECT_DIR": "/proj"}, "/proj"}, // relative: not a project directory
		{"claude", map[string]string{"CLAUDE_PROJECT_DIR": "."}, ""},
		{"cursor", both, ""},
	}
	for _, r := range rows {
		if got := ProjectDir(r.agent, func(k string) string { return r.env[k] }); got != r.want {
			t.Errorf("agent %q, %v: %q, want %q", r.agent, r.env, got, r.want)
		}
	}
}
