package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"
)

func blockCommand(e *env) *cli.Command {
	return &cli.Command{Name: "block", Usage: "mark a task you hold blocked", ArgsUsage: "TASK",
		Flags:  []cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why (required)"}, newEpochFlag()},
		Action: e.cmdBlock}
}

func unblockCommand(e *env) *cli.Command {
	return &cli.Command{Name: "unblock", Usage: "return a blocked task to its previous state", ArgsUsage: "TASK",
		Flags: []cli.Flag{newEpochFlag()}, Action: e.cmdUnblock}
}

func (e *env) cmdBlock(_ context.Context, c *cli.Command) error {
	a, err := e.args(c, "TASK")
	if err != nil {
		return err
	}
	s, ref, err := e.held(c, a[0])
	if err != nil {
		return err
	}
	t, err := s.Block(e.ctx, ref, c.String("reason"))
	if err != nil {
		return err
	}
	return e.printTask(t, false, "blocked "+t.ID)
}

func (e *env) cmdUnblock(_ context.Context, c *cli.Command) error {
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
