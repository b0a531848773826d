package main

import (
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/coord/app"
)

// Commands in the neighbours' dialects: TORCH-style leases and a TTL
// key-value space.

func leaseCommands(e *env, epochFlag cli.Flag) *cli.Command {
	ttl := &cli.StringFlag{Name: "ttl", Usage: "lifetime (default: COORD_LEASE_TTL, else config lease_ttl, else 2h)"}
	cadence := &cli.StringFlag{Name: "cadence", Usage: "daily or weekly"}
	return &cli.Command{Name: "lease", Usage: "named auto-expiring locks with fencing epochs (TORCH-style)", Subcommands: []*cli.Command{
		{Name: "acquire", Usage: "take a lease (exit 3 naming the holder if it is held)", ArgsUsage: "NAME", Flags: []cli.Flag{ttl, &cli.BoolFlag{Name: "dry-run"}}, Action: e.cmdLeaseAcquire},
		{Name: "renew", Usage: "extend a lease you hold (exit 6 if you no longer do)", ArgsUsage: "NAME",
			Flags:  []cli.Flag{&cli.StringFlag{Name: "ttl", Usage: "extend by this much from now (default: the lease's own TTL, as granted)"}, epochFlag},
			Action: e.cmdLeaseRenew},
		{Name: "release", Usage: "end a lease you hold (exit 6 if you no longer do)", ArgsUsage: "NAME", Flags: []cli.Flag{epochFlag}, Action: e.cmdLeaseRelease},
		{Name: "list", Usage: "leases in force", Action: e.cmdLeaseList},
		{Name: "check", Usage: "TORCH: which roster agents are locked for this period", Flags: []cli.Flag{cadence}, Action: e.cmdLeaseCheck},
		{Name: "lock", Usage: "TORCH: lock --agent for this period; LOCK_* lines; exit 3 if already locked", Flags: []cli.Flag{cadence, ttl, &cli.BoolFlag{Name: "dry-run"}}, Action: e.cmdLeaseLock},
	}}
}

func kvCommands(e *env) *cli.Command {
	ttl := &cli.StringFlag{Name: "ttl", Usage: "lifetime (required)"}
	return &cli.Command{Name: "kv", Usage: "a small TTL key-value space for agent messages", Subcommands: []*cli.Command{
		{Name: "set", Usage: "set KEY to VALUE for --ttl", ArgsUsage: "KEY VALUE", Flags: []cli.Flag{ttl}, Action: e.cmdKVSet},
		{Name: "cas", Usage: "set only if KEY is at --expect-rev N (or --expect-absent); exit 3 otherwise", ArgsUsage: "KEY VALUE",
			Flags: []cli.Flag{ttl, &cli.Int64Flag{Name: "expect-rev"}, &cli.BoolFlag{Name: "expect-absent"}}, Action: e.cmdKVSet},
		{Name: "get", Usage: "print a key's value (exit 3 if absent)", ArgsUsage: "KEY", Action: e.cmdKVGet},
		{Name: "del", Usage: "delete a key", ArgsUsage: "KEY", Action: e.cmdKVDel},
		{Name: "ls", Usage: "keys in force, optionally under PREFIX", ArgsUsage: "[PREFIX]", Action: e.cmdKVLs},
		{Name: "watch", Usage: "wait until a key under PREFIX changes; print the changes (exit 3 on --timeout)", ArgsUsage: "[PREFIX]",
			Flags: []cli.Flag{&cli.StringFlag{Name: "timeout"}}, Action: e.cmdKVWatch},
	}}
}

// leaseTTL is --ttl, or 0 for the application's default (app.Service.LeaseTTL).
func (e *env) leaseTTL(c *cli.Context) (time.Duration, error) { return durFlag(c, "ttl", 0) }

func (e *env) printLease(l coord.Lease) error {
	if e.json {
		return e.printJSON(l)
	}
	e.printf("%s held by %s (epoch %d) until %s\n", coord.OneLine(l.Name), coord.OneLine(l.Holder), l.Epoch, coord.OneLine(l.ExpiresAt))
	return nil
}

func (e *env) cmdLeaseAcquire(c *cli.Context) error {
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

func (e *env) cmdLeaseRenew(c *cli.Context) error {
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

func (e *env) cmdLeaseRelease(c *cli.Context) error {
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

func (e *env) cmdLeaseList(c *cli.Context) error {
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

func (e *env) cmdLeaseCheck(c *cli.Context) error {
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

func (e *env) cmdLeaseLock(c *cli.Context) error {
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

// --- kv --------------------------------------------------------------------

func (e *env) printKV(en coord.KVEntry) error {
	if e.json {
		return e.printJSON(en)
	}
	e.printf("%s\n", en.Text())
	return nil
}

func (e *env) cmdKVSet(c *cli.Context) error {
	a, err := e.args(c, "KEY", "VALUE")
	if err != nil {
		return err
	}
	if err := coord.ValidKey(a[0]); err != nil {
		return err
	}
	ttl, err := durFlag(c, "ttl", 0) // none: the application refuses it
	if err != nil {
		return err
	}
	val := coord.KVValue(a[1])
	var cond coord.KVCond
	if c.Command.Name == "cas" {
		cond = coord.KVCond{ExpectRev: c.Int64("expect-rev"), ExpectAbsent: c.Bool("expect-absent")}
		if (cond.ExpectRev > 0) == cond.ExpectAbsent {
			return strErr("kv cas needs exactly one of --expect-rev N (N > 0) or --expect-absent")
		}
	}
	if _, err := e.open(); err != nil {
		return err
	}
	by := e.explicitAgent
	en, err := e.svc.KVSet(e.ctx, a[0], val, ttl, by, cond)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(en)
	}
	e.printf("rev %d\n", en.Rev)
	return nil
}

func (e *env) cmdKVGet(c *cli.Context) error {
	a, err := e.args(c, "KEY")
	if err != nil {
		return err
	}
	if _, err := e.open(); err != nil {
		return err
	}
	en, ok, err := e.svc.KVGet(e.ctx, a[0])
	if err != nil {
		return err
	}
	if !ok {
		return coord.NoKey(a[0])
	}
	return e.printKV(en)
}

func (e *env) cmdKVDel(c *cli.Context) error {
	a, err := e.args(c, "KEY")
	if err != nil {
		return err
	}
	if _, err := e.open(); err != nil {
		return err
	}
	found, err := e.svc.KVDelete(e.ctx, a[0])
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(map[string]any{"key": a[0], "deleted": found})
	}
	e.printf("deleted %d\n", map[bool]int{true: 1}[found])
	return nil
}

func (e *env) cmdKVLs(c *cli.Context) error {
	if c.NArg() > 1 {
		return strErr("kv ls takes at most a PREFIX")
	}
	if _, err := e.open(); err != nil {
		return err
	}
	list, err := e.svc.KVList(e.ctx, c.Args().First())
	if err != nil {
		return err
	}
	if e.json {
		if list == nil {
			list = []coord.KVEntry{}
		}
		return e.printJSON(list)
	}
	for _, en := range list {
		e.printf("%s\t%s\trev %d\tuntil %s\n", coord.Cell(en.Key, textWidth), coord.Cell(en.Text(), textWidth), en.Rev, coord.Cell(en.ExpiresAt, textWidth))
	}
	return nil
}

// cmdKVWatch waits until some key under PREFIX changes (set, deleted or
// expired), then prints one JSON line per change and exits 0.
func (e *env) cmdKVWatch(c *cli.Context) error {
	if c.NArg() > 1 {
		return strErr("kv watch takes at most a PREFIX")
	}
	prefix := c.Args().First()
	timeout, err := durFlag(c, "timeout", 0)
	if err != nil {
		return err
	}
	if _, err := e.open(); err != nil {
		return err
	}
	markWaiting()
	changes, err := e.svc.KVWatch(e.ctx, prefix, timeout)
	for _, ch := range changes {
		if ch.Entry != nil {
			b, _ := json.Marshal(ch.Entry)
			e.printf("%s\n", b)
		} else {
			e.printf(`{"key":%s,"deleted":true}`+"\n", strconv.Quote(ch.Deleted))
		}
	}
	if errors.Is(err, app.ErrTimeout) {
		return coord.Errorf(coord.CodeConflict, "no change under %q within %s", prefix, coord.RoundDuration(timeout))
	}
	return err
}
