package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/internal/check"
)

func runCommand(e *env) *cli.Command {
	return &cli.Command{Name: "run", Usage: "claim (waiting while nothing is eligible), run CMD beating meanwhile, release on success, block on failure", ArgsUsage: "-- CMD [ARGS...]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "task", Usage: "take this task or exit 3"},
			capabilityFlag(), skillFlag(),
			&cli.BoolFlag{Name: "any", Usage: "first eligible in registry order"},
			&cli.BoolFlag{Name: "loop", Usage: "run CMD on one task after another until no work is left (a failed or lost task is logged and the loop goes on)"},
			&cli.StringFlag{Name: "timeout", Usage: "give up (exit 3) when no task becomes eligible for this long (default: wait)"},
			&cli.StringFlag{Name: "beat", Usage: "beat and check the claim this often (default: config beat_interval)"},
			&cli.StringFlag{Name: "grace", Usage: "after SIGTERM to a command whose claim was lost, SIGKILL after this (default 10s)"},
			&cli.StringFlag{Name: "summary", Usage: "release summary (default: the task's commits since its base, and uncommitted changes)"},
			&cli.StringFlag{Name: "verify", Usage: "with require_verified: the check (a shell line) run as coord verify before each release when the task has no receipt for it (default: config land_check)"},
			&cli.BoolFlag{Name: "inbox", Usage: "push scheduling: run CMD on each task pushed to this agent, in turn, until no work is left"},
			&cli.StringFlag{Name: "wait", Usage: "with --inbox: give up (exit 3) when nothing is pushed for this long (as --timeout)"},
		}, Action: e.cmdRun}
}

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

// cmdRun: take the next task (app.Worker.Next: claim, or the inbox,
// waiting while nothing is eligible but work remains), run CMD on it
// under the run supervisor (supervise.go: CMD and everything it started
// die with run, however run ends) while an app.Keeper beats, then release
// or block by its exit status; stop CMD if the claim is lost or can no
// longer be kept (self-fencing), hand the task back if run itself gets a
// signal.
// With --loop (and, as before, with --inbox) it goes on to the next task
// until no work is left.
func (e *env) cmdRun(_ context.Context, c *cli.Command) error {
	argv := c.Args().Slice()
	if len(argv) == 0 {
		return strErr("run needs a command: coord run [claim flags] -- CMD ARGS...")
	}
	inbox, loop := c.Bool("inbox"), c.Bool("loop")
	if inbox && (c.IsSet("task") || c.Bool("any")) {
		return strErr("run --inbox takes what is pushed to it: --task and --any do not apply")
	}
	if loop && c.IsSet("task") {
		return strErr("run --loop takes one task after another: --task does not apply")
	}
	if !inbox && c.IsSet("wait") {
		return strErr("run: --wait goes with --inbox (--timeout bounds every wait)")
	}
	if c.IsSet("wait") && c.IsSet("timeout") {
		return strErr("run: --wait and --timeout mean the same: give one")
	}
	if id := c.String("task"); c.IsSet("task") {
		if err := coord.ValidTaskID(id); err != nil {
			return err
		}
	}
	// The release at the end would refuse a summary over its bound: refuse
	// it now, before anything is claimed or run.
	if err := coord.CheckNote("summary", c.String("summary")); err != nil {
		return err
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return strErr("run: %s: command not found", argv[0])
	}
	r := &runner{e: e, c: c, argv: argv, path: path}
	if r.grace, err = durFlag(c, "grace", 10*time.Second); err != nil {
		return err
	}
	timeoutFlag := "timeout"
	if c.IsSet("wait") {
		timeoutFlag = "wait"
	}
	timeout, err := durFlag(c, timeoutFlag, 0)
	if err != nil {
		return err
	}
	if r.svc, err = e.open(); err != nil {
		return err
	}
	if r.every, err = intervalFlag(c, "beat", e.cfg.BeatInterval); err != nil {
		return err
	}
	a, err := e.caller(c)
	if err != nil {
		return err
	}
	// From here a stop signal is run's to handle (forward, then hand the
	// task back): listen before the claim, so that none falls between the
	// claim and CMD's start.
	r.sigs = make(chan os.Signal, 4)
	signal.Notify(r.sigs, stopSignals...)
	defer signal.Stop(r.sigs)
	r.lost = make(chan lostTask, 8)
	r.keeper = r.svc.Keep(a, app.KeepOptions{Every: r.every, Verify: true, OnLost: func(ref app.TaskRef, why string) {
		select {
		case r.lost <- lostTask{ref.TaskID, ref.Epoch, why}:
		default:
		}
	}})
	defer r.keeper.Close()
	w := r.svc.NewWorker(app.NextRequest{Agent: a, TaskID: c.String("task"), Any: c.Bool("any"), Inbox: inbox, Timeout: timeout,
		OnWait: func(why string) {
			fmt.Fprintf(e.stderr, "coord: run: waiting for %s\n", coord.OneLine(why))
			if runWaitsHook != nil {
				runWaitsHook()
			}
		}})
	for {
		if sig := pendingSignal(e.ctx, r.sigs); sig != nil {
			return &coord.Error{Code: coord.CodeInterrupted, Msg: "run: interrupted by " + signalName(sig)}
		}
		markWaiting()
		res, err := w.Next(e.ctx)
		if err != nil {
			return err
		}
		if res.Task == nil {
			return e.printRaw([]byte(`{"status":"drained"}`))
		}
		if res.Task.Status == coord.Review { // push scheduling: a reviewer's inbox
			err = r.review(a, res.Task)
		} else {
			err = r.work(a, res.Task, res.Since)
		}
		switch code := coord.CodeOf(err); {
		case err == nil && (loop || inbox):
			continue
		case !loop:
			// One task; with --inbox, until a run does not end in a
			// release or a review decision.
			return err
		case code == coord.CodeConflict || code == coord.CodeLost:
			// The loop goes on past a task that failed (blocked) or was
			// lost; a task it blocked comes back to it when a person
			// unblocks it.
			fmt.Fprintf(e.stderr, "coord: %s\n", coord.OneLine(err.Error()))
		default:
			return err
		}
	}
}

// runner runs CMD on one task after another.
type runner struct {
	e            *env
	c            *cli.Command
	svc          *app.Service
	argv         []string
	path         string
	grace, every time.Duration
	sigs         chan os.Signal
	keeper       *app.Keeper
	lost         chan lostTask // what the keeper found lost or fenced
	dir          string        // where CMD runs ("" : here)
	output       io.Writer     // also gets CMD's stdout and stderr (nil: none)
}

// settleWait bounds a self-fenced run's attempt to hand its task back.
const settleWait = 3 * time.Second

// lostTask is a task (at an epoch) the keeper no longer keeps, with why.
type lostTask struct {
	id    string
	epoch int64
	why   string
}

// work runs CMD on a task the agent holds: released when CMD exits 0,
// blocked when it fails, handed back on a signal, stopped when lost or
// when its claim could no longer be kept alive (self-fencing: no
// successful beat for half of stale_after), exit 6 then. since is when
// the claim began (app.ClaimResult.Since). A task a reviewer sent back
// gives CMD its review notes in COORD_REVIEW_NOTES.
func (r *runner) work(a coord.Agent, t *coord.Task, since time.Time) error {
	e, svc := r.e, r.svc
	id, epoch := t.ID, t.Epoch
	ref := app.TaskRef{Agent: a, TaskID: id, Epoch: epoch}
	fmt.Fprintf(e.stderr, "coord: run: claimed %s (epoch %d)\n", id, epoch)
	ctx := context.WithoutCancel(e.ctx) // what follows the claim runs to its end
	if sig := pendingSignal(e.ctx, r.sigs); sig != nil {
		return e.handBack(ctx, svc, ref, sig) // signalled during the claim: CMD never starts
	}
	r.keeper.Hold(ref, since)
	defer r.keeper.Drop(id)
	out, err := r.supervise(e.taskEnv(a, t), a.ID, ref)
	if err != nil {
		return r.blockAfterRun(ctx, ref, "could not start: "+err.Error())
	}
	if out.lost != "" {
		if owed := r.keeper.Owed(); len(owed) > 0 {
			// Self-fenced: hand the task back now if the backend answers
			// again; if not within a few seconds, it goes stale as any
			// silent claim does (a commit under way is not waited for:
			// it is fenced by the task's epoch, lands whole or not at all).
			settled := make(chan struct{})
			go func() {
				sctx, cancel := context.WithTimeout(ctx, settleWait)
				defer cancel()
				r.keeper.Settle(sctx)
				close(settled)
			}()
			select {
			case <-settled:
			case <-time.After(settleWait):
			}
		}
		return coord.Errorf(coord.CodeLost, "run: lost task %s while %s ran: %s; it was stopped", id, r.argv[0], out.lost).
			WithHint("stop working on it; run 'coord run' again for another task")
	}
	// A signal before the release begins means CMD did not finish, however
	// it exited: the task is handed back, never marked done.
	if out.sig != nil {
		return e.handBack(ctx, svc, ref, out.sig)
	}
	if code, ok := cmdExit(out.status); ok && code == GiveBackExit {
		// CMD says the task is not its to finish: it goes back to the
		// pool as a hand-back does.
		got, err := svc.HandBack(ctx, ref, fmt.Sprintf("%s exited %d: given back", r.argv[0], GiveBackExit))
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "coord: run: gave %s back (%s)\n", id, got.Status)
		return nil
	}
	if out.status != "exit 0" {
		return r.blockAfterRun(ctx, ref, out.reason())
	}
	if err := r.verifyIfRequired(a, t); err != nil {
		return r.refused(ctx, ref, err)
	}
	if left, err := svc.LeftUncommitted(ctx, id); err != nil {
		return err
	} else if len(left) > 0 {
		return r.blockAfterRun(ctx, ref, fmt.Sprintf("%s exited 0 but left uncommitted changes in the worktree (%s): commit them on the task's branch, then release",
			r.argv[0], strings.Join(left, ", ")))
	}
	got, err := svc.Release(ctx, ref, r.c.String("summary"))
	if coord.CodeOf(err) == coord.CodeLost {
		if t := svc.ReleasedBy(ctx, a.ID, id, epoch); t != nil {
			// CMD released it itself (coord release inside run): done.
			fmt.Fprintf(e.stderr, "coord: run: %s was released by %s (%s)\n", id, r.argv[0], t.Status)
			return nil
		}
	}
	if err != nil {
		return r.refused(ctx, ref, err)
	}
	fmt.Fprintf(e.stderr, "coord: run: released %s (%s)\n", id, got.Status)
	return nil
}

// verifyIfRequired runs, under require_verified, the project's check on
// task t before its release when its newest receipt is not for what is
// released (--verify, else land_check, as sh -c in the worktree; none
// given: nothing runs, and the release says what is missing). A failed
// check is an error (the release is not made).
func (r *runner) verifyIfRequired(a coord.Agent, t *coord.Task) error {
	cfg := r.svc.Config()
	if !cfg.RequireVerified {
		return nil
	}
	check := r.c.String("verify")
	if check == "" {
		check = cfg.LandCheck
	}
	if check == "" {
		return nil
	}
	if ok, err := r.svc.Verified(context.WithoutCancel(r.e.ctx), a, t.ID); err != nil || ok {
		return err
	}
	argv := []string{"sh", "-c", check}
	path, err := exec.LookPath("sh")
	if err != nil {
		return strErr("run: sh: command not found")
	}
	_, rec, err := r.e.verify(r.svc, a, t.ID, argv, path, r.grace, r.sigs)
	if err != nil {
		return err
	}
	if !rec.Passed() {
		return coord.Errorf(coord.CodeConflict, "the check %q failed on task %s (exit %d): %s", check, t.ID, rec.Exit, clipText(rec.Tail, 300))
	}
	return nil
}

// GiveBackExit is the exit status by which CMD gives its task back to
// the pool unfinished (EX_TEMPFAIL: not now, not by me): run hands the
// task back, as on_stale says, and a loop goes on.
const GiveBackExit = 75

// cmdExit is CMD's own exit status in the supervisor's report.
func cmdExit(status string) (int, bool) {
	kind, arg, _ := strings.Cut(status, " ")
	n, err := strconv.Atoi(arg)
	return n, kind == "exit" && err == nil
}

// refused handles a release run could not make: a task it still holds is
// blocked with the refusal as its reason (so the loop moves on and a
// person sees why); one it no longer holds (lost) is reported as lost.
func (r *runner) refused(ctx context.Context, ref app.TaskRef, err error) error {
	if coord.CodeOf(err) == coord.CodeLost || coord.CodeOf(err) == coord.CodeInterrupted {
		return err
	}
	if _, herr := r.svc.Holds(ctx, ref); herr != nil {
		return err
	}
	return r.blockAfterRun(ctx, ref, "release refused: "+coord.OneLine(err.Error()))
}

// taskEnv is the environment CMD works on task t in (run, verify): the
// task, its epoch, the agent and the project root, and a task a
// reviewer sent back gives its review notes in COORD_REVIEW_NOTES (an
// inherited one removed).
func (e *env) taskEnv(a coord.Agent, t *coord.Task) []string {
	env := append(withoutEnv(os.Environ(), coord.EnvReviewNotes), coord.EnvTask+"="+t.ID, coord.EnvEpoch+"="+strconv.FormatInt(t.Epoch, 10),
		coord.EnvAgent+"="+a.ID, coord.EnvRoot+"="+e.root)
	if t.ReviewNotes != "" { // work a reviewer sent back: what to change
		env = append(env, coord.EnvReviewNotes+"="+t.ReviewNotes)
	}
	return env
}

// review runs CMD on a review routed to the agent (COORD_REVIEW=1 in its
// environment): CMD exits 0 and run approves the task; CMD fails and run
// rejects it, the reason being its exit status and last stderr line; a
// CMD that approved or rejected the task itself leaves nothing to do. A
// signal gives the review back to the queue (exit 130).
func (r *runner) review(a coord.Agent, t *coord.Task) error {
	e, svc := r.e, r.svc
	id := t.ID
	fmt.Fprintf(e.stderr, "coord: run: reviewing %s (claimed by %s)\n", id, t.ClaimedBy)
	ctx := context.WithoutCancel(e.ctx)
	giveBack := func(sig os.Signal) error {
		why := "interrupted by " + signalName(sig)
		if _, err := svc.GiveBack(ctx, a.ID, id, why); err != nil && coord.CodeOf(err) != coord.CodeLost {
			return err
		}
		fmt.Fprintf(e.stderr, "coord: run: gave review of %s back\n", id)
		return &coord.Error{Code: coord.CodeInterrupted, Msg: fmt.Sprintf("run: %s; review of task %s was not finished", why, id)}
	}
	if sig := pendingSignal(e.ctx, r.sigs); sig != nil {
		return giveBack(sig)
	}
	env := append(os.Environ(), coord.EnvTask+"="+id, coord.EnvEpoch+"="+strconv.FormatInt(t.Epoch, 10),
		coord.EnvAgent+"="+a.ID, coord.EnvRoot+"="+e.root, coord.EnvReview+"=1")
	out, err := r.supervise(env, a.ID, app.TaskRef{})
	if err != nil {
		out = runOutcome{status: "error " + err.Error()}
	}
	if out.sig != nil {
		return giveBack(out.sig)
	}
	var got *coord.Task
	verb := "approved"
	if out.status == "exit 0" {
		got, err = svc.Approve(ctx, app.ApproveRequest{Agent: a.ID, TaskID: id})
	} else {
		verb = "rejected"
		got, err = svc.Reject(ctx, a.ID, id, out.reason())
	}
	if coord.CodeOf(err) == coord.CodeConflict {
		// Decided meanwhile (by CMD itself, or by someone else).
		fmt.Fprintf(e.stderr, "coord: run: review of %s already decided\n", id)
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "coord: run: %s %s (%s)\n", verb, id, got.Status)
	return nil
}

// runOutcome is how a supervised CMD ended.
type runOutcome struct {
	status string    // the supervisor's report: "exit N", "signal N", "error …"
	sig    os.Signal // the first stop signal run got meanwhile (or just after)
	lost   string    // why the task was lost, when it was
	tail   string    // CMD's last stderr line
}

// reason words a failed CMD for a block or a reject.
func (o runOutcome) reason() string {
	reason := exitReason(o.status)
	if o.tail != "" {
		reason += ": " + clipText(o.tail, 200)
	}
	return reason
}

// supervise runs CMD under the run supervisor. With a task (the keeper
// keeps it), CMD is stopped when the keeper reports it lost or fenced; without
// one (a review), run beats for agent every beat itself. Signals to run
// go to CMD's process group, and SIGKILL follows after grace.
func (r *runner) supervise(env []string, agent string, task app.TaskRef) (runOutcome, error) {
	e := r.e
	ctx := context.WithoutCancel(e.ctx)
	stdout, stderr := e.stdout, e.stderr
	if r.output != nil {
		stdout, stderr = io.MultiWriter(stdout, r.output), io.MultiWriter(stderr, r.output)
	}
	errTail := &lastLine{w: stderr}
	g, err := startSupervised(r.dir, r.path, r.argv, env, rawStdin(e.stdin), stdout, errTail)
	if err != nil {
		return runOutcome{}, err
	}
	var out runOutcome
	done := make(chan struct{})
	go func() {
		out.status = g.wait()
		close(done)
	}()
	var beat <-chan time.Time
	if task.TaskID == "" {
		tick := time.NewTicker(r.every)
		defer tick.Stop()
		beat = tick.C
	}
	var graceC <-chan time.Time // after a signal or a loss: CMD's time to stop
	stopIn := func() {
		if graceC == nil {
			graceC = time.After(r.grace)
		}
	}
loop:
	for {
		select {
		case <-done:
			break loop
		case s := <-r.sigs:
			if out.sig == nil {
				out.sig = s
			}
			g.signal(s) // to CMD's whole process group
			stopIn()
		case <-graceC:
			g.kill()
		case <-beat:
			r.svc.Beat(ctx, agent, nil)
		case l := <-r.lost:
			if l.id != task.TaskID || l.epoch != task.Epoch || out.sig != nil || out.lost != "" {
				continue
			}
			out.lost = l.why
			g.signal(syscall.SIGTERM)
			stopIn()
		}
	}
	if out.sig == nil && out.lost == "" {
		out.sig = pendingSignal(e.ctx, r.sigs)
	}
	out.tail = errTail.Last()
	return out, nil
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

// exitReason words the supervisor's report of how CMD ended.
func exitReason(status string) string {
	kind, arg, _ := strings.Cut(status, " ")
	n, _ := strconv.Atoi(arg)
	switch kind {
	case "exit":
		return "exit status " + arg
	case "signal":
		return "killed by " + check.SignalName(syscall.Signal(n))
	case "error":
		return "could not start: " + arg
	}
	return status
}

// blockAfterRun blocks the task CMD failed on and returns the conflict
// that says so (exit 3).
func (r *runner) blockAfterRun(ctx context.Context, ref app.TaskRef, reason string) error {
	if _, err := r.svc.Block(ctx, ref, reason); err != nil {
		return err
	}
	return coord.Errorf(coord.CodeConflict, "run: task %s blocked: %s", ref.TaskID, reason).
		WithHint("fix the cause, then 'coord unblock %s' (back to the pool, you first)", ref.TaskID)
}
