package main

import (
	"context"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/cmd/coord/internal/hooks"
	"github.com/rotd/coordination/cmd/coord/internal/workspace"
)

func hookCommand(e *env) *cli.Command {
	return &cli.Command{Name: "hook", Usage: "run one of coord's hooks for an agent (setup installs them): reads the agent's JSON on stdin", ArgsUsage: "AGENT [EVENT]",
		Action: e.cmdHook}
}

func (e *env) cmdHook(_ context.Context, c *cli.Command) error { return e.runHook(c.Args().Slice()) }

// runHook runs `coord hook AGENT [EVENT]` with a the arguments (the
// command, or run's fast path when no flag is given).
func (e *env) runHook(a []string) error {
	if len(a) < 1 || len(a) > 2 {
		return strErr("hook needs AGENT [EVENT] (AGENT: %s)", strings.Join(hooks.Agents, ", "))
	}
	event := ""
	if len(a) == 2 {
		event = a[1]
	}
	e.connectTimeout = hooks.ConnectTimeout
	open := func(ctx context.Context, dir string) (*hooks.Project, error) {
		if dir != "" {
			e.cwd = dir
		}
		if e.backendURL() == "" {
			if _, err := workspace.FindRoot(e.rootFlag, e.rootSet, e.cwd, true); err != nil {
				return nil, hooks.ErrNoProject
			}
		}
		svc, id, err := e.openAs()
		if err != nil {
			return nil, err
		}
		return &hooks.Project{Service: svc, Agent: id, Root: e.root, Merger: e.merger}, nil
	}
	code := hooks.Run(e.ctx, hooks.Options{Agent: a[0], Event: event, Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr, Open: open})
	if code != 0 {
		return exitStatus(code)
	}
	return nil
}
