package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/registry/file"
	"github.com/urfave/cli/v2"
)

// cmdTop is a live view for people: agents and their heartbeat age, tasks
// by status, locks, and the last log lines, redrawn when the tree changes
// (and every second for the ages). Plain ANSI, so it works over ssh. When
// stdout is not a terminal it writes no escape sequence at all: each
// frame follows the previous one, separated by a blank line.
func (e *env) cmdTop(c *cli.Context) error {
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
	var dirs []string
	for _, d := range []string{".", file.HeartbeatDir, file.LocksDir} {
		dirs = append(dirs, filepath.Join(e.dir, d))
	}
	tty := isTerminal(e.stdout)
	if tty {
		fmt.Fprint(e.stdout, "\033[?25l") // hide the cursor while drawing
		defer fmt.Fprint(e.stdout, "\033[?25h\n")
	}
	first := true
	return untilChange(e.ctx, dirs, 0, 50*time.Millisecond, func() (bool, error) {
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

func (e *env) topFrame(s coord.Backend, timeout time.Duration) ([]byte, error) {
	var b bytes.Buffer
	now := e.clock()
	fmt.Fprintf(&b, "coord top — %s — %s (q: Ctrl-C)\n\n", coord.OneLine(s.Where()), coord.FormatTime(now))
	beats, _, err := e.beats().List(e.ctx)
	if err != nil {
		return nil, err
	}
	held := map[string][]string{}
	counts := map[coord.Status]int{}
	var locks []string
	err = s.Tasks().View(e.ctx, func(tx *coord.Txn) error {
		for _, t := range tx.Tasks {
			counts[t.Status]++
			if t.HoldsLock() {
				held[t.ClaimedBy] = append(held[t.ClaimedBy], t.ID)
				locks = append(locks, fmt.Sprintf("%s\t%s\t%d\t%s\t%s", t.ID, t.ClaimedBy, t.Epoch, t.Status, coord.Cell(t.ClaimedAt, textWidth)))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(&b, "TASKS  ")
	for _, st := range coord.Statuses {
		fmt.Fprintf(&b, "%s %d   ", st, counts[st])
	}
	b.WriteString("\n\nAGENTS\n")
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tLAST BEAT\tSTATE\tTASKS")
	sort.Slice(beats, func(i, j int) bool { return beats[i].At.After(beats[j].At) })
	for _, hb := range beats {
		age := coord.Age(hb.At, now)
		state := "alive"
		if age > timeout {
			state = "STALE"
		}
		fmt.Fprintf(tw, "%s\t%s ago\t%s\t%s\n", hb.Agent, age.Round(time.Second), state, coord.Clip(strings.Join(held[hb.Agent], ","), textWidth))
	}
	tw.Flush()
	b.WriteString("\nLOCKS\n")
	tw = tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tAGENT\tEPOCH\tSTATUS\tSINCE")
	for _, l := range locks {
		fmt.Fprintln(tw, l)
	}
	tw.Flush()
	var pl []coord.PathLock
	s.Tasks().View(e.ctx, func(tx *coord.Txn) error { pl = tx.LivePathLocks(); return nil })
	if len(pl) > 0 {
		b.WriteString("\nPATH LOCKS\n")
		for _, l := range pl {
			fmt.Fprintf(&b, "  %s  %s\n", coord.Cell(l.Path, textWidth), coord.Cell(l.Holder, textWidth))
		}
	}
	b.WriteString("\nLOG\n")
	s.Log().Read(e.ctx, 8, func(l string) error {
		b.WriteString("  " + coord.Clip(l, logWidth) + "\n") // sanitised by the log store
		return nil
	})
	return b.Bytes(), nil
}
