// Package check runs a check: a command whose exit status judges work
// (coord verify's command, the lander's land check). It owns what both
// share: how the process is started (a Starter; by default in a process
// group of its own, killed whole), the bound on its time, the tail of
// its output kept for a note (Tail), and one exit convention (ExitOf):
// the command's own status, 128+N when signal N ended it, 127 when it
// could not start, as a shell reports them.
package check

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Result is what one run of a check gave.
type Result struct {
	// Exit is its exit status as a shell reports it: its own, 128+N when
	// signal N ended it (a timed-out check is killed: 128+9).
	Exit int
	// Signal is the signal that ended it (0: it exited by itself).
	Signal syscall.Signal
	// TimedOut says it ran longer than its timeout and was killed.
	TimedOut bool
	// Tail is the last lines of its output (stdout and stderr).
	Tail string
	// Took is how long it ran.
	Took time.Duration
}

// Passed reports whether the check passed: exit 0.
func (r Result) Passed() bool { return r.Exit == 0 && r.Signal == 0 && !r.TimedOut }

// How words how it ended for a note: "exited 3", "was killed by
// SIGKILL (signal 9)", "ran out of time".
func (r Result) How() string {
	switch {
	case r.TimedOut:
		return "ran out of time"
	case r.Signal != 0:
		return "was killed by " + SignalName(r.Signal)
	}
	return fmt.Sprintf("exited %d", r.Exit)
}

// Starter starts a check's process: argv in dir with env (the whole
// environment), its standard output and error going to out (stdin
// empty). A Starter that makes it die with its caller (coord's run
// supervisor, which the lander uses) keeps a killed lander's check from
// running on.
type Starter func(dir string, argv, env []string, out io.Writer) (Proc, error)

// Proc is a check's process as its Starter started it.
type Proc interface {
	// Kill stops it and everything it started, at once.
	Kill()
	// Wait waits for it to end and says how: ExitOf's convention.
	Wait() (Status, error)
}

// Status is how a process ended: its exit status, or the signal that
// ended it.
type Status struct {
	Exit   int
	Signal syscall.Signal
}

// Run runs argv in dir with env (the whole environment), started by
// start (nil: StartGroup), bounded by timeout (the process and what it
// started are killed at the end), keeping at most tail bytes of its
// output. err is for a check that could not start, or ctx's end.
func Run(ctx context.Context, start Starter, dir string, argv, env []string, timeout time.Duration, tail int) (Result, error) {
	if start == nil {
		start = StartGroup
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out := NewTail(tail)
	begun := time.Now()
	p, err := start(dir, argv, env, out)
	if err != nil {
		return Result{}, err
	}
	type ended struct {
		st  Status
		err error
	}
	done := make(chan ended, 1)
	go func() { st, err := p.Wait(); done <- ended{st, err} }()
	var end ended
	select {
	case end = <-done:
	case <-cctx.Done():
		p.Kill()
		end = <-done
	}
	r := Result{Exit: end.st.Exit, Signal: end.st.Signal, Took: time.Since(begun), Tail: out.String()}
	if end.err != nil && r.Signal == 0 && r.Exit == 0 {
		r.Exit = 127
	}
	if r.Signal != 0 {
		r.Exit = 128 + int(r.Signal)
	}
	if cctx.Err() != nil {
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		r.TimedOut = true
		if r.Signal == 0 {
			r.Signal, r.Exit = syscall.SIGKILL, 128+int(syscall.SIGKILL)
		}
	}
	return r, nil
}

// StartGroup is the default Starter: argv in a process group of its
// own, killed whole by Kill. A check so started survives its caller's
// death; the lander uses coord's run supervisor instead.
func StartGroup(dir string, argv, env []string, out io.Writer) (Proc, error) {
	c := exec.Command(argv[0], argv[1:]...)
	c.Dir, c.Env = dir, env
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Stdout, c.Stderr = out, out
	if err := c.Start(); err != nil {
		return nil, err
	}
	return groupProc{c}, nil
}

type groupProc struct{ c *exec.Cmd }

func (g groupProc) Kill() { syscall.Kill(-g.c.Process.Pid, syscall.SIGKILL) }

func (g groupProc) Wait() (Status, error) {
	err := g.c.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return Status{}, nil
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return Status{Signal: ws.Signal()}, nil
		}
		return Status{Exit: ee.ExitCode()}, nil
	}
	return Status{Exit: 127}, err
}

// ExitOf reads a supervisor's report of how a command ended ("exit N",
// "signal N", "error …") as Status, with the shell's code in Exit (N,
// 128+N, 127 when it could not start) and, when there is more to say
// than the code, a text for people ("killed by SIGKILL (signal 9)",
// "could not start: …").
func ExitOf(report string) (Status, string) {
	kind, arg, _ := strings.Cut(report, " ")
	n, err := strconv.Atoi(arg)
	switch {
	case kind == "exit" && err == nil && n >= 0 && n <= 255:
		return Status{Exit: n}, ""
	case kind == "signal" && err == nil && n > 0 && n < 128:
		return Status{Exit: 128 + n, Signal: syscall.Signal(n)}, "killed by " + SignalName(syscall.Signal(n))
	case kind == "error":
		return Status{Exit: 127}, "could not start: " + arg
	}
	return Status{Exit: 127}, report
}

// SignalName names signal n for people: "SIGKILL (signal 9)".
func SignalName(n syscall.Signal) string {
	if name := unix.SignalName(n); name != "" {
		return fmt.Sprintf("%s (signal %d)", name, int(n))
	}
	return fmt.Sprintf("signal %d", int(n))
}
