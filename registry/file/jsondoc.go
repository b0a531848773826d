package file

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"

	"github.com/rotd/coord/fsops"
	"github.com/rotd/coord/registry/format"
)

// updateDoc runs fn on a small JSON document of the tree (leases, the kv
// space) under its own flock: read strictly (missing: zero value), change,
// and, if fn reports a change, replace atomically (temp, fsync, rename,
// directory fsync). T must round-trip through encoding/json.
func updateDoc[T any](ctx context.Context, s *Backend, file, lock string, fn func(doc *T) (changed bool, err error)) error {
	unlock, err := s.lock(ctx, lock)
	if err != nil {
		return err
	}
	defer unlock()
	doc, err := readDoc[T](s, file)
	if err != nil {
		return err
	}
	changed, err := fn(doc)
	if err != nil || !changed {
		return err
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	var nd *fsops.NotDurableError
	if err := s.tree.WriteFile(file, append(data, '\n'), 0o644); errors.As(err, &nd) {
		s.warn(nd) // replaced: every reader sees it
	} else if err != nil {
		return IOError(err, "")
	}
	return nil
}

// readDoc reads a document without its lock: it is only ever replaced by
// rename, so a reader sees a whole version.
func readDoc[T any](s *Backend, file string) (*T, error) {
	doc := new(T)
	data, err := s.tree.ReadFile(file, maxSmallFile*64)
	if errors.Is(err, fs.ErrNotExist) {
		return doc, nil
	}
	if err != nil {
		return nil, IOError(err, "")
	}
	if err := format.Unmarshal(s.tree.Path(file), data, doc); err != nil {
		return nil, IOError(err, "")
	}
	return doc, nil
}
