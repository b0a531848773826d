package main

import (
	"context"
	"fmt"
	"os"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/cmd/coord/internal/mcpserver"
	"github.com/rotd/coordination/coord"
)

func mcpCommand(e *env) *cli.Command {
	return &cli.Command{Name: "mcp", Usage: "serve coord's tools over the Model Context Protocol on stdin/stdout (one agent session)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tools", Value: "default", Usage: "default (status ready claim release progress block wait files log) or all (adds tasks review agents kv lease doctor)"},
			&cli.StringFlag{Name: "capability", Usage: "this agent's capabilities, comma-separated (env COORD_AGENT_CAPS or ROTD_AGENT_CAPS)"},
		}, Action: e.cmdMCP}
}

func (e *env) cmdMCP(_ context.Context, c *cli.Command) error {
	if c.NArg() > 0 {
		return strErr("mcp takes no arguments")
	}
	all := false
	switch c.String("tools") {
	case "default":
	case "all":
		all = true
	default:
		return strErr("--tools %q is not default or all", c.String("tools"))
	}
	e.useProjectDir()
	svc, err := e.open()
	if err != nil {
		return err
	}
	id, err := e.who() // once, for the server's life
	if err != nil {
		return err
	}
	opt := mcpserver.Options{
		Service:  svc,
		Agent:    coord.Agent{ID: id, Caps: e.caps(c)},
		Paths:    e.paths(),
		All:      all,
		TaskJSON: svc.TaskJSON,
		Version:  version,
		Warn:     func(s string) { fmt.Fprintf(e.stderr, "coord: mcp: %s\n", s) },
	}
	if f, ok := e.stdout.(*os.File); ok && f == os.Stdout {
		err = mcpserver.ServeStdio(e.ctx, opt)
	} else { // run called by a test with its own streams
		err = mcpserver.Run(e.ctx, opt, readCloser{e.stdin}, writeCloser{e.stdout})
	}
	if e.ctx.Err() != nil {
		return interrupted(e.ctx)
	}
	return err
}

type readCloser struct {
	r interface{ Read([]byte) (int, error) }
}

func (r readCloser) Read(p []byte) (int, error) { return r.r.Read(p) }

func (readCloser) Close() error { return nil }

type writeCloser struct {
	w interface{ Write([]byte) (int, error) }
}

func (w writeCloser) Write(p []byte) (int, error) { return w.w.Write(p) }

func (writeCloser) Close() error { return nil }
