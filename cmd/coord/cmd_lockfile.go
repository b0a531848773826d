package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
)

func lockFileCommand(e *env) *cli.Command {
	return &cli.Command{Name: "lock-file", Usage: "lock repository paths (all or nothing; exit 3 naming the holder)", ArgsUsage: "PATH…",
		Flags: []cli.Flag{&cli.StringFlag{Name: "ttl", Usage: "expire after this duration (default: until released)"}}, Action: e.cmdLockFile}
}

func unlockFileCommand(e *env) *cli.Command {
	return &cli.Command{Name: "unlock-file", Usage: "release path locks you hold", ArgsUsage: "PATH…", Action: e.cmdUnlockFile}
}

func locksCommand(e *env) *cli.Command {
	return &cli.Command{Name: "locks", Usage: "list path locks; --claims: the write claims of the tasks in flight",
		Flags:  []cli.Flag{&cli.BoolFlag{Name: "claims", Usage: "list write claims instead: paths tasks in flight have written, held until their work lands"}},
		Action: e.cmdLocks}
}

// repoPaths maps the PATH arguments to repository paths
// (workspace.Paths.RepoPath: relative to the caller's working directory,
// or absolute in any worktree). The application must be open (the root
// known).
func (e *env) repoPaths(c *cli.Command) ([]string, error) {
	if c.NArg() == 0 {
		return nil, strErr("%s needs at least one PATH", c.Name)
	}
	m := e.paths()
	var out []string
	for _, p := range c.Args().Slice() {
		cp, err := m.RepoPath(p)
		if err != nil {
			return nil, err
		}
		out = append(out, cp)
	}
	return out, nil
}

func (e *env) cmdLockFile(_ context.Context, c *cli.Command) error {
	s, err := e.open()
	if err != nil {
		return err
	}
	paths, err := e.repoPaths(c)
	if err != nil {
		return err
	}
	ttl, err := durFlag(c, "ttl", 0)
	if err != nil {
		return err
	}
	agent, err := e.who()
	if err != nil {
		return err
	}
	locked, err := s.LockPaths(e.ctx, agent, paths, ttl)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(map[string]any{"locked": locked, "holder": agent})
	}
	e.printf("locked %s\n", strings.Join(locked, " "))
	return nil
}

func (e *env) cmdUnlockFile(_ context.Context, c *cli.Command) error {
	s, err := e.open()
	if err != nil {
		return err
	}
	paths, err := e.repoPaths(c)
	if err != nil {
		return err
	}
	agent, err := e.who()
	if err != nil {
		return err
	}
	_, err = s.UnlockPaths(e.ctx, agent, paths)
	return err
}

func (e *env) cmdLocks(_ context.Context, c *cli.Command) error {
	s, err := e.open()
	if err != nil {
		return err
	}
	if c.Bool("claims") {
		claims, err := s.WriteClaims(e.ctx)
		if err != nil {
			return err
		}
		if e.json {
			return e.printJSON(claims)
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "PATH\tTASK\tHOLDER\tSTATUS")
		for _, w := range claims {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", coord.PathCell(w.Path, textWidth), w.TaskID, dash(w.Holder), w.Status)
		}
		return tw.Flush()
	}
	live, err := s.PathLocks(e.ctx)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(live)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tHOLDER\tSINCE\tEXPIRES\tTASK")
	for _, l := range live {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", coord.PathCell(l.Path, textWidth), coord.Cell(l.Holder, textWidth), coord.Cell(l.Since, textWidth), dash(coord.Cell(l.Expires, textWidth)), dash(coord.Cell(l.TaskID, textWidth)))
	}
	return tw.Flush()
}
