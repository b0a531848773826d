package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotd/coordination/registry/backend/backendtest"
)

// gitProject makes a git repository with one commit and a coord tree in
// it, and returns its top, the environment for the test's commands
// (agent, git identity) and a git runner.
func gitProject(t *testing.T, agent string) (string, []string, func(dir string, args ...string)) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := filepath.Join(t.TempDir(), "repo")
	env := append([]string{"COORD_AGENT=" + agent}, backendtest.GitEnv...)
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(cleanEnv(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	git(root, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644)
	git(root, "add", ".")
	git(root, "commit", "-q", "-m", "init")
	runCoord(t, root, env, "", "init")
	return root, env, git
}

// TestMCPRequireVerified: release through the MCP server obeys
// require_verified as the CLI does (one rule, in the application): no
// receipt, a failed newest receipt, a receipt for another tree than the
// commit released (an edit committed after the check) are refused with exit code 3's name; a
// receipt that passed on the tree released lets it through.
func TestMCPRequireVerified(t *testing.T) {
	t.Parallel()
	root, env, git := gitProject(t, "mcp-v")
	runCoord(t, root, env, `{"id":"v1","title":"checked"}`+"\n", "seed-tasks", "--stdin")
	runCoord(t, root, env, "", "config", "set", "require_verified", "true")
	cs, _, wait := mcpSession(t, root, env)

	if got, isErr := callTool(t, cs, "claim", map[string]any{"task": "v1"}); isErr {
		t.Fatalf("claim refused: %s", got)
	}
	refused := func(what, want string) {
		t.Helper()
		got, isErr := callTool(t, cs, "release", map[string]any{"task": "v1", "summary": "s"})
		if !isErr || !strings.Contains(got, `"code":3`) || !strings.Contains(got, want) {
			t.Fatalf("%s: release gave %s (error %v), want a refusal (code 3) containing %q", what, got, isErr, want)
		}
	}
	refused("no receipt", `has no receipt`)
	cmd := exec.Command("coord", "verify", "--", "false")
	cmd.Dir, cmd.Env = root, append(cleanEnv(), env...)
	if err := cmd.Run(); err == nil {
		t.Fatal("verify -- false exited 0")
	}
	refused("failed", `the newest receipt failed (false: exit 1`)
	runCoord(t, root, env, "", "verify", "--", "true")
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("edited after the check\n"), 0o644)
	git(root, "commit", "-q", "-a", "-m", "an edit after the check")
	refused("edited", `the newest receipt is for tree`)
	runCoord(t, root, env, "", "verify", "--task", "v1", "--", "true")
	got, isErr := callTool(t, cs, "release", map[string]any{"task": "v1", "summary": "s"})
	if isErr || !strings.Contains(got, `"status":"done"`) {
		t.Fatalf("verified release: %s (error %v)", got, isErr)
	}
	if err := wait(); err != nil {
		t.Fatalf("server exit: %v", err)
	}
}

// TestWatchVoidsMovedReview: a running watch sends a task in review back
// to its owner once its branch gets a commit after the review.
func TestWatchVoidsMovedReview(t *testing.T) {
	t.Parallel()
	root, env, git := gitProject(t, "alice")
	runCoord(t, root, env, "", "config", "set", "review_gate", "true")
	runCoord(t, root, env, `{"id":"r1","title":"reviewed"}`+"\n", "seed-tasks", "--stdin")
	runCoord(t, root, env, "", "worktree", "add", "alice")
	wt := root + "-alice"
	runCoord(t, wt, env, "", "claim", "--task", "r1")
	os.WriteFile(filepath.Join(wt, "a.txt"), []byte("work\n"), 0o644)
	git(wt, "commit", "-q", "-a", "-m", "work")
	runCoord(t, wt, env, "", "release", "r1")

	_, lines := startWatch(t, root, "--poll")
	expectLine(t, lines, "watching", backendtest.Timeout)
	os.WriteFile(filepath.Join(wt, "a.txt"), []byte("more\n"), 0o644)
	git(wt, "commit", "-q", "-a", "-m", "after the review")
	expectLine(t, lines, "sent r1 back to alice: review void: task/r1 moved from", backendtest.Timeout)
	if st := runCoord(t, wt, env, "", "status"); !strings.Contains(st, "review notes: review void: task/r1 moved") {
		t.Fatalf("status after the void:\n%s", st)
	}
}
