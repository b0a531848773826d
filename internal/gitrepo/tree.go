package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rotd/coordination/fsops"
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
	out, err := r.run(ctx, r.dir, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-path", "index")
	if err != nil {
		return "", err
	}
	ls := outLines(out)
	if len(ls) != 2 || ls[0] == "" || ls[1] == "" {
		return "", fmt.Errorf("gitrepo: rev-parse gave %q", out)
	}
	top, index := ls[0], ls[1]
	r.learn(top, "")
	tmp, err := os.MkdirTemp("", "coord-tree-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	copyIndex := filepath.Join(tmp, "index")
	data, err := fsops.ReadFile(index, maxIndex)
	var mtime time.Time
	if err == nil {
		var fi fs.FileInfo
		if fi, err = os.Stat(index); err == nil {
			mtime = fi.ModTime()
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// no index yet (nothing ever staged): start from an empty one
	case err != nil:
		return "", err
	default:
		// The copy keeps the index's own time: git trusts a cached stat
		// only for entries older than the index file ("racy git"), so a
		// file changed in the second the index was written (same size)
		// is hashed again, as it would be with the real index. A copy
		// stamped now would take its stale entry for clean.
		if err := writeNew(copyIndex, data, mtime); err != nil {
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

// maxIndex bounds the index copied for WorktreeTree (git's index of a
// repository with a million files is about 100 MB).
const maxIndex = 1 << 30

// writeNew writes data to a new file name (never one that exists),
// stamped with mtime (to the microsecond, rounded down: never later), not
// synced: it is scratch.
func writeNew(name string, data []byte, mtime time.Time) error {
	f, err := fsops.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	tv := unix.NsecToTimeval(mtime.UnixNano())
	if err := unix.Futimes(int(f.Fd()), []unix.Timeval{tv, tv}); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
