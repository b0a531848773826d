package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
)

func progressCommand(e *env) *cli.Command {
	return &cli.Command{Name: "progress", Usage: "record progress (0-100) on a task you hold", ArgsUsage: "[TASK] PERCENT",
		Flags:  []cli.Flag{&cli.StringFlag{Name: "note", Usage: "a note for the log"}, newEpochFlag()},
		Action: e.cmdProgress}
}

func (e *env) cmdProgress(_ context.Context, c *cli.Command) error {
	a := c.Args().Slice()
	id := ""
	if len(a) == 2 {
		id = a[0]
		if err := coord.ValidTaskID(id); err != nil {
			return err
		}
	}
	pctArg := a[len(a)-1]
	pct, err := strconv.Atoi(strings.TrimSuffix(pctArg, "%"))
	if err != nil {
		return strErr("PERCENT must be an integer 0..100, got %q", pctArg)
	}
	s, ref, err := e.held(c, id)
	if err != nil {
		return err
	}
	t, err := s.Progress(e.ctx, ref, pct, c.String("note"))
	if err != nil {
		return err
	}
	return e.printTask(t, false, fmt.Sprintf("progress %s %d%%", t.ID, t.Progress))
}
