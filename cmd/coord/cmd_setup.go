package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/cmd/coord/internal/setup"
	"github.com/rotd/coordination/cmd/coord/internal/workspace"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/internal/gitrepo"
)

func setupCommand(e *env) *cli.Command {
	return &cli.Command{Name: "setup", Usage: "register coord mcp and install coord's hooks for an agent in this repository: claude, codex or gemini", ArgsUsage: "AGENT",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Usage: "print the change as a diff; write nothing"},
			&cli.BoolFlag{Name: "remove", Usage: "take out what setup added"},
			&cli.StringFlag{Name: "command", Usage: "the coord command the agents run (a name on PATH or a path; default: coord when PATH's coord is this binary, else this binary's absolute path)"},
		}, Action: e.cmdSetup}
}

func (e *env) cmdSetup(_ context.Context, c *cli.Command) error {
	a := c.Args().Slice()
	if len(a) != 1 {
		return strErr("setup needs AGENT: %s", strings.Join(setup.Agents, ", "))
	}
	dir := e.cwd
	if e.rootSet {
		abs, err := filepath.Abs(e.rootFlag)
		if err != nil {
			return strErr("invalid --root %q: %v", e.rootFlag, err)
		}
		dir = abs
	} else if top, _ := gitrepo.GitTop(e.cwd); top != "" {
		dir = top
	}
	command := c.String("command")
	if !c.IsSet("command") {
		loc, err := setup.Locate(setup.Self{Arg0: os.Args[0], Executable: os.Executable, LookPath: exec.LookPath})
		if err != nil {
			return coord.Errorf(coord.CodeIO, "setup: cannot find this coord binary's path (%v)", err).
				WithHint("name it with --command PATH")
		}
		command = loc.Command
		if n := loc.Note(); n != "" && !c.Bool("remove") {
			fmt.Fprintf(e.stderr, "coord: note: %s\n", n)
		}
	}
	var notes []string
	if !c.Bool("remove") && e.backendURL() == "" {
		if _, err := workspace.FindRoot(e.rootFlag, e.rootSet, dir, true); err != nil {
			notes = append(notes, "no coordination tree here yet: run coord init (the hooks do nothing until there is one)")
		}
	}
	return setup.Run(setup.Options{Agent: a[0], Dir: dir, Command: command, DryRun: c.Bool("dry-run"), Remove: c.Bool("remove"), Notes: notes, Stdout: e.stdout})
}
