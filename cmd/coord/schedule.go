package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/rotd/coord/cmd/coord/workspace"
	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/coord/app"
)

// Push scheduling (contract §8): the pool (agents register/deregister),
// the scheduler (schedule) and the inbox. Flag parsing and output only;
// the rules are coord's, the order of things app.Service's.

func agentsCommand(e *env) *cli.Command {
	return &cli.Command{Name: "agents", Usage: "agents with last beat, alive or stale, tasks held; role, inbox and worktree of registered ones",
		Flags: []cli.Flag{&cli.StringFlag{Name: "timeout", Usage: "stale after (default: config stale_after)"}},
		Subcommands: []*cli.Command{
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

func scheduleCommands(e *env) []*cli.Command {
	return []*cli.Command{
		{Name: "schedule", Usage: "the scheduler: assign ready tasks to registered live agents (long-running unless --once)",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "once", Usage: "run one scheduling round and exit"},
				&cli.IntFlag{Name: "depth", Value: 1, Usage: "at most this many assignments waiting per agent"},
				&cli.StringFlag{Name: "timeout", Usage: "an agent silent this long leaves the pool and its claims are freed (default: config stale_after)"},
			}, Action: e.cmdSchedule},
		{Name: "inbox", Usage: "claim the oldest task assigned to this agent and print it as claim does ({\"status\":\"empty\"} when none)",
			Flags:  []cli.Flag{&cli.StringFlag{Name: "wait", Usage: "block until something is assigned, at most this long (exit 3 on timeout)"}},
			Action: e.cmdInbox},
	}
}

func (e *env) cmdAgentsRegister(c *cli.Context) error {
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

func (e *env) cmdAgentsDeregister(c *cli.Context) error {
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

// cmdSchedule runs scheduling rounds (app.Service.Schedule): one with
// --once, else one per change the backend notifies and one a second,
// until a signal (exit 130). Each round that changed something prints a
// line per change (--json: the round as one JSON object); --once also
// prints every standing alert (a task in review no registered reviewer
// may take), the running scheduler only a new one.
func (e *env) cmdSchedule(c *cli.Context) error {
	depth := c.Int("depth")
	if depth < 1 {
		return strErr("--depth must be at least 1, got %d", depth)
	}
	timeout, err := durFlag(c, "timeout", 0)
	if err != nil {
		return err
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	req := app.ScheduleRequest{Depth: depth, Timeout: timeout}
	if c.Bool("once") {
		res, err := s.Schedule(e.ctx, req)
		if err != nil {
			return err
		}
		if e.json {
			return e.printJSON(res)
		}
		e.printRound(res, false)
		return nil
	}
	if !e.json {
		stale := timeout
		if stale == 0 {
			stale = e.cfg.StaleAfter
		}
		e.logf("scheduling %s (depth %d; stale after %s)", e.where(), depth, stale)
	}
	markWaiting()
	err = s.RunScheduler(e.ctx, req, 50*time.Millisecond, func(res app.ScheduleResult, err error) {
		switch {
		case err != nil:
			e.logf("round failed: %v", err)
		case !res.Changed() && len(res.Freed) == 0:
		case e.json:
			e.printJSON(res)
		default:
			e.printRound(res, true)
		}
	})
	if e.ctx.Err() != nil {
		if !e.json {
			e.logf("stopped")
		}
		return interrupted(e.ctx)
	}
	return err
}

// printRound prints what a round did, one line per change (stamped when
// the scheduler runs on).
func (e *env) printRound(res app.ScheduleResult, stamped bool) {
	line := func(format string, args ...any) {
		if stamped {
			e.logf(format, args...)
		} else {
			e.printf("%s\n", coord.OneLine(fmt.Sprintf(format, args...)))
		}
	}
	for _, f := range res.Freed {
		line("freed %s (agent %s, idle %s) -> %s", f.TaskID, f.Agent, (time.Duration(f.IdleS) * time.Second).String(), f.Status)
	}
	for _, id := range res.Left {
		line("%s left the pool (heartbeat stale)", id)
	}
	for _, r := range res.Returned {
		line("returned %s from %s: %s", r.Task, r.Agent, r.Why)
	}
	for _, r := range res.Routed {
		line("routed %s to %s for review", r.Task, r.Agent)
	}
	for _, a := range res.Assigned {
		line("assigned %s to %s", a.Task, a.Agent)
	}
	for _, m := range res.Moved {
		line("moved %s from %s to %s", m.Task, m.From, m.Agent)
	}
	for _, u := range res.Unreviewable {
		if u.New || !stamped { // the running scheduler reports an alert once
			line("alert: %s waits in review and %s", u.Task, u.Why)
		}
	}
	if !stamped && !res.Changed() && len(res.Freed) == 0 {
		line("nothing to do")
	}
}

// cmdInbox takes the oldest assignment (app.Service.Inbox) and prints the
// task as claim does; {"status":"empty"} when none (or, with --wait, when
// none came in time: exit 3), {"status":"drained"} when waiting and no
// work is left at all.
func (e *env) cmdInbox(c *cli.Context) error {
	wait, err := durFlag(c, "wait", 0)
	if err != nil {
		return err
	}
	s, id, err := e.openAs()
	if err != nil {
		return err
	}
	if c.IsSet("wait") {
		markWaiting()
	}
	res, err := s.Inbox(e.ctx, app.InboxRequest{Agent: id, Wait: c.IsSet("wait"), Timeout: wait})
	if err != nil {
		return err
	}
	if res.Task == nil {
		return e.printRaw([]byte(`{"status":"` + res.Status + `"}`))
	}
	return e.printTask(res.Task, true, "")
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
	where := coord.Cell(r.Worktree, textWidth)
	if r.Branch != "" {
		where += " [" + coord.Cell(r.Branch, textWidth) + "]"
	}
	if where == "" {
		where = "-"
	}
	return r.Role + "\t" + inbox + "\t" + where
}
