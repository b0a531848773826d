package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/internal/check"
)

func verifyCommand(e *env) *cli.Command {
	return &cli.Command{Name: "verify", Usage: "run a check in your worktree and record its receipt on the task (exit 0 passed, 3 failed)", ArgsUsage: "-- CMD [ARGS...]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "task", Usage: "the task checked, which you hold (default: COORD_TASK inside run, else the task whose branch is checked out here, else the one task you hold claimed)"},
			&cli.StringFlag{Name: "grace", Usage: "after a signal to verify, SIGKILL CMD after this (default 10s)"},
		}, Action: e.cmdVerify}
}

// cmdVerify runs CMD (no shell) at the top of the caller's worktree with
// the environment run gives (taskEnv), under the run supervisor (beating
// for the caller meanwhile), and records a receipt on the task
// (app.Service.StartVerify, RecordReceipt): the worktree's tree as it
// stood when CMD started, the command line, its exit status, how long it
// ran and the last 4 KiB of its output. CMD's output streams through
// (with --json its stdout goes to stderr, and stdout holds the receipt
// alone). Exit 0 when CMD passed, 3 when it failed; a signal to verify
// stops CMD and records nothing (exit 130).
func (e *env) cmdVerify(_ context.Context, c *cli.Command) error {
	argv := c.Args().Slice()
	if len(argv) == 0 {
		return strErr("verify needs a command: coord verify [--task ID] -- CMD ARGS...")
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return strErr("verify: %s: command not found", argv[0])
	}
	if !filepath.IsAbs(path) { // CMD runs at the worktree's top: name it as the caller did
		if path, err = filepath.Abs(path); err != nil {
			return err
		}
	}
	grace, err := durFlag(c, "grace", 10*time.Second)
	if err != nil {
		return err
	}
	svc, err := e.open()
	if err != nil {
		return err
	}
	a, err := e.caller(c)
	if err != nil {
		return err
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, stopSignals...)
	defer signal.Stop(sigs)
	t, rec, err := e.verify(svc, a, c.String("task"), argv, path, grace, sigs)
	if err != nil {
		return err
	}
	if e.json {
		if err := e.printJSON(map[string]any{"task": t.ID, "receipt": rec}); err != nil {
			return err
		}
	}
	if !rec.Passed() {
		return coord.Errorf(coord.CodeConflict, "verify: %s failed on task %s (exit %d)", argv[0], t.ID, rec.Exit).
			WithHint("fix it and verify again")
	}
	return nil
}

// verify runs argv (path: its executable) as a check of taskID ("": the
// task the caller works on) in the caller's worktree, streaming its
// output (to stderr with --json), and records its receipt: the task as
// it then stands and the receipt. A signal stops the check and records
// nothing (CodeInterrupted).
func (e *env) verify(svc *app.Service, a coord.Agent, taskID string, argv []string, path string, grace time.Duration, sigs chan os.Signal) (*coord.Task, coord.Receipt, error) {
	v, err := svc.StartVerify(e.ctx, a, e.taskOr(taskID))
	if err != nil {
		return nil, coord.Receipt{}, err
	}
	tail := check.NewTail(coord.MaxNote)
	r := &runner{e: e, svc: svc, argv: argv, path: path, grace: grace, every: e.cfg.BeatInterval, sigs: sigs,
		dir: e.paths().WorkTop(), output: tail}
	if sig := pendingSignal(e.ctx, sigs); sig != nil {
		return nil, coord.Receipt{}, &coord.Error{Code: coord.CodeInterrupted, Msg: "verify: interrupted by " + signalName(sig)}
	}
	stdout := e.stdout
	if e.json {
		e.stdout = e.stderr // CMD's stdout; the receipt alone goes to stdout
	}
	start := time.Now()
	out, err := r.supervise(e.taskEnv(a, v.Task), a.ID, app.TaskRef{})
	took := time.Since(start)
	e.stdout = stdout
	if err != nil {
		return nil, coord.Receipt{}, coord.Wrap(coord.CodeIO, err, "verify: cannot start %s", argv[0])
	}
	if out.sig != nil {
		return nil, coord.Receipt{}, &coord.Error{Code: coord.CodeInterrupted, Msg: fmt.Sprintf("verify: interrupted by %s; %s was stopped and no receipt recorded", signalName(out.sig), argv[0])}
	}
	st, text := check.ExitOf(out.status)
	exit := st.Exit
	if text != "" {
		tail.Write([]byte("coord: " + text + "\n"))
	}
	ctx := context.WithoutCancel(e.ctx) // the check ran: record it whatever comes
	t, err := svc.RecordReceipt(ctx, v, commandLine(argv), exit, took, tail.String())
	if err != nil {
		return nil, coord.Receipt{}, err
	}
	rec := t.Receipts[len(t.Receipts)-1]
	if !e.json {
		fmt.Fprintf(e.stderr, "coord: verify: %s on tree %s: %s in %.1fs; receipt recorded on %s\n",
			argv[0], coord.ShortID(rec.Tree), verdict(rec), rec.Seconds, t.ID)
	}
	return t, rec, nil
}

func verdict(r coord.Receipt) string {
	if r.Passed() {
		return "passed"
	}
	return "failed, exit " + strconv.Itoa(r.Exit)
}

// commandLine is argv as one line for people, an argument quoted for a
// shell when it needs it.
func commandLine(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
		}) < 0 {
			parts[i] = a
		} else {
			parts[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(parts, " ")
}
