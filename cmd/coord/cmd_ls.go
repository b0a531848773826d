package main

import (
	"bufio"
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

func lsCommand(e *env) *cli.Command {
	return &cli.Command{Name: "ls", Usage: "registry snapshot",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "status", Usage: "only tasks in this status (comma-separated)"},
			&cli.BoolFlag{Name: "all", Usage: "include archived tasks (after the active ones)"},
			limitFlag(),
		}, Action: e.cmdLs}
}

func (e *env) cmdLs(_ context.Context, c *cli.Command) error {
	if c.NArg() > 0 {
		return strErr("ls takes no arguments")
	}
	var statuses []coord.Status
	for _, st := range coord.ParseCaps(c.String("status")) {
		if !coord.Status(st).Valid() {
			return strErr("--status %q is not one of unclaimed, claimed, blocked, review, done", st)
		}
		statuses = append(statuses, coord.Status(st))
	}
	limit, err := limitOf(c)
	if err != nil {
		return err
	}
	if e.json && !c.IsSet("limit") {
		// --json is every task unless --limit is given: the contract's
		// array, which programs read whole (and backend copy compares).
		limit = 0
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	all, err := s.Tasks(e.ctx, app.ListRequest{Statuses: statuses, All: c.Bool("all")})
	if err != nil {
		return err
	}
	list, more := app.Limit(all, limit)
	w := bufio.NewWriterSize(e.stdout, 64<<10)
	defer w.Flush()
	if e.json {
		if more > 0 {
			fmt.Fprintf(e.stderr, "coord: ls: %s more tasks not printed (--limit %d; 0 prints every one)\n", grouped(more), limit)
		}
		w.WriteByte('[')
		for i, t := range list {
			if i > 0 {
				w.WriteByte(',')
			}
			w.Write(s.TaskJSON(t))
		}
		w.WriteString("]\n")
		return nil
	}
	// The ASSIGNED column (push scheduling: who a task waits for, or who
	// reviews it) shows when some task is assigned.
	assigned := false
	for _, t := range list {
		assigned = assigned || t.AssignedTo != ""
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if assigned {
		fmt.Fprintln(tw, "ID\tSTATUS\tPRIORITY\tOWNER\tASSIGNED\tEPOCH\tPROGRESS\tTITLE")
	} else {
		fmt.Fprintln(tw, "ID\tSTATUS\tPRIORITY\tOWNER\tEPOCH\tPROGRESS\tTITLE")
	}
	for _, t := range list {
		owner := t.ClaimedBy
		if owner == "" {
			owner = "-"
		}
		if assigned {
			to := t.AssignedTo
			switch {
			case to == "":
				to = "-"
			case t.ReviewStartedAt != "":
				to += " (reviewing)"
			}
			owner += "\t" + to
		}
		p := t.Priority
		if p == "" {
			p = coord.Medium
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d%%\t%s\n", t.ID, t.Status, p, owner, t.Epoch, t.Progress, coord.Cell(t.Title, textWidth))
	}
	if more > 0 {
		fmt.Fprintf(tw, "… %s more tasks (%s in all); --limit 0 shows every one\n", grouped(more), grouped(len(all)))
	}
	return tw.Flush()
}
