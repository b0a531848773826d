package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/rotd/coordination/coord/plan"
)

// Timeouts bound each git run: a log of thousands of commits takes well
// under a second; anything near these is a repository on a dead mount.
const (
	shortTimeout = 10 * time.Second
	logTimeout   = 60 * time.Second
)

// ErrNoRepo is returned when dir is not inside a git work tree (or holds
// no commit yet): there is no history to learn from.
var ErrNoRepo = errors.New("gitrepo: not a git repository with commits")

// Head returns the commit HEAD names, or ErrNoRepo.
func Head(ctx context.Context, dir string) (string, error) {
	out, err := Run(ctx, shortTimeout, dir, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", err
		}
		return "", fmt.Errorf("%w (%s)", ErrNoRepo, dir)
	}
	return strings.TrimSpace(string(out)), nil
}

// Log returns the commits reachable from head and not from since (all of
// them when since is ""), oldest first, at most max of the newest (0: no
// bound).
func Log(ctx context.Context, dir, since, head string, max int) ([]plan.Commit, error) {
	args := []string{"log", "-z", "--name-status", "-M", "--no-relative", "--no-color", "--no-ext-diff",
		"--no-show-signature", "--topo-order", "--reverse", logFormat}
	if max > 0 {
		args = append(args, "-n", strconv.Itoa(max))
	}
	rng := head
	if since != "" {
		rng = since + ".." + head
	}
	args = append(args, rng, "--")
	out, err := Run(ctx, logTimeout, dir, args...)
	if err != nil {
		return nil, err
	}
	cs, err := Parse(bytes.NewReader(out))
	if err != nil {
		return nil, fmt.Errorf("%w (git log in %s)", err, dir)
	}
	return cs, nil
}

// Tree returns the paths of the tree at head.
func Tree(ctx context.Context, dir, head string) ([]string, error) {
	out, err := Run(ctx, shortTimeout, dir, "ls-tree", "-r", "-z", "--name-only", "--full-tree", head)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// isAncestor reports whether a is an ancestor of b (or b itself).
func isAncestor(ctx context.Context, dir, a, b string) bool {
	_, err := Run(ctx, shortTimeout, dir, "merge-base", "--is-ancestor", a, b)
	return err == nil
}

// Refresh brings ix up to the repository's HEAD: it reads only the
// commits since ix.Head when that is an ancestor of HEAD, and the whole
// history (at most ix's bound) otherwise. It returns HEAD and whether the
// index changed.
func Refresh(ctx context.Context, dir string, ix *plan.Index) (head string, changed bool, err error) {
	head, err = Head(ctx, dir)
	if err != nil {
		return "", false, err
	}
	if head == ix.Head {
		return head, false, nil
	}
	if ix.Head != "" && isAncestor(ctx, dir, ix.Head, head) {
		cs, err := Log(ctx, dir, ix.Head, head, ix.Limit())
		if err != nil {
			return "", false, err
		}
		ix.Update(head, cs)
		return head, true, nil
	}
	cs, err := Log(ctx, dir, "", head, ix.Limit())
	if err != nil {
		return "", false, err
	}
	*ix = plan.Index{Max: ix.Max}
	ix.Update(head, cs)
	return head, true, nil
}
