//go:build !race

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rotd/coordination/registry/backend/backendtest"
)

// TestLandCheckDiesWithLander: a lander SIGKILLed while its check runs
// takes the check with it. The check starts a worker that writes a mark
// once the test says go; the lander is killed, then the test says go:
// the worker must be gone first and the mark never appear. Then the next
// lander lands the task. Against the build that started the check in a
// process group of its own and nothing more, the worker runs on and
// writes the mark (the check outlived its lander, side effects
// included, while the next lander removes its worktree).
func TestLandCheckDiesWithLander(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	base := t.TempDir()
	marks := filepath.Join(base, "marks")
	if err := os.MkdirAll(marks, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(append(cleanEnv(), backendtest.GitEnv...), "HOME="+base, "MARKS="+marks)
	repo := doneTaskRepo(t, base, env)

	// The check: a worker in the background that writes the mark once
	// told to, its pid published, and the check waiting for it.
	check := `(while [ ! -e "$MARKS/go" ]; do sleep 0.05; done; touch "$MARKS/mark") & ` +
		`echo $! > "$MARKS/worker.tmp" && mv "$MARKS/worker.tmp" "$MARKS/worker"; wait`
	lander := exec.Command("coord", "--agent", "lander", "land", "--check", check)
	lander.Dir, lander.Env = repo, env
	if err := lander.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- lander.Wait() }()
	landWait(t, 60*time.Second, func() bool { _, err := os.Stat(filepath.Join(marks, "worker")); return err == nil }, done)
	b, err := os.ReadFile(filepath.Join(marks, "worker"))
	if err != nil {
		t.Fatalf("the check never started its worker: %v (lander: %v)", err, <-done)
	}
	worker, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	lander.Process.Signal(syscall.SIGKILL)
	<-done
	if err := os.WriteFile(filepath.Join(marks, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(marks, "mark")
	for end := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(mark); err == nil {
			syscall.Kill(worker, syscall.SIGKILL)
			t.Fatal("the check outlived its SIGKILLed lander: its worker wrote the mark")
		}
		if processGone(worker) {
			break
		}
		if time.Now().After(end) {
			syscall.Kill(worker, syscall.SIGKILL)
			t.Fatalf("the check's worker (pid %d) still runs 60 s after its lander was killed", worker)
		}
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the check's worker wrote the mark")
	}
	// The next lander lands the task.
	out := runCoord(t, repo, env, "", "--agent", "lander2", "land", "--check", "true")
	if !strings.Contains(out, "landed t1 on main") {
		t.Fatalf("the next lander: %s", out)
	}
}

// doneTaskRepo makes base/repo: a git repository whose project (on the
// backend env names, or the repository's own tree) holds task t1, done
// by agent a with one commit of its own on coord/a, waiting to land.
func doneTaskRepo(t *testing.T, base string, env []string) string {
	t.Helper()
	repo := filepath.Join(base, "repo")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = repo, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(repo, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	git("init", "-q", "-b", "main")
	write("a.txt", "a\n")
	git("add", ".")
	git("commit", "-q", "-m", "init")
	runCoord(t, repo, env, "", "init")
	runCoord(t, repo, env, `{"id":"t1","title":"one"}`+"\n", "seed-tasks", "--stdin")
	git("checkout", "-q", "-b", "coord/a", "main")
	runCoord(t, repo, env, "", "--agent", "a", "claim", "--task", "t1")
	write("b.txt", "b\n")
	git("add", "b.txt")
	git("commit", "-q", "-m", "t1")
	runCoord(t, repo, env, "", "--agent", "a", "release", "t1", "--summary", "done")
	git("checkout", "-q", "main")
	return repo
}
