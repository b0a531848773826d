package file

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rotd/coord/fsops"
)

// Init lays the coordination tree down at dir from tmpl (the embedded
// .rotd-template/coordination). It is idempotent and never overwrites a
// file; it returns the paths it created.
func Init(dir string, tmpl fs.FS) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, IOError(err, "")
	}
	t, err := fsops.OpenTree(dir, Subdirs...)
	if err != nil {
		return nil, IOError(err, "remove the symlink or file and run 'coord init' again")
	}
	defer t.Close()
	var created []string
	for _, d := range Subdirs {
		if _, err := t.Lstat(d); errors.Is(err, fs.ErrNotExist) {
			if err := t.MkdirAll(d, 0o755); err != nil {
				return created, IOError(err, "")
			}
			created = append(created, filepath.Join(dir, d)+"/")
		}
	}
	err = fs.WalkDir(tmpl, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(tmpl, p)
		if err != nil {
			return err
		}
		if err := t.CreateFile(p, data, 0o644); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return nil
			}
			return err
		}
		created = append(created, filepath.Join(dir, p))
		return nil
	})
	if err != nil {
		return created, IOError(err, "")
	}
	return created, nil
}

// GitExcludes is what keeps a coordination tree out of git: gitignore
// patterns, anchored at a worktree's top, for the tree of a project root
// at rel (its path from the repository's top, "." for the top itself)
// and for the agent's own identity file at the top. A restored old
// registry (a checkout, a stash, a revert of a committed .rotd/) would
// bring back an older epoch counter, and coord would hand out fencing
// epochs it had already issued; a committed agent_id would give every
// worktree that checks it out the same identity.
func GitExcludes(rel string) []string {
	dir := "/"
	if rel = filepath.ToSlash(filepath.Clean(rel)); rel != "." {
		dir += gitignoreQuote(rel) + "/"
	}
	return []string{dir + RelDir + "/", "/.rotd/agent_id"}
}

// gitignoreQuote escapes the characters a gitignore pattern reads as glob
// syntax, so a directory name is matched as written.
func gitignoreQuote(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`\*?[`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
