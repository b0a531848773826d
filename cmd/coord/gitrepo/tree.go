package gitrepo

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// TreeTimeout bounds the staging of a worktree into a temporary index
// (WorktreeTree): git hashes every changed and untracked file, which on a
// large worktree takes longer than a ref lookup.
const TreeTimeout = 2 * time.Minute

// WorktreeTree returns the git tree id of the Repo's worktree as it
// stands, its uncommitted changes included: what `git add -A` followed
// by `git write-tree` would give (tracked files as they are on disk,
// deletions, untracked files; ignored files left out, as .gitignore
// says). The real index and the worktree are not touched: git stages
// into a copy of the worktree's index (GIT_INDEX_FILE) in a temporary
// directory, removed after; the copy keeps git's stat cache, so only
// changed files are hashed. The blobs and trees it writes are loose
// objects in the repository, as git stash writes them (its gc prunes
// them). A split index (core.splitIndex) is not copied with its shared
// part: git then hashes the whole worktree, slower but the same tree.
func (r *Repo) WorktreeTree(ctx context.Context) (string, error) {
	top, err := r.Top(ctx)
	if err != nil {
		return "", err
	}
	out, err := r.run(ctx, top, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return "", err
	}
	index := line(out)
	tmp, err := os.MkdirTemp("", "coord-tree-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	copyIndex := filepath.Join(tmp, "index")
	data, err := os.ReadFile(index)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// no index yet (nothing ever staged): start from an empty one
	case err != nil:
		return "", err
	default:
		if err := os.WriteFile(copyIndex, data, 0o600); err != nil {
			return "", err
		}
	}
	env := []string{"GIT_INDEX_FILE=" + copyIndex}
	if _, err := r.runWith(ctx, env, TreeTimeout, top, "add", "--all", "--", "."); err != nil {
		return "", err
	}
	out, err = r.runWith(ctx, env, 0, top, "write-tree")
	if err != nil {
		return "", err
	}
	return line(out), nil
}
