package main

import (
	"context"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
)

func archiveCommand(e *env) *cli.Command {
	return &cli.Command{Name: "archive", Usage: "move done tasks out of the active registry into archive/<YYYY-MM>.jsonl",
		Flags:  []cli.Flag{&cli.StringFlag{Name: "older-than", Usage: "only tasks completed longer ago than this (Go duration; bare number = seconds)"}},
		Action: e.cmdArchive}
}

func (e *env) cmdArchive(_ context.Context, c *cli.Command) error {
	if c.NArg() > 0 {
		return strErr("archive takes no arguments")
	}
	var cutoff time.Time
	if v := c.String("older-than"); v != "" {
		d, err := coord.ParseDuration(v)
		if err != nil {
			return strErr("--older-than %q is not a duration like 24h", v)
		}
		cutoff = e.clock().Add(-d)
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	moved, err := s.Archive(e.ctx, cutoff)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(map[string]any{"archived": moved})
	}
	e.printf("archived %d done tasks\n", len(moved))
	return nil
}
