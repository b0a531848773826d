package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/cmd/coord/internal/workspace"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// Worktrees for agents (docs/GIT.md): the application does the work
// (app.Service.AddWorktree, ListWorktrees, RemoveWorktree) in the
// caller's repository.

func worktreeCommand(e *env) *cli.Command {
	return &cli.Command{Name: "worktree", Usage: "give agents linked git worktrees on branches of their own, list and remove them",
		Commands: []*cli.Command{
			{Name: "add", Usage: "make a linked worktree for AGENT on a new branch from the target and record it as the agent's",
				ArgsUsage: "AGENT",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "path", Usage: "where (default: beside the main worktree, <repo>-<agent>)"},
					&cli.StringFlag{Name: "branch", Usage: "the new branch (default: coord/<agent>)"},
				}, Action: e.cmdWorktreeAdd},
			{Name: "list", Usage: "the linked worktrees and the agents they belong to", Action: e.cmdWorktreeList},
			{Name: "remove", Usage: "remove AGENT's worktree; refused (exit 3) while it holds uncommitted changes or commits not on the target",
				ArgsUsage: "AGENT",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "force", Usage: "remove it anyway: uncommitted changes are lost (the branch and its commits are kept)"},
				}, Action: e.cmdWorktreeRemove},
		}}
}

func (e *env) cmdWorktreeAdd(_ context.Context, c *cli.Command) error {
	agent := c.Args().First()
	if err := coord.ValidAgentID(agent); err != nil {
		return err
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	path := c.String("path")
	if c.IsSet("path") {
		if path == "" {
			return strErr("--path is empty")
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(e.cwd, path)
		}
	}
	host, _ := os.Hostname()
	info, err := s.AddWorktree(e.ctx, app.WorktreeRequest{Agent: agent, Path: path, Branch: c.String("branch"), Host: host})
	if err != nil {
		return err
	}
	// The worktree is the agent's: commands, hooks and MCP sessions run
	// in it act as the agent without COORD_AGENT (which some agents'
	// shells never see), and its identity file is kept out of git.
	if _, _, err := workspace.KeepOutOfGit(e.ctx, e.root, e.cfg.LockWait); err != nil {
		e.warnf("%s: %v", info.Path, err)
	}
	if err := workspace.SetAgentFile(info.Path, agent); err != nil {
		return err
	}
	if e.json {
		return e.printJSON(info)
	}
	e.printf("worktree %s on branch %s (from %s at %s) for agent %s\n", info.Path, info.Branch, e.cfg.Target, shortCommit(info.Base), info.Agent)
	return nil
}

func (e *env) cmdWorktreeList(_ context.Context, c *cli.Command) error {
	s, err := e.open()
	if err != nil {
		return err
	}
	list, err := s.ListWorktrees(e.ctx)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(list)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tPATH\tBRANCH\tHEAD")
	for _, w := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", dash(w.Agent), coord.PathCell(w.Path, textWidth), dash(coord.Cell(w.Branch, textWidth)), shortCommit(w.Head))
	}
	return tw.Flush()
}

func (e *env) cmdWorktreeRemove(_ context.Context, c *cli.Command) error {
	agent := c.Args().First()
	if err := coord.ValidAgentID(agent); err != nil {
		return err
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	res, err := s.RemoveWorktree(e.ctx, app.RemoveRequest{Agent: agent, Force: c.Bool("force")})
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(res)
	}
	branch := "branch " + res.Branch + " deleted"
	switch {
	case res.Branch == "":
		branch = "it had no branch checked out"
	case !res.BranchDeleted:
		branch = "branch " + res.Branch + " kept"
		if res.Kept != "" {
			branch += " (" + res.Kept + ")"
		}
	}
	if res.Rescued != "" {
		branch += "; its commits no branch held are kept on " + res.Rescued
	}
	e.printf("removed worktree %s of agent %s; %s\n", res.Path, res.Agent, branch)
	return nil
}

// shortCommit is a commit id as people read it.
func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return dash(c)
}
