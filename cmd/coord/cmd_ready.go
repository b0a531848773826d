package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

func readyCommand(e *env) *cli.Command {
	return &cli.Command{Name: "ready", Usage: "tasks this agent could claim now, best first; --explain says why the others are not eligible",
		Flags:  []cli.Flag{capabilityFlag(), skillFlag(), &cli.BoolFlag{Name: "explain", Usage: "also list ineligible tasks with the reason"}, limitFlag()},
		Action: e.cmdReady}
}

func (e *env) cmdReady(_ context.Context, c *cli.Command) error {
	if _, err := coord.ParseSkillFilter(c.String("skill-level")); err != nil {
		return err
	}
	limit, err := limitOf(c)
	if err != nil {
		return err
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	a, err := e.caller(c)
	if err != nil {
		return err
	}
	ready, not, err := s.Ready(e.ctx, a)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(app.ReadyJSON(ready, not, c.Bool("explain"), limit))
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	rows, more := app.Limit(ready, limit)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, r.Priority, coord.Cell(r.Title, textWidth))
	}
	if len(ready) == 0 {
		fmt.Fprintln(tw, "no task is eligible for "+a.ID)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	e.printMore(more, "ready")
	if c.Bool("explain") {
		for _, r := range ready {
			if r.Weighed != nil {
				fmt.Fprintf(tw, "%s\tready, weighed\t%s\n", r.ID, coord.Cell(r.Weighed.String(), reasonWidth))
			}
		}
		rows, more := app.Limit(not, limit)
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\tnot eligible\t%s\n", r.ID, coord.Cell(r.Reason, reasonWidth))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		e.printMore(more, "not eligible")
	}
	return nil
}
