package main

import (
	"errors"
	"io"
	"os/exec"

	"github.com/rotd/coordination/internal/check"
)

// The lander's check runs under coord's run supervisor (lifeline.go),
// as run's and verify's commands do: the supervisor starts the check in
// a process group of its own and kills that group, and on Linux every
// descendant that left it, when the lander's end of the lifeline closes.
// The kernel closes it when the lander dies, SIGKILL included, so a
// killed lander's check never runs on (its side effects included) while
// the next lander removes the worktree it runs in.

// superviseCheck is the lander's check.Starter.
func superviseCheck(dir string, argv, env []string, out io.Writer) (check.Proc, error) {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, err
	}
	g, err := startSupervised(dir, path, argv, env, nil, out, out)
	if err != nil {
		return nil, err
	}
	return supervisedCheck{g}, nil
}

// supervisedCheck is a check under its supervisor.
type supervisedCheck struct{ g *supervised }

// Kill shuts the lifeline: the supervisor kills the check's group.
func (c supervisedCheck) Kill() { c.g.kill() }

// Wait returns how the check ended, from the supervisor's report; an
// error when it could not start or the supervisor itself died.
func (c supervisedCheck) Wait() (check.Status, error) {
	st, text := check.ExitOf(c.g.wait())
	if st.Exit == 127 && st.Signal == 0 && text != "" {
		return st, errors.New(text)
	}
	return st, nil
}
