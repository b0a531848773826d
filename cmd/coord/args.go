package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/rotd/coord/coord"
)

// normalizeArgs lets every flag stand before or after the command name and
// before or after positional arguments (contract §4), which urfave/cli/v2
// does not do by itself: it rebuilds argv as
//
//	prog <global flags> <command> [<subcommand>] <command flags> -- <positionals> [<after-->]
//
// Every positional goes after the "--", so urfave never looks one up as a
// subcommand or reads it as a flag: an argument is data wherever it
// stands (contract §1; guardArgs does the rest). Everything after a
// literal "--" is passed through untouched (coord run, coord msg -- -x).
func normalizeArgs(app *cli.App, args []string) []string {
	if len(args) == 0 {
		return args
	}
	global := flagArity(app.Flags)
	var globals, cmdFlags, pos, pass []string
	var path []string // command [subcommand]
	var cmdFlagSet map[string]bool
	var cur *cli.Command
	rest := args[1:]
	// A command flag may also stand before the command name
	// (coord --capability go claim): find the command first so such flags
	// are known, with their arity, from the start.
	if c := guessCommand(app, rest, global); c != nil {
		cmdFlagSet = commandArity(c)
	}
	for i := 0; i < len(rest); i++ {
		tok := rest[i]
		if tok == "--" {
			pass = rest[i+1:]
			break
		}
		if len(tok) > 1 && tok[0] == '-' {
			name, _, hasValue := strings.Cut(strings.TrimLeft(tok, "-"), "=")
			takes, isCmd := cmdFlagSet[name]
			dst := &cmdFlags
			if !isCmd {
				var isGlobal bool
				takes, isGlobal = global[name]
				if isGlobal || cur == nil {
					dst = &globals
				}
			}
			*dst = append(*dst, tok)
			if takes && !hasValue && i+1 < len(rest) {
				i++
				*dst = append(*dst, rest[i])
			}
			continue
		}
		if cur == nil && len(path) == 0 {
			cur = findCommand(app.Commands, tok)
			path = append(path, tok)
			if cur == nil || cur.Name == "help" {
				// Unknown command or help: leave the rest for urfave.
				return append(append(append([]string{args[0]}, globals...), path...), rest[i+1:]...)
			}
			cmdFlagSet = commandArity(cur)
			continue
		}
		if cur != nil && len(cur.Subcommands) > 0 && len(path) == 1 && len(pos) == 0 {
			if sub := findCommand(cur.Subcommands, tok); sub != nil {
				cur = sub
				path = append(path, tok)
				cmdFlagSet = commandArity(sub)
				continue
			}
		}
		pos = append(pos, tok)
	}
	out := append([]string{args[0]}, globals...)
	out = append(out, path...)
	out = append(out, cmdFlags...)
	if len(pos) > 0 || pass != nil {
		out = append(out, "--")
		out = append(out, pos...)
		out = append(out, pass...)
	}
	return out
}

// guessCommand finds the command before the command-flag arities are
// known: the first word naming a command that is not the value of a flag
// standing before it (coord --task ls claim: "ls" is --task's value, the
// command is claim). A candidate fits when every flag before it is a
// global flag or one of its own, no free word precedes it, and it is not
// taken as a value; the first that fits wins, else the first candidate
// (urfave then reports the flag it does not know).
func guessCommand(app *cli.App, rest []string, global map[string]bool) *cli.Command {
	var first *cli.Command
	for i := 0; i < len(rest); i++ {
		if rest[i] == "--" {
			break
		}
		if isFlagToken(rest[i]) {
			continue
		}
		c := findCommand(app.Commands, rest[i])
		if c == nil {
			continue
		}
		if first == nil {
			first = c
		}
		if fitsBefore(rest[:i], global, commandArity(c)) {
			return c
		}
	}
	return first
}

// fitsBefore reports whether prefix, the words before a command's name,
// are all flags known to global or own, with their values, so that the
// word after prefix is free (not a flag's value).
func fitsBefore(prefix []string, global, own map[string]bool) bool {
	for j := 0; j < len(prefix); j++ {
		if !isFlagToken(prefix[j]) {
			return false // a free word before it would be the command
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(prefix[j], "-"), "=")
		takes, known := own[name]
		if !known {
			takes, known = global[name]
		}
		if !known {
			return false
		}
		if takes && !hasValue {
			j++ // its value; past the end means it takes the command's name
			if j >= len(prefix) {
				return false
			}
		}
	}
	return true
}

func isFlagToken(tok string) bool { return len(tok) > 1 && tok[0] == '-' }

// flagArity maps each flag name and alias to whether it takes a value.
func flagArity(flags []cli.Flag) map[string]bool {
	m := map[string]bool{}
	for _, f := range flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			m[n] = !isBool
		}
	}
	return m
}

// commandArity is flagArity of a command's flags and, until its
// subcommand is known, those of all its subcommands (coord --ttl 1h lease
// acquire x): within one command a flag name means the same everywhere.
func commandArity(c *cli.Command) map[string]bool {
	m := flagArity(c.Flags)
	for _, s := range c.Subcommands {
		for n, takes := range commandArity(s) {
			if _, ok := m[n]; !ok {
				m[n] = takes
			}
		}
	}
	return m
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.Name == name {
			return c
		}
		for _, a := range c.Aliases {
			if a == name {
				return c
			}
		}
	}
	return nil
}

// guardArgs makes every argument data (contract §1) and checks how many
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
	if len(c.Subcommands) > 0 {
		if c.Action == nil {
			c.Action = parentAction
		}
		for _, s := range c.Subcommands {
			guardArgs(s, name)
		}
		return
	}
	if c.Action == nil {
		return
	}
	lo, hi := argCount(c.ArgsUsage)
	action := c.Action
	c.Action = func(ctx *cli.Context) error {
		n := ctx.NArg()
		switch {
		case hi == 0 && n > 0:
			return strErr("%s takes no arguments, got %q; run 'coord %s --help'", name, clipArg(ctx.Args().First()), name)
		case n < lo:
			return strErr("%s needs %s (got %d arguments)", name, c.ArgsUsage, n)
		case hi > 0 && n > hi:
			return strErr("%s takes %s (got %d arguments); run 'coord %s --help'", name, c.ArgsUsage, n, name)
		}
		return action(ctx)
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
func parentAction(c *cli.Context) error {
	switch c.Args().First() {
	case "", "help", "h":
		return cli.ShowSubcommandHelp(c)
	}
	names := []string{}
	for _, s := range c.Command.Subcommands {
		if !s.Hidden {
			names = append(names, s.Name)
		}
	}
	return strErr("unknown command '%s %s' (%s has %s); run 'coord help %s'",
		c.Command.Name, clipArg(c.Args().First()), c.Command.Name, strings.Join(names, ", "), c.Command.Name)
}

func clipArg(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// isHelpExitCodes reports whether argv (normalized) asks for 'coord help
// exit-codes': the command word is help (or h) and exit-codes follows.
// A positional "help exit-codes" of another command does not count.
func isHelpExitCodes(app *cli.App, argv []string) bool {
	global := flagArity(app.Flags)
	var words []string
	for i := 1; i < len(argv); i++ {
		tok := argv[i]
		if tok == "--" {
			break
		}
		if len(tok) > 1 && tok[0] == '-' {
			name, _, hasValue := strings.Cut(strings.TrimLeft(tok, "-"), "=")
			if global[name] && !hasValue {
				i++
			}
			continue
		}
		words = append(words, tok)
	}
	return len(words) == 2 && (words[0] == "help" || words[0] == "h") && words[1] == "exit-codes"
}

// newEpochFlag is --epoch N of release, progress, block, unblock and the
// lease commands. Not given, ownership is checked by agent alone (read
// it with epochOf); given, it must be a real epoch: a negative value is
// refused (exit 1), never read as "skip the check".
func newEpochFlag() *cli.Int64Flag {
	return &cli.Int64Flag{Name: "epoch", Usage: "refuse (exit 6) unless the task is still at this epoch",
		Action: func(_ *cli.Context, v int64) error { return coord.CheckEpoch(v) }}
}

// epochOf is the --epoch given, or coord.NoEpoch when it was not.
func epochOf(c *cli.Context) int64 {
	if !c.IsSet("epoch") {
		return coord.NoEpoch
	}
	return c.Int64("epoch")
}
