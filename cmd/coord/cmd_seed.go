package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/fsops"
)

func seedTasksCommand(e *env) *cli.Command {
	return &cli.Command{Name: "seed-tasks", Usage: "add tasks from JSON Lines (FILE or --stdin), task fields only; a line identical to a present task is skipped; one bad line rejects the batch", ArgsUsage: "[FILE]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "stdin", Usage: "read the batch from standard input"},
			&cli.BoolFlag{Name: "validate", Usage: "only check the batch; write nothing"},
			&cli.BoolFlag{Name: "update", Usage: "a line may redefine a task not yet claimed (its planning fields change)"},
			&cli.StringFlag{Name: "format", Usage: "coord (default) or rotd (ROTD planner tasks.jsonl; see docs/FORMATS.md)"},
		}, Action: e.cmdSeed}
}

func (e *env) cmdSeed(_ context.Context, c *cli.Command) error {
	var r io.Reader
	name := "stdin"
	switch {
	case c.Bool("stdin") && c.NArg() == 0, c.NArg() == 1 && c.Args().First() == "-":
		r = e.stdin
	case c.NArg() == 1 && !c.Bool("stdin"):
		name = c.Args().First()
		f, err := fsops.OpenFile(name, os.O_RDONLY, 0) // never waits on a FIFO
		var ke *fsops.KindError
		switch {
		case errors.As(err, &ke):
			return coord.Errorf(coord.CodeUsage, "seed file %v", err).WithHint("give seed-tasks a regular file, or pipe the tasks in with --stdin")
		case err != nil:
			return coord.Errorf(coord.CodeUsage, "cannot read seed file %s: %v", name, errors.Unwrap(err)).WithHint("check the path")
		}
		defer f.Close()
		r = f
	default:
		return strErr("seed-tasks needs FILE or --stdin")
	}
	dialect := c.String("format")
	if dialect != "" && dialect != "coord" && dialect != "rotd" {
		return strErr("--format %q is not coord or rotd", dialect)
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	batch, err := s.ParseSeed(e.ctx, dialect, name, r)
	if err != nil {
		return err
	}
	// A files pattern means the files it names: through a symlinked
	// folder, the target's (workspace.Paths.Pattern).
	m := e.paths()
	for _, sl := range batch {
		for i, f := range sl.Task.Files {
			sl.Task.Files[i] = m.Pattern(f)
		}
	}
	update := c.Bool("update")
	res, err := s.Seed(e.ctx, app.SeedRequest{Name: name, Batch: batch, Validate: c.Bool("validate"), Update: update, By: e.explicitAgent})
	if err != nil {
		return err
	}
	if res.PlanNote != "" {
		fmt.Fprintf(e.stderr, "coord: warning: %s\n", res.PlanNote)
	}
	if e.json {
		return e.printJSON(res)
	}
	defer func() {
		if res.Planned > 0 {
			e.printf("planned %s: 'coord plan --explain ID' says why\n", count(res.Planned, "task"))
		}
	}()
	plain := res.Updated == 0 && res.Unchanged == 0
	switch {
	case res.Validated && plain:
		e.printf("valid: %d tasks\n", res.Count)
	case res.Validated && update:
		e.printf("valid: %d to seed, %d to update, %d unchanged\n", res.Count, res.Updated, res.Unchanged)
	case res.Validated:
		e.printf("valid: %d to seed, %d unchanged\n", res.Count, res.Unchanged)
	case plain:
		e.printf("seeded %d tasks\n", res.Count)
	case update:
		e.printf("%d seeded, %d updated, %d unchanged\n", res.Count, res.Updated, res.Unchanged)
	default:
		e.printf("%d seeded, %d unchanged\n", res.Count, res.Unchanged)
	}
	return nil
}
