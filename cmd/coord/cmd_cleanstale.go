package main

import (
	"context"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord/app"
)

func cleanStaleCommand(e *env) *cli.Command {
	return &cli.Command{Name: "clean-stale", Usage: "free the locks of agents whose heartbeat is older than the timeout",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "timeout", Usage: "stale after (default: config stale_after, 15m)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "only report"},
		}, Action: e.cmdCleanStale}
}

// cmdCleanStale is one full maintenance step (app.Service.Maintain, as
// watch runs it): the stale sweep, expired path locks, leases and keys,
// log rotation and archiving. Once it has begun, a signal lets it finish
// (the sweep commits first; the housekeeping after it completes).
func (e *env) cmdCleanStale(_ context.Context, c *cli.Command) error {
	e.repoAtRoot = true // a daemon judges the project's repository, not where it was started
	if c.NArg() > 0 {
		return strErr("clean-stale takes no arguments")
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	timeout, err := e.staleTimeout(c)
	if err != nil {
		return err
	}
	if err := e.ctx.Err(); err != nil {
		return interrupted(e.ctx)
	}
	dryRun := c.Bool("dry-run")
	res, merr := s.Maintain(context.WithoutCancel(e.ctx), app.MaintainRequest{Timeout: timeout, DryRun: dryRun, Full: true})
	if e.json {
		if err := e.printJSON(res); err != nil {
			return err
		}
		return merr
	}
	for _, id := range res.Landed {
		e.printf("task %s landed on %s: its write claims are free\n", id, e.cfg.Target)
	}
	if len(res.Archived) > 0 {
		e.printf("archived %d done tasks (archive_after %s)\n", len(res.Archived), e.cfg.ArchiveAfter)
	}
	verb := "freed"
	if dryRun {
		verb = "would free"
	}
	for _, f := range res.Freed {
		e.printf("%s %s (agent %s, idle %s) -> %s\n", verb, f.TaskID, f.Agent, f.Idle.Round(time.Second), f.Status)
	}
	if len(res.Freed) == 0 {
		e.printf("no stale locks\n")
	}
	return merr
}
