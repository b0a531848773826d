//go:build !race

package main

// Processes racing for leases and keys. The race detector cannot see
// across processes and slows each about tenfold, so this file is built
// only without it, and make test's procs pass runs it (Makefile).

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// TestRacingLeaseLockAndCAS: 16 processes race 'lease lock' for the same
// agent and period, and 'kv cas --expect-absent' on one key: each round
// has exactly one winner (exit 0) and 15 losers (exit 3).
//
// Broken build this fails against: updateDoc reading the document before
// taking its flock (several processes see the lease free and all win).
func TestRacingLeaseLockAndCAS(t *testing.T) {
	t.Parallel()
	root := seedTree(t, []string{`{"id":"x","title":"x"}`})
	race := func(args func(i int) []string) (wins, losses int) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := cliProcess(args(i)...)
				var errb bytes.Buffer
				cmd.Stderr = &errb
				err := cmd.Run()
				mu.Lock()
				defer mu.Unlock()
				var ee *exec.ExitError
				switch {
				case err == nil:
					wins++
				case errorsAs(err, &ee) && ee.ExitCode() == 3:
					losses++
				default:
					t.Errorf("process %d: %v: %s", i, err, errb.String())
				}
			}()
		}
		wg.Wait()
		return
	}
	for round := range stressScale(3, 50) {
		agent := fmt.Sprintf("torch-agent-%d", round)
		w, l := race(func(i int) []string {
			return []string{"--root", root, "lease", "lock", "--agent", agent, "--cadence", "daily"}
		})
		if w != 1 || l != 15 {
			t.Fatalf("lease lock round %d: %d winners, %d losers", round, w, l)
		}
		key := fmt.Sprintf("race:%d", round)
		w, l = race(func(i int) []string {
			return []string{"--root", root, "--agent", fmt.Sprintf("p%d", i), "kv", "cas", key, fmt.Sprintf("winner-%d", i), "--ttl", "1h", "--expect-absent"}
		})
		if w != 1 || l != 15 {
			t.Fatalf("kv cas round %d: %d winners, %d losers", round, w, l)
		}
	}
	out := mustCoord(t, "--root", root, "lease", "check", "--cadence", "daily", "--json")
	if !strings.Contains(out, `"lockCount":`) {
		t.Fatalf("lease check: %s", out)
	}
}

func errorsAs(err error, target **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	if ok {
		*target = e
	}
	return ok
}
