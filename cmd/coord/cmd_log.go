package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

func msgCommand(e *env) *cli.Command {
	return &cli.Command{Name: "msg", Usage: "append a message line to the log", ArgsUsage: "TEXT…", Action: e.cmdMsg}
}

// The coordination log: log prints and follows it, msg appends a line.

func logCommand(e *env) *cli.Command {
	return &cli.Command{Name: "log", Usage: "print or follow the log across rotations",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing new lines"},
			&cli.IntFlag{Name: "lines", Aliases: []string{"n"}, Value: app.DefaultLogLines, Usage: "print the last N lines (0: all)"},
		}, Action: e.cmdLog}
}

func (e *env) cmdMsg(_ context.Context, c *cli.Command) error {
	text := strings.Join(c.Args().Slice(), " ")
	if coord.MessageText(text) == "" {
		return strErr("msg needs TEXT")
	}
	s, agent, err := e.openAs()
	if err != nil {
		return err
	}
	return s.Msg(e.ctx, agent, text)
}

func (e *env) cmdLog(_ context.Context, c *cli.Command) error {
	if c.NArg() > 0 {
		return strErr("log takes no arguments")
	}
	n := c.Int("lines")
	if n < 0 {
		return strErr("-n must be 0 or more")
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	w := bufio.NewWriter(e.stdout)
	write := func(l string) error {
		if e.json {
			ent, _ := coord.ParseLogLine(l)
			b, _ := json.Marshal(ent)
			w.Write(b)
		} else {
			w.WriteString(l)
		}
		return w.WriteByte('\n')
	}
	// The last n lines are read from the end of the log; all of them
	// (-n 0) are streamed: neither holds the whole log in memory.
	history := func() error {
		skipped, err := s.LogRead(e.ctx, n, write)
		w.Flush()
		if err != nil {
			return err
		}
		if skipped > 0 && !e.json {
			fmt.Fprintf(e.stderr, "coord: skipped %d torn or foreign log lines\n", skipped)
		}
		return nil
	}
	if !c.Bool("follow") {
		return history()
	}
	// The follower is positioned before the history is read, so nothing
	// falls between.
	return s.LogFollow(e.ctx, func() error {
		if err := history(); err != nil {
			return err
		}
		markWaiting()
		return nil
	}, func(lines []string) error {
		for _, l := range lines {
			write(l)
		}
		return w.Flush()
	})
}
