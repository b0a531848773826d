package main

import (
	"context"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/cmd/coord/internal/workspace"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/internal/gitrepo"
)

func guardCommand(e *env) *cli.Command {
	return &cli.Command{Name: "guard", Usage: "pre-commit hook: exit 3 if staged files are locked by another agent or written by another task in flight", Action: e.cmdGuard}
}

// cmdGuard checks the staged change (read from the caller's own worktree
// and mapped to repository paths) against other agents' path locks, the
// files of the tasks they hold and the write claims of other tasks in
// flight (app.Service.Guard).
func (e *env) cmdGuard(_ context.Context, c *cli.Command) error {
	s, agent, err := e.openAs()
	if err != nil {
		return err
	}
	if m, ok := gitrepo.UnfollowedLanding(e.cwd); ok {
		return coord.Errorf(coord.CodeConflict, "guard: %s", m.Unfollowed())
	}
	staged, err := workspace.Staged(e.ctx, e.cwd, e.paths(), coord.BranchRef(s.Config().Target))
	if err != nil {
		return err
	}
	hits, err := s.Guard(e.ctx, agent, staged)
	if err != nil {
		return err
	}
	var what []string
	for _, h := range hits {
		if h.Warn {
			e.warnf("guard: %s (write_claims: warn; the commit goes ahead)", h.String())
			continue
		}
		what = append(what, h.String())
	}
	if len(what) > 0 {
		return coord.Errorf(coord.CodeConflict, "guard: staged files held by another agent: %s", strings.Join(what, ", ")).
			WithHint("unstage them or coordinate with the holder")
	}
	return nil
}
