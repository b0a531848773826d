package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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

// lockedBy starts a holdlock worker and waits until it holds the flock.
func lockedBy(t *testing.T, root, agent string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), workerEnv+"=holdlock", "COORD_AGENT="+agent, "COORD_ROOT="+root)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := out.Read(buf); err != nil || string(buf) != "locked\n" {
		t.Fatalf("holder did not report the lock: %q %v", buf, err)
	}
	return cmd
}

// TestStoppedFlockHolder: a process stopped (SIGSTOP) while it holds the
// registry flock makes others exit 4 after --lock-wait (±10%), naming the
// holder with --lock-diagnose; after it is SIGKILLed the next command gets
// in at once (the kernel drops a dead process's flock).
//
// Broken build this fails against: fsops.Tree.Lock ignoring its wait (a
// blocking flock) hangs until the test's deadline instead of exiting 4.
func TestStoppedFlockHolder(t *testing.T) {
	t.Parallel()
	root := seedTree(t, []string{`{"id":"a","title":"a"}`})
	holder := lockedBy(t, root, "frozen-agent")
	if err := holder.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	const wait = 800 * time.Millisecond
	t0 := time.Now()
	code, _, errs := coordIn("--root", root, "--agent", "b", "--lock-wait", "800ms", "--lock-diagnose", "claim")
	took := time.Since(t0)
	if code != 4 {
		t.Fatalf("claim against a stopped flock holder exited %d (%s), want 4", code, errs)
	}
	// Never before the wait; how long after it is the machine's business
	// (logged), so the bound only says it gave up instead of hanging.
	if took < wait*9/10 || took > wait+backendtest.Timeout {
		t.Errorf("exit 4 after %v, want after %v", took, wait)
	}
	t.Logf("exit 4 after %v (--lock-wait %v)", took, wait)
	if !strings.Contains(errs, `"holder":"frozen-agent"`) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("--lock-diagnose did not name the holder on one line: %q", errs)
	}
	holder.Process.Signal(syscall.SIGKILL)
	holder.Process.Signal(syscall.SIGCONT)
	holder.Wait()

	// Time to get in after a holder is SIGKILLed, over several rounds.
	var lat []time.Duration
	for range 15 {
		h := lockedBy(t, root, "doomed")
		h.Process.Signal(syscall.SIGKILL)
		t0 := time.Now()
		code, _, errs := coordIn("--root", root, "--lock-wait", "5s", "ls", "--json")
		lat = append(lat, time.Since(t0))
		h.Wait()
		if code != 0 {
			t.Fatalf("after the holder died: exit %d: %s", code, errs)
		}
	}
	slices.Sort(lat)
	// (Each ls above got in within its 5 s --lock-wait, or the test failed.)
	t.Logf("lock acquired after a SIGKILLed holder: p50 %v, max %v", lat[len(lat)/2], lat[len(lat)-1])
}

// TestPausedHolderIsFenced: an agent paused past the stale timeout
// (SIGSTOP of its beating process) loses its task to another agent; when
// it resumes, its release and progress with its old epoch exit 6 and
// change nothing, every cycle.
//
// Broken build this fails against: Txn.owned without the epoch check
// (release by the old holder succeeds once the new holder is the same
// agent id) and clean-stale without re-checking the heartbeat.
func TestPausedHolderIsFenced(t *testing.T) {
	t.Parallel()
	cycles := stressScale(4, 200)
	var lines []string
	for i := range cycles {
		lines = append(lines, `{"id":"p`+strconv.Itoa(i)+`","title":"x"}`)
	}
	root := seedTree(t, lines)
	beatFile := filepath.Join(root, ".rotd", "coordination", "heartbeat", "sleeper.beat")
	for i := range cycles {
		id := "p" + strconv.Itoa(i)
		out := mustCoord(t, "--root", root, "--agent", "sleeper", "claim", "--task", id)
		var c claimed
		if err := json.Unmarshal([]byte(out), &c); err != nil {
			t.Fatal(err)
		}
		// The real CLI beat loop, as its own process, once it beats.
		beating := filepath.Join(t.TempDir(), "beating")
		beater := cliProcess("--root", root, "--agent", "sleeper", "beat", "--every", "1s")
		beater.Env = append(beater.Env, "COORD_TEST_WAITING="+beating)
		if err := beater.Start(); err != nil {
			t.Fatal(err)
		}
		if !backendtest.WaitFor(func() bool { _, err := os.Stat(beating); return err == nil }) {
			t.Fatalf("cycle %d: the beat loop did not start", i)
		}
		// Alive: a sweep frees nothing.
		mustCoord(t, "--root", root, "clean-stale", "--timeout", "30s")
		if st := taskStatus(t, root, id); st != "claimed/sleeper" {
			t.Fatalf("cycle %d: live agent swept: %s", i, st)
		}
		// Paused past the timeout: stopped (for sure, before its heartbeat
		// is aged, so no beat in flight lands after), its beat an hour old.
		beater.Process.Signal(syscall.SIGSTOP)
		if !backendtest.WaitFor(func() bool { st, _ := procStat(beater.Process.Pid); return st == "T" || st == "" }) {
			t.Fatalf("cycle %d: the beat loop did not stop", i)
		}
		old := time.Now().Add(-time.Hour)
		os.Chtimes(beatFile, old, old)
		mustCoord(t, "--root", root, "clean-stale", "--timeout", "30s")
		mustCoord(t, "--root", root, "--agent", "successor", "claim", "--task", id)
		beater.Process.Signal(syscall.SIGCONT) // it beats again: alive, but fenced
		before, _ := os.ReadFile(filepath.Join(root, ".rotd", "coordination", "active_work_registry.json"))
		ep := strconv.FormatInt(c.Epoch, 10)
		for _, args := range [][]string{
			{"release", id, "--epoch", ep, "--summary", "late"},
			{"progress", id, "50", "--epoch", ep},
			{"block", id, "--reason", "x", "--epoch", ep},
			{"release", id, "--summary", "late, no epoch"}, // not the holder at all
		} {
			code, _, errs := coordIn(append([]string{"--root", root, "--agent", "sleeper"}, args...)...)
			if code != 6 {
				t.Fatalf("cycle %d: %s by the paused agent exited %d (%s), want 6", i, args[0], code, errs)
			}
		}
		after, _ := os.ReadFile(filepath.Join(root, ".rotd", "coordination", "active_work_registry.json"))
		if string(before) != string(after) {
			t.Fatalf("cycle %d: a refused command changed the registry", i)
		}
		if st := taskStatus(t, root, id); st != "claimed/successor" {
			t.Fatalf("cycle %d: task is %s", i, st)
		}
		beater.Process.Kill()
		beater.Wait()
		os.Remove(beatFile)
	}
}

func taskStatus(t *testing.T, root, id string) string {
	t.Helper()
	var tasks []struct {
		ID, Status string
		ClaimedBy  *string `json:"claimed_by"`
	}
	if err := json.Unmarshal([]byte(mustCoord(t, "--root", root, "ls", "--json")), &tasks); err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if task.ID == id {
			by := ""
			if task.ClaimedBy != nil {
				by = *task.ClaimedBy
			}
			return task.Status + "/" + by
		}
	}
	return "missing"
}

// cliProcess is the coord CLI as a separate process (the test binary in
// worker mode "cli").
func cliProcess(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), workerEnv+"=cli")
	return cmd
}

// boundedCoord runs the coord CLI as a separate process with a bound: a
// command still running after it is killed, and the test fails saying it
// hung.
func boundedCoord(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	const bound = 60 * time.Second // generous: a loaded 2-core machine; a hang is forever
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), workerEnv+"=cli")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("coord %s hung: killed after %s (stderr: %s)", strings.Join(args, " "), bound, errb.String())
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("coord %s: %v", strings.Join(args, " "), err)
	}
	return code, out.String(), errb.String()
}

// stressScale picks a scenario's size: short in CI, long under
// 'make stress' (COORD_STRESS=1).
func stressScale(short, long int) int {
	if os.Getenv("COORD_STRESS") != "" {
		return long
	}
	return short
}

// longTier skips t in the default loop (go test -short): its kind (a
// storm, a load, a crash enumeration; what) is the long tier's alone
// (make test-long), where it runs at full size; the default loop keeps
// a smaller test of the same promise, named where longTier is called.
func longTier(t *testing.T, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s: the long tier's (make test-long)", what)
	}
}

// longScale is the size of a test the default loop skips (longTier): full
// in the long tier, stress under make stress.
func longScale(full, stress int) int { return tierScale(full, full, stress) }

// tierScale picks a scenario's size by tier: quick in the default test
// loop (go test -short, make test), full in the long tier (make
// test-long, go test without -short) and stress under make stress
// (COORD_STRESS=1). The quick size exercises the same claims on fewer
// rounds; the long tier is where the volume is.
func tierScale(quick, full, stress int) int {
	switch {
	case os.Getenv("COORD_STRESS") != "":
		return stress
	case testing.Short():
		return quick
	}
	return full
}
