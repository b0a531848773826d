package workspace

import (
	"slices"
	"testing"
)

// The exclude patterns are anchored at the worktree's top and quote the
// glob characters of the root's directory names.
func TestGitExcludes(t *testing.T) {
	for rel, want := range map[string][]string{
		".":        {"/.rotd/coordination/", "/.rotd/agent_id"},
		"pkg":      {"/pkg/.rotd/coordination/", "/.rotd/agent_id"},
		"a/b/":     {"/a/b/.rotd/coordination/", "/.rotd/agent_id"},
		"app/[id]": {`/app/\[id]/.rotd/coordination/`, "/.rotd/agent_id"},
		`x*y?\z`:   {`/x\*y\?\\z/.rotd/coordination/`, "/.rotd/agent_id"},
	} {
		if got := GitExcludes(rel); !slices.Equal(got, want) {
			t.Errorf("GitExcludes(%q) = %q, want %q", rel, got, want)
		}
	}
}
