//go:build !race

// Tests that start many processes of the test binary: the race detector
// cannot see across processes and slows each one, so they are built only
// without it (make test's procs pass runs them).

package fsops

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Processes racing to add the same lines add each exactly once (the
// flock on the file orders their read-then-append).
func TestEnsureLinesProcesses(t *testing.T) {
	if name := os.Getenv("FSOPS_ENSURE_LINES"); name != "" {
		start, _ := time.Parse(time.RFC3339Nano, os.Getenv("FSOPS_ENSURE_START"))
		time.Sleep(time.Until(start)) // start together, to make the race likely
		if _, err := EnsureLines(context.Background(), name, []string{"a", "b", "c"}, 60*time.Second); err != nil {
			t.Fatal(err)
		}
		return
	}
	const procs = 12
	for round := 0; round < 5; round++ {
		name := filepath.Join(t.TempDir(), "exclude")
		start := time.Now().Add(500 * time.Millisecond).Format(time.RFC3339Nano)
		var cmds []*exec.Cmd
		for i := 0; i < procs; i++ {
			cmd := exec.Command(os.Args[0], "-test.run=^TestEnsureLinesProcesses$")
			cmd.Env = append(os.Environ(), "FSOPS_ENSURE_LINES="+name, "FSOPS_ENSURE_START="+start)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds = append(cmds, cmd)
		}
		for _, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("a process failed: %v", err)
			}
		}
		got, _ := os.ReadFile(name)
		if string(got) != "a\nb\nc\n" {
			t.Fatalf("round %d: file is %q, want each line once", round, got)
		}
	}
}
