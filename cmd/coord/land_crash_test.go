//go:build !race

package main

// The lander killed at any instant (docs/GIT.md, "a crash at any
// instant leaves the target either before or after one whole landing"):
// real coord processes on a real repository, SIGKILLed at random delays
// and at known stages (while the check of the k-th task runs), then run
// again to completion. Built without the race detector: it starts many
// processes and the detector cannot see across them.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rotd/coordination/registry/backend/backendtest"
)

// TestLandCrash: six finished tasks (one conflicting with another), a
// lander SIGKILLed over many runs. After each kill the target's
// first-parent history since the start is whole landings only (a task's
// head fast-forwarded, or a merge commit whose second parent is a task's
// head), each task landed at most once, and no task is recorded landed
// whose head and landed commit the target lacks. After the next lander
// finished: every task but the conflicting one landed exactly once, that
// one went back to its owner naming the file, no temporary worktree is
// left under coord-land/ and no branch was created.
//
// Broken builds this fails against: recording the landing before the
// ref moves (a recorded task not on the target), landing without the
// ancestry check first (a head merged twice), and no clean-up of the
// temporary worktrees at start.
func TestLandCrash(t *testing.T) { t.Parallel(); landCrash(t, 1) }

// TestLandCrashParallel is TestLandCrash with a train of four checks at
// once (land --parallel 4); after each kill, also: no check the killed
// lander started still runs.
func TestLandCrashParallel(t *testing.T) {
	t.Parallel()
	longTier(t, "a crash enumeration") // the default loop: TestLandCrash
	landCrash(t, 4)
}

func landCrash(t *testing.T, parallel int) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	const nTasks = 6
	base := t.TempDir()
	tmpl := filepath.Join(base, "tmpl")
	env := append(append(cleanEnv(), backendtest.GitEnv...), "HOME="+base)
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	coordIn := func(dir string, args ...string) string { t.Helper(); return runCoord(t, dir, env, "", args...) }
	write := func(dir, name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The template: a repository whose tasks t0..t5 are done, each with
	// one commit of its own on coord/aN; t5 changes the line t0 does.
	if err := os.MkdirAll(tmpl, 0o755); err != nil {
		t.Fatal(err)
	}
	git(tmpl, "init", "-q", "-b", "main")
	write(tmpl, "shared.txt", "1\n2\n3\n")
	git(tmpl, "add", ".")
	git(tmpl, "commit", "-q", "-m", "init")
	start := git(tmpl, "rev-parse", "main")
	coordIn(tmpl, "init")
	// t5 and t0 write one line with no hook in between: the conflict is
	// the lander's to find, so write claims only warn.
	coordIn(tmpl, "config", "set", "write_claims", "warn")
	var seed strings.Builder
	for i := range nTasks {
		fmt.Fprintf(&seed, "{\"id\":\"t%d\",\"title\":\"task %d\"}\n", i, i)
	}
	write(base, "tasks.jsonl", seed.String())
	coordIn(tmpl, "seed-tasks", filepath.Join(base, "tasks.jsonl"))
	for i := range nTasks {
		agent := fmt.Sprintf("a%d", i)
		git(tmpl, "checkout", "-q", "-b", "coord/"+agent, "main")
		coordIn(tmpl, "--agent", agent, "claim", "--task", fmt.Sprintf("t%d", i))
		switch i {
		case 0:
			write(tmpl, "shared.txt", "1\ntwo (t0)\n3\n")
		case nTasks - 1:
			write(tmpl, "shared.txt", "1\ntwo (t5)\n3\n")
		default:
			write(tmpl, fmt.Sprintf("f%d.txt", i), "task\n")
		}
		git(tmpl, "add", ".")
		git(tmpl, "commit", "-q", "-m", agent)
		coordIn(tmpl, "--agent", agent, "release", fmt.Sprintf("t%d", i), "--summary", "done")
		git(tmpl, "checkout", "-q", "main")
	}
	branches := git(tmpl, "branch", "--list")
	heads := map[string]string{} // head -> task
	for _, tk := range lsTasks(t, coordIn(tmpl, "ls", "--json")) {
		if tk.Head == "" {
			t.Fatalf("task %s released without a head", tk.ID)
		}
		heads[tk.Head] = tk.ID
	}
	conflicting := fmt.Sprintf("t%d", nTasks-1)

	// check is the land check: it marks the stage (the task it checks)
	// and takes a little while, so kills fall inside checks too.
	marks := filepath.Join(base, "marks")
	check := `touch "$MARKS/$COORD_TASK.$$"; sleep 0.02`

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	var est time.Duration
	// The quick tier kills at each kind of instant (none, a check, a
	// held step, a random one) once; the long tier goes on for its
	// budget.
	budget := time.Duration(tierScale(0, 12, 180)) * time.Second
	deadline := time.Now().Add(budget)
	runs, kills := 0, 0
	for r := 0; r < 40 && (r < 4 || time.Now().Before(deadline)); r++ {
		dir := filepath.Join(base, fmt.Sprintf("run%d", r))
		if out, err := exec.Command("cp", "-a", tmpl, dir).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v\n%s", err, out)
		}
		os.RemoveAll(marks)
		os.MkdirAll(marks, 0o755)
		cmd := exec.Command("coord", "--agent", "lander", "land", "--check", check, "--parallel", fmt.Sprint(parallel))
		cmd.Dir = dir
		cmd.Env = append(env, "MARKS="+marks, "COORD_TEST_LAND_MOVED="+filepath.Join(marks, "moved"))
		if r%3 == 2 {
			cmd.Env = append(cmd.Env, fmt.Sprintf("COORD_TEST_LAND_HOLD=t%d", (r/3)%(nTasks-1)))
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		began := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var how string
		switch {
		case r == 0: // uninterrupted: how long a whole landing takes
			how = "none"
		case r%3 == 1: // while the check of the k-th task runs
			k := (r / 3) % (nTasks - 1)
			how = fmt.Sprintf("at the check of t%d", k)
			landWait(t, 60*time.Second, func() bool {
				m, _ := filepath.Glob(filepath.Join(marks, fmt.Sprintf("t%d.*", k)))
				return len(m) > 0
			}, done)
		case r%3 == 2: // after the target moved to the k-th task, before the record
			k := (r / 3) % (nTasks - 1)
			how = fmt.Sprintf("after main moved to t%d", k)
			landWait(t, 60*time.Second, func() bool {
				_, err := os.Stat(filepath.Join(marks, fmt.Sprintf("moved.t%d", k)))
				return err == nil
			}, done)
		default:
			d := time.Duration(rng.Int64N(int64(est) + 1))
			how = fmt.Sprintf("after %v", d)
			time.Sleep(d) // a random instant: the delay is the test's input, not a synchronisation
		}
		var killed bool
		if how != "none" {
			killed = cmd.Process.Signal(syscall.SIGKILL) == nil
		}
		err := <-done
		if r == 0 {
			est = time.Since(began)
			if err != nil && !exitedWith(err, 3) {
				t.Fatalf("uninterrupted lander: %v\n%s", err, stderr.String())
			}
		}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); killed && (!ok || !ws.Signaled()) {
			killed = false // it had finished before the signal
		}
		if killed {
			kills++
		}
		label := fmt.Sprintf("run %d (killed %s)", r, how)
		if killed {
			checksEnd(t, label, marks)
		}
		checkLanding(t, label+", after the kill", dir, git, coordIn, start, heads, false, "")

		// The next lander finishes the work.
		cmd2 := exec.Command("coord", "--agent", "lander2", "land", "--check", "true")
		cmd2.Dir, cmd2.Env = dir, env
		if out, err := cmd2.CombinedOutput(); err != nil && !exitedWith(err, 3) {
			t.Fatalf("%s: the next lander: %v\n%s", label, err, out)
		}
		checkLanding(t, label+", after the next lander", dir, git, coordIn, start, heads, true, conflicting)
		// the main checkout moved with main: the next lander finishes a
		// move whose checkout the kill left behind (the move journal)
		if st := git(dir, "status", "--porcelain", "--untracked-files=no"); st != "" {
			t.Fatalf("%s: the checkout of main is not at main:\n%s", label, st)
		}
		if got := git(dir, "branch", "--list"); got != branches {
			t.Fatalf("%s: branches changed:\n%s\nwant\n%s", label, got, branches)
		}
		if wl := git(dir, "worktree", "list", "--porcelain"); strings.Contains(wl, "coord-land") {
			t.Fatalf("%s: a temporary worktree is left:\n%s", label, wl)
		}
		if ents, _ := os.ReadDir(filepath.Join(dir, ".git", "coord-land")); len(ents) > 0 {
			t.Fatalf("%s: %d entries left under .git/coord-land", label, len(ents))
		}
		runs++
		os.RemoveAll(dir)
	}
	t.Logf("%d runs, %d killed mid-landing (a whole landing took %v)", runs, kills, est)
}

// checksEnd waits (backendtest.Wait's generous bound) until no check a
// killed lander started runs: each check's shell left its pid in its mark.
func checksEnd(t *testing.T, label, marks string) {
	t.Helper()
	ms, _ := filepath.Glob(filepath.Join(marks, "t*.*"))
	for _, m := range ms {
		pid, err := strconv.Atoi(m[strings.LastIndexByte(m, '.')+1:])
		if err != nil {
			continue
		}
		backendtest.Wait(t, fmt.Sprintf("%s: the end of the check %s (pid %d) after its lander was killed", label, filepath.Base(m), pid), func() bool {
			state, _ := procStat(pid)
			return syscall.Kill(pid, 0) == syscall.ESRCH || state == "Z" || state == "X"
		})
	}
}

// checkLanding checks the landing invariants of the repository in dir
// (see TestLandCrash); finished also checks that every task but
// conflicting landed and that conflicting went back to its owner.
func checkLanding(t *testing.T, label, dir string, git func(string, ...string) string, coordIn func(string, ...string) string,
	start string, heads map[string]string, finished bool, conflicting string) {
	t.Helper()
	landed := map[string]int{}
	for _, line := range strings.Split(git(dir, "rev-list", "--first-parent", "--parents", "main", "^"+start), "\n") {
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		var task string
		switch {
		case len(f) == 2 && heads[f[0]] != "": // a fast-forward to a task's head
			task = heads[f[0]]
		case len(f) == 3 && heads[f[2]] != "": // a merge of a task's head
			task = heads[f[2]]
			if msg := git(dir, "log", "-1", "--format=%s", f[0]); msg != "coord: land task "+task+": task "+task[1:] {
				t.Fatalf("%s: the merge %s says %q", label, f[0][:12], msg)
			}
		default:
			t.Fatalf("%s: commit %s on main is not a whole landing: %v", label, f[0][:12], f)
		}
		landed[task]++
		if landed[task] > 1 {
			t.Fatalf("%s: task %s landed twice", label, task)
		}
	}
	for _, tk := range lsTasks(t, coordIn(dir, "ls", "--json")) {
		if tk.LandedAt != "" {
			for _, c := range []string{tk.Head, tk.LandedCommit} {
				if c == "" || exec.Command("git", "-C", dir, "merge-base", "--is-ancestor", c, "main").Run() != nil {
					t.Fatalf("%s: task %s recorded landed at %q, which main lacks (head %s)", label, tk.ID, tk.LandedCommit, tk.Head)
				}
			}
			if landed[tk.ID] != 1 {
				t.Fatalf("%s: task %s recorded landed, on main %d times", label, tk.ID, landed[tk.ID])
			}
		}
		if !finished {
			continue
		}
		if tk.ID == conflicting {
			if tk.Status != "claimed" || !strings.Contains(tk.ReviewNotes, "shared.txt") || landed[tk.ID] != 0 {
				t.Fatalf("%s: the conflicting task %s: status %s, notes %q, landed %d times", label, tk.ID, tk.Status, tk.ReviewNotes, landed[tk.ID])
			}
			continue
		}
		if tk.LandedAt == "" || landed[tk.ID] != 1 || tk.LandingAt != "" {
			t.Fatalf("%s: task %s: landed_at %q landing_at %q, on main %d times", label, tk.ID, tk.LandedAt, tk.LandingAt, landed[tk.ID])
		}
	}
}

// landTask is what TestLandCrash reads of a task.
type landTask struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	Head         string `json:"head"`
	LandedCommit string `json:"landed_commit"`
	LandedAt     string `json:"landed_at"`
	LandingAt    string `json:"landing_at"`
	ReviewNotes  string `json:"review_notes"`
}

func lsTasks(t *testing.T, out string) []landTask {
	t.Helper()
	var list []landTask
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("ls --json: %v\n%s", err, out)
	}
	slices.SortFunc(list, func(a, b landTask) int { return strings.Compare(a.ID, b.ID) })
	return list
}

// landWait waits until cond holds, the process ends (its end is put
// back on done) or timeout passes (a failure).
func landWait(t *testing.T, timeout time.Duration, cond func() bool, done chan error) {
	t.Helper()
	end := time.Now().Add(timeout)
	for !cond() {
		select {
		case err := <-done:
			done <- err
			return
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(end) {
			t.Fatalf("not reached within %v", timeout)
		}
	}
}

// exitedWith reports whether err is an exit with status code.
func exitedWith(err error, code int) bool {
	var ee *exec.ExitError
	return err != nil && errorsAs(err, &ee) && ee.ExitCode() == code
}
