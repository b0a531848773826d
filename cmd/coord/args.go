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
// Everything after a literal "--" is passed through untouched (coord run).
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
		cmdFlagSet = flagArity(c.Flags)
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
			cmdFlagSet = flagArity(cur.Flags)
			continue
		}
		if cur != nil && len(cur.Subcommands) > 0 && len(path) == 1 && len(pos) == 0 {
			if sub := findCommand(cur.Subcommands, tok); sub != nil {
				cur = sub
				path = append(path, tok)
				cmdFlagSet = flagArity(sub.Flags)
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

// guessCommand returns the command named by the first token that is
// neither a flag nor the value of a global flag and names a command.
func guessCommand(app *cli.App, rest []string, global map[string]bool) *cli.Command {
	for i := 0; i < len(rest); i++ {
		tok := rest[i]
		if tok == "--" {
			return nil
		}
		if len(tok) > 1 && tok[0] == '-' {
			name, _, hasValue := strings.Cut(strings.TrimLeft(tok, "-"), "=")
			if global[name] && !hasValue {
				i++
			}
			continue
		}
		if c := findCommand(app.Commands, tok); c != nil {
			return c
		}
	}
	return nil
}

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
