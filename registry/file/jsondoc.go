package file

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"

	"github.com/rotd/coordination/fsops"
	"github.com/rotd/coordination/registry/format"
)

// updateDoc runs fn on a small JSON document of the tree (leases, the kv
// space) under its own flock: read strictly (missing: zero value), change,
// and, if fn reports a change, replace atomically (temp, fsync, rename,
// directory fsync) once the reader would take it back (writeDoc: a value
// with keys that differ only in case, or a document over the read bound,
// is refused, nothing written). T must round-trip through encoding/json.
func updateDoc[T any](ctx context.Context, s *Backend, file, lock string, fn func(doc *T) (changed bool, err error)) error {
	return updateDocThen(ctx, s, file, lock, fn, nil)
}

// updateDocThen is updateDoc with a step (before, nil: none) run under
// the lock once the changed document is known to read back and before it
// is written: a refused write has then run no step (a counter's mark is
// raised only for a document that will be written).
func updateDocThen[T any](ctx context.Context, s *Backend, file, lock string, fn func(doc *T) (changed bool, err error), before func(doc *T) error) error {
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
	data = append(data, '\n')
	if err := s.checkDoc(file, data, parseAs[T]); err != nil {
		return err
	}
	if before != nil {
		if err := before(doc); err != nil {
			return err
		}
	}
	var nd *fsops.NotDurableError
	if err := s.tree.WriteFile(file, data, 0o644); errors.As(err, &nd) {
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
	data, err := s.tree.ReadFile(file, readLimit(file))
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

// parseAs is readDoc's parse, for writeDoc.
func parseAs[T any](path string, data []byte) error {
	return format.Unmarshal(path, data, new(T))
}
