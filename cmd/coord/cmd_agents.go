package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/cmd/coord/internal/workspace"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

func (e *env) cmdAgents(ctx context.Context, c *cli.Command) error {
	if c.NArg() > 0 {
		return parentAction(ctx, c) // help, or an unknown subcommand
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	timeout, err := e.staleTimeout(c)
	if err != nil {
		return err
	}
	rows, err := s.Agents(e.ctx, timeout)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(rows)
	}
	// Registered agents (push scheduling) add their role, inbox depth and
	// where they work; the columns show when the pool is not empty.
	pool := false
	for _, r := range rows {
		pool = pool || r.Role != ""
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	head := "AGENT\tLAST BEAT\tAGE\tSTATE\tTASKS"
	if pool {
		head += "\tROLE\tINBOX\tWORKTREE"
	}
	fmt.Fprintln(tw, head)
	for _, r := range rows {
		lb, age := "-", "-"
		if r.LastBeat != nil {
			lb, age = *r.LastBeat, (time.Duration(*r.AgeS) * time.Second).String()
		}
		state := "stale"
		if r.Alive {
			state = "alive"
		}
		tasks := coord.Clip(strings.Join(append(append([]string(nil), r.Tasks...), r.Reviewing...), ","), textWidth)
		if tasks == "" {
			tasks = "-"
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s", r.Agent, lb, age, state, tasks)
		if pool {
			line += "\t" + poolCells(r)
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

func agentsCommand(e *env) *cli.Command {
	return &cli.Command{Name: "agents", Usage: "agents with last beat, alive or stale, tasks held; role, inbox and worktree of registered ones",
		Flags: []cli.Flag{&cli.StringFlag{Name: "timeout", Usage: "stale after (default: config stale_after)"}},
		Commands: []*cli.Command{
			{Name: "register", Usage: "join the pool of agents a scheduler pushes work to; prints the record as JSON",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "role", Usage: "implementer (default), reviewer or planner"},
					&cli.StringFlag{Name: "capability", Usage: "this agent's capabilities, comma-separated (env COORD_AGENT_CAPS or ROTD_AGENT_CAPS)"},
					&cli.StringFlag{Name: "skill-level", Usage: "the agent's level, taking tasks up to it ('expert'), or a filter as for claim ('=expert')"},
					&cli.StringFlag{Name: "worktree", Usage: "the agent's checkout (default: the worktree it stands in)"},
					&cli.StringFlag{Name: "branch", Usage: "the agent's branch (default: the branch checked out there)"},
				}, Action: e.cmdAgentsRegister},
			{Name: "deregister", Usage: "leave the pool; what was assigned and not started goes back to the queue", Action: e.cmdAgentsDeregister},
		},
		Action: e.cmdAgents}
}

func (e *env) cmdAgentsRegister(_ context.Context, c *cli.Command) error {
	s, id, err := e.openAs()
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	req := app.RegisterRequest{Agent: id, Role: c.String("role"), Caps: e.caps(c), Skill: c.String("skill-level"),
		Worktree: c.String("worktree"), Branch: c.String("branch"), Host: host}
	if !c.IsSet("worktree") {
		req.Worktree = e.paths().WorkTop()
	}
	if !c.IsSet("branch") {
		top := req.Worktree
		if c.IsSet("worktree") && !strings.HasPrefix(top, "/") {
			top = e.paths().WorkTop()
		}
		req.Branch = workspace.Branch(e.ctx, top)
	}
	rec, err := s.Register(e.ctx, req)
	if err != nil {
		return err
	}
	return e.printJSON(rec)
}

func (e *env) cmdAgentsDeregister(_ context.Context, c *cli.Command) error {
	s, id, err := e.openAs()
	if err != nil {
		return err
	}
	res, err := s.Deregister(e.ctx, id)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(res)
	}
	e.printf("deregistered %s", id)
	if len(res.Returned) > 0 {
		e.printf("; back to the queue: %s", strings.Join(res.Returned, ","))
	}
	if len(res.Held) > 0 {
		e.printf("; still held (release or block them): %s", strings.Join(res.Held, ","))
	}
	e.printf("\n")
	return nil
}

// poolCells are a registered agent's ROLE, INBOX and WORKTREE cells (the
// inbox as its depth and its oldest task; the worktree with its branch),
// "-" for an agent outside the pool.
func poolCells(r coord.AgentView) string {
	if r.Role == "" {
		return "-\t-\t-"
	}
	inbox := "0"
	if len(r.Inbox) > 0 {
		inbox = fmt.Sprintf("%d (%s)", len(r.Inbox), r.Inbox[0])
	}
	where := coord.PathCell(r.Worktree, textWidth)
	if r.Branch != "" {
		where += " [" + coord.Cell(r.Branch, textWidth) + "]"
	}
	if where == "" {
		where = "-"
	}
	return r.Role + "\t" + inbox + "\t" + where
}
