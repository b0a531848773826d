package file

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/fsops"
	"github.com/rotd/coordination/registry/format"
)

// Path locks live in the registry's "path_locks" member, so a task and
// the path locks taken for it are released in one commit (coord.Txn). The
// files file_locks/<sha1 of the path>.lock (docs/FORMATS.md) are their mirror,
// for tools that read the tree: written and removed after the registry
// commit, and reconciled like the task locks (a mirror file the registry
// does not back is removed, a missing one recreated). A power loss or a
// crash may leave the mirror behind the registry; the next Update brings
// it back in line before it does anything else.
//
// A registry written before path locks moved into it has no "path_locks"
// member: there the files are still the locks. Readers take them as they
// are, and the first Update adopts them into the registry (logging each
// as "reconciled: adopted path lock …"); from then on the registry is
// the truth.
//
// Mirror writes and the reads of an unmigrated tree are done under
// .lock/file_locks.lock as well, the lock an older coord takes to write
// path lock files, so the two never interleave. (An older coord that
// writes a lock file into a migrated tree still loses it: the registry
// does not back it. Mixed versions on one tree are not supported.)

// PathLockName is the mirror file of a lock on a repository path.
func PathLockName(path string) string {
	sum := sha1.Sum([]byte(path))
	return FileLocksDir + "/" + hex.EncodeToString(sum[:]) + ".lock"
}

// isMirrorName reports whether a file_locks entry is named as a mirror
// file is: 40 lowercase hex digits and ".lock".
func isMirrorName(n string) bool {
	h, ok := strings.CutSuffix(n, ".lock")
	if !ok || len(h) != 40 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func (s *Backend) readPathLock(name string) (coord.PathLock, error) {
	data, err := s.tree.ReadFile(name, maxSmallFile)
	if err != nil {
		return coord.PathLock{}, err
	}
	return format.ParsePathLock(s.tree.Path(name), data)
}

// filePathLocks reads the path lock files of an unmigrated tree. With
// strict, a file that cannot be read is an error naming it: its path, and
// so what it covers, is unknown, and adopting the others without it would
// lose it. Without, it is skipped (a reader shows what it can; doctor
// reports the rest).
func (s *Backend) filePathLocks(strict bool) ([]coord.PathLock, error) {
	ents, err := s.tree.ReadDir(FileLocksDir)
	if err != nil {
		return nil, IOError(err, "")
	}
	var out []coord.PathLock
	seen := map[string]bool{}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".lock") || IsTempName(e.Name()) || strings.Contains(e.Name(), AsideMark) {
			continue
		}
		name := FileLocksDir + "/" + e.Name()
		l, err := s.readPathLock(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil && !strict:
			continue
		case errors.Is(err, fsops.ErrWrongKind):
			return nil, IOError(err, "") // the kind error's own fix
		case err == nil && PathLockName(l.Path) != name:
			err = &format.ParseError{File: s.tree.Path(name), Msg: fmt.Sprintf("holds the lock of %q, whose file is %s", l.Path, PathLockName(l.Path))}
		}
		if err != nil {
			return nil, IOError(err, "fix it by hand, or remove "+s.tree.Path(name)+" if no agent holds that path ('coord doctor' lists it)")
		}
		if !seen[l.Path] {
			seen[l.Path] = true
			out = append(out, l)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// mirror is the state of the path-lock mirror during one Update.
type mirror struct {
	s      *Backend
	ctx    context.Context
	before map[string]coord.PathLock // path -> lock, as the mirror holds them
	unlock func()
}

// lock takes .lock/file_locks.lock once.
func (m *mirror) lock() error {
	if m.unlock != nil {
		return nil
	}
	unlock, err := m.s.tree.Lock(m.ctx, fileLocksLock, m.s.lockWait, m.s.holderLine())
	if err != nil {
		return IOError(err, "")
	}
	m.unlock = unlock
	return nil
}

func (m *mirror) release() {
	if m.unlock != nil {
		m.unlock()
	}
}

// reconcilePathLocks brings the path locks of tx and their mirror into
// line under the registry lock, before the transaction runs. On an
// unmigrated registry it adopts the lock files into tx (adopted reports
// it; the adoption is committed with the transaction); on a migrated one
// it recreates missing mirror files and removes those the registry does
// not back (a file that is no path lock at all is left for doctor to
// report). A mirror name holding anything but a regular file is refused
// (exit 2 naming it; doctor --repair clears it). fix logs a repair made
// on disk; adopt logs an adoption.
func (s *Backend) reconcilePathLocks(tx *coord.Txn, f *format.Registry, m *mirror, fix, adopt func(format string, args ...any)) (adopted bool, err error) {
	if !f.HasPathLocks() {
		ents, err := s.tree.ReadDir(FileLocksDir)
		if err != nil {
			return false, IOError(err, "")
		}
		if !slices.ContainsFunc(ents, func(e fs.DirEntry) bool { return strings.HasSuffix(e.Name(), ".lock") }) {
			return false, nil // nothing to adopt (a new tree)
		}
		if err := m.lock(); err != nil {
			return false, err
		}
		locks, err := s.filePathLocks(true)
		if err != nil {
			return false, err
		}
		for _, l := range locks {
			adopt("adopted path lock %s (held by %s)", l.Path, l.Holder)
			m.before[l.Path] = l
		}
		tx.PathLocks = locks
		return len(locks) > 0, nil
	}
	backed := make(map[string]coord.PathLock, len(tx.PathLocks))
	for _, l := range tx.PathLocks {
		backed[PathLockName(l.Path)] = l
		m.before[l.Path] = l
	}
	ents, err := s.tree.ReadDir(FileLocksDir)
	if err != nil {
		return false, IOError(err, "")
	}
	present := map[string]bool{}
	var unbacked []string
	for _, e := range ents {
		name := FileLocksDir + "/" + e.Name()
		if !isMirrorName(e.Name()) {
			continue
		}
		if _, ok := backed[name]; ok {
			present[name] = true
			if !e.Type().IsRegular() {
				return false, IOError(s.tree.CheckFile(name), "")
			}
			continue
		}
		// A file there that is not a path lock at all was not written by
		// coord: it is left for a person (doctor reports it).
		if _, err := s.readPathLock(name); err == nil && e.Type().IsRegular() {
			unbacked = append(unbacked, e.Name())
		}
	}
	var missing []string
	for name := range backed {
		if !present[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 && len(unbacked) == 0 {
		return false, nil
	}
	if err := m.lock(); err != nil {
		return false, err
	}
	sort.Strings(missing)
	for _, name := range missing {
		if err := s.writeMirror(backed[name]); err != nil {
			return false, IOError(err, "")
		}
		fix("restored missing path lock file %s (%s, held by %s)", name, backed[name].Path, backed[name].Holder)
	}
	if err := s.tree.RemoveIn(FileLocksDir, unbacked); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, IOError(err, "")
	}
	for _, n := range unbacked {
		fix("removed path lock file %s/%s not backed by the registry", FileLocksDir, n)
	}
	return false, nil
}

// writeMirror writes a path lock's mirror file (atomically, not durably:
// the registry holds the lock, and the next Update recreates a lost file).
func (s *Backend) writeMirror(l coord.PathLock) error {
	if err := s.tree.MkdirAll(FileLocksDir, 0o755); err != nil {
		return err
	}
	return s.tree.ReplaceFile(PathLockName(l.Path), format.EncodePathLock(l), 0o644)
}

// syncMirror makes the mirror follow a committed change of the path
// locks: changed and new locks written, released ones removed. It runs
// after the registry rename, so a failure is reported, never undone: the
// registry is the truth, and the next Update repairs the mirror.
func (s *Backend) syncMirror(m *mirror, locks []coord.PathLock) error {
	var errs []error
	now := make(map[string]bool, len(locks))
	for _, l := range locks {
		now[l.Path] = true
		if old, ok := m.before[l.Path]; ok && old == l {
			continue
		}
		if err := s.writeMirror(l); err != nil {
			errs = append(errs, err)
		}
	}
	var gone []string
	for p := range m.before {
		if !now[p] {
			gone = append(gone, strings.TrimPrefix(PathLockName(p), FileLocksDir+"/"))
		}
	}
	sort.Strings(gone)
	if err := s.tree.RemoveIn(FileLocksDir, gone); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
