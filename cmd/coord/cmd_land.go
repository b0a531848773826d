package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/internal/gitrepo"
)

// Landing (docs/GIT.md): `coord land`. The landing is app.Service's
// (Land), the git side package gitrepo's (Landing); this parses, wires
// and prints.

func landCommand(e *env) *cli.Command {
	return &cli.Command{Name: "land",
		Usage:     "land finished work on the target, one task at a time: merge, check, move the target (exit 3 when a task is sent back)",
		ArgsUsage: "[TASK…]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "check", Usage: "shell command line run (sh -c) on each merge in a temporary worktree; exit 0 passes (default: config land_check; none: no check)"},
			&cli.StringFlag{Name: "timeout", Usage: "the longest one run of the check may take before it is killed and fails (default 30m)"},
			&cli.BoolFlag{Name: "watch", Usage: "keep landing as tasks become landable (waits for another lander's lease)"},
			&cli.IntFlag{Name: "parallel", Usage: "check up to N candidates at once, each on the target merged with those ahead of it, landed in order (default: config land_parallel, 1)"},
		}, Action: e.cmdLand}
}

func (e *env) cmdLand(_ context.Context, c *cli.Command) error {
	e.repoAtRoot = true // a daemon judges the project's repository, not where it was started
	ids := c.Args().Slice()
	for _, id := range ids {
		if err := coord.ValidTaskID(id); err != nil {
			return err
		}
	}
	check := c.String("check")
	if c.IsSet("check") {
		if check == "" {
			return strErr("--check is empty (leave it out for config land_check)")
		}
		if err := coord.CheckLandCheck(check); err != nil {
			return err
		}
	}
	timeout, err := durFlag(c, "timeout", app.DefaultLandTimeout)
	if err != nil {
		return err
	}
	parallel := 0
	if c.IsSet("parallel") {
		if n := c.Int("parallel"); n < 1 || n > coord.MaxLandParallel {
			return coord.Errorf(coord.CodeUsage, "--parallel must be a whole number from 1 to %d, found %d", coord.MaxLandParallel, n)
		} else {
			parallel = int(n)
		}
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	// The lander acts as itself, lander@<host>, unless told another id:
	// its lease and its log lines say who lands, not a random agent id.
	agent := e.agentFlag
	if !e.agentSet {
		host, _ := os.Hostname()
		agent = coord.ServiceID("lander", host)
	}
	l, err := e.lander()
	if err != nil {
		return err
	}
	failed := 0
	res, err := s.Land(e.ctx, l, app.LandRequest{
		Agent: agent, Tasks: ids, Check: check, CheckTimeout: timeout, Watch: c.Bool("watch"), Parallel: parallel, SameOrder: landSameOrder,
		OnResult: func(r app.LandResult) {
			if r.Outcome == app.SentBack || r.Outcome == app.Skipped && len(ids) > 0 {
				failed++
			}
			e.printLand(r)
		},
		Meta:       landerMeta(),
		HolderGone: landerGone,
		OnMoved:    landMovedHook,
		OnRemote: func(err error, back bool) {
			if back {
				fmt.Fprintf(e.stderr, "coord: land: the remote %s answers again: landing goes on\n", e.cfg.Remote)
				return
			}
			fmt.Fprintf(e.stderr, "coord: land: landing stopped: %s\n", coord.OneLine(err.Error()))
		},
		OnWait: func(holder string) {
			fmt.Fprintf(e.stderr, "coord: waiting for the lander %s to finish (lease %s)\n", coord.OneLine(holder), coord.LandLease)
		},
		OnReplan: func(n int, err error) {
			if err != nil {
				fmt.Fprintf(e.stderr, "coord: land: replanning after a landing failed: %s\n", coord.OneLine(err.Error()))
				return
			}
			fmt.Fprintf(e.stderr, "coord: land: work landed: replanned %d unclaimed task(s)\n", n)
		},
	})
	if err != nil {
		return err
	}
	if len(res) == 0 {
		if e.json {
			return e.printJSON(map[string]string{"status": "nothing_to_land"})
		}
		e.printf("nothing to land on %s\n", e.cfg.Target)
		return nil
	}
	if failed > 0 {
		return coord.Errorf(coord.CodeConflict, "%d of %d task(s) not landed", failed, len(res)).
			WithHint("a task sent back is its owner's again, with review_notes saying why")
	}
	return nil
}

// printLand prints one task's outcome: a JSON line with --json, else a
// line for people.
func (e *env) printLand(r app.LandResult) {
	if e.json {
		e.printJSON(r)
		return
	}
	switch r.Outcome {
	case app.Landed:
		how := r.How
		if how == "found" {
			how = "already on " + e.cfg.Target
		}
		if len(r.On) > 0 {
			how += ", checked on top of " + strings.Join(r.On, ", ")
		}
		e.printf("landed %s on %s at %s (%s)\n", r.Task, e.cfg.Target, shortCommit(r.Commit), how)
		if r.Why != "" {
			fmt.Fprintf(e.stderr, "coord: warning: task %s: %s\n", r.Task, r.Why)
		}
	case app.SentBack:
		e.printf("sent back %s to %s: %s\n", r.Task, r.Owner, r.Why)
	default:
		e.printf("skipped %s: %s\n", r.Task, r.Why)
	}
}

// lander is the caller's repository as the lander needs it (after open),
// as merger finds it: outside a git working tree a conflict (exit 3).
func (e *env) lander() (app.Lander, error) {
	dir := e.root
	if dir == "" {
		dir = e.cwd
	}
	top, _ := gitrepo.GitTop(dir)
	if top == "" {
		return nil, coord.Wrap(coord.CodeConflict, errNoRepo, "%s is not in a git repository: there is no work to land", dir).
			WithHint("run coord land in the project's repository (any of its worktrees), or point --root at it")
	}
	if err := gitrepo.CheckMergeTree(e.ctx); err != nil {
		return nil, err
	}
	l := gitrepo.NewLanding(gitrepo.New(dir), e.paths().FromGit)
	l.Start = superviseCheck // the check dies with its lander (landcheck.go)
	l.Warn = func(msg string) { fmt.Fprintf(e.stderr, "coord: warning: %s\n", coord.OneLine(msg)) }
	if e.cfg.Remote != "" {
		return gitrepo.NewRemoteLanding(l, e.cfg.Remote), nil
	}
	return l, nil
}

// landSameOrder, when set (by the test wrapper only), keeps the queue's
// order in a train after a failure: the figures compare it with the
// order by shared files.
var landSameOrder bool

// landMovedHook, when set (by the test wrapper only), is called after
// the lander moved the target and before it records the landing.
var landMovedHook func(task string)

// landState is a landing queue row's state for people.
func landState(s string) string {
	if s == coord.LandSentBack {
		return "sent back"
	}
	return s
}

// landingWatch says the landing queue's changes as watch passes: a task
// that starts to wait, is being checked, or went back to its owner
// (with why), each once per change of its state.
type landingWatch struct {
	seen map[string]string // task -> state (and what it is checked on) said
}

func (w *landingWatch) say(ctx context.Context, s *app.Service, say func(format string, args ...any)) {
	rows, err := s.LandingQueue(ctx)
	if err != nil {
		return // the next pass reads it again
	}
	now := map[string]string{}
	for _, r := range rows {
		key := r.State + " " + strings.Join(r.On, " ") // restacked in a train: said again
		now[r.Task] = key
		if w.seen[r.Task] == key {
			continue
		}
		switch r.State {
		case coord.LandWaiting:
			say("to land: task %s (%s) waits for the lander", r.Task, dash(r.Owner))
		case coord.LandChecking:
			if len(r.On) > 0 {
				say("landing: checking task %s (%s) on top of %s", r.Task, dash(r.Owner), strings.Join(r.On, ", "))
				break
			}
			say("landing: checking task %s (%s)", r.Task, dash(r.Owner))
		case coord.LandSentBack:
			say("sent back: task %s to %s: %s", r.Task, dash(r.Owner), r.Why)
		}
	}
	w.seen = now
}
