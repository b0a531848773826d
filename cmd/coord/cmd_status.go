package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
)

func statusCommand(e *env) *cli.Command {
	return &cli.Command{Name: "status", Usage: "this agent: the tasks and path locks it holds, the conflicts found for its work, and task counts by status", Action: e.cmdStatus}
}

func (e *env) cmdStatus(_ context.Context, c *cli.Command) error {
	if c.NArg() > 0 {
		return strErr("status takes no arguments")
	}
	svc, id, err := e.openAs()
	if err != nil {
		return err
	}
	v, err := svc.Status(e.ctx, id)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(v.JSON(svc.TaskJSON))
	}
	e.printf("agent %s\n", id)
	for _, t := range v.Holding {
		e.printf("holding %s (%s, epoch %d, %d%%) %s\n", t.ID, t.Status, t.Epoch, t.Progress, coord.Cell(t.Title, textWidth))
		if t.ReviewNotes != "" {
			e.printf("  review notes: %s\n", coord.OneLine(t.ReviewNotes))
		}
	}
	for _, l := range v.Locks {
		e.printf("path lock %s\n", coord.PathCell(l.Path, textWidth))
	}
	for _, p := range v.Conflicts {
		e.printf("conflict: %s\n", conflictLine(p, e.cfg.Target))
	}
	var counts []string
	for _, st := range coord.Statuses {
		counts = append(counts, fmt.Sprintf("%d %s", v.Counts[st], st))
	}
	e.printf("tasks: %s\n", strings.Join(counts, ", "))
	if v.Drained {
		e.printf("drained: no work is left\n")
	}
	return nil
}
