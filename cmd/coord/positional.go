package main

import (
	"context"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
)

// args checks that exactly the named positional arguments were given and
// validates each named TASK before anything is touched.
func (e *env) args(c *cli.Command, names ...string) ([]string, error) {
	a := c.Args().Slice()
	if len(a) != len(names) {
		return nil, strErr("%s needs %s (got %d arguments)", c.Name, strings.Join(names, " "), len(a))
	}
	for i, n := range names {
		if n == "TASK" {
			if err := coord.ValidTaskID(a[i]); err != nil {
				return nil, err
			}
		}
	}
	return a, nil
}

// guardArgs makes every argument data (docs/COMMANDS.md) and checks how many
// positionals each command takes, for c and all its subcommands. It is
// applied to every command of the app, so a new command is covered
// without doing anything:
//
//   - No command gets urfave's "help" subcommand (alias "h"): urfave looks
//     the first positional up among the subcommands, so 'coord release h'
//     printed help and exited 0 without releasing task h. Help stays
//     available as --help/-h (before any "--") and as 'coord help CMD'.
//   - A command with subcommands answers "help" or "h" in the subcommand
//     slot (and nothing) with its help, and refuses an unknown subcommand.
//   - A command's ArgsUsage declares its positionals; fewer or more
//     (any at all when ArgsUsage is empty) are refused with exit 1 before
//     the command runs. See argCount for the notation.
func guardArgs(c *cli.Command, parent string) {
	name := strings.TrimSpace(parent + " " + c.Name)
	c.HideHelpCommand = true
	if len(c.Commands) > 0 {
		if c.Action == nil {
			c.Action = parentAction
		}
		for _, s := range c.Commands {
			guardArgs(s, name)
		}
		return
	}
	if c.Action == nil {
		return
	}
	lo, hi := argCount(c.ArgsUsage)
	action := c.Action
	c.Action = func(ctx context.Context, cmd *cli.Command) error {
		n := cmd.NArg()
		switch {
		case hi == 0 && n > 0:
			return strErr("%s takes no arguments, got %q; run 'coord %s --help'", name, clipArg(cmd.Args().First()), name)
		case n < lo:
			return strErr("%s needs %s (got %d arguments)", name, c.ArgsUsage, n)
		case hi > 0 && n > hi:
			return strErr("%s takes %s (got %d arguments); run 'coord %s --help'", name, c.ArgsUsage, n, name)
		}
		return action(ctx, cmd)
	}
}

// argCount reads an ArgsUsage string: each word is one positional, a word
// in [brackets] is optional, a word ending in "…" or "..." takes any
// number (max -1), and "--" is only a separator. "" takes none.
func argCount(usage string) (lo, hi int) {
	for _, w := range strings.Fields(usage) {
		if w == "--" {
			continue
		}
		optional := strings.HasPrefix(w, "[")
		if !optional {
			lo++
		}
		w = strings.TrimSuffix(strings.TrimPrefix(w, "["), "]")
		switch {
		case strings.HasSuffix(w, "…") || strings.HasSuffix(w, "..."):
			hi = -1
		case hi >= 0:
			hi++
		}
	}
	return lo, hi
}

// parentAction runs when a command with subcommands is given none that
// it knows: its help for nothing, "help" or "h"; otherwise exit 1.
func parentAction(_ context.Context, c *cli.Command) error {
	switch c.Args().First() {
	case "", "help", "h":
		return cli.ShowSubcommandHelp(c)
	}
	names := []string{}
	for _, s := range c.Commands {
		if !s.Hidden {
			names = append(names, s.Name)
		}
	}
	return strErr("unknown command '%s %s' (%s has %s); run 'coord help %s'",
		c.Name, clipArg(c.Args().First()), c.Name, strings.Join(names, ", "), c.Name)
}

func clipArg(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
