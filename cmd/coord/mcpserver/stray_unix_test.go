//go:build unix

package mcpserver

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

var strayLines = []string{"stray: os.Stdout", "stray: fd 1", "stray: child"}

// straySummary writes to stdout the three ways a server could by mistake
// while it serves: through os.Stdout, on descriptor 1, and from a child
// process that inherits descriptor 1.
func straySummary(ctx context.Context) string {
	fmt.Println("stray: os.Stdout")
	unix.Write(1, []byte("stray: fd 1\n"))
	cmd := exec.CommandContext(ctx, "sh", "-c", "echo stray: child")
	cmd.Stdout = os.NewFile(1, "fd1")
	cmd.Run()
	return "stray summary"
}
