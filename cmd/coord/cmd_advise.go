package main

import (
	"context"

	"github.com/urfave/cli/v3"
)

// coord advise (docs/PLANNING.md): how many agents to run now, and the
// measured rates behind the number (app.Service.Advise).

func adviseCommand(e *env) *cli.Command {
	return &cli.Command{Name: "advise", Usage: "how many agents to run now, from the ready queue, its predicted collisions and dependencies, and the measured rates",
		Action: e.cmdAdvise}
}

func (e *env) cmdAdvise(_ context.Context, _ *cli.Command) error {
	s, err := e.open()
	if err != nil {
		return err
	}
	a, err := s.Advise(e.ctx)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(a)
	}
	e.printf("run %s: %s\n", count(a.Agents, "agent"), a.Why)
	r := a.Rates
	e.printf("measured over %.4gh: %d finished (%.2f per hour), %d conflicts (%.2f per task)\n", r.Hours, r.Finished, r.TasksPerHour, r.Conflicts, r.ConflictsPerTask)
	return nil
}
