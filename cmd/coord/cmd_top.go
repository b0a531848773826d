package main

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

func topCommand(e *env) *cli.Command {
	return &cli.Command{Name: "top", Usage: "live view: agents, tasks by status, locks, recent log (redrawn on change)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "timeout", Usage: "stale after (default: config stale_after)"},
			&cli.BoolFlag{Name: "once", Usage: "print one frame and exit"},
		}, Action: e.cmdTop}
}

// cmdTop is a live view for people: agents and their heartbeat age, tasks
// by status, locks, and the last log lines, redrawn when the tree changes
// (and every second for the ages). Plain ANSI, so it works over ssh. When
// stdout is not a terminal it writes no escape sequence at all: each
// frame follows the previous one, separated by a blank line.
func (e *env) cmdTop(_ context.Context, c *cli.Command) error {
	s, err := e.open()
	if err != nil {
		return err
	}
	timeout, err := e.staleTimeout(c)
	if err != nil {
		return err
	}
	if c.Bool("once") {
		frame, err := e.topFrame(s, timeout)
		if err != nil {
			return err
		}
		_, err = e.stdout.Write(frame)
		return err
	}
	tty := isTerminal(e.stdout)
	if tty {
		fmt.Fprint(e.stdout, "\033[?25l") // hide the cursor while drawing
		defer fmt.Fprint(e.stdout, "\033[?25h\n")
	}
	first := true
	markWaiting()
	return s.Until(e.ctx, 0, 50*time.Millisecond, func() (bool, error) {
		frame, err := e.topFrame(s, timeout)
		if err != nil {
			frame = []byte("coord top: " + coord.OneLine(err.Error()) + "\n")
		}
		switch {
		case tty:
			fmt.Fprint(e.stdout, "\033[H\033[2J")
		case !first:
			fmt.Fprint(e.stdout, "\n")
		}
		first = false
		e.stdout.Write(frame)
		return false, nil // only a signal ends it (exit 130)
	})
}

func (e *env) topFrame(s *app.Service, timeout time.Duration) ([]byte, error) {
	st, err := s.State(e.ctx, app.StateRequest{Timeout: timeout, LogLines: 8})
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "coord top — %s — %s (q: Ctrl-C)\n\n", coord.OneLine(st.Where), st.Now)
	fmt.Fprintf(&b, "TASKS  ")
	for _, x := range coord.Statuses {
		fmt.Fprintf(&b, "%s %d   ", x, st.Counts[string(x)])
	}
	b.WriteString("\n\nAGENTS\n")
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	pool := false
	for _, a := range st.Agents {
		pool = pool || a.Role != ""
	}
	if pool {
		fmt.Fprintln(tw, "AGENT\tLAST BEAT\tSTATE\tTASKS\tROLE\tINBOX\tWORKTREE")
	} else {
		fmt.Fprintln(tw, "AGENT\tLAST BEAT\tSTATE\tTASKS")
	}
	agents := st.Agents
	sort.SliceStable(agents, func(i, j int) bool { // freshest beat first; no heartbeat last
		a, b := agents[i].AgeS, agents[j].AgeS
		return a != nil && (b == nil || *a < *b)
	})
	for _, a := range agents {
		last := "-"
		if a.AgeS != nil {
			last = (time.Duration(*a.AgeS) * time.Second).String() + " ago"
		}
		state := "alive"
		if !a.Alive {
			state = "STALE"
		}
		tasks := coord.Clip(strings.Join(append(append([]string(nil), a.Tasks...), a.Reviewing...), ","), textWidth)
		if pool {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.Agent, last, state, tasks, poolCells(a))
		} else {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", a.Agent, last, state, tasks)
		}
	}
	tw.Flush()
	b.WriteString("\nLOCKS\n")
	tw = tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tAGENT\tEPOCH\tSTATUS\tSINCE")
	for _, t := range st.Tasks {
		if t.HoldsLock() {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", t.ID, t.ClaimedBy, t.Epoch, t.Status, coord.Cell(t.ClaimedAt, textWidth))
		}
	}
	tw.Flush()
	var assigned []*coord.Task
	for _, t := range st.Tasks {
		if t.AssignedTo != "" {
			assigned = append(assigned, t)
		}
	}
	if len(assigned) > 0 {
		b.WriteString("\nASSIGNED\n")
		tw = tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TASK\tTO\tSTATUS\tSINCE")
		for _, t := range assigned {
			what := string(t.Status)
			if t.ReviewStartedAt != "" {
				what = "reviewing"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.ID, t.AssignedTo, what, coord.Cell(t.AssignedAt, textWidth))
		}
		tw.Flush()
	}
	if len(st.Landing) > 0 {
		b.WriteString("\nLANDING\n")
		tw = tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TASK\tSTATE\tOWNER\tSINCE\tWHY")
		for _, r := range st.Landing {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Task, landState(r.State), dash(r.Owner), dash(r.Since), coord.Clip(dash(r.Why), logWidth))
		}
		tw.Flush()
	}
	if len(st.Locks) > 0 {
		b.WriteString("\nPATH LOCKS\n")
		for _, l := range st.Locks {
			fmt.Fprintf(&b, "  %s  %s\n", coord.PathCell(l.Path, textWidth), coord.Cell(l.Holder, textWidth))
		}
	}
	b.WriteString("\nLOG\n")
	for _, l := range st.Log {
		b.WriteString("  " + coord.Clip(l, logWidth) + "\n") // sanitised by the log store
	}
	return b.Bytes(), nil
}
