package gitrepo

import (
	"context"
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
// start (git worktree add -b branch path start). When git fails after
// making the branch (a path that exists, a directory it cannot write),
// the branch it made is deleted again: a failed add leaves nothing that
// would refuse the next try.
func (r *Repo) AddWorktree(ctx context.Context, path, branch, start string) error {
	ref := "refs/heads/" + branch
	_, had := r.Head(ctx, ref)
	_, err := r.run(ctx, r.dir, "worktree", "add", "--quiet", "-b", branch, "--end-of-options", path, start)
	if err != nil && had != nil {
		if tip, herr := r.Head(ctx, ref); herr == nil && strings.HasPrefix(tip, start) {
			r.run(ctx, r.dir, "update-ref", "-d", ref, tip)
		}
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
