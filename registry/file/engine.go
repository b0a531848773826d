package file

import (
	"context"
	"net/url"
	"os"
	"path/filepath"

	rotdtemplate "github.com/rotd/coordination"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/backend"
)

// The file engine registers itself for file:// URLs and for the tree
// under a project root (an empty URL).
func init() {
	backend.Register(backend.Engine{
		Scheme: "file",
		Open:   openEngine,
		Init:   initEngine,
		Where: func(o backend.Options) (string, error) {
			_, dir, err := locate(o)
			return dir, err
		},
	})
}

func openEngine(_ context.Context, o backend.Options) (coord.Backend, error) {
	root, dir, err := locate(o)
	if err != nil {
		return nil, err
	}
	if err := backend.CheckFS(dir, o.AllowUnsafeFS); err != nil {
		return nil, err
	}
	// The tree itself must not be reached through a symlink either: a
	// linked .rotd or .rotd/coordination would let one checkout write into
	// another's (or anywhere).
	for _, p := range []string{dir, filepath.Dir(dir)} {
		if li, err := os.Lstat(p); err == nil && li.Mode()&os.ModeSymlink != 0 {
			return nil, coord.Errorf(coord.CodeIO, "%s is a symlink; coord never follows symlinks into the coordination tree", p).
				WithHint("replace the link with the directory itself (linked git worktrees share the main worktree's tree without links)")
		}
	}
	return Open(dir, Options{
		Clock:    o.Clock,
		LockWait: o.LockWait,
		Warn:     o.Warn,
		Holder:   o.Holder,
		Lenient:  o.Lenient,
		RotdDir:  filepath.Join(root, ".rotd"),
	})
}

func initEngine(_ context.Context, o backend.Options) (string, []string, error) {
	root, dir, err := locate(o)
	if err != nil {
		return "", nil, err
	}
	if err := backend.CheckFS(root, o.AllowUnsafeFS); err != nil {
		return "", nil, err
	}
	created, err := Init(dir, rotdtemplate.Coordination())
	return dir, created, err
}

// locate maps o to a project root and its coordination directory.
func locate(o backend.Options) (root, dir string, err error) {
	if o.URL == "" {
		if o.Root == "" {
			return "", "", coord.Errorf(coord.CodeUsage, "no project root and no backend URL")
		}
		return o.Root, filepath.Join(o.Root, RelDir), nil
	}
	u, perr := url.Parse(o.URL)
	if perr != nil || u.Scheme != "file" {
		return "", "", coord.Errorf(coord.CodeUsage, "backend %q is not a file URL", o.URL).
			WithHint("name a tree as file:///abs/path")
	}
	if (u.Host != "" && u.Host != "localhost") || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", "", coord.Errorf(coord.CodeUsage, "backend %s: a file URL names a local path only (file:///abs/path)", u.Redacted())
	}
	p := u.Path
	if p == "" || !filepath.IsAbs(p) {
		return "", "", coord.Errorf(coord.CodeUsage, "backend %s: the path must be absolute (file:///abs/path)", u.Redacted())
	}
	p = filepath.Clean(p)
	switch {
	case filepath.Base(p) == "coordination" && filepath.Base(filepath.Dir(p)) == ".rotd":
		return filepath.Dir(filepath.Dir(p)), p, nil
	case filepath.Base(p) == ".rotd":
		return filepath.Dir(p), filepath.Join(p, "coordination"), nil
	}
	return p, filepath.Join(p, RelDir), nil
}
