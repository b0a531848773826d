package main

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// Leases in the neighbours' dialect: TORCH-style named locks with
// fencing epochs (lease check and lease lock speak TORCH's LOCK_* lines).

func leaseCommand(e *env) *cli.Command {
	ttl := &cli.StringFlag{Name: "ttl", Usage: "lifetime (default: COORD_LEASE_TTL, else config lease_ttl, else 2h)"}
	cadence := &cli.StringFlag{Name: "cadence", Usage: "daily or weekly"}
	return &cli.Command{Name: "lease", Usage: "named auto-expiring locks with fencing epochs (TORCH-style)", Commands: []*cli.Command{
		{Name: "acquire", Usage: "take a lease (exit 3 naming the holder if it is held)", ArgsUsage: "NAME", Flags: []cli.Flag{ttl, &cli.BoolFlag{Name: "dry-run", Usage: "say whether the lease could be taken; take nothing"}}, Action: e.cmdLeaseAcquire},
		{Name: "renew", Usage: "extend a lease you hold (exit 6 if you no longer do)", ArgsUsage: "NAME",
			Flags:  []cli.Flag{&cli.StringFlag{Name: "ttl", Usage: "extend by this much from now (default: the lease's own TTL, as granted)"}, epochFlagOf("lease")},
			Action: e.cmdLeaseRenew},
		{Name: "release", Usage: "end a lease you hold (exit 6 if you no longer do)", ArgsUsage: "NAME", Flags: []cli.Flag{epochFlagOf("lease")}, Action: e.cmdLeaseRelease},
		{Name: "list", Usage: "leases in force", Action: e.cmdLeaseList},
		{Name: "check", Usage: "TORCH: which roster agents are locked for this period", Flags: []cli.Flag{cadence}, Action: e.cmdLeaseCheck},
		{Name: "lock", Usage: "TORCH: lock --agent for this period; LOCK_* lines; exit 3 if already locked", Flags: []cli.Flag{cadence, ttl, &cli.BoolFlag{Name: "dry-run", Usage: "print the LOCK_* lines the lock would give; lock nothing"}}, Action: e.cmdLeaseLock},
	}}
}

// leaseTTL is --ttl, or 0 for the application's default (app.Service.LeaseTTL).
func (e *env) leaseTTL(c *cli.Command) (time.Duration, error) { return durFlag(c, "ttl", 0) }

func (e *env) printLease(l coord.Lease) error {
	if e.json {
		return e.printJSON(l)
	}
	e.printf("%s held by %s (epoch %d) until %s\n", coord.OneLine(l.Name), coord.OneLine(l.Holder), l.Epoch, coord.OneLine(l.ExpiresAt))
	return nil
}

func (e *env) cmdLeaseAcquire(_ context.Context, c *cli.Command) error {
	a, err := e.args(c, "NAME")
	if err != nil {
		return err
	}
	if err := coord.ValidLeaseName(a[0]); err != nil {
		return err
	}
	ttl, err := e.leaseTTL(c)
	if err != nil {
		return err
	}
	_, agent, err := e.openAs()
	if err != nil {
		return err
	}
	l, err := e.svc.AcquireLease(e.ctx, coord.LeaseRequest{Name: a[0], Holder: agent, TTL: ttl, Meta: platformMeta(), DryRun: c.Bool("dry-run")})
	if err != nil {
		return err
	}
	return e.printJSON(l)
}

func platformMeta() map[string]string {
	if p := os.Getenv("AGENT_PLATFORM"); p != "" {
		return map[string]string{"platform": p}
	}
	return nil
}

func (e *env) cmdLeaseRenew(_ context.Context, c *cli.Command) error {
	a, err := e.args(c, "NAME")
	if err != nil {
		return err
	}
	ttl, err := durFlag(c, "ttl", 0) // not set: the lease's own TTL
	if err != nil {
		return err
	}
	_, agent, err := e.openAs()
	if err != nil {
		return err
	}
	l, err := e.svc.RenewLease(e.ctx, a[0], agent, epochOf(c), ttl)
	if err != nil {
		return err
	}
	return e.printJSON(l)
}

func (e *env) cmdLeaseRelease(_ context.Context, c *cli.Command) error {
	a, err := e.args(c, "NAME")
	if err != nil {
		return err
	}
	_, agent, err := e.openAs()
	if err != nil {
		return err
	}
	if err := e.svc.ReleaseLease(e.ctx, a[0], agent, epochOf(c)); err != nil {
		return err
	}
	if !e.json {
		e.printf("released lease %s\n", a[0])
	}
	return nil
}

func (e *env) cmdLeaseList(_ context.Context, c *cli.Command) error {
	if _, err := e.open(); err != nil {
		return err
	}
	ls, err := e.svc.Leases(e.ctx)
	if err != nil {
		return err
	}
	if e.json {
		if ls == nil {
			ls = []coord.Lease{}
		}
		return e.printJSON(ls)
	}
	e.printf("%-40s %-20s %6s  %s\n", "LEASE", "HOLDER", "EPOCH", "EXPIRES")
	for _, l := range ls {
		e.printf("%-40s %-20s %6d  %s\n", coord.Cell(l.Name, textWidth), coord.Cell(l.Holder, textWidth), l.Epoch, coord.Cell(l.ExpiresAt, textWidth))
	}
	return nil
}

func (e *env) cmdLeaseCheck(_ context.Context, c *cli.Command) error {
	s, err := e.open()
	if err != nil {
		return err
	}
	out, err := s.CheckLeases(e.ctx, c.String("cadence"))
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(out)
	}
	e.printf("%s %s: %d locked (%s); available: %s\n", out.Cadence, out.Date, out.LockCount, strings.Join(out.Locked, ", "), strings.Join(out.Available, ", "))
	return nil
}

func (e *env) cmdLeaseLock(_ context.Context, c *cli.Command) error {
	ttl, err := e.leaseTTL(c)
	if err != nil {
		return err
	}
	if _, err := e.open(); err != nil {
		return err
	}
	if e.explicitAgent == "" {
		return strErr("lease lock needs --agent NAME (or COORD_AGENT)")
	}
	agent, err := e.who()
	if err != nil {
		return err
	}
	cadence := c.String("cadence")
	date, err := app.TorchPeriod(cadence, e.clock())
	if err != nil {
		return err
	}
	l, err := e.svc.AcquireLease(e.ctx, coord.LeaseRequest{Name: app.TorchLease(cadence, date, agent), Holder: agent, TTL: ttl, Meta: platformMeta(), DryRun: c.Bool("dry-run")})
	status := "ok"
	if coord.CodeOf(err) == coord.CodeConflict {
		status = "locked"
	} else if err != nil {
		return err
	}
	e.printf("LOCK_STATUS=%s\nLOCK_AGENT=%s\nLOCK_CADENCE=%s\nLOCK_DATE=%s\n", status, agent, cadence, date)
	if err != nil {
		return err
	}
	e.printf("LOCK_EXPIRES=%d\nLOCK_EXPIRES_ISO=%s\n", l.Expires().Unix(), l.ExpiresAt)
	return nil
}
