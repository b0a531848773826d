// Package gcstart delays a process's first garbage collection. Most coord
// processes are one-shot (a claim, a beat, a hook before an agent's edit)
// and end with a few megabytes allocated; Go's first collection comes at
// a 4 MB heap, and on a NATS claim that one collection cost about 7 ms of
// CPU, a sixth of the process (docs/BENCHMARKS.md). Delay lets the heap
// grow to a limit before the first collection and then hands pacing back
// to Go's default, so a long-running process (hub, watch, dashboard, mcp)
// collects once at the limit and normally from then on.
package gcstart

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
)

// Limit is the heap a coord process reaches before its first collection.
const Limit = 64 << 20

// Delay turns collection off until the process's Go memory reaches limit
// bytes (debug.SetMemoryLimit); after the first collection, GOGC is 100
// again and there is no memory limit. A GOGC or GOMEMLIMIT in the
// environment is left to rule: Delay does nothing then.
func Delay(limit int64) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(limit)
	// Unreachable from the start: its cleanup runs after the first
	// collection. (It holds a pointer, so it is never tiny-allocated,
	// whose cleanups may never run.)
	runtime.AddCleanup(&sentinel{}, func(struct{}) {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	}, struct{}{})
}

type sentinel struct {
	_ *int
	_ [16]byte
}
