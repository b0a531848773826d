package main

import (
	"context"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
)

func depsCommand(e *env) *cli.Command {
	return &cli.Command{Name: "deps", Usage: "show the merged dependency graph (text, --json, --dot)",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "dot", Usage: "Graphviz output"}}, Action: e.cmdDeps}
}

func (e *env) cmdDeps(_ context.Context, c *cli.Command) error {
	s, err := e.open()
	if err != nil {
		return err
	}
	g, err := s.Deps(e.ctx)
	if err != nil {
		return err
	}
	nodes, unknown, cycle := g.Tasks, g.Unknown, g.Cycle
	switch {
	case e.json:
		if err := e.printJSON(g); err != nil {
			return err
		}
	case c.Bool("dot"):
		e.printf("digraph deps {\n  rankdir=LR;\n")
		for _, n := range nodes {
			e.printf("  %s [label=%s];\n", dotQuote(n.ID), dotLabel(n.ID, n.Status))
			for _, d := range n.Deps {
				e.printf("  %s -> %s;\n", dotQuote(d), dotQuote(n.ID))
			}
		}
		for _, u := range unknown {
			e.printf("  %s [style=dashed,label=%s];\n", dotQuote(u), dotLabel(u, "unknown"))
		}
		e.printf("}\n")
	default:
		for _, n := range nodes {
			d := "-"
			if len(n.Deps) > 0 {
				d = strings.Join(n.Deps, ", ")
			}
			e.printf("%s (%s) <- %s\n", n.ID, n.Status, d)
		}
		for _, u := range unknown {
			e.printf("unknown task %s (counts as not done)\n", u)
		}
	}
	if len(cycle) > 0 {
		return coord.Errorf(coord.CodeConflict, "dependency cycle %s", strings.Join(cycle, " -> ")).WithHint("edit the deps or dependency_map.json to break it")
	}
	if len(unknown) > 0 {
		return coord.Errorf(coord.CodeConflict, "%d dependency id(s) name no task: %s", len(unknown), strings.Join(unknown, ", ")).
			WithHint("seed the missing tasks or fix the deps")
	}
	return nil
}

// dotQuote quotes s as a Graphviz string: only '"' and '\\' are escaped.
// (Go's %q doubles the backslash of a "\n" line break, which Graphviz then
// shows as a literal \n.)
func dotQuote(s string) string { return `"` + dotEscape.Replace(s) + `"` }

var dotEscape = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// dotLabel is a Graphviz label of lines, each quoted as text and joined
// by Graphviz's centred line break \n.
func dotLabel(lines ...string) string {
	q := make([]string, len(lines))
	for i, l := range lines {
		q[i] = dotEscape.Replace(l)
	}
	return `"` + strings.Join(q, `\n`) + `"`
}
