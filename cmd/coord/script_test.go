//go:build !race

// The end-to-end scripts start hundreds of coord processes. The race
// detector cannot see across processes and slows each about tenfold, so
// this file is built only without it, and make test's procs pass runs it
// (Makefile); the processes are the test binary built without it.

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rotd/coordination/registry/backend/backendtest"
)

// TestScript runs every testdata/script/*.txtar end to end.
//
// Extra script commands:
//
//	code N PROG ARGS...   run PROG and require exit status N (stdout and
//	                      stderr are then checked as after exec)
//	snapshot              remember the contents of every file under
//	                      .rotd/coordination (flock sidecars in .lock/ and
//	                      heartbeats excluded: refused commands may take a
//	                      lock or beat)
//	unchanged             fail unless those files are exactly as snapshotted
//	age PATH DUR          set PATH's mtime DUR into the past (e.g. 20m)
//	future PATH DUR       set PATH's mtime DUR into the future
//	lines FILE N          require FILE to have exactly N lines
//	waitfile FILE         wait (up to 60 s) until FILE exists: a ready
//	                      file a background process writes (see
//	                      installTestHooks), never a sleep
//	gone PIDFILE          wait (up to 60 s) until the process whose pid
//	                      PIDFILE holds has exited
//	freeport VAR          set VAR to a free loopback port
//	silentport VAR        set VAR to a loopback port that takes
//	                      connections and never answers (a hung server)
//	hubstart VAR          run a hub (in the test process, on a free
//	                      loopback port, data in $WORK/.hubN) for the
//	                      script and set VAR to its URL
//	hubstop VAR           stop that hub (a backend gone unreachable)
//
// $README_HOOK_LINE is the README's pre-commit hook install line, as
// written there.
func TestScript(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("..", "..", "testdata", "script"),
		RequireExplicitExec: true,
		Setup: func(e *testscript.Env) error {
			e.Setenv("COORD_AGENT", "")
			e.Vars = dropEnv(e.Vars, "COORD_AGENT", "COORD_ROOT", "COORD_AGENT_CAPS", "ROTD_AGENT_ID", "ROTD_AGENT_CAPS")
			e.Setenv("GIT_AUTHOR_NAME", "t")
			e.Setenv("GIT_AUTHOR_EMAIL", "t@example.com")
			e.Setenv("GIT_COMMITTER_NAME", "t")
			e.Setenv("GIT_COMMITTER_EMAIL", "t@example.com")
			// The README's pre-commit hook line, so scripts test it as written.
			hook, err := readmeLine(filepath.Join("..", "..", "README.md"), "--git-path hooks")
			if err != nil {
				return err
			}
			e.Setenv("README_HOOK_LINE", hook)
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "root":
				return os.Geteuid() == 0, nil
			case "git":
				_, err := exec.LookPath("git")
				return err == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"code":       cmdCode,
			"snapshot":   cmdSnapshot,
			"unchanged":  cmdUnchanged,
			"age":        func(ts *testscript.TestScript, neg bool, args []string) { shiftMtime(ts, args, -1) },
			"future":     func(ts *testscript.TestScript, neg bool, args []string) { shiftMtime(ts, args, +1) },
			"lines":      cmdLines,
			"waitfile":   cmdWaitFile,
			"gone":       cmdGone,
			"freeport":   cmdFreePort,
			"silentport": cmdSilentPort,
			"hubstart":   cmdHubStart,
			"hubstop":    cmdHubStop,
		},
	})
}

// readmeLine returns the one line of the README that contains marker.
func readmeLine(name, marker string) (string, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return "", err
	}
	var found []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, marker) {
			found = append(found, strings.TrimSpace(l))
		}
	}
	if len(found) != 1 {
		return "", fmt.Errorf("%s: %d lines contain %q, want 1", name, len(found), marker)
	}
	return found[0], nil
}

func cmdCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: code N PROG ARGS...")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("code: %q is not a number", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		got = ee.ExitCode()
	default:
		ts.Fatalf("code: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

const snapshotFile = ".coord-test-snapshot"

func treeDigest(ts *testscript.TestScript) string {
	dir := ts.MkAbs(filepath.Join(".rotd", "coordination"))
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() && (rel == ".lock" || rel == "heartbeat") {
			return filepath.SkipDir
		}
		if d.IsDir() {
			lines = append(lines, rel+"/")
			return nil
		}
		if !d.Type().IsRegular() { // never open a FIFO or device: it may block
			lines = append(lines, rel+" "+d.Type().String())
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		lines = append(lines, rel+" "+hex.EncodeToString(sum[:8]))
		return nil
	})
	if err != nil {
		ts.Fatalf("snapshot: %v", err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

func cmdSnapshot(ts *testscript.TestScript, neg bool, args []string) {
	if err := os.WriteFile(ts.MkAbs(snapshotFile), []byte(treeDigest(ts)), 0o644); err != nil {
		ts.Fatalf("snapshot: %v", err)
	}
}

func cmdUnchanged(ts *testscript.TestScript, neg bool, args []string) {
	before, err := os.ReadFile(ts.MkAbs(snapshotFile))
	if err != nil {
		ts.Fatalf("unchanged: no snapshot taken")
	}
	now := treeDigest(ts)
	if (string(before) == now) == neg {
		if neg {
			ts.Fatalf("the coordination tree did not change")
		}
		ts.Fatalf("the coordination tree changed:\nbefore:\n%snow:\n%s", before, now)
	}
}

func shiftMtime(ts *testscript.TestScript, args []string, sign time.Duration) {
	if len(args) != 2 {
		ts.Fatalf("usage: age|future PATH DURATION")
	}
	d, err := time.ParseDuration(args[1])
	if err != nil {
		ts.Fatalf("bad duration %q", args[1])
	}
	when := time.Now().Add(sign * d)
	ts.Check(os.Chtimes(ts.MkAbs(args[0]), when, when))
}

func cmdLines(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: lines FILE N")
	}
	data := ts.ReadFile(args[0])
	n := strings.Count(data, "\n")
	want, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("lines: %q is not a number", args[1])
	}
	if (n == want) == neg {
		ts.Fatalf("%s has %d lines, want %s%d", args[0], n, map[bool]string{true: "not ", false: ""}[neg], want)
	}
}

func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile FILE")
	}
	if !backendtest.WaitFor(func() bool { _, err := os.Stat(ts.MkAbs(args[0])); return err == nil }) {
		ts.Fatalf("%s did not appear within %s", args[0], backendtest.Timeout)
	}
}

func cmdGone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: gone PIDFILE")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(args[0])))
	if err != nil {
		ts.Fatalf("gone: %s holds no pid", args[0])
	}
	if !backendtest.WaitFor(func() bool { return processGone(pid) }) {
		syscall.Kill(pid, syscall.SIGKILL) // leave nothing behind
		ts.Fatalf("process %d (%s) still runs after %s", pid, args[0], backendtest.Timeout)
	}
}
