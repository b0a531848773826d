package main

import (
	"bufio"
	"fmt"
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

// startWatch runs 'coord watch' as its own process and returns a channel
// of its output lines.
func startWatch(t *testing.T, root string, args ...string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := cliProcess(append([]string{"--root", root, "watch"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGINT); cmd.Wait() })
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return cmd, lines
}

func expectLine(t *testing.T, lines <-chan string, substr string, within time.Duration) time.Time {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("watcher exited before printing %q", substr)
			}
			if strings.Contains(l, substr) {
				return time.Now()
			}
		case <-deadline:
			t.Fatalf("no %q from the watcher within %v", substr, within)
		}
	}
}

// TestWatchSweepsDeadAgent: an agent claims and dies (never beats again);
// the watcher frees its lock once it is due, not at its next full rescan
// (an hour away with notification; polling rescans every 2 s), with
// notification and with polling. A second watcher on the same tree is
// refused. How soon after the timeout is logged, not asserted.
//
// Broken build this fails against: cmd/coord/watch.go without the NextDue
// schedule (with notification, the lock is freed only at the rescan an
// hour later: no line within the test's bound).
func TestWatchSweepsDeadAgent(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"notify", "poll"} {
		t.Run(mode, func(t *testing.T) {
			root := seedTree(t, []string{`{"id":"w1","title":"x"}`})
			args := []string{"--timeout", "1s", "--interval", "1h"}
			if mode == "poll" {
				args = []string{"--timeout", "1s", "--interval", "2s", "--poll"}
			}
			_, lines := startWatch(t, root, args...)
			expectLine(t, lines, "watching", 10*time.Second)
			code, _, errs := coordIn("--root", root, "watch")
			if code != 3 || !strings.Contains(errs, "another watcher") || !strings.Contains(errs, `"pid"`) {
				t.Fatalf("second watcher: exit %d, %q", code, errs)
			}
			claimedAt := time.Now()
			mustCoord(t, "--root", root, "--agent", "doomed", "claim")
			expectLine(t, lines, "freed w1 (agent doomed", backendtest.Timeout)
			took := time.Since(claimedAt)
			t.Logf("%s: freed %v after the last beat", mode, took.Round(10*time.Millisecond))
		})
	}
}

// TestWatchOverflow: the watcher is stopped (SIGSTOP) while thousands of
// heartbeat files churn, so the kernel's inotify queue overflows; after
// SIGCONT it reports the overflow once, rescans, and still frees the
// stale lock it was never told about.
func TestWatchOverflow(t *testing.T) {
	t.Parallel()
	limit := 16384
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			limit = n
		}
	}
	if limit > 200000 {
		t.Skipf("inotify queue holds %d events; too many to overflow in a test", limit)
	}
	root := seedTree(t, []string{`{"id":"o1","title":"x"}`})
	cmd, lines := startWatch(t, root, "--timeout", "2s", "--interval", "1m")
	if l := expectLine(t, lines, "watching", 10*time.Second); l.IsZero() {
		return
	}
	if strings.Contains(strings.Join(drain(lines), "\n"), "polling") {
		t.Skip("notification unavailable here")
	}
	cmd.Process.Signal(syscall.SIGSTOP)
	hb := filepath.Join(root, ".rotd", "coordination", "heartbeat")
	for i := 0; i < limit/2+1000; i++ {
		p := filepath.Join(hb, fmt.Sprintf("churn%d.beat", i))
		os.WriteFile(p, nil, 0o644)
		os.Remove(p)
	}
	mustCoord(t, "--root", root, "--agent", "ghost", "claim")
	cmd.Process.Signal(syscall.SIGCONT)
	expectLine(t, lines, "overflowed", 20*time.Second)
	expectLine(t, lines, "freed o1 (agent ghost", 20*time.Second)
}

func drain(lines <-chan string) []string {
	var out []string
	for {
		select {
		case l := <-lines:
			out = append(out, l)
		case <-time.After(100 * time.Millisecond):
			return out
		}
	}
}

// TestWatchFreesDeadAgentsPathLocks: the watcher runs the same
// maintenance step as clean-stale (app.Service.Maintain), so a dead
// agent's path locks go with its task (the maintenance step is one
// rule, shared by both).
func TestWatchFreesDeadAgentsPathLocks(t *testing.T) {
	t.Parallel()
	root := seedTree(t, []string{`{"id":"w1","title":"x"}`})
	_, lines := startWatch(t, root, "--timeout", "1s", "--interval", "1h")
	expectLine(t, lines, "watching", 10*time.Second)
	mustCoord(t, "--root", root, "--agent", "doomed", "claim", "--task", "w1")
	mustCoord(t, "--root", root, "--agent", "doomed", "lock-file", "src/editor")
	expectLine(t, lines, "freed w1 (agent doomed", backendtest.Timeout)
	if out := mustCoord(t, "--root", root, "locks", "--json"); strings.TrimSpace(out) != "[]" {
		t.Fatalf("the dead agent's path lock outlived its task: %s", out)
	}
}
