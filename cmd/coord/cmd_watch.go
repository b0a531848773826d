package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

func watchCommand(e *env) *cli.Command {
	return &cli.Command{Name: "watch", Usage: "long-running sweeper: frees stale locks as they expire, rotates the log, archives, finds conflicts in flight",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "timeout", Usage: "stale after (default: config stale_after)"},
			&cli.StringFlag{Name: "interval", Usage: "full rescan at least this often (default: timeout/3, at most 1m)"},
			&cli.BoolFlag{Name: "poll", Usage: "do not use file-system notification"},
		}, Action: e.cmdWatch}
}

// cmdWatch is the long-running sweeper of one project: one maintenance
// step (app.Service.Maintain, as clean-stale runs it) at start, then a
// cheap one (the stale sweep and expired path locks) whenever the next
// lock could go stale (app.Service.NextDue) or the backend notifies a
// change (debounced), and a full one every --interval regardless (which
// also rotates the log at a new UTC day and archives when archive_after
// is set). When notification is unavailable, or lost changes, it says so
// once and keeps rescanning. Every ConflictPoll it checks the branch
// tips of the project root's repository and, when one moved, scans the work in
// flight for conflicts (app.ConflictScanner), saying each new one, and
// sends back the reviews a later commit made void (voidReviews). One
// watcher per project (coord.Exclusive).
func (e *env) cmdWatch(_ context.Context, c *cli.Command) error {
	e.repoAtRoot = true // a daemon judges the project's repository, not where it was started
	if c.NArg() > 0 {
		return strErr("watch takes no arguments")
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	timeout, err := durFlag(c, "timeout", e.cfg.StaleAfter)
	if err != nil {
		return err
	}
	interval, err := intervalFlag(c, "interval", max(coord.MinInterval, coord.RoundDuration(min(timeout/3, time.Minute))))
	if err != nil {
		return err
	}
	holder := fmt.Appendf(nil, `{"holder":"watch","pid":%d,"since":%q}`, os.Getpid(), coord.FormatTime(e.clock()))
	release, err := s.HoldExclusive(e.ctx, "watcher", holder)
	if err != nil {
		return err
	}
	defer release()

	var events <-chan coord.Change
	mode := "notification"
	if c.Bool("poll") {
		mode = "polling"
	} else if ch, werr := s.Changes(e.ctx); werr != nil {
		mode = "polling"
		e.logf("notification unavailable (%v); polling every %s", werr, interval)
	} else {
		events = ch
	}
	e.logf("watching %s (%s; stale after %s; full rescan every %s)", e.where(), mode, timeout, interval)

	landing := &landingWatch{}
	// follow picks up a change of the project's settings (config.json,
	// coord config set) as the watcher goes: stale_after (unless
	// --timeout fixed it), the target, every rule the application reads.
	follow := func() {
		changed, err := s.Reload(e.ctx)
		if err != nil {
			if e.ctx.Err() == nil {
				e.logf("the settings could not be read again (those in force stay): %s", coord.OneLine(err.Error()))
			}
			return
		}
		if !changed {
			return
		}
		e.cfg = s.Config()
		if !c.IsSet("timeout") && e.cfg.StaleAfter != timeout {
			timeout = e.cfg.StaleAfter
			e.logf("settings changed: stale after %s", timeout)
			return
		}
		e.logf("settings changed")
	}
	step := func(full bool) {
		follow()
		res, err := s.Maintain(e.ctx, app.MaintainRequest{Timeout: timeout, Full: full})
		for _, f := range res.Freed {
			e.logf("freed %s (agent %s, idle %s) -> %s", f.TaskID, f.Agent, f.Idle.Round(time.Second), f.Status)
		}
		if res.Rotated != "" {
			e.logf("rotated the log to %s", res.Rotated)
		}
		if len(res.Archived) > 0 {
			e.logf("archived %d done tasks", len(res.Archived))
		}
		for _, id := range res.Landed {
			e.logf("task %s landed on %s: its write claims are free", id, e.cfg.Target)
		}
		landing.say(e.ctx, s, e.logf)
		if err != nil && e.ctx.Err() == nil {
			for _, p := range res.Problems {
				e.logf("%s", p)
			}
		}
		// Once app.ReplanAfter tasks landed since the unclaimed tasks
		// were planned, plan them again (docs/PLANNING.md; one read of the
		// registry until then).
		if did, pr, perr := s.Replan(e.ctx); perr != nil && e.ctx.Err() == nil {
			e.logf("replanning after a landing failed: %s", coord.OneLine(perr.Error()))
		} else if did {
			e.logf("work landed: replanned %s (%d predictions changed)", count(len(pr.Predictions), "unclaimed task"), pr.Recorded)
		}
	}
	step(true)
	conflicts := e.newConflictWatch(s, e.logf)
	conflicts.scan(e.ctx, e.cfg.Target, e.logf)
	e.voidReviews(s, e.logf)
	poll := time.NewTicker(ConflictPoll)
	defer poll.Stop()
	rescan := time.NewTicker(interval)
	defer rescan.Stop()
	debounce := time.NewTimer(time.Hour)
	debounce.Stop()
	due := time.NewTimer(time.Hour)
	schedule := func() {
		next, now, ok, err := s.NextDue(e.ctx, timeout)
		wait := interval
		if err == nil && ok {
			wait = min(max(next.Sub(now)+50*time.Millisecond, 50*time.Millisecond), interval)
		}
		due.Reset(wait)
	}
	schedule()
	missedSaid := false
	markWaiting()
	for {
		select {
		case <-e.ctx.Done():
			e.logf("stopped")
			return interrupted(e.ctx)
		case ch, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if ch.Missed {
				if !missedSaid {
					e.logf("notification queue overflowed; rescanning (said once)")
					missedSaid = true
				}
				step(true)
				schedule()
				continue
			}
			debounce.Reset(100 * time.Millisecond)
		case <-debounce.C:
			step(false)
			schedule()
		case <-due.C:
			step(false)
			schedule()
		case <-rescan.C:
			step(true)
			schedule()
		case <-poll.C:
			follow()
			conflicts.scan(e.ctx, e.cfg.Target, e.logf)
			e.voidReviews(s, e.logf)
		}
	}
}

// voidReviews sends back the reviews a later commit made void
// (app.Service.VoidMovedReviews), saying each.
func (e *env) voidReviews(s *app.Service, say func(string, ...any)) {
	sent, err := s.VoidMovedReviews(e.ctx)
	if err != nil && e.ctx.Err() == nil {
		say("reviews made void: %v", err)
	}
	for _, t := range sent {
		say("sent %s back to %s: %s", t.ID, t.ClaimedBy, t.ReviewNotes)
	}
}

// ConflictPoll is how often watch checks whether a branch in flight
// moved (one read of the registry and one git run when none did).
const ConflictPoll = 2 * time.Second

// logf prints a timestamped line for a person or a log collector.
func (e *env) logf(format string, args ...any) {
	fmt.Fprintf(e.stdout, "%s %s\n", coord.FormatTime(e.clock()), coord.OneLine(fmt.Sprintf(format, args...)))
}
