package main

import (
	"strings"

	"github.com/urfave/cli/v2"
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
