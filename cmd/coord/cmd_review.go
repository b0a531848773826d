package main

import (
	"context"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/cmd/coord/internal/workspace"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

func approveCommand(e *env) *cli.Command {
	return &cli.Command{Name: "approve", Usage: "review gate: turn a task in review into done, with this agent as its reviewer", ArgsUsage: "TASK",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "reviewer", Usage: "with --human: the human who approved (recorded as the reviewer)"},
			&cli.BoolFlag{Name: "human", Usage: "the approval is a human's decision, relayed by this agent (needs --reviewer NAME)"},
		}, Action: e.cmdApprove}
}

func rejectCommand(e *env) *cli.Command {
	return &cli.Command{Name: "reject", Usage: "review gate: hand a task in review back to its owner", ArgsUsage: "TASK",
		Flags: []cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why (required)"}}, Action: e.cmdReject}
}

// cmdApprove approves as the caller, who is recorded as the reviewer.
// Naming someone else with --reviewer is only for a human's decision,
// said so with --human and recorded as such in the task and the log.
func (e *env) cmdApprove(_ context.Context, c *cli.Command) error {
	a, err := e.args(c, "TASK")
	if err != nil {
		return err
	}
	human, named := c.Bool("human"), c.String("reviewer")
	if c.IsSet("reviewer") {
		if err := workspace.CheckAgent("--reviewer", named); err != nil {
			return err
		}
	}
	if human && named == "" {
		return strErr("approve --human needs --reviewer NAME: the human who approved the work")
	}
	s, caller, err := e.openAs()
	if err != nil {
		return err
	}
	if named != "" && named != caller && !human {
		return strErr("approve --reviewer %s: an agent approves as itself (%s); a reviewer named for someone else is only recorded with --human, for a human's decision", named, caller)
	}
	req := app.ApproveRequest{Agent: caller, TaskID: a[0]}
	if human {
		req.Human = named
	}
	got, err := s.Approve(e.ctx, req)
	if err != nil {
		return err
	}
	if human {
		return e.printTask(got, false, "approved "+got.ID+" for human reviewer "+named)
	}
	return e.printTask(got, false, "approved "+got.ID)
}

func (e *env) cmdReject(_ context.Context, c *cli.Command) error {
	a, err := e.args(c, "TASK")
	if err != nil {
		return err
	}
	s, reviewer, err := e.openAs()
	if err != nil {
		return err
	}
	got, err := s.Reject(e.ctx, reviewer, a[0], c.String("reason"))
	if err != nil {
		return err
	}
	if got.Status == coord.Blocked { // max_rejections reached
		return e.printTask(got, false, "rejected "+got.ID+" and blocked it: "+got.BlockedReason)
	}
	return e.printTask(got, false, "rejected "+got.ID+" (back to "+got.ClaimedBy+")")
}
