package gitrepo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Worktree is one working tree of a repository, as git worktree list
// names it.
type Worktree struct {
	Path     string // its top directory
	Head     string // the commit checked out ("" in a bare repository)
	Branch   string // the branch checked out (short name; "" when detached)
	Bare     bool
	Detached bool
	Locked   bool
	Prunable bool // its directory is gone: git worktree prune would drop it
}

// Worktrees lists the repository's working trees, the main one first.
func (r *Repo) Worktrees(ctx context.Context) ([]Worktree, error) {
	out, err := r.run(ctx, r.dir, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	return ParseWorktrees(out), nil
}

// ParseWorktrees reads git worktree list --porcelain -z: records of
// NUL-terminated "key value" lines, each record ended by an empty line.
// Unknown keys are skipped; it accepts any input without panicking.
func ParseWorktrees(out []byte) []Worktree {
	var list []Worktree
	var cur *Worktree
	for _, l := range strings.Split(string(out), "\x00") {
		if l == "" {
			cur = nil
			continue
		}
		key, val, _ := strings.Cut(l, " ")
		if key == "worktree" {
			list = append(list, Worktree{Path: val})
			cur = &list[len(list)-1]
			continue
		}
		if cur == nil {
			continue
		}
		switch key {
		case "HEAD":
			cur.Head = val
		case "branch":
			cur.Branch = strings.TrimPrefix(val, "refs/heads/")
		case "bare":
			cur.Bare = true
		case "detached":
			cur.Detached = true
		case "locked":
			cur.Locked = true
		case "prunable":
			cur.Prunable = true
		}
	}
	return list
}

// AddWorktree makes a linked worktree at path on a new branch started at
// start. The branch is created first, by compare-and-swap from nothing
// (git update-ref BRANCH START ""): a branch that exists refuses the add
// (another add won the race, or the name is taken) and is never touched.
// When git then fails to make the worktree (a path that exists, a
// directory it cannot write), the branch this call created is deleted
// again, only if it is still where it was made: a failed add leaves
// nothing that would refuse the next try, and never deletes a branch it
// did not make.
func (r *Repo) AddWorktree(ctx context.Context, path, branch, start string) error {
	ref := "refs/heads/" + branch
	if _, err := r.run(ctx, r.dir, "update-ref", "-m", "coord worktree add", ref, start, ""); err != nil {
		return fmt.Errorf("a branch named %q already exists: %w", branch, err)
	}
	_, err := r.run(ctx, r.dir, "worktree", "add", "--quiet", "--end-of-options", path, branch)
	if err != nil {
		r.run(context.WithoutCancel(ctx), r.dir, "update-ref", "-d", ref, start)
	}
	return err
}

// RemoveWorktree removes the linked worktree at path (its directory and
// git's record of it); git refuses a worktree with changes unless force.
func (r *Repo) RemoveWorktree(ctx context.Context, path string, force bool) error {
	args := []string{"worktree", "remove"}
	if force {
		args = append(args, "--force", "--force") // twice: a locked one too
	}
	_, err := r.run(ctx, r.dir, append(args, "--end-of-options", path)...)
	return err
}

// OnlyHere lists the commits the worktree at path has checked out that no
// branch holds (made on a detached HEAD, or by a rebase under way), at
// most max (0: all), each "<short id> <subject>", newest first: work
// that removing the worktree would lose.
func (r *Repo) OnlyHere(ctx context.Context, path string, max int) ([]string, error) {
	if _, err := r.Head(ctx, "HEAD"); err != nil {
		return nil, nil // an unborn branch: nothing committed
	}
	return r.oneLines(ctx, path, max, "HEAD", "--not", "--branches")
}

// InProgress names the operation under way in the worktree at path ("a
// rebase", "a merge", "a cherry-pick", "a revert", "a bisect"), or "".
func (r *Repo) InProgress(ctx context.Context, path string) (string, error) {
	out, err := r.run(ctx, path, "rev-parse", "--path-format=absolute", "--git-dir")
	if err != nil {
		return "", err
	}
	dir := line(out)
	for _, op := range []struct{ file, what string }{
		{"rebase-merge", "a rebase"}, {"rebase-apply", "a rebase"}, {"MERGE_HEAD", "a merge"},
		{"CHERRY_PICK_HEAD", "a cherry-pick"}, {"REVERT_HEAD", "a revert"}, {"BISECT_LOG", "a bisect"},
	} {
		if _, err := os.Lstat(filepath.Join(dir, op.file)); err == nil {
			return op.what, nil
		}
	}
	return "", nil
}

// CreateBranch makes branch (its short name) at commit, only when no
// branch of that name exists (compare-and-swap from nothing).
func (r *Repo) CreateBranch(ctx context.Context, branch, commit string) error {
	_, err := r.run(ctx, r.dir, "update-ref", "-m", "coord", "refs/heads/"+branch, commit, "")
	return err
}
