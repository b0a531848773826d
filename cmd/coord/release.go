package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coord/cmd/coord/workspace"
	"github.com/rotd/coord/coord/app"
)

func releaseCommand(e *env) *cli.Command {
	return &cli.Command{Name: "release", Usage: "finish a task you hold (done, or review with the review gate)", ArgsUsage: "TASK",
		Flags:  []cli.Flag{&cli.StringFlag{Name: "summary", Usage: "one-line summary for the log (default: git diff --shortstat)"}, newEpochFlag()},
		Action: e.cmdRelease}
}

// held is the task reference of a command on a task the caller holds.
func (e *env) held(c *cli.Command, id string) (*app.Service, app.TaskRef, error) {
	s, err := e.open()
	if err != nil {
		return nil, app.TaskRef{}, err
	}
	a, err := e.caller(c)
	return s, app.TaskRef{Agent: a, TaskID: id, Epoch: epochOf(c)}, err
}

func (e *env) cmdRelease(_ context.Context, c *cli.Command) error {
	a, err := e.args(c, "TASK")
	if err != nil {
		return err
	}
	s, ref, err := e.held(c, a[0])
	if err != nil {
		return err
	}
	summary := c.String("summary")
	if !c.IsSet("summary") {
		summary = workspace.Summary(e.ctx, e.paths().WorkTop())
	}
	t, err := s.Release(e.ctx, ref, summary)
	if err != nil {
		return err
	}
	return e.printTask(t, false, fmt.Sprintf("released %s (%s)", t.ID, t.Status))
}
