//go:build !race

package file_test

import (
	"testing"

	"github.com/rotd/coordination/registry/conformance"
)

// TestConformanceProcesses runs the shared suite's checks that start
// real processes or move tens of megabytes: built without the race
// detector, which cannot see across processes and only slows them.
func TestConformanceProcesses(t *testing.T) { conformance.RunProcesses(t, fileHarness) }
