package main

import (
	"slices"
	"testing"

	"github.com/rotd/coordination/cmd/coord/internal/hooks"
	"github.com/rotd/coordination/cmd/coord/internal/setup"
)

// TestSetupInstallsWhatHooksHandle: every event setup installs is one
// 'coord hook' handles (an event it did not know would exit 1 on every
// call, a warning the agent shows and goes past), and every event the
// hooks handle is installed.
func TestSetupInstallsWhatHooksHandle(t *testing.T) {
	t.Parallel()
	if !slices.Equal(setup.Agents, hooks.Agents) {
		t.Fatalf("setup knows %v, hooks %v", setup.Agents, hooks.Agents)
	}
	for _, agent := range setup.Agents {
		if s, h := setup.Events(agent), hooks.Events(agent); !slices.Equal(s, h) {
			t.Errorf("%s: setup installs %v, the hooks handle %v", agent, s, h)
		}
	}
}
