package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord/app"
)

func blockCommand(e *env) *cli.Command {
	return &cli.Command{Name: "block", Usage: "mark a task you hold blocked", ArgsUsage: "[TASK]",
		Flags:  []cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why (required)"}, newEpochFlag()},
		Action: e.cmdBlock}
}

func unblockCommand(e *env) *cli.Command {
	return &cli.Command{Name: "unblock", Usage: "return a blocked task to the pool (its owner takes it first; its branch and review notes stay)", ArgsUsage: "TASK",
		Flags: []cli.Flag{newEpochFlag(),
			&cli.StringFlag{Name: "reason", Usage: "unblock a task another agent holds, as a supervisor (the reason is logged)"}},
		Action: e.cmdUnblock}
}

func (e *env) cmdBlock(_ context.Context, c *cli.Command) error {
	id, err := taskArg(c.Args().Slice())
	if err != nil {
		return err
	}
	s, ref, err := e.held(c, id)
	if err != nil {
		return err
	}
	t, err := s.Block(e.ctx, ref, c.String("reason"))
	if err != nil {
		return err
	}
	return e.printTask(t, false, "blocked "+t.ID)
}

// cmdUnblock is the holder's unblock, or with --reason a supervisor's
// (app.Supervisor.Unblock): another agent's blocked task goes back to it.
func (e *env) cmdUnblock(_ context.Context, c *cli.Command) error {
	if c.IsSet("reason") {
		if c.IsSet("epoch") {
			return strErr("unblock --reason is a supervisor's, for a task another agent holds; --epoch is the holder's own (give one or the other)")
		}
		return e.act(c, func(v app.Supervisor, a app.Act) (app.ActResult, error) { return v.Unblock(e.ctx, a) },
			app.Act{Reason: c.String("reason")})
	}
	a, err := e.args(c, "TASK")
	if err != nil {
		return err
	}
	s, ref, err := e.held(c, a[0])
	if err != nil {
		return err
	}
	t, err := s.Unblock(e.ctx, ref)
	if err != nil {
		return err
	}
	return e.printTask(t, false, fmt.Sprintf("unblocked %s (%s)", t.ID, t.Status))
}
