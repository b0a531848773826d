package main

import (
	"bytes"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// drain runs procs agents ("d0", "d1", …) side by side, each running one
// claim after another (argv, a fresh process per claim) until a claim
// prints no task (no_eligible_task, or drained), and checks that exactly n were claimed. It
// returns claims per second and CPU milliseconds per claim.
func drain(n, procs int, argv func(agent string) []string) (rate, cpuPer float64, err error) {
	claimers := make([]claimer, procs)
	for p := range claimers {
		args := argv("d" + strconv.Itoa(p))
		claimers[p] = func() ([]byte, float64, error) {
			s, out, err := procRun(args[0], args[1:]...)
			return out, s.cpu, err
		}
	}
	return drainBy(n, claimers)
}

// claimer makes one claim for its agent and returns what it printed and
// the CPU milliseconds it cost (0 when not known).
type claimer func() (out []byte, cpu float64, err error)

// drainBy runs the claimers side by side, each claiming until it answers
// with no task (no_eligible_task, or drained), and checks that exactly n were claimed. It returns
// claims per second and CPU milliseconds per claim. The first error ends
// its agent's loop and is the error.
func drainBy(n int, claimers []claimer) (rate, cpuPer float64, err error) {
	var mu sync.Mutex
	claims := 0
	cpu := 0.0
	var firstErr error
	t0 := time.Now()
	var wg sync.WaitGroup
	for _, claim := range claimers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				out, c, err := claim()
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("drain: %v", err)
				}
				stop := err != nil || noTask(out)
				if !stop {
					claims++
					cpu += c
				}
				mu.Unlock()
				if stop {
					return
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(t0).Seconds()
	if firstErr != nil {
		return 0, 0, firstErr
	}
	if claims != n {
		return 0, 0, fmt.Errorf("drain: %d of %d claimed", claims, n)
	}
	return float64(claims) / el, cpu / float64(claims), nil
}

// noTask reports whether a claim's output is a status object with no task
// ({"status":"no_eligible_task"}, or {"status":"drained"} when no work is
// left at all).
func noTask(out []byte) bool {
	return bytes.Contains(out, []byte(`"status":"no_eligible_task"`)) || bytes.Contains(out, []byte(`"status":"drained"`))
}
