package workspace

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rotd/coordination/internal/gitrepo"
	"github.com/rotd/coordination/registry/backend/backendtest"
)

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

// SameRepository: two worktrees of one repository are the same; another
// repository, or a directory in none, is not.
func TestSameRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	base := t.TempDir()
	run := func(dir string, args ...string) { t.Helper(); backendtest.Git(t, dir, args...) }
	one, other, none := filepath.Join(base, "one"), filepath.Join(base, "other"), filepath.Join(base, "none")
	for _, d := range []string{one, other, none} {
		os.MkdirAll(filepath.Join(d, "sub"), 0o755)
	}
	run(one, "init", "-q")
	run(one, "commit", "-q", "--allow-empty", "-m", "x")
	run(one, "worktree", "add", "-q", filepath.Join(base, "linked"))
	run(other, "init", "-q")
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{one, filepath.Join(one, "sub"), true},
		{filepath.Join(base, "linked"), one, true},
		{one, other, false},
		{none, none, false},
		{one, none, false},
	} {
		if got := gitrepo.SameRepository(c.a, c.b); got != c.want {
			t.Errorf("gitrepo.SameRepository(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
