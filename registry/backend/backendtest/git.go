package backendtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/internal/gitrepo"
)

// GitEnv is what a test's git runs with beside the process environment:
// no user or system configuration, and a fixed identity, so a commit
// works on any machine and nobody's settings change a result.
var GitEnv = gitrepo.IsolatedEnv

// NeedGit skips t when git is not installed.
func NeedGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

// Git runs git in dir ("": where the test runs) as coord runs it
// (package gitrepo's Command) with GitEnv, fails t on
// an error (naming the arguments and git's output), and returns its
// output, trimmed.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := gitrepo.Command(context.Background(), dir, GitEnv, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// InFlightConflict lays down the scenario of a conflict in flight: a git
// repository (returned) whose branches coord/alice and coord/bob each
// change line 3 of f.txt from main, and a project (its root returned)
// where alice holds task a on coord/alice and bob task b on coord/bob. A
// scan of the repository (app.Service.Conflicts) finds one conflict. It
// skips t without git or without git merge-tree --write-tree.
func InFlightConflict(t testing.TB) (repo, root string) {
	t.Helper()
	NeedGit(t)
	if err := gitrepo.CheckMergeTree(context.Background()); err != nil {
		t.Skip(err)
	}
	repo = t.TempDir()
	git := func(args ...string) { t.Helper(); Git(t, repo, args...) }
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(repo, "f.txt"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	write("1\n2\n3\n4\n5\n")
	git("add", ".")
	git("commit", "-qm", "init")
	for _, who := range []string{"alice", "bob"} {
		git("checkout", "-q", "-b", "coord/"+who, "main")
		write("1\n2\n" + who + "\n4\n5\n")
		git("commit", "-qam", who)
	}
	git("checkout", "-q", "main")
	root = Init(t, Options{}).Root
	reg := `{"version": 1, "tasks": [
		{"id": "a", "title": "Parse the flags", "status": "claimed", "claimed_by": "alice", "epoch": 1, "branch": "coord/alice"},
		{"id": "b", "title": "Flags from the environment", "status": "claimed", "claimed_by": "bob", "epoch": 2, "branch": "coord/bob"}]}`
	if err := os.WriteFile(filepath.Join(root, coord.TreeDir, "active_work_registry.json"), []byte(reg), 0o644); err != nil {
		t.Fatal(err)
	}
	return repo, root
}
