package file

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rotd/coordination/fsops"
	"github.com/rotd/coordination/heartbeat"
)

// crashCase is one operation run to a crash at each of its mutating steps.
type crashCase struct {
	name  string
	setup func(t *testing.T, s *Backend)
	op    func(s *Backend) error
	// check inspects the tree after the restart (the reconcile has run).
	check func(t *testing.T, s *Backend)
}

// eachCrashPoint counts op's mutating steps, then for every N runs it on a
// fresh tree, stopping the "process" before step N, and checks recovery.
// 100% of the points must pass.
func eachCrashPoint(t *testing.T, c crashCase) {
	s := freshStore(t, crashSeed)
	c.setup(t, s)
	total := 0
	fsops.SetFaultHook(func(fsops.Op, string) error { total++; return nil })
	err := c.op(s)
	fsops.SetFaultHook(nil)
	if err != nil {
		t.Fatalf("%s without faults: %v", c.name, err)
	}
	if total == 0 {
		t.Fatalf("%s made no mutating step", c.name)
	}
	for k := 0; k <= total; k++ {
		t.Run(fmt.Sprintf("%s/crash_before_step_%d_of_%d", c.name, k, total), func(t *testing.T) {
			s := freshStore(t, crashSeed)
			c.setup(t, s)
			n := 0
			fsops.SetFaultHook(func(fsops.Op, string) error {
				if n >= k {
					return errCrash
				}
				n++
				return nil
			})
			c.op(s)
			fsops.SetFaultHook(nil)
			c.check(t, s)
		})
	}
}

func beatDir(s *Backend) *heartbeat.Dir { return s.beats }

// allLogLines reads every log file, rotated ones first.
func allLogLines(t *testing.T, s *Backend) []string {
	t.Helper()
	files, err := s.logFiles()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		data, err := s.tree.ReadFile(f, MaxRegistrySize)
		if err != nil {
			continue // the current log may not exist right after a rotation
		}
		for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if l != "" {
				out = append(out, l)
			}
		}
	}
	return out
}
