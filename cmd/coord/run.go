package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/coord/app"
	"github.com/rotd/coord/registry/workspace"
)

// lastLine passes writes through and remembers the last non-empty line
// (for the reason of a blocked task).
type lastLine struct {
	mu   sync.Mutex
	w    interface{ Write([]byte) (int, error) }
	cur  []byte
	last string
}

func (l *lastLine) Write(p []byte) (int, error) {
	l.mu.Lock()
	for _, c := range p {
		if c == '\n' {
			if t := strings.TrimSpace(string(l.cur)); t != "" {
				l.last = t
			}
			l.cur = l.cur[:0]
		} else if len(l.cur) < 4096 {
			l.cur = append(l.cur, c)
		}
	}
	l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lastLine) Last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t := strings.TrimSpace(string(l.cur)); t != "" {
		return t
	}
	return l.last
}

// cmdRun: claim, run CMD beating in the background, release or block by
// its exit status, stop it if the claim is lost, and hand the task back
// if run itself gets a signal. CMD runs under the run guard (guard.go),
// so it and everything it started die with run, however run ends.
func (e *env) cmdRun(c *cli.Context) error {
	argv := c.Args().Slice()
	if len(argv) == 0 {
		return strErr("run needs a command: coord run [claim flags] -- CMD ARGS...")
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return strErr("run: %s: command not found", argv[0])
	}
	grace, err := durFlag(c, "grace", 10*time.Second)
	if err != nil {
		return err
	}
	svc, err := e.open()
	if err != nil {
		return err
	}
	every, err := durFlag(c, "beat", e.cfg.BeatInterval)
	if err != nil {
		return err
	}
	// From here a stop signal is run's to handle (forward, then hand the
	// task back): listen before the claim, so that none falls between the
	// claim and CMD's start.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, stopSignals...)
	defer signal.Stop(sigs)
	res, a, err := e.claimTask(c)
	if err != nil {
		return err
	}
	if res.Task == nil {
		if res.Drained {
			return e.printRaw([]byte(`{"status":"drained"}`))
		}
		return e.printRaw([]byte(`{"status":"no_eligible_task"}`))
	}
	agent, id, epoch := a.ID, res.Task.ID, res.Task.Epoch
	ref := app.TaskRef{Agent: a, TaskID: id, Epoch: epoch}
	fmt.Fprintf(e.stderr, "coord: run: claimed %s (epoch %d)\n", id, epoch)
	ctx := context.WithoutCancel(e.ctx) // what follows the claim runs to its end
	if sig := pendingSignal(e.ctx, sigs); sig != nil {
		return e.handBack(ctx, svc, ref, sig) // signalled during the claim: CMD never starts
	}

	env := append(os.Environ(), "COORD_TASK="+id, "COORD_EPOCH="+strconv.FormatInt(epoch, 10),
		"COORD_AGENT="+agent, "COORD_ROOT="+e.root)
	errTail := &lastLine{w: e.stderr}
	g, err := startGuarded(path, argv, env, rawStdin(e.stdin), e.stdout, errTail)
	if err != nil {
		return e.blockAfterRun(ctx, svc, ref, "could not start: "+err.Error())
	}
	var status string
	done := make(chan struct{})
	go func() {
		status = g.wait()
		close(done)
	}()
	tick := time.NewTicker(every)
	defer tick.Stop()
	var sig os.Signal           // the first signal run got
	var graceC <-chan time.Time // after a signal or a loss: CMD's time to stop
	stopIn := func() {
		if graceC == nil {
			graceC = time.After(grace)
		}
	}
	lost := ""
loop:
	for {
		select {
		case <-done:
			break loop
		case s := <-sigs:
			if sig == nil {
				sig = s
			}
			g.signal(s) // to CMD's whole process group
			stopIn()
		case <-graceC:
			g.kill()
		case <-tick.C:
			svc.Beat(ctx, agent, nil)
			if sig != nil || lost != "" {
				continue
			}
			// An error means we cannot tell: keep working, check again next beat.
			if why, _ := svc.Holds(ctx, ref); why != "" {
				lost = why
				g.signal(syscall.SIGTERM)
				stopIn()
			}
		}
	}
	if lost != "" {
		return coord.Errorf(coord.CodeLost, "run: lost task %s while %s ran: %s; it was stopped", id, argv[0], lost).
			WithHint("stop working on it; run 'coord run' again for another task")
	}
	// A signal before the release begins means CMD did not finish, however
	// it exited: the task is handed back, never marked done.
	if sig == nil {
		sig = pendingSignal(e.ctx, sigs)
	}
	if sig != nil {
		return e.handBack(ctx, svc, ref, sig)
	}
	if status == "exit 0" {
		summary := c.String("summary")
		if !c.IsSet("summary") {
			summary = workspace.Summary(ctx, e.paths().WorkTop())
		}
		got, err := svc.Release(ctx, ref, summary)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "coord: run: released %s (%s)\n", id, got.Status)
		return nil
	}
	reason := exitReason(status)
	if tail := errTail.Last(); tail != "" {
		reason += ": " + clipText(tail, 200)
	}
	return e.blockAfterRun(ctx, svc, ref, reason)
}

// pendingSignal returns the stop signal run has received, if any, without
// waiting.
func pendingSignal(ctx context.Context, sigs <-chan os.Signal) os.Signal {
	select {
	case s := <-sigs:
		return s
	default:
	}
	var sc *signalCause
	if errors.As(context.Cause(ctx), &sc) {
		return sc.sig
	}
	return nil
}

// handBack gives up the task after a signal to run (app.Service.HandBack:
// as the stale sweep would under on_stale, at once) and returns the
// interrupted error (exit 130).
func (e *env) handBack(ctx context.Context, svc *app.Service, ref app.TaskRef, sig os.Signal) error {
	why := "interrupted by " + signalName(sig)
	got, err := svc.HandBack(ctx, ref, why)
	switch {
	case err == nil:
		fmt.Fprintf(e.stderr, "coord: run: handed back %s (%s)\n", ref.TaskID, got.Status)
	case coord.CodeOf(err) != coord.CodeLost: // lost: someone else has it already
		return err
	}
	return &coord.Error{Code: coord.CodeInterrupted, Msg: fmt.Sprintf("run: %s; task %s was not finished", why, ref.TaskID)}
}

// exitReason words the guard's report of how CMD ended.
func exitReason(status string) string {
	kind, arg, _ := strings.Cut(status, " ")
	n, _ := strconv.Atoi(arg)
	switch kind {
	case "exit":
		return "exit status " + arg
	case "signal":
		return "killed by " + syscall.Signal(n).String()
	case "error":
		return "could not start: " + arg
	}
	return status
}

func (e *env) blockAfterRun(ctx context.Context, svc *app.Service, ref app.TaskRef, reason string) error {
	if _, err := svc.Block(ctx, ref, reason); err != nil {
		return err
	}
	return coord.Errorf(coord.CodeConflict, "run: task %s blocked: %s", ref.TaskID, reason).
		WithHint("fix the cause, then 'coord unblock %s' and run again", ref.TaskID)
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func durFlag(c *cli.Context, name string, def time.Duration) (time.Duration, error) {
	if !c.IsSet(name) {
		return def, nil
	}
	d, err := coord.ParseDuration(c.String(name))
	if err != nil || d <= 0 {
		return 0, strErr("--%s %q is not a positive duration like 30s", name, c.String(name))
	}
	return d, nil
}

// cmdWait blocks until this agent has an eligible task, or the named task
// changes state, or no work is left at all ({"status":"drained"}, exit
// 0): app.Service.Wait, woken by the backend's change notification with a
// slow poll as the fallback, beating for the agent every beat_interval and
// freeing stale locks it finds (unless sweep_on_claim is false).
func (e *env) cmdWait(c *cli.Context) error {
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

func (e *env) cmdPrime(c *cli.Context) error {
	_, err := e.stdout.Write([]byte(app.Prime))
	return err
}
