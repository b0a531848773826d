package gitrepo

import (
	"context"
	"strings"
)

// Contains reports whether into already holds everything commit
// changed: merging commit into into (git merge-tree --write-tree, which
// touches no worktree and no ref) cleanly yields into's own tree. It is
// true when commit is an ancestor of into, and also when its changes
// reached into another way (a squash or rebase merge, a cherry-pick)
// and nothing since changed the same lines. A conflict, or any change
// the merge would add, is false. It needs git 2.38 or later (an older
// git's error is returned).
func (r *Repo) Contains(ctx context.Context, into, commit string) (bool, error) {
	out, err := r.run(ctx, r.dir, "merge-tree", "--write-tree", "--no-messages", "--end-of-options", into, commit)
	if err != nil {
		if exitCode(err) == 1 { // conflicts: not held as it is
			return false, nil
		}
		return false, err
	}
	merged, _, _ := strings.Cut(string(out), "\n")
	return r.isTreeOf(ctx, strings.TrimSpace(merged), into)
}

// isTreeOf reports whether tree, a clean merge into into, is into's own
// tree: the merge would change nothing (Contains's rule; the lander's
// Landing.Contains asks it of a merge it made already).
func (r *Repo) isTreeOf(ctx context.Context, tree, into string) (bool, error) {
	out, err := r.run(ctx, r.dir, "rev-parse", "--verify", "--quiet", "--end-of-options", into+"^{tree}")
	if err != nil {
		return false, err
	}
	return tree == line(out), nil
}
