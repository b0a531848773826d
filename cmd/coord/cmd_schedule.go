package main

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// Push scheduling (docs/SCHEDULING.md): the scheduler. The pool is agents.go
// (agents register/deregister), the inbox inbox.go. Flag parsing and
// output only; the rules are coord's, the order of things app.Service's.

func scheduleCommand(e *env) *cli.Command {
	return &cli.Command{Name: "schedule", Usage: "the scheduler: assign ready tasks to registered live agents (long-running unless --once)",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "once", Usage: "run one scheduling round and exit"},
			&cli.IntFlag{Name: "depth", Value: 1, Usage: "at most this many assignments waiting per agent"},
			&cli.StringFlag{Name: "timeout", Usage: "an agent silent this long leaves the pool and its claims are freed (default: config stale_after)"},
		}, Action: e.cmdSchedule}
}

// cmdSchedule runs scheduling rounds (app.Service.Schedule): one with
// --once, else one per change the backend notifies and one a second,
// until a signal (exit 130). Each round that changed something prints a
// line per change (--json: the round as one JSON object); --once also
// prints every standing alert (a task in review no registered reviewer
// may take), the running scheduler only a new one. Each round also scans
// the work in flight for conflicts when a branch tip moved (as watch
// does), printing each new one (--json: {"conflicts": […]}; --once
// --json records them without printing).
func (e *env) cmdSchedule(_ context.Context, c *cli.Command) error {
	e.repoAtRoot = true // a daemon judges the project's repository, not where it was started
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
	quiet := func(string, ...any) {}
	if c.Bool("once") {
		res, err := s.Schedule(e.ctx, req)
		if err != nil {
			return err
		}
		if e.json {
			e.newConflictWatch(s, quiet).scan(e.ctx, e.cfg.Target, quiet)
			return e.printJSON(res)
		}
		e.printRound(res, false)
		line := func(format string, args ...any) { e.printf("%s\n", coord.OneLine(fmt.Sprintf(format, args...))) }
		e.newConflictWatch(s, line).scan(e.ctx, e.cfg.Target, line)
		return nil
	}
	if !e.json {
		stale := timeout
		if stale == 0 {
			stale = e.cfg.StaleAfter
		}
		e.logf("scheduling %s (depth %d; stale after %s)", e.where(), depth, stale)
	}
	say := e.logf
	if e.json {
		say = quiet
	}
	conflicts := e.newConflictWatch(s, say)
	markWaiting()
	err = s.RunScheduler(e.ctx, req, 50*time.Millisecond, func(res app.ScheduleResult, err error) {
		// Each round: a scan when a branch in flight moved.
		if found := conflicts.scan(e.ctx, e.cfg.Target, say); e.json && len(found) > 0 {
			e.printJSON(map[string]any{"conflicts": found})
		}
		switch {
		case err != nil:
			e.logf("round failed: %v", err)
		case !res.Changed() && len(res.Freed) == 0 && len(res.Voided) == 0:
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
	for _, v := range res.Voided {
		line("sent %s back to %s: %s", v.Task, v.Agent, v.Why)
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
	if !stamped && !res.Changed() && len(res.Freed) == 0 && len(res.Voided) == 0 {
		line("nothing to do")
	}
}
