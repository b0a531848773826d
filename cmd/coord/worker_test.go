package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/file"
)

// Workers: the claims that coord makes about atomicity are about separate
// OS processes, each with its own file descriptors and flocks, so the
// tests start the test binary itself as worker processes (workerMain, the
// CLI, the load worker) rather than goroutines.

// workerEnv, when set in a child's environment, turns the test binary
// into a worker: it runs workerMain instead of the tests.
const workerEnv = "COORD_TEST_WORKER"

// workers are the worker modes that are not workerMain's, by name
// (the files that need one add it in their init).
var workers = map[string]func(agent, root string) int{}

// runWorker, in a child started with workerEnv set, runs the worker and
// exits (TestMain calls it first).
func runWorker() {
	switch mode := os.Getenv(workerEnv); mode {
	case "":
		return
	case "cli":
		installTestHooks()
		os.Exit(run(context.Background(), append([]string{"coord"}, os.Args[1:]...), os.Stdin, os.Stdout, os.Stderr))
	default:
		agent, root := os.Getenv("COORD_AGENT"), os.Getenv("COORD_ROOT")
		if w, ok := workers[mode]; ok {
			os.Exit(w(agent, root))
		}
		os.Exit(workerMain(mode, agent, root))
	}
}

// coordIn runs one coord command in-process and returns its exit code and
// stdout.
func coordIn(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"coord"}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

type claimed struct {
	ID    string `json:"id"`
	Epoch int64  `json:"epoch"`
	Stat  string `json:"status"`
}

// workerMain is an agent's loop. Modes:
//
//	drain: claim, release with --epoch, until nothing is left; print
//	       "got ID EPOCH" per claim
//	hold:  claim and never release, as fast as possible (to be SIGKILLed)
func workerMain(mode, agent, root string) int {
	if mode == "holdlock" {
		// Take the registry flock as a commit would, say so, and keep it
		// until killed (or stopped and continued).
		s, err := file.Open(filepath.Join(root, file.RelDir), file.Options{Holder: agent})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		err = s.Tasks().Update(context.Background(), func(*coord.Txn) error {
			fmt.Println("locked")
			os.Stdout.Sync()
			time.Sleep(time.Hour)
			return nil
		})
		fmt.Fprintln(os.Stderr, err)
		return 4
	}
	if count, ok := strings.CutPrefix(mode, "log:"); ok {
		// "log:N": N messages of 100 B up to the 4 KiB bound, half of
		// them making lines beyond PIPE_BUF (4 KiB).
		n, err := strconv.Atoi(count)
		if err != nil {
			fmt.Fprintf(os.Stderr, "worker mode %q: %v\n", mode, err)
			return 99
		}
		for i := range n {
			msg := fmt.Sprintf("%s-%03d %s end", agent, i, strings.Repeat("x", logMsgLen(i)))
			if code, _, errs := coordIn("--root", root, "--agent", agent, "msg", msg); code != 0 {
				fmt.Fprint(os.Stderr, errs)
				return code
			}
		}
		return 0
	}
	caps := os.Getenv("COORD_AGENT_CAPS")
	for idle := 0; ; {
		code, out, errs := coordIn("--root", root, "--agent", agent, "--capability", caps, "claim")
		if code != 0 {
			fmt.Fprintf(os.Stderr, "claim exited %d: %s", code, errs)
			return code
		}
		var c claimed
		if err := json.Unmarshal([]byte(out), &c); err != nil {
			fmt.Fprintf(os.Stderr, "claim printed %q: %v\n", out, err)
			return 99
		}
		if c.ID == "" {
			if mode == "hold" {
				return 0
			}
			// Nothing eligible now: done, or waiting on others' work.
			_, ls, _ := coordIn("--root", root, "ls", "--json", "--status", "unclaimed,claimed")
			if strings.TrimSpace(ls) == "[]" || idle > 2000 {
				return 0
			}
			idle++
			time.Sleep(2 * time.Millisecond)
			continue
		}
		fmt.Printf("got %s %d\n", c.ID, c.Epoch)
		if mode == "hold" {
			continue
		}
		code, _, errs = coordIn("--root", root, "--agent", agent, "release", c.ID, "--epoch", strconv.FormatInt(c.Epoch, 10), "--summary", "w")
		if code != 0 {
			fmt.Fprintf(os.Stderr, "release %s exited %d: %s", c.ID, code, errs)
			return code
		}
	}
}

func startWorker(t *testing.T, root, mode, agent, caps string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), workerEnv+"="+mode, "COORD_AGENT="+agent, "COORD_ROOT="+root, "COORD_AGENT_CAPS="+caps)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out, &errb
}

func mustCoord(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errs := coordIn(args...)
	if code != 0 {
		t.Fatalf("coord %s: exit %d: %s", strings.Join(args, " "), code, errs)
	}
	return out
}

func seedTree(t *testing.T, lines []string) string {
	t.Helper()
	root := t.TempDir()
	mustCoord(t, "--root", root, "init")
	seed := filepath.Join(root, "seed.jsonl")
	if err := os.WriteFile(seed, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustCoord(t, "--root", root, "seed-tasks", seed)
	return root
}

// logMsgLen is the number of x's in message i: every other message as
// long as a log message may be (coord.MaxNote with its "L00-000 " and
// " end"), which makes its line longer than PIPE_BUF (4 KiB); the others
// from 100 B to about 4 KB.
func logMsgLen(i int) int {
	if i%2 == 0 {
		return coord.MaxNote - 12 - i%31
	}
	return 100 + (i*997)%3900
}
