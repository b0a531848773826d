package main

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rotd/coordination/fsops"
)

// TestMain lets the test binary stand in for the coord binary (and for
// rotd, to test 'rotd coord …') inside testscript scripts.
//
// Every coord process the tests start inherits GORACE=atexit_sleep_ms=0:
// a race-built process otherwise sleeps 1 s at exit, which made the
// script tests (hundreds of coord processes) take minutes.
func TestMain(m *testing.M) {
	runWorker() // a worker process exits here
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	cmd := func() {
		installTestHooks()
		os.Exit(run(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr))
	}
	testscript.Main(m, map[string]func(){"coord": cmd, "rotd": cmd})
}

// installTestHooks lets a test signal a coord process at a known point
// instead of after a sleep: COORD_TEST_SIGNALS=FILE is created once the
// stop-signal handler is installed, COORD_TEST_WAITING=FILE once a
// waiting command (wait, kv watch, log -f, top, beat --every, watch)
// waits, COORD_TEST_RUN_WAITS=FILE each time run says it waits for work,
// COORD_TEST_HOLD=NAME:FILE once a write of the file NAME holds
// its temp file (it then waits for FILE.go). Only this wrapper reads
// them; the production binary never does.
func installTestHooks() {
	touch := func(name string) func() {
		if name == "" {
			return nil
		}
		return func() { os.WriteFile(name, nil, 0o644) }
	}
	// COORD_TEST_LAND_SAME_ORDER=1: a train keeps the queue's order
	// after a failure (the figures' baseline).
	landSameOrder = os.Getenv("COORD_TEST_LAND_SAME_ORDER") != ""
	if name := os.Getenv("COORD_TEST_LAND_MOVED"); name != "" {
		// FILE.<task> once the target moved to the task's landing; the
		// task COORD_TEST_LAND_HOLD names then waits there to be killed.
		landMovedHook = func(task string) {
			os.WriteFile(name+"."+task, nil, 0o644)
			if task == os.Getenv("COORD_TEST_LAND_HOLD") {
				time.Sleep(time.Minute)
			}
		}
	}
	if v := os.Getenv("COORD_TEST_HOLD"); v != "" {
		// NAME:FILE: the process stops just before it renames its
		// temp file over the tree's file NAME (written and synced, the
		// flock on it held), creates FILE, and goes on once FILE.go
		// exists (or after 10 minutes): a writer to kill mid-commit, or
		// a live one caught mid-write.
		name, file, _ := strings.Cut(v, ":")
		fsops.SetFaultHook(func(op fsops.Op, path string) error {
			if op == fsops.OpRename && path == name {
				os.WriteFile(file, nil, 0o644)
				for deadline := time.Now().Add(10 * time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
					if _, err := os.Stat(file + ".go"); err == nil {
						break
					}
				}
			}
			return nil
		})
	}
	signalsHook = touch(os.Getenv("COORD_TEST_SIGNALS"))
	waitingHook = touch(os.Getenv("COORD_TEST_WAITING"))
	runWaitsHook = touch(os.Getenv("COORD_TEST_RUN_WAITS"))
}

func dropEnv(vars []string, names ...string) []string {
	out := vars[:0]
	for _, v := range vars {
		keep := true
		for _, n := range names {
			if strings.HasPrefix(v, n+"=") {
				keep = false
			}
		}
		if keep {
			out = append(out, v)
		}
	}
	return out
}

// processGone reports whether pid has exited (a zombie counts as gone).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return true
	}
	state, _ := procStat(pid)
	return state == "Z" || state == "X"
}
