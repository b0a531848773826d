//go:build !race

package main

// The lifecycle as one flow: agents under run --loop in worktrees of
// their own, each task on its own branch, a watching lander, on every
// backend. Real coord and git processes on a real repository.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rotd/coordination/registry/backend/backendtest"
	"github.com/rotd/coordination/registry/nats/hubtest"
)

// flowAgent is the stand-in agent coord run runs: it does the task on
// the branch run checked out, naming the task in every commit; work
// sent back (COORD_REVIEW_NOTES) it fixes by merging the target and
// keeping both sides' lines.
const flowAgent = `set -e
t=$COORD_TASK
test "$(git symbolic-ref --short HEAD)" = "task/$t" || { echo "not on task/$t" >&2; exit 9; }
if [ -n "$COORD_REVIEW_NOTES" ]; then
	if ! git merge -q --no-edit -m "task $t: merge main" main >/dev/null 2>&1; then
		{ git show main:shared.txt | head -1; echo "task $t"; tail -n +2 shared.txt | grep -v -e '^<<<' -e '^===' -e '^>>>' -e '^task' ; } > shared.new
		mv shared.new shared.txt
		git add shared.txt
		git commit -q -m "task $t: resolve shared.txt after merging main"
	fi
	exit 0
fi
case $t in
t5|t6) sed -i "1s/.*/task $t/" shared.txt ;;
*) echo "task $t" > "$t.txt" ;;
esac
git add -A
git commit -q -m "task $t: the work"
echo "task $t: a second commit" >> "notes-$t.txt"
git add -A
git commit -q -m "task $t: notes"
`

// TestFlow: three agents under run --loop in worktrees coord made for
// them (no COORD_AGENT: the worktree says who they are), six tasks, of
// which t5 and t6 (both alice's: only she has the capability) change
// the same line. Every agent's loop keeps going while its released work
// waits to land; a watching lander with a check that takes a second
// lands them. On the target's first-parent line every landing holds the
// commits of exactly one task; t6 conflicts with t5, is sent back to
// alice, fixed on its own branch and landed; every loop exits 0 once all
// its work has landed; nothing waits for a restart. On files and on a
// hub.
func TestFlow(t *testing.T) {
	t.Parallel()
	backendtest.NeedGit(t)
	hub := hubtest.Start(t)
	t.Run("file", func(t *testing.T) { t.Parallel(); flow(t, "") })
	t.Run("nats", func(t *testing.T) { t.Parallel(); flow(t, hub+"/flow") })
}

func flow(t *testing.T, backendURL string) {
	base := t.TempDir()
	repo := filepath.Join(base, "app")
	env := append(append(cleanEnv(), backendtest.GitEnv...), "HOME="+base)
	if backendURL != "" {
		env = append(env, "COORD_BACKEND="+backendURL)
	}
	git := func(dir string, args ...string) string { t.Helper(); return backendtest.Git(t, dir, args...) }
	coordIn := func(dir string, args ...string) string { t.Helper(); return runCoord(t, dir, env, "", args...) }
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	git(repo, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "shared.txt"), []byte("1\n2\n3\n"), 0o644)
	git(repo, "add", ".")
	git(repo, "commit", "-q", "-m", "init")
	start := git(repo, "rev-parse", "main")
	coordIn(repo, "init")
	var seed strings.Builder
	for i := 1; i <= 6; i++ {
		line := fmt.Sprintf(`{"id":"t%d","title":"task %d"`, i, i)
		if i >= 5 {
			line += `,"capability":"shared"`
		}
		seed.WriteString(line + "}\n")
	}
	runCoord(t, repo, env, seed.String(), "seed-tasks", "--stdin")
	script := filepath.Join(base, "agent.sh")
	if err := os.WriteFile(script, []byte(flowAgent), 0o755); err != nil {
		t.Fatal(err)
	}

	type loop struct {
		name     string
		cmd      *exec.Cmd
		out, err bytes.Buffer
		done     chan error
	}
	var loops []*loop
	for _, name := range []string{"alice", "bob", "carol"} {
		coordIn(repo, "worktree", "add", name)
		l := &loop{name: name, done: make(chan error, 1)}
		l.cmd = exec.Command("coord", "run", "--loop", "--beat", "1s", "--", "sh", script)
		l.cmd.Dir = repo + "-" + name
		l.cmd.Env = env
		if name == "alice" {
			l.cmd.Env = append(append([]string(nil), env...), "COORD_AGENT_CAPS=shared")
		}
		l.cmd.Stdout, l.cmd.Stderr = &l.out, &l.err
		l.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := l.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { l.done <- l.cmd.Wait() }()
		t.Cleanup(func() {
			if l.cmd.ProcessState == nil {
				syscall.Kill(-l.cmd.Process.Pid, syscall.SIGKILL)
				<-l.done
			}
		})
		loops = append(loops, l)
	}

	type task struct {
		ID           string `json:"id"`
		Status       string `json:"status"`
		ClaimedBy    string `json:"claimed_by"`
		Branch       string `json:"branch"`
		Head         string `json:"head"`
		LandedCommit string `json:"landed_commit"`
	}
	tasks := func() map[string]task {
		var list []task
		if err := json.Unmarshal([]byte(coordIn(repo, "ls", "--json", "--limit", "0")), &list); err != nil {
			t.Fatal(err)
		}
		m := map[string]task{}
		for _, x := range list {
			m[x.ID] = x
		}
		return m
	}
	// All six released, none landed: no lander runs yet.
	backendtest.Wait(t, "all six tasks done", func() bool {
		for _, l := range loops {
			select {
			case err := <-l.done:
				t.Fatalf("%s's loop ended while its work waits to land: %v\n%s%s", l.name, err, l.out.String(), l.err.String())
			default:
			}
		}
		for _, x := range tasks() {
			if x.Status != "done" {
				return false
			}
		}
		return true
	})
	for id, x := range tasks() {
		if x.Branch != "refs/heads/task/"+id || x.Head == "" || x.LandedCommit != "" {
			t.Fatalf("task %s before landing: %+v", id, x)
		}
	}
	if got := tasks(); got["t5"].ClaimedBy != "alice" || got["t6"].ClaimedBy != "alice" {
		t.Fatalf("t5 and t6 are alice's: %+v %+v", got["t5"], got["t6"])
	}
	for _, l := range loops {
		select {
		case err := <-l.done:
			t.Fatalf("%s's loop ended before its work landed: %v\n%s", l.name, err, l.err.String())
		default:
		}
	}

	lander := exec.Command("coord", "land", "--watch", "--check", "sleep 1; test -f shared.txt")
	lander.Dir, lander.Env = repo, env
	var landOut, landErr bytes.Buffer
	lander.Stdout, lander.Stderr = &landOut, &landErr
	lander.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := lander.Start(); err != nil {
		t.Fatal(err)
	}
	landDone := make(chan error, 1)
	go func() { landDone <- lander.Wait() }()
	defer func() {
		syscall.Kill(-lander.Process.Pid, syscall.SIGTERM)
		select {
		case <-landDone:
		case <-time.After(30 * time.Second):
			syscall.Kill(-lander.Process.Pid, syscall.SIGKILL)
			<-landDone
		}
	}()

	for _, l := range loops {
		select {
		case err := <-l.done:
			if err != nil {
				t.Fatalf("%s's loop: %v\n%s\nlander:\n%s%s", l.name, err, l.err.String(), landOut.String(), landErr.String())
			}
			if !strings.Contains(l.out.String(), `{"status":"drained"}`) {
				t.Fatalf("%s's loop ended without drained: %s", l.name, l.out.String())
			}
		case <-time.After(3 * time.Minute):
			t.Fatalf("%s's loop still runs\n%s\nlander:\n%s%s", l.name, l.err.String(), landOut.String(), landErr.String())
		}
	}
	final := tasks()
	for id, x := range final {
		if x.LandedCommit == "" {
			t.Fatalf("task %s did not land: %+v", id, x)
		}
	}
	log := coordIn(repo, "log", "-n", "0")
	if !strings.Contains(log, "sent task t6 back to alice") && !strings.Contains(log, "sent task t5 back to alice") {
		t.Fatalf("no send-back of t5 or t6 in the log:\n%s", log)
	}
	if !strings.Contains(landOut.String(), "sent back") {
		t.Fatalf("the lander sent nothing back:\n%s", landOut.String())
	}

	// Every landing on the first-parent line holds one task's commits.
	taskIn := regexp.MustCompile(`task (t[0-9])`)
	seen := map[string]int{}
	landings := strings.Fields(git(repo, "rev-list", "--first-parent", "--reverse", start+"..main"))
	for _, c := range landings {
		msgs := git(repo, "log", "--format=%B", c+"^1.."+c)
		ids := map[string]bool{}
		for _, m := range taskIn.FindAllStringSubmatch(msgs, -1) {
			ids[m[1]] = true
		}
		if len(ids) != 1 {
			t.Fatalf("landing %s holds the commits of tasks %v, want one:\n%s", c, ids, msgs)
		}
		for id := range ids {
			seen[id]++
		}
	}
	for i := 1; i <= 6; i++ {
		id := fmt.Sprintf("t%d", i)
		if seen[id] == 0 {
			t.Fatalf("task %s has no landing on main: %v", id, seen)
		}
		if on := git(repo, "merge-base", "--is-ancestor", final[id].LandedCommit, "main"); on != "" {
			t.Fatal(on)
		}
	}
	if got := git(repo, "show", "main:shared.txt"); !strings.Contains(got, "task t5") || !strings.Contains(got, "task t6") {
		t.Fatalf("shared.txt on main does not hold both tasks' lines:\n%s", got)
	}
}
