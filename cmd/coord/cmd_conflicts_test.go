package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/registry/backend/backendtest"
)

// coordAt runs coord as its own process in dir (where it finds its
// repository and project) and returns its stdout; a failure fails t.
func coordAt(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := cliProcess(args...)
	cmd.Dir = dir
	cmd.Env = dropEnv(cmd.Env, "COORD_AGENT", "COORD_ROOT", "COORD_BACKEND")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("coord %v in %s: %v\n%s", args, dir, err, errb.String())
	}
	return out.String()
}

// gitAt runs git in dir for a test.
func gitAt(t *testing.T, dir string, args ...string) {
	t.Helper()
	backendtest.Git(t, dir, args...)
}

// TestWatchReportsConflicts: the watcher notices a branch in flight
// that moves into a conflict (no registry change tells it: it polls the
// tips), says the conflict once and logs it once; a later move that
// keeps it says nothing new, as the log shows once the watcher has
// reported a second, different conflict after it.
//
// Broken build this fails against: watch.go without the conflict poll
// (no "conflict:" line within the bound).
func TestWatchReportsConflicts(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	base := t.TempDir()
	repo := filepath.Join(base, "repo")
	lines20 := func(repl map[int]string) string {
		var b strings.Builder
		for i := 1; i <= 20; i++ {
			if s, ok := repl[i]; ok {
				b.WriteString(s + "\n")
			} else {
				b.WriteString(strings.Repeat("l", i) + "\n")
			}
		}
		return b.String()
	}
	write := func(dir, name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitAt(t, base, "init", "-q", "-b", "main", repo)
	write(repo, "f.txt", lines20(nil))
	write(repo, "g.txt", "g\n")
	gitAt(t, repo, "add", ".")
	gitAt(t, repo, "commit", "-q", "-m", "init")
	coordAt(t, repo, "init")
	write(base, "tasks.jsonl", `{"id":"a"}`+"\n"+`{"id":"b"}`+"\n")
	coordAt(t, repo, "seed-tasks", filepath.Join(base, "tasks.jsonl"))
	for _, who := range []string{"alice", "bob"} {
		wt := filepath.Join(base, who)
		gitAt(t, repo, "worktree", "add", "-q", "-b", "coord/"+who, wt)
		coordAt(t, wt, "--agent", who, "claim", "--task", who[:1])
	}
	_, lines := startWatch(t, repo, "--interval", "1h")
	expectLine(t, lines, "watching", 60*time.Second)

	commit := func(who, name, content string) {
		t.Helper()
		wt := filepath.Join(base, who)
		write(wt, name, content)
		gitAt(t, wt, "commit", "-q", "-a", "-m", who)
	}
	commit("alice", "f.txt", lines20(map[int]string{3: "alice"}))
	commit("bob", "f.txt", lines20(map[int]string{3: "bob"}))
	expectLine(t, lines, "conflict: a conflicts with task b in f.txt", 60*time.Second)
	// bob goes on, still conflicting; then the target moves into g.txt
	// against alice's next change: a second conflict, found after the
	// first move was scanned.
	commit("bob", "f.txt", lines20(map[int]string{3: "bob", 10: "bob"}))
	commit("alice", "g.txt", "alice\n")
	write(repo, "g.txt", "main\n")
	gitAt(t, repo, "commit", "-q", "-a", "-m", "main")
	expectLine(t, lines, "conflict: a conflicts with main (the target) in g.txt", 60*time.Second)
	log := coordAt(t, repo, "log")
	if n := strings.Count(log, "conflict: task a (alice) and task b (bob) change f.txt"); n != 1 {
		t.Errorf("the pair logged %d times:\n%s", n, log)
	}
}
