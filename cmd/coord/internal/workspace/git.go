package workspace

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/internal/gitrepo"
)

// git runs git in dir through the one runner (package gitrepo).
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return gitrepo.Run(ctx, 0, dir, args...)
}

// Staged lists the project paths of the caller's staged change:
// every path the commit would add, change or delete (renames as both
// names), from the caller's worktree, whatever its subdirectory. Paths
// outside the project (the root being a subdirectory of the repository)
// cannot be locked and are left out.
//
// During a merge of the target branch (or of a commit it holds) into the
// worktree's branch, target names it (a full ref name; "": no such
// judgement): a path whose staged content is the merged-in side's is the
// target's change, not the caller's write, and is left out. What the
// caller resolved differently from both sides stays in.
func Staged(ctx context.Context, cwd string, m *Paths, target string) ([]string, error) {
	out, err := git(ctx, cwd, "rev-parse", "--show-toplevel")
	if errors.Is(err, exec.ErrNotFound) {
		return nil, coord.Errorf(coord.CodeIO, "guard: %v", err).WithHint("guard reads the staged change with git: install git or put it on PATH")
	}
	if err != nil {
		return nil, coord.Errorf(coord.CodeIO, "guard: git rev-parse --show-toplevel in %s failed: %v", cwd, err).WithHint("run guard inside a git work tree")
	}
	top := strings.TrimSuffix(string(out), "\n")
	// --relative= (empty) names paths from the top even where the user's
	// config sets diff.relative; --no-renames lists a renamed file's old
	// name too (a locked file moved away is still a locked file changed).
	out, err = git(ctx, top, "diff", "--cached", "--name-only", "-z", "--no-renames", "--relative=")
	if err != nil {
		return nil, coord.Errorf(coord.CodeIO, "guard: git diff --cached in %s failed: %v", top, err).WithHint("run guard inside a git work tree")
	}
	staged := nulSplit(out)
	if target != "" {
		if staged, err = fromTheTarget(ctx, top, target, staged); err != nil {
			return nil, err
		}
	}
	return m.FromGit(top, staged), nil
}

// fromTheTarget leaves out of staged (paths from top) those whose staged
// content equals MERGE_HEAD's, when a merge is under way whose other
// side the target already holds; staged is returned as it is otherwise.
func fromTheTarget(ctx context.Context, top, target string, staged []string) ([]string, error) {
	out, err := git(ctx, top, "rev-parse", "-q", "--verify", "MERGE_HEAD^{commit}")
	if err != nil || len(staged) == 0 {
		return staged, nil // no merge under way
	}
	merging := strings.TrimSpace(string(out))
	if _, err := git(ctx, top, "merge-base", "--is-ancestor", "--end-of-options", merging, target); err != nil {
		return staged, nil // another branch's work: every staged path counts
	}
	out, err = git(ctx, top, "diff", "--cached", "--name-only", "-z", "--no-renames", "--relative=", merging, "--")
	if err != nil {
		return nil, coord.Errorf(coord.CodeIO, "guard: git diff --cached MERGE_HEAD in %s failed: %v", top, err)
	}
	own := map[string]bool{}
	for _, p := range nulSplit(out) {
		own[p] = true
	}
	kept := staged[:0:0]
	for _, p := range staged {
		if own[p] {
			kept = append(kept, p)
		}
	}
	return kept, nil
}

func nulSplit(out []byte) []string {
	var list []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			list = append(list, p)
		}
	}
	return list
}

// FromGit maps paths as git names them in the worktree whose top is top
// (relative to it, '/'-separated) to project paths, leaving out those
// outside the project (the root being a subdirectory of the repository).
// An entry is itself: git never records a path beyond a symbolic link,
// and a changed link to a folder is a change of the link.
func (m *Paths) FromGit(top string, paths []string) []string {
	var out []string
	for _, p := range paths {
		rp, err := m.repoPath(filepath.Join(top, filepath.FromSlash(p)), false)
		if err != nil {
			continue
		}
		out = append(out, rp)
	}
	return out
}

// Branch is the branch checked out in the worktree at top (what `agents
// register` records by default), or "" outside git, on a detached HEAD,
// or if git is missing or slow.
func Branch(ctx context.Context, top string) string {
	out, err := git(ctx, top, "symbolic-ref", "--short", "-q", "HEAD")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
