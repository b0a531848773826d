package workspace

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/fsops"
)

// maxProjectFile bounds a project configuration file coord reads.
const maxProjectFile = 4 << 20

// ReadProjectFile reads the file rel under the directory top (an agent's
// configuration in the repository, such as .claude/settings.json). It
// never follows a symlink at rel or on the way to it, and refuses a file
// that is not a regular one. ok is false when the file does not exist.
func ReadProjectFile(top, rel string) (data []byte, ok bool, err error) {
	t, err := fsops.OpenTree(top)
	if err != nil {
		return nil, false, projectFileError(top, rel, err)
	}
	defer t.Close()
	data, err = t.ReadFile(rel, maxProjectFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, projectFileError(top, rel, err)
	}
	return data, true, nil
}

// WriteProjectFile replaces the file rel under top with data atomically
// (a reader sees the old or the new content, whole, and a crash leaves
// one of them), creating its directory; like ReadProjectFile it never
// goes through a symlink and replaces only a regular file.
func WriteProjectFile(top, rel string, data []byte) error {
	t, err := fsops.OpenTree(top)
	if err != nil {
		return projectFileError(top, rel, err)
	}
	defer t.Close()
	if d := filepath.Dir(rel); d != "." {
		if err := t.MkdirAll(d, 0o755); err != nil {
			return projectFileError(top, rel, err)
		}
	}
	perm := fs.FileMode(0o644)
	if fi, err := t.Lstat(rel); err == nil {
		perm = fi.Mode().Perm()
	}
	if err := t.WriteFile(rel, data, perm); err != nil {
		return projectFileError(top, rel, err)
	}
	return nil
}

// RemoveProjectFile removes the file rel under top (absent is fine).
func RemoveProjectFile(top, rel string) error {
	t, err := fsops.OpenTree(top)
	if err != nil {
		return projectFileError(top, rel, err)
	}
	defer t.Close()
	if err := t.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return projectFileError(top, rel, err)
	}
	return nil
}

func projectFileError(top, rel string, err error) error {
	return coord.Wrap(coord.CodeIO, err, "cannot use %s", rel).
		WithHint("coord edits only regular files inside the repository, never through a symlink")
}
