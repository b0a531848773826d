package main

import (
	"context"
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

	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/coord/app"
	"github.com/urfave/cli/v2"
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
	if _, err := e.open(); err != nil {
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
	task, agent, drained, err := e.claimTask(c)
	if err != nil {
		return err
	}
	if task == nil {
		if drained {
			return e.printRaw([]byte(`{"status":"drained"}`))
		}
		return e.printRaw([]byte(`{"status":"no_eligible_task"}`))
	}
	id, epoch := task.ID, task.Epoch
	fmt.Fprintf(e.stderr, "coord: run: claimed %s (epoch %d)\n", id, epoch)
	ctx := context.WithoutCancel(e.ctx) // what follows the claim runs to its end
	if sig := pendingSignal(e.ctx, sigs); sig != nil {
		return e.handBack(ctx, c, agent, id, epoch, sig) // signalled during the claim: CMD never starts
	}

	env := append(os.Environ(), "COORD_TASK="+id, "COORD_EPOCH="+strconv.FormatInt(epoch, 10),
		"COORD_AGENT="+agent, "COORD_ROOT="+e.root)
	errTail := &lastLine{w: e.stderr}
	g, err := startGuarded(path, argv, env, rawStdin(e.stdin), e.stdout, errTail)
	if err != nil {
		return e.blockAfterRun(ctx, agent, id, epoch, "could not start: "+err.Error())
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
			e.beats().Beat(ctx, agent, nil)
			if sig != nil || lost != "" {
				continue
			}
			if why := e.stillHolds(ctx, agent, id, epoch); why != "" {
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
		return e.handBack(ctx, c, agent, id, epoch, sig)
	}
	if status == "exit 0" {
		summary := c.String("summary")
		if !c.IsSet("summary") {
			summary = gitSummary(ctx, e.repoMap().WorkTop())
		}
		var got *coord.Task
		err := e.store.Tasks().Update(ctx, func(tx *coord.Txn) error {
			t, err := tx.Release(agent, id, epoch, summary, e.cfg.ReviewGate)
			got = t
			return err
		})
		if err != nil {
			return err
		}
		e.beats().Beat(ctx, agent, e.agentInfo(c, nil))
		fmt.Fprintf(e.stderr, "coord: run: released %s (%s)\n", id, got.Status)
		return nil
	}
	reason := exitReason(status)
	if tail := errTail.Last(); tail != "" {
		reason += ": " + clipText(tail, 200)
	}
	return e.blockAfterRun(ctx, agent, id, epoch, reason)
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

// handBack gives up the task after a signal to run (coord.Txn.HandBack:
// as the stale sweep would under on_stale, at once) and returns the
// interrupted error (exit 130).
func (e *env) handBack(ctx context.Context, c *cli.Context, agent, id string, epoch int64, sig os.Signal) error {
	why := "interrupted by " + signalName(sig)
	var got *coord.Task
	err := e.store.Tasks().Update(ctx, func(tx *coord.Txn) error {
		t, err := tx.HandBack(agent, id, epoch, why, e.cfg.OnStale)
		got = t
		return err
	})
	switch {
	case err == nil:
		e.beats().Beat(ctx, agent, e.agentInfo(c, nil)) // its path locks went with it (coord.Txn.HandBack)
		fmt.Fprintf(e.stderr, "coord: run: handed back %s (%s)\n", id, got.Status)
	case coord.CodeOf(err) != coord.CodeLost: // lost: someone else has it already
		return err
	}
	return &coord.Error{Code: coord.CodeInterrupted, Msg: fmt.Sprintf("run: %s; task %s was not finished", why, id)}
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

func (e *env) blockAfterRun(ctx context.Context, agent, id string, epoch int64, reason string) error {
	err := e.store.Tasks().Update(ctx, func(tx *coord.Txn) error {
		_, err := tx.Block(agent, id, epoch, reason)
		return err
	})
	if err != nil {
		return err
	}
	return coord.Errorf(coord.CodeConflict, "run: task %s blocked: %s", id, reason).
		WithHint("fix the cause, then 'coord unblock %s' and run again", id)
}

// stillHolds returns "" while agent holds id at epoch, else why not.
func (e *env) stillHolds(ctx context.Context, agent, id string, epoch int64) string {
	why := ""
	err := e.store.Tasks().View(ctx, func(tx *coord.Txn) error {
		t := tx.Task(id)
		switch {
		case t == nil:
			why = "the task is gone"
		case t.ClaimedBy != agent || !t.HoldsLock():
			why = "it is now " + string(t.Status) + " by " + orDash(t.ClaimedBy)
		case t.Epoch != epoch:
			why = fmt.Sprintf("it was reclaimed (epoch %d, ours %d)", t.Epoch, epoch)
		}
		return nil
	})
	if err != nil {
		return "" // cannot tell: keep working, check again next beat
	}
	return why
}

func orDash(s string) string {
	if s == "" {
		return "nobody"
	}
	return s
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
	d, err := parseDuration(c.String(name))
	if err != nil || d <= 0 {
		return 0, strErr("--%s %q is not a positive duration like 30s", name, c.String(name))
	}
	return d, nil
}

// cmdWait blocks until this agent has an eligible task, or the named task
// changes state, or no work is left at all ({"status":"drained"}, exit
// 0). File-system notification on the coordination directory wakes it
// (the registry is replaced by rename, so the directory is watched, not
// the file); a one-second poll is the fallback. While it waits it beats
// for its agent every beat_interval, and frees stale locks when the
// snapshot it reads anyway shows one (unless sweep_on_claim is false), so
// a task held by a dead agent comes free without a watcher.
func (e *env) cmdWait(c *cli.Context) error {
	if c.NArg() > 0 {
		return strErr("wait takes no arguments (use --task ID)")
	}
	timeout, err := durFlag(c, "timeout", 0)
	if err != nil {
		return err
	}
	skill, err := coord.ParseSkillFilter(c.String("skill-level"))
	if err != nil {
		return err
	}
	taskID := c.String("task")
	if taskID != "" {
		if err := coord.ValidTaskID(taskID); err != nil {
			return err
		}
	}
	s, agent, err := e.openAs()
	if err != nil {
		return err
	}
	a := coord.Agent{ID: agent, Caps: e.caps(c), Skill: skill}
	beats := e.beats()
	if err := beats.Beat(e.ctx, agent, nil); err != nil {
		return err
	}
	lastBeat := e.clock()
	initial := ""
	look := func() (out string, stale bool, err error) {
		err = s.Tasks().View(e.ctx, func(tx *coord.Txn) error {
			if taskID != "" {
				t := tx.Task(taskID)
				if t == nil {
					return coord.Errorf(coord.CodeConflict, "task %q not found", taskID)
				}
				if initial == "" {
					initial = string(t.Status)
				} else if string(t.Status) != initial {
					out = fmt.Sprintf(`{"task":%q,"status":%q,"was":%q}`, t.ID, t.Status, initial)
					return nil
				}
			}
			if tx.Drained() {
				out = `{"status":"drained"}`
				return nil
			}
			if taskID == "" {
				if best := bestEligible(tx, a); best != nil {
					out = fmt.Sprintf(`{"status":"eligible","task":%q}`, best.ID)
					return nil
				}
			}
			if holders := tx.LockHolders(); e.cfg.SweepOnClaim && len(holders) > 0 {
				seen, now, err := beats.LastSeen(e.ctx, holders)
				stale = len(tx.JudgeStale(seen, now, e.cfg.StaleAfter, e.cfg.OnStale)) > 0
				return err
			}
			return nil
		})
		return out, stale, err
	}
	check := func() (string, error) {
		if now := e.clock(); now.Sub(lastBeat) >= e.cfg.BeatInterval {
			if err := beats.Beat(e.ctx, agent, nil); err != nil {
				return "", err
			}
			lastBeat = now
		}
		out, stale, err := look()
		if err != nil || out != "" || !stale {
			return out, err
		}
		freed, err := e.svc.Sweep(e.ctx, app.SweepRequest{})
		if err != nil || len(freed) == 0 {
			return "", nil // contended or raced: the next check sees it
		}
		out, _, err = look()
		return out, err
	}
	var out string
	err = untilChange(e.ctx, []string{e.dir}, timeout, 20*time.Millisecond, func() (bool, error) {
		var err error
		out, err = check()
		return out != "", err
	})
	switch {
	case err == nil:
		return e.printRaw([]byte(out))
	case errors.Is(err, errWaitTimeout):
		what := "an eligible task"
		if taskID != "" {
			what = "task " + taskID + " to leave " + initial
		}
		return coord.Errorf(coord.CodeConflict, "timed out after %s waiting for %s", timeout, what)
	}
	return err
}

// bestEligible is what claim would take now (by priority), or nil.
func bestEligible(tx *coord.Txn, a coord.Agent) *coord.Task {
	var best *coord.Task
	for _, t := range tx.Tasks {
		if t.Status != coord.Unclaimed || tx.Ineligible(t, a) != "" {
			continue
		}
		if best == nil || t.Priority.Rank() < best.Priority.Rank() {
			best = t
		}
	}
	return best
}

const primeText = `coord: shared task registry for agents in this repo. Exit codes: 0 ok, 1 usage, 2 io, 3 conflict/not eligible, 4 lock timeout, 6 lost (stop working on that task).

Simplest loop: coord run -- <your command>
  claims the best eligible task, sets COORD_TASK/COORD_EPOCH/COORD_AGENT,
  beats while it runs, releases on exit 0, blocks the task (exit 3) on failure,
  stops it and exits 6 if the claim is lost; interrupted (INT/TERM/HUP),
  it hands the task back and exits 130.

By hand:
  coord claim            -> {"id":"4.2",...,"epoch":17} or {"status":"no_eligible_task"}
  coord beat             (at least every few minutes while working; or
                          coord beat --every 60s &, which stops with its parent)
  coord progress 4.2 50 --epoch 17
  coord release 4.2 --epoch 17 --summary "what changed"
  coord block 4.2 --reason "why" --epoch 17

Nothing eligible? coord wait --timeout 10m (exit 0 when there is work;
{"status":"drained"} when no work is left at all: stop then).
A dead agent's task is freed once its heartbeat is older than stale_after
(15m): the next claim, run or wait frees it, as do coord watch/clean-stale.
Before editing shared files: coord lock-file PATH... (exit 3 names the holder).
Identity: --agent ID or COORD_AGENT. Capabilities: --capability a,b.
See also: coord ls, coord ready --explain, coord log -n 20.
`

func (e *env) cmdPrime(c *cli.Context) error {
	_, err := e.stdout.Write([]byte(primeText))
	return err
}
