package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/rotd/coord/cmd/coord/hooks"
	"github.com/rotd/coord/cmd/coord/mcpserver"
	"github.com/rotd/coord/cmd/coord/setup"
	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/registry/workspace"
)

// agentCommands are the commands for the agents' own interfaces
// (contract §6): the MCP server, the hooks, their setup, and status.
func agentCommands(e *env) []*cli.Command {
	return []*cli.Command{
		{Name: "status", Usage: "this agent: the tasks and path locks it holds, and task counts by status", Action: e.cmdStatus},
		{Name: "mcp", Usage: "serve coord's tools over the Model Context Protocol on stdin/stdout (one agent session)",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "tools", Value: "default", Usage: "default (status ready claim release progress block wait files log) or all (adds tasks review agents kv lease doctor)"},
				&cli.StringFlag{Name: "capability", Usage: "this agent's capabilities, comma-separated (env COORD_AGENT_CAPS or ROTD_AGENT_CAPS)"},
			}, Action: e.cmdMCP},
		{Name: "setup", Usage: "register coord mcp and install coord's hooks for an agent in this repository: claude, codex or gemini", ArgsUsage: "AGENT",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "dry-run", Usage: "print the change as a diff; write nothing"},
				&cli.BoolFlag{Name: "remove", Usage: "take out what setup added"},
				&cli.StringFlag{Name: "command", Usage: "the coord command the agents run (a name on PATH or a path; default: coord when PATH's coord is this binary, else this binary's absolute path)"},
			}, Action: e.cmdSetup},
		{Name: "hook", Usage: "run one of coord's hooks for an agent (setup installs them): reads the agent's JSON on stdin", ArgsUsage: "AGENT [EVENT]",
			Action: e.cmdHook},
	}
}

// exitStatus ends a command with a status it has already explained (on
// stderr or in the agent's own convention): run prints nothing more.
type exitStatus int

func (s exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(s)) }

// useProjectDir takes the working directory the agent names for its
// session, when it names one (contract §6; workspace.ProjectDir).
func (e *env) useProjectDir() {
	if d := workspace.ProjectDir("", os.Getenv); d != "" {
		e.cwd = d
	}
}

func (e *env) cmdMCP(c *cli.Context) error {
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
		TaskJSON: taskJSON,
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
func (readCloser) Close() error                 { return nil }

type writeCloser struct {
	w interface{ Write([]byte) (int, error) }
}

func (w writeCloser) Write(p []byte) (int, error) { return w.w.Write(p) }
func (writeCloser) Close() error                  { return nil }

func (e *env) cmdHook(c *cli.Context) error {
	a := c.Args().Slice()
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
		return &hooks.Project{Service: svc, Agent: id, Root: e.root}, nil
	}
	code := hooks.Run(e.ctx, hooks.Options{Agent: a[0], Event: event, Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr, Open: open})
	if code != 0 {
		return exitStatus(code)
	}
	return nil
}

func (e *env) cmdSetup(c *cli.Context) error {
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
	} else if top, _ := workspace.GitTop(e.cwd); top != "" {
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

func (e *env) cmdStatus(c *cli.Context) error {
	if c.NArg() > 0 {
		return strErr("status takes no arguments")
	}
	svc, id, err := e.openAs()
	if err != nil {
		return err
	}
	v, err := svc.Status(e.ctx, id)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(mcpserver.StatusJSON(v, taskJSON))
	}
	e.printf("agent %s\n", id)
	for _, t := range v.Holding {
		e.printf("holding %s (%s, epoch %d, %d%%) %s\n", t.ID, t.Status, t.Epoch, t.Progress, coord.Cell(t.Title, textWidth))
		if t.ReviewNotes != "" {
			e.printf("  review notes: %s\n", coord.OneLine(t.ReviewNotes))
		}
	}
	for _, l := range v.Locks {
		e.printf("path lock %s\n", coord.Cell(l.Path, textWidth))
	}
	var counts []string
	for _, st := range coord.Statuses {
		counts = append(counts, fmt.Sprintf("%d %s", v.Counts[st], st))
	}
	e.printf("tasks: %s\n", strings.Join(counts, ", "))
	if v.Drained {
		e.printf("drained: no work is left\n")
	}
	return nil
}
