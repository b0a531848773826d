package main

import (
	"context"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

func claimCommand(e *env) *cli.Command {
	return &cli.Command{Name: "claim", Usage: "atomically claim one task and print it as JSON",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "task", Usage: "claim this task or exit 3"},
			capabilityFlag(), skillFlag(),
			&cli.BoolFlag{Name: "any", Usage: "first eligible task in registry order instead of by priority"},
		}, Action: e.cmdClaim}
}

func (e *env) cmdClaim(_ context.Context, c *cli.Command) error {
	if c.NArg() > 0 {
		return strErr("claim takes no arguments (use --task ID)")
	}
	res, _, err := e.claimTask(c)
	if err != nil {
		return err
	}
	if res.Task == nil {
		return e.printStatus(res.Status())
	}
	return e.printTask(res.Task, true, "")
}

// claimTask claims by c's flags (--task, --any, --capability,
// --skill-level) through the Service (which beats and sweeps).
func (e *env) claimTask(c *cli.Command) (app.ClaimResult, coord.Agent, error) {
	if id := c.String("task"); c.IsSet("task") {
		if err := coord.ValidTaskID(id); err != nil {
			return app.ClaimResult{}, coord.Agent{}, err
		}
	}
	if _, err := coord.ParseSkillFilter(c.String("skill-level")); err != nil {
		return app.ClaimResult{}, coord.Agent{}, err
	}
	s, err := e.open()
	if err != nil {
		return app.ClaimResult{}, coord.Agent{}, err
	}
	a, err := e.caller(c)
	if err != nil {
		return app.ClaimResult{}, a, err
	}
	res, err := s.Claim(e.ctx, app.ClaimRequest{Agent: a, TaskID: c.String("task"), Any: c.Bool("any")})
	return res, a, err
}
