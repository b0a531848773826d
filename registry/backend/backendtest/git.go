package backendtest

import (
	"context"
	"os/exec"
	"strings"
	"testing"

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
