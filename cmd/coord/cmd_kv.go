package main

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// A small TTL key-value space for agents' messages, in the neighbours'
// dialect.

func kvCommand(e *env) *cli.Command {
	ttl := &cli.StringFlag{Name: "ttl", Usage: "lifetime (required)"}
	return &cli.Command{Name: "kv", Usage: "a small TTL key-value space for agent messages", Commands: []*cli.Command{
		{Name: "set", Usage: "set KEY to VALUE for --ttl", ArgsUsage: "KEY VALUE", Flags: []cli.Flag{ttl}, Action: e.cmdKVSet},
		{Name: "cas", Usage: "set only if KEY is at --expect-rev N (or --expect-absent); exit 3 otherwise", ArgsUsage: "KEY VALUE",
			Flags: []cli.Flag{ttl, &cli.Int64Flag{Name: "expect-rev", Usage: "set only if the key is at this revision", HideDefault: true}, &cli.BoolFlag{Name: "expect-absent", Usage: "set only if the key is absent"}}, Action: e.cmdKVSet},
		{Name: "get", Usage: "print a key's value (exit 3 if absent)", ArgsUsage: "KEY", Action: e.cmdKVGet},
		{Name: "del", Usage: "delete a key", ArgsUsage: "KEY", Action: e.cmdKVDel},
		{Name: "ls", Usage: "keys in force, optionally under PREFIX", ArgsUsage: "[PREFIX]", Action: e.cmdKVLs},
		{Name: "watch", Usage: "wait until a key under PREFIX changes; print the changes (exit 3 on --timeout)", ArgsUsage: "[PREFIX]",
			Flags: []cli.Flag{&cli.StringFlag{Name: "timeout", Usage: "give up after this long (exit 3); default: wait until stopped"}}, Action: e.cmdKVWatch},
	}}
}

func (e *env) printKV(en coord.KVEntry) error {
	if e.json {
		return e.printJSON(en)
	}
	e.printf("%s\n", en.Text())
	return nil
}

func (e *env) cmdKVSet(_ context.Context, c *cli.Command) error {
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
	var cond coord.KVCond
	if c.Name == "cas" {
		cond = coord.KVCond{ExpectRev: c.Int64("expect-rev"), ExpectAbsent: c.Bool("expect-absent")}
		if (cond.ExpectRev > 0) == cond.ExpectAbsent {
			return strErr("kv cas needs exactly one of --expect-rev N (N > 0) or --expect-absent")
		}
	}
	if _, err := e.open(); err != nil {
		return err
	}
	val, err := e.svc.KVValue(a[1])
	if err != nil {
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

func (e *env) cmdKVGet(_ context.Context, c *cli.Command) error {
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

func (e *env) cmdKVDel(_ context.Context, c *cli.Command) error {
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
	if found {
		e.printf("deleted %s\n", a[0])
	} else {
		e.printf("%s was absent\n", a[0])
	}
	return nil
}

func (e *env) cmdKVLs(_ context.Context, c *cli.Command) error {
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
func (e *env) cmdKVWatch(_ context.Context, c *cli.Command) error {
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
