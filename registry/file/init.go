package file

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rotd/coordination/fsops"
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
