package main

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/urfave/cli/v3"
)

// hoistFlags is what urfave/cli v3 does not do of coord's conventions ("every
// flag may stand before or after the command name and before or after
// positional arguments"): v3 reads a command's flags after its name,
// before and after positionals, and the global flags in every command,
// but a command's own flag that stands before the command's name is
// refused by the parent, which does not know it (coord --task ls claim,
// coord lease --ttl 1h acquire x). hoistFlags moves those flags, each
// with its value, to just after the command's full name:
//
//	coord --task ls claim              -> coord claim --task ls
//	coord lease --ttl 1h acquire help  -> coord lease acquire --ttl 1h help
//
// A flag's value is data (--task ls is task ls, not the command ls): the
// word after a flag that takes a value goes with it, by the arity the
// flag has in the commands below (the same everywhere, which
// TestFlagArityAgreesAcrossCommands keeps true). Everything else stays
// where it stands, and everything from the first positional or "--" on
// is v3's to read, with one exception: v3 reads a word such as -5 as
// data but stops reading flags there, so when one stands before "--",
// the flags after the command's name go before the positionals
// (flagsFirst).
func hoistFlags(root *cli.Command, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	var hoisted []string
	known := flagArity(root.Flags) // the path's own flags: root's are global
	cur := root
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		tok := rest[i]
		if tok == "--" || !isFlagToken(tok) || isDashData(tok) {
			if sub := findCommand(cur.Commands, tok); sub != nil {
				out, cur = append(out, tok), sub
				for n, takes := range flagArity(sub.Flags) {
					known[n] = takes
				}
				continue
			}
			// The command's name is complete: its flags go here.
			return append(append(out, hoisted...), flagsFirst(rest[i:], known)...)
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(tok, "-"), "=")
		takes, isKnown := known[name]
		dst := &out
		if !isKnown {
			if takes, isKnown = belowArity(cur)[name]; isKnown {
				dst = &hoisted
			}
		}
		*dst = append(*dst, tok)
		if isKnown && takes && !hasValue && i+1 < len(rest) {
			i++
			*dst = append(*dst, rest[i])
		}
	}
	return append(out, hoisted...)
}

// flagsFirst returns args (what follows a command's name) with the flags
// before the positionals when a positional is a dash word (-5, -.5),
// after which urfave/cli v3 would read the remaining flags as data too
// (coord msg -1 tests fail --agent a would log "--agent a" as the
// message's end, as whichever agent the environment names). Without
// such a word, or from "--" on, args are as given.
func flagsFirst(args []string, known map[string]bool) []string {
	var flags, pos []string
	dashData := false
	i := 0
	for ; i < len(args) && args[i] != "--"; i++ {
		tok := args[i]
		if !isFlagToken(tok) || isDashData(tok) {
			pos = append(pos, tok)
			dashData = dashData || isDashData(tok)
			continue
		}
		flags = append(flags, tok)
		name, _, hasValue := strings.Cut(strings.TrimLeft(tok, "-"), "=")
		if known[name] && !hasValue && i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	if !dashData {
		return args
	}
	return append(append(flags, pos...), args[i:]...)
}

// isDashData reports whether v3 reads tok as data though it starts with
// a dash: one dash and no letter after it (-5, -.5, -/).
func isDashData(tok string) bool {
	if len(tok) < 2 || tok[0] != '-' || tok[1] == '-' {
		return false
	}
	r, _ := utf8.DecodeRuneInString(tok[1:])
	return !unicode.IsLetter(r)
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

// belowArity is flagArity of the flags of every command below c.
func belowArity(c *cli.Command) map[string]bool {
	m := map[string]bool{}
	for _, s := range c.Commands {
		for n, takes := range flagArity(s.Flags) {
			m[n] = takes
		}
		for n, takes := range belowArity(s) {
			m[n] = takes
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
