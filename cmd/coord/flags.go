package main

import (
	"context"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// staleTimeout is --timeout where it means "stale after" (agents,
// clean-stale, top, watch): the project's stale_after unless given.
func (e *env) staleTimeout(c *cli.Command) (time.Duration, error) {
	if !c.IsSet("timeout") {
		return e.cfg.StaleAfter, nil
	}
	return coord.ParsePositive("--timeout", c.String("timeout"))
}

// limitFlag is --limit, of ls and ready.
func limitFlag() cli.Flag {
	return &cli.IntFlag{Name: "limit", Value: app.ListLimit, Usage: "print at most N rows of each list, and how many more there are (0: every row)"}
}

// limitOf is --limit: app.ListLimit unless given; 0 means every row.
func limitOf(c *cli.Command) (int, error) {
	n := c.Int("limit")
	return n, app.CheckLimit("--limit", n)
}

// durFlag is the positive duration of flag name, def when it is not set.
func durFlag(c *cli.Command, name string, def time.Duration) (time.Duration, error) {
	if !c.IsSet(name) {
		return def, nil
	}
	return coord.ParsePositive("--"+name, c.String(name))
}

// intervalFlag is the interval of flag name (at least coord.MinInterval),
// def when it is not set.
func intervalFlag(c *cli.Command, name string, def time.Duration) (time.Duration, error) {
	if !c.IsSet(name) {
		return def, nil
	}
	return coord.ParseInterval("--"+name, c.String(name))
}

// newEpochFlag is --epoch N of release, progress, block, unblock and the
// lease commands. Not given, ownership is checked by agent alone (read
// it with epochOf); given, it must be a real epoch: a negative value is
// refused (exit 1), never read as "skip the check".
func newEpochFlag() *cli.Int64Flag { return epochFlagOf("task") }

// epochFlagOf is --epoch N for what the command names (a task, a lease).
// Its help shows no default: leaving it out checks the owner alone.
func epochFlagOf(what string) *cli.Int64Flag {
	return &cli.Int64Flag{Name: "epoch", Usage: "refuse (exit 6) unless the " + what + " is still at this epoch (leave it out to check the owner alone)",
		HideDefault: true,
		Action:      func(_ context.Context, _ *cli.Command, v int64) error { return coord.CheckEpoch(v) }}
}

// epochOf is the --epoch given, or coord.NoEpoch when it was not.
func epochOf(c *cli.Command) int64 {
	if !c.IsSet("epoch") {
		return coord.NoEpoch
	}
	return c.Int64("epoch")
}

// capabilityFlag is --capability, this agent's capabilities.
func capabilityFlag() cli.Flag {
	return &cli.StringFlag{Name: "capability", Usage: "this agent's capabilities, comma-separated (env COORD_AGENT_CAPS or ROTD_AGENT_CAPS)"}
}

// skillFlag is --skill-level, the skill filter of claim, run, wait and
// ready.
func skillFlag() cli.Flag {
	return &cli.StringFlag{Name: "skill-level", Usage: "skill filter: '<=intermediate', '>=entry', '=expert'"}
}
