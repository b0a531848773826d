package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/cmd/coord/internal/workspace"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/backend"
)

func initCommand(e *env) *cli.Command {
	return &cli.Command{Name: "init", Usage: "create the coordination tree (idempotent, never overwrites)", Action: e.cmdInit}
}

func (e *env) cmdInit(_ context.Context, c *cli.Command) error {
	if c.NArg() > 0 {
		return strErr("init takes no arguments")
	}
	root, err := workspace.FindRoot(e.rootFlag, e.rootSet, e.cwd, false)
	if err != nil {
		return err
	}
	dir, created, err := backend.Init(e.ctx, backend.Options{URL: e.backendURL(), Root: root, AllowUnsafeFS: e.allowUnsafeFS})
	if err != nil {
		return err
	}
	exclude, excluded := e.keepOutOfGit(root)
	if e.json {
		out := map[string]any{"root": dir, "created": nonNil(created)}
		if exclude != "" {
			out["git_exclude"], out["excluded"] = exclude, nonNil(excluded)
		}
		return e.printJSON(out)
	}
	if len(created) == 0 {
		e.printf("coordination tree already at %s\n", dir)
	} else {
		e.printf("initialized %s (%d entries)\n", dir, len(created))
	}
	if len(excluded) > 0 {
		e.printf("kept out of git in %s: %s\n", exclude, strings.Join(excluded, " "))
	}
	return nil
}

// keepOutOfGit adds the tree (and .rotd/agent_id) to the repository's git
// exclude file, once (workspace.GitExcludes says why). Outside git it does
// nothing; a failure is a warning, since the tree itself is laid down.
func (e *env) keepOutOfGit(root string) (string, []string) {
	wait := 30 * time.Second
	if e.lockWaitSet {
		wait = e.lockWait
	}
	file, added, err := workspace.KeepOutOfGit(e.ctx, root, wait)
	if err != nil {
		fmt.Fprintf(e.stderr, "coord: warning: could not keep %s out of git: %v; add the line %s to %s by hand\n",
			coord.TreeDir, coord.OneLine(err.Error()), workspace.GitExcludes(".")[0], file)
	}
	return file, added
}
