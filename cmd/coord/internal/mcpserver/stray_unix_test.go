//go:build unix

package mcpserver

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

var strayLines = []string{"stray: os.Stdout", "stray: fd 1", "stray: child"}

// fd1 names descriptor 1 for the child. It is made once and kept: an
// *os.File the collector finalizes closes its descriptor.
var fd1 = os.NewFile(1, "fd1")

// collect runs the collector and waits (up to 10 s) until the finalizers
// it queued have run, so that a file left unreachable (the displaced
// os.Stdout) would have been closed by now.
func collect() {
	for range 2 {
		runtime.GC()
	}
	done := make(chan struct{})
	sentinel := new([16]byte)
	runtime.SetFinalizer(sentinel, func(*[16]byte) { close(done) })
	sentinel = nil
	runtime.GC()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
}

// straySummary writes to stdout the three ways a server could by mistake
// while it serves: through os.Stdout, on descriptor 1, and from a child
// process that inherits descriptor 1. It first runs the collector, as a
// long-lived server will at some point.
func straySummary(ctx context.Context) {
	collect()
	fmt.Println("stray: os.Stdout")
	unix.Write(1, []byte("stray: fd 1\n"))
	cmd := exec.CommandContext(ctx, "sh", "-c", "echo stray: child")
	cmd.Stdout = fd1
	cmd.Run()
}
