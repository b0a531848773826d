package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/rotd/coordination/coord"
)

// This file is the one place coord starts git: every run gets the same
// environment and options, a timeout, and a typed error.

// gitEnv keeps git from prompting, from taking optional locks and from
// translating what coord reads.
var gitEnv = []string{"GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C", "LANGUAGE="}

// IsolatedEnv runs git with no user or system configuration and a fixed
// identity, so that a commit works on any machine and nobody's settings
// change a result: for tests, benchmarks and replays, never for a
// user's repository.
var IsolatedEnv = []string{"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
	"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}

// gitOpts come before every command: paths unquoted, no pager.
var gitOpts = []string{"-c", "core.quotePath=false", "--no-pager"}

// Run runs git in dir with args, bounded by timeout (0: Timeout), and
// returns its standard output. A failure is an *Error (git's exit
// status and first line of stderr; ErrNotRepo outside a repository), a
// missing git one CodeIO error naming the fix.
func Run(ctx context.Context, timeout time.Duration, dir string, args ...string) ([]byte, error) {
	return runGit(ctx, nil, timeout, dir, args...)
}

// RunInput is Run with more environment (after the package's own, so a
// caller may add to it) and stdin (nil: none).
func RunInput(ctx context.Context, timeout time.Duration, dir string, env []string, stdin io.Reader, args ...string) ([]byte, error) {
	if timeout <= 0 {
		timeout = Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := Command(ctx, dir, env, args...)
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err == nil {
		return out, nil
	}
	return nil, gitError(ctx, err, timeout, dir, args, stderr.String())
}

// Command is the git command Run would start, for the few callers that
// must stream or feed it (its context bounds it).
func Command(ctx context.Context, dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", append(append([]string{"-C", dir}, gitOpts...), args...)...)
	cmd.Env = append(append(os.Environ(), gitEnv...), env...)
	cmd.WaitDelay = time.Second
	return cmd
}

func runGit(ctx context.Context, env []string, timeout time.Duration, dir string, args ...string) ([]byte, error) {
	return RunInput(ctx, timeout, dir, env, nil, args...)
}

// stream runs git in dir with args, bounded by timeout, and gives its
// standard output to read as it comes; read's error ends the run.
func stream(ctx context.Context, timeout time.Duration, dir string, args []string, read func(io.Reader) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := Command(ctx, dir, nil, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return gitError(ctx, err, timeout, dir, args, "")
	}
	rerr := read(out)
	if rerr != nil {
		cancel()
	}
	io.Copy(io.Discard, out)
	werr := cmd.Wait()
	if rerr != nil {
		return rerr
	}
	if werr != nil {
		return gitError(ctx, werr, timeout, dir, args, stderr.String())
	}
	return nil
}

// gitError makes err of a git run an *Error (or the CodeIO error of a
// missing git).
func gitError(ctx context.Context, err error, timeout time.Duration, dir string, args []string, stderr string) error {
	if errors.Is(err, exec.ErrNotFound) {
		return coord.Wrap(coord.CodeIO, err, "git is not installed or not on PATH").
			WithHint("coord reads where work lives with git: install git or put it on PATH")
	}
	ge := &Error{Args: args, Dir: dir, Code: -1, Err: err}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		ge.Code = ee.ExitCode()
	}
	if ctx.Err() == context.DeadlineExceeded {
		ge.Err = fmt.Errorf("no answer within %v", timeout)
		return ge
	}
	if ctx.Err() != nil {
		ge.Err = ctx.Err()
		return ge
	}
	ge.Stderr, _, _ = strings.Cut(strings.TrimSpace(stderr), "\n")
	if strings.Contains(ge.Stderr, "not a git repository") {
		ge.Err = ErrNotRepo
	}
	return ge
}
