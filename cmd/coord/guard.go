package main

import (
	"context"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coord/cmd/coord/workspace"
	"github.com/rotd/coord/coord"
)

func guardCommand(e *env) *cli.Command {
	return &cli.Command{Name: "guard", Usage: "pre-commit hook: exit 3 if staged files are locked by another agent", Action: e.cmdGuard}
}

// cmdGuard checks the staged change (read from the caller's own worktree
// and mapped to repository paths) against other agents' path locks and
// the files of the tasks they hold (app.Service.Guard).
func (e *env) cmdGuard(_ context.Context, c *cli.Command) error {
	s, agent, err := e.openAs()
	if err != nil {
		return err
	}
	staged, err := workspace.Staged(e.ctx, e.cwd, e.paths())
	if err != nil {
		return err
	}
	hits, err := s.Guard(e.ctx, agent, staged)
	if err != nil {
		return err
	}
	if len(hits) > 0 {
		var what []string
		for _, h := range hits {
			what = append(what, h.String())
		}
		return coord.Errorf(coord.CodeConflict, "guard: staged files held by another agent: %s", strings.Join(what, ", ")).
			WithHint("unstage them or coordinate with the holder")
	}
	return nil
}
