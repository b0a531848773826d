package main

import (
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"

	"github.com/rotd/coordination/internal/gitrepo"
)

// The lander's check runs under coord's run supervisor (supervise.go),
// as run's and verify's commands do: the supervisor starts the check in
// a process group of its own and kills that group, and on Linux every
// descendant that left it, when the lander's end of the lifeline closes.
// The kernel closes it when the lander dies, SIGKILL included, so a
// killed lander's check never runs on (its side effects included) while
// the next lander removes the worktree it runs in.

// superviseCheck is the lander's gitrepo.Starter.
func superviseCheck(dir string, argv, env []string, out io.Writer) (gitrepo.Proc, error) {
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

// Wait returns the check's exit status from the supervisor's report:
// its own, or -1 when a signal ended it; an error when it could not
// start or the supervisor itself died.
func (c supervisedCheck) Wait() (int, error) {
	st := c.g.wait()
	kind, arg, _ := strings.Cut(st, " ")
	n, err := strconv.Atoi(arg)
	switch {
	case kind == "exit" && err == nil:
		return n, nil
	case kind == "signal" && err == nil:
		return -1, nil
	}
	return -1, fmt.Errorf("%s", exitReason(st))
}
