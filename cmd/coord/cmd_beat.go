package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
)

func beatCommand(e *env) *cli.Command {
	return &cli.Command{Name: "beat", Usage: "touch this agent's heartbeat",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "every", Usage: "keep beating at this interval until stopped or the agent's process is gone"},
			&cli.StringFlag{Name: "pid", Usage: "with --every: the agent's process; beating stops when it is gone (default: the parent process)"},
		},
		Action: e.cmdBeat}
}

func (e *env) cmdBeat(_ context.Context, c *cli.Command) error {
	if c.NArg() > 0 {
		return strErr("beat takes no arguments")
	}
	var every time.Duration
	if c.IsSet("every") {
		d, err := coord.ParseInterval("--every", c.String("every"))
		if err != nil {
			return err
		}
		every = d
	}
	var agentProc *process
	if c.IsSet("pid") {
		if every == 0 {
			return strErr("--pid only goes with --every (a single beat does not watch a process)")
		}
		pid, err := strconv.Atoi(c.String("pid"))
		if err != nil || pid <= 0 {
			return strErr("--pid %q is not a process id (a positive integer)", c.String("pid"))
		}
		if agentProc = watchProcess(pid); agentProc == nil {
			return strErr("--pid %d: no such process; pass the pid of the running agent", pid)
		}
	} else if every > 0 {
		agentProc = watchParent()
		if agentProc.pid == 1 {
			fmt.Fprintf(e.stderr, "coord: beat: warning: the parent process is init (pid 1), which never goes away; pass --pid with the agent's pid so beating stops when the agent does\n")
		}
	}
	s, agent, err := e.openAs()
	if err != nil {
		return err
	}
	if err := s.Beat(e.ctx, agent, nil); err != nil {
		return err
	}
	if every == 0 {
		return nil
	}
	markWaiting()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-e.ctx.Done():
			return interrupted(e.ctx)
		case <-t.C:
			// The agent's process first: a loop must not keep a dead
			// agent's locks alive.
			if !agentProc.alive() {
				fmt.Fprintf(e.stderr, "coord: beat: %s is gone; stopped beating for %s\n", agentProc, agent)
				return nil
			}
			if err := s.Beat(e.ctx, agent, nil); err != nil {
				return err
			}
		}
	}
}
