package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend"
)

func backendCommand(e *env) *cli.Command {
	return &cli.Command{Name: "backend", Usage: "move a project between backends",
		Commands: []*cli.Command{
			{Name: "copy", Usage: "copy a whole project (tasks, claims and epochs, path locks, leases, kv, quota, log) into an empty one",
				Flags: copyFlags(), Action: e.cmdBackendCopy},
		}}
}

func copyCommand(e *env) *cli.Command {
	return &cli.Command{Name: "copy", Usage: "the same as 'coord backend copy': copy a whole project into an empty one",
		Flags: copyFlags(), Action: e.cmdBackendCopy}
}

// copyFlags are the flags of 'backend copy' and of its short name 'copy'
// (each command gets flags of its own).
func copyFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "from", Usage: "source backend URL (file:///abs/path or nats://host:port/NAMESPACE)"},
		&cli.StringFlag{Name: "to", Usage: "destination backend URL; created if missing, refused if it holds tasks"},
	}
}

// cmdBackendCopy copies a project between backends (app.Copy).
func (e *env) cmdBackendCopy(_ context.Context, c *cli.Command) error {
	from, to := c.String("from"), c.String("to")
	if from == "" || to == "" {
		return strErr("copy needs --from URL and --to URL")
	}
	warn := func(msg string) { fmt.Fprintf(e.stderr, "coord: warning: %s\n", coord.OneLine(msg)) }
	opt := func(url string) backend.Options {
		o := backend.Options{URL: url, Clock: e.clock, Warn: warn, AllowUnsafeFS: e.allowUnsafeFS}
		if e.lockWaitSet {
			o.LockWait = e.lockWait
		}
		return o
	}
	src, err := backend.Open(e.ctx, opt(from))
	if err != nil {
		return err
	}
	defer src.Close()
	// The destination is created if it does not exist yet (idempotent:
	// an existing project is only opened).
	if _, _, err := backend.Init(e.ctx, opt(to)); err != nil {
		return err
	}
	dst, err := backend.Open(e.ctx, opt(to))
	if err != nil {
		return err
	}
	defer dst.Close()
	res, err := app.Copy(e.ctx, src, dst)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(res)
	}
	e.printf("copied %d tasks, %d leases, %d keys, %d log lines and %d archived tasks from %s to %s\n",
		res.Tasks, res.Leases, res.Keys, res.LogLines, res.Archived, res.From, res.To)
	return nil
}
