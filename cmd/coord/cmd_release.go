package main

import (
	"context"
	"fmt"
	"os"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

func releaseCommand(e *env) *cli.Command {
	return &cli.Command{Name: "release", Usage: "finish a task you hold (done, or review with the review gate); its work is the tip of its branch", ArgsUsage: "[TASK]",
		Flags:  []cli.Flag{&cli.StringFlag{Name: "summary", Usage: "one-line summary for the log (default: the task's commits since its base, and uncommitted changes)"}, newEpochFlag()},
		Action: e.cmdRelease}
}

// held is the task reference of a command on a task the caller holds:
// id, else the task the caller works on (taskOr, then
// app.Service.WorkingOn).
func (e *env) held(c *cli.Command, id string) (*app.Service, app.TaskRef, error) {
	s, err := e.open()
	if err != nil {
		return nil, app.TaskRef{}, err
	}
	a, err := e.caller(c)
	if err != nil {
		return nil, app.TaskRef{}, err
	}
	if id = e.taskOr(id); id == "" {
		if id, err = s.WorkingOn(e.ctx, a.ID, c.Name); err != nil {
			return nil, app.TaskRef{}, err
		}
	}
	if err := coord.ValidTaskID(id); err != nil {
		return nil, app.TaskRef{}, err
	}
	return s, app.TaskRef{Agent: a, TaskID: id, Epoch: epochOf(c)}, nil
}

// taskOr is id, else the task coord run gives the command it runs
// (COORD_TASK), else "" (the caller's task is then found by
// app.Service.WorkingOn).
func (e *env) taskOr(id string) string {
	if id != "" {
		return id
	}
	return os.Getenv(coord.EnvTask)
}

// taskArg is a command's optional TASK argument (the first of args):
// "" when it was left out.
func taskArg(args []string) (string, error) {
	if len(args) == 0 {
		return "", nil
	}
	return args[0], coord.ValidTaskID(args[0])
}

func (e *env) cmdRelease(_ context.Context, c *cli.Command) error {
	id, err := taskArg(c.Args().Slice())
	if err != nil {
		return err
	}
	s, ref, err := e.held(c, id)
	if err != nil {
		return err
	}
	t, err := s.Release(e.ctx, ref, c.String("summary"))
	if err != nil {
		return err
	}
	return e.printTask(t, false, fmt.Sprintf("released %s (%s)", t.ID, t.Status))
}
