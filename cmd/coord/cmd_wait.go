package main

import (
	"context"
	"encoding/json"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

func waitCommand(e *env) *cli.Command {
	return &cli.Command{Name: "wait", Usage: "block until a task is eligible for this agent, or --task changes state (exit 3 on --timeout)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "task", Usage: "wait for this task to change state"},
			&cli.StringFlag{Name: "timeout", Usage: "give up after this long (exit 3)"},
			capabilityFlag(), skillFlag(),
		}, Action: e.cmdWait}
}

// cmdWait blocks until this agent has an eligible task, or the named task
// changes state, or no work is left at all ({"status":"drained"}, exit
// 0): app.Service.Wait, woken by the backend's change notification with a
// slow poll as the fallback, beating for the agent every beat_interval and
// freeing stale locks it finds (unless sweep_on_claim is false).
func (e *env) cmdWait(_ context.Context, c *cli.Command) error {
	if c.NArg() > 0 {
		return strErr("wait takes no arguments (use --task ID)")
	}
	timeout, err := durFlag(c, "timeout", 0)
	if err != nil {
		return err
	}
	if _, err := coord.ParseSkillFilter(c.String("skill-level")); err != nil {
		return err
	}
	taskID := c.String("task")
	if taskID != "" {
		if err := coord.ValidTaskID(taskID); err != nil {
			return err
		}
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	a, err := e.caller(c)
	if err != nil {
		return err
	}
	markWaiting()
	res, err := s.Wait(e.ctx, app.WaitRequest{Agent: a, TaskID: taskID, Timeout: timeout})
	if err != nil {
		return err
	}
	return e.printRaw(waitJSON(res))
}

// waitJSON prints a wait's result as the contract shows it:
// {"status":"eligible","task":ID}, {"task":ID,"status":S,"was":W} or
// {"status":"drained"}.
func waitJSON(r app.WaitResult) []byte {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	switch {
	case r.Was != "":
		return []byte(`{"task":` + q(r.Task) + `,"status":` + q(r.Status) + `,"was":` + q(r.Was) + `}`)
	case r.Task != "":
		return []byte(`{"status":` + q(r.Status) + `,"task":` + q(r.Task) + `}`)
	}
	return []byte(`{"status":` + q(r.Status) + `}`)
}
