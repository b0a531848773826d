package main

import (
	"context"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/cmd/coord/internal/workspace"
	"github.com/rotd/coordination/coord/app"
)

// The supervisor's commands (docs/COMMANDS.md#supervising): acts on work the caller does
// not hold. The rules are app.Supervisor's; these parse and print.

func requeueCommand(e *env) *cli.Command {
	return &cli.Command{Name: "requeue", Usage: "take a claimed or blocked task from its holder back to the queue (its holder's next write exits 6)", ArgsUsage: "TASK",
		Flags: []cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why (required; logged with who asked)"}}, Action: e.cmdRequeue}
}

func assignCommand(e *env) *cli.Command {
	return &cli.Command{Name: "assign", Usage: "push a task to a registered agent's inbox (a task in review: to a reviewer), in pull mode too", ArgsUsage: "TASK",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "to", Usage: "the registered agent it goes to (required)"},
			&cli.StringFlag{Name: "reason", Usage: "why, for the log (required when the task is held: it is taken from its holder first)"},
		}, Action: e.cmdAssign}
}

// act runs one supervisor's act on the task the command names, as the
// caller, and prints the task (--json) or what was done.
func (e *env) act(c *cli.Command, do func(app.Supervisor, app.Act) (app.ActResult, error), a app.Act) error {
	args, err := e.args(c, "TASK")
	if err != nil {
		return err
	}
	s, caller, err := e.openAs()
	if err != nil {
		return err
	}
	a.By, a.TaskID = caller, args[0]
	res, err := do(s.Supervisor(), a)
	if err != nil {
		return err
	}
	return e.printTask(res.Task, false, res.Message)
}

func (e *env) cmdRequeue(_ context.Context, c *cli.Command) error {
	return e.act(c, func(v app.Supervisor, a app.Act) (app.ActResult, error) { return v.Requeue(e.ctx, a) },
		app.Act{Reason: c.String("reason")})
}

func (e *env) cmdAssign(_ context.Context, c *cli.Command) error {
	to := c.String("to")
	if c.IsSet("to") {
		if err := workspace.CheckAgent("--to", to); err != nil {
			return err
		}
	}
	return e.act(c, func(v app.Supervisor, a app.Act) (app.ActResult, error) { return v.Assign(e.ctx, a) },
		app.Act{Reason: c.String("reason"), To: to})
}

func cancelCommand(e *env) *cli.Command {
	return &cli.Command{Name: "cancel", Usage: "take a task out of the work: archived as cancelled, its claims freed, its branch kept (its holder's next write exits 6)", ArgsUsage: "TASK",
		Flags: []cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why (required; logged with who asked)"}}, Action: e.cmdCancel}
}

func (e *env) cmdCancel(_ context.Context, c *cli.Command) error {
	return e.act(c, func(v app.Supervisor, a app.Act) (app.ActResult, error) { return v.Cancel(e.ctx, a) },
		app.Act{Reason: c.String("reason")})
}
