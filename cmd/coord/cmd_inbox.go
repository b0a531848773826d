package main

import (
	"context"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord/app"
)

func inboxCommand(e *env) *cli.Command {
	return &cli.Command{Name: "inbox", Usage: "claim the oldest task assigned to this agent and print it as claim does ({\"status\":\"empty\"} when none)",
		Flags:  []cli.Flag{&cli.StringFlag{Name: "wait", Usage: "block until something is assigned, at most this long (exit 3 on timeout)"}},
		Action: e.cmdInbox}
}

// cmdInbox takes the oldest assignment (app.Service.Inbox) and prints the
// task as claim does; {"status":"empty"} when none (or, with --wait, when
// none came in time: exit 3), {"status":"drained"} when waiting and no
// work is left at all.
func (e *env) cmdInbox(_ context.Context, c *cli.Command) error {
	wait, err := durFlag(c, "wait", 0)
	if err != nil {
		return err
	}
	s, id, err := e.openAs()
	if err != nil {
		return err
	}
	if c.IsSet("wait") {
		markWaiting()
	}
	res, err := s.Inbox(e.ctx, app.InboxRequest{Agent: id, Wait: c.IsSet("wait"), Timeout: wait})
	if err != nil {
		return err
	}
	if res.Task == nil {
		return e.printRaw([]byte(`{"status":"` + res.Status + `"}`))
	}
	return e.printTask(res.Task, true, "")
}
