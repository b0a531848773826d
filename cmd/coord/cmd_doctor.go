package main

import (
	"context"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
)

func doctorCommand(e *env) *cli.Command {
	return &cli.Command{Name: "doctor", Usage: "check every invariant; --repair fixes what it can",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "repair", Usage: "fix and log each fix"}}, Action: e.cmdDoctor}
}

func (e *env) cmdDoctor(_ context.Context, c *cli.Command) error {
	s, err := e.openForDoctor()
	if err != nil {
		return err
	}
	probs, err := s.Doctor(e.ctx, c.Bool("repair"))
	if err != nil {
		return err
	}
	remaining := 0
	for _, p := range probs {
		if p.Remains() {
			remaining++
		}
	}
	if e.json {
		if err := e.printJSON(map[string]any{"ok": remaining == 0, "problems": probs}); err != nil {
			return err
		}
	} else {
		for _, p := range probs {
			mark := "problem"
			switch {
			case p.Fixed:
				mark = "fixed"
			case p.Note:
				mark = "note" // breaks no invariant: the next commit removes it
			}
			e.printf("%s: %s\n", mark, coord.OneLine(p.What))
		}
		if remaining == 0 {
			e.printf("ok: every invariant holds\n")
		}
	}
	if remaining > 0 {
		hint := "run 'coord doctor --repair'"
		if c.Bool("repair") {
			hint = "each remaining problem says how to fix it by hand"
		}
		return coord.Errorf(coord.CodeConflict, "doctor: %d problem(s) remain", remaining).WithHint("%s", hint)
	}
	return nil
}
