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
// prints no_eligible_task, and checks that exactly n were claimed. It
// returns claims per second and CPU milliseconds per claim. The first
// failing process ends its agent's loop and is the error.
func drain(n, procs int, argv func(agent string) []string) (rate, cpuPer float64, err error) {
	var mu sync.Mutex
	claims := 0
	cpu := 0.0
	var firstErr error
	t0 := time.Now()
	var wg sync.WaitGroup
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := argv("d" + strconv.Itoa(p))
			for {
				s, out, err := procRun(args[0], args[1:]...)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("drain: %v", err)
				}
				stop := err != nil || bytes.Contains(out, []byte("no_eligible_task"))
				if !stop {
					claims++
					cpu += s.cpu
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
