package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
)

func printExitCodes(w io.Writer) {
	fmt.Fprintf(w, "%-5s %-15s %s\n", "CODE", "NAME", "MEANING")
	for _, c := range coord.ExitCodes {
		fmt.Fprintf(w, "%-5d %-15s %s\n", c.Code, c.Name, c.Meaning)
	}
}

// isHelpExitCodes reports whether argv asks for 'coord help exit-codes':
// the command word is help (or h) and exit-codes follows. A positional
// "help exit-codes" of another command does not count.
func isHelpExitCodes(app *cli.Command, argv []string) bool {
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
