package fsops

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Temp files. Every replace and create of a tree's file writes a temp
// file first (a pending file) and renames or links it into place. A
// pending file lives in the tree's top directory, named "." + the base
// name of the file it will become + digits (IsTempName), and its writer
// holds an exclusive flock on it from just after creating it until it
// is renamed into place or removed; the flock goes with the writer's
// open file, so the kernel drops it when the writer dies, SIGKILL
// included. A temp file whose flock nobody holds is therefore a dead
// writer's leftover, whatever its age, and RemoveStaleTemp removes it;
// one whose flock is held belongs to a live writer (running, paused or
// stopped) and is never touched. The flock is taken on the temp file
// only, never on a file anyone later replaces: the rename happens under
// it and the file is closed right after.

// tempDigits is the random part of a temp file's name.
func tempDigits() string {
	var rnd [8]byte
	rand.Read(rnd[:])
	return strconv.FormatUint(binary.LittleEndian.Uint64(rnd[:])>>1, 10)
}

// IsTempName reports whether a directory entry's name is a pending
// file's: "." + a base name + at least five digits.
func IsTempName(name string) bool {
	if !strings.HasPrefix(name, ".") || len(name) < 3 {
		return false
	}
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	return i < len(name) && i > 1 && len(name)-i >= 5
}

// pendingFile is a temp file its writer holds (see above).
type pendingFile struct {
	*os.File
	t    *Tree
	tmp  string // its name in the tree
	done bool   // renamed into place, or removed
}

// newPending creates a pending file for name with perm (subject to the
// umask) and takes its flock. A sweeper may remove a temp file between
// its creation and the flock (nobody held it yet): the writer then finds
// its name no longer naming its file, and starts again with a new name.
func (t *Tree) newPending(name string, perm fs.FileMode) (*pendingFile, error) {
	prefix := "." + filepath.Base(name)
	for attempt := 0; ; attempt++ {
		tmp := prefix + tempDigits()
		if err := step(OpCreate, name+".tmp"); err != nil {
			return nil, &fs.PathError{Op: "create temp for", Path: t.Path(name), Err: err}
		}
		f, err := t.openFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) && attempt < 100 {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "create temp for", Path: t.Path(name), Err: unwrapPath(err)}
		}
		ok, err := tryFlock(f)
		if err != nil {
			f.Close()
			t.root.Remove(tmp)
			return nil, &fs.PathError{Op: "lock temp for", Path: t.Path(name), Err: err}
		}
		if ok && t.names(f, tmp) {
			return &pendingFile{File: f, t: t, tmp: tmp}, nil
		}
		f.Close() // a sweeper took it first: it removes it
		if attempt >= 100 {
			return nil, &fs.PathError{Op: "create temp for", Path: t.Path(name), Err: errors.New("every temp file was taken away before it could be locked")}
		}
	}
}

// names reports whether name in the tree is the file f is open on.
func (t *Tree) names(f *os.File, name string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := t.root.Lstat(name)
	return err == nil && os.SameFile(a, b)
}

// replace renames the pending file over name, under its flock, then
// closes it.
func (p *pendingFile) replace(name string) error {
	if err := p.t.root.Rename(p.tmp, name); err != nil {
		return err
	}
	p.done = true
	return p.File.Close()
}

// link makes name a hard link to the pending file (link(2) never
// replaces: fs.ErrExist if name exists); Cleanup then removes the temp.
func (p *pendingFile) link(name string) error {
	return p.t.root.Link(p.tmp, name)
}

// Cleanup removes the pending file unless it was renamed into place
// (under its flock: no one else ever removes a held temp file), and
// closes it. Always safe to call.
func (p *pendingFile) Cleanup() {
	if !p.done {
		p.t.root.Remove(p.tmp)
		p.done = true
	}
	p.File.Close()
}

// RemoveStaleTemp removes the temp file name (IsTempName; relative to the
// tree) when no live writer holds it: it takes the file's flock without
// waiting, checks that name still names the file it locked, and removes
// it under that flock. It reports whether it removed it; a temp file a
// writer holds, one gone meanwhile (renamed into place, or removed by
// another sweeper) and a name that is not a regular file are left alone
// (false, nil).
func (t *Tree) RemoveStaleTemp(name string) (bool, error) {
	if !IsTempName(filepath.Base(name)) {
		return false, nil
	}
	f, err := t.openFile(name, os.O_RDONLY, 0)
	if err != nil {
		var ke *KindError
		if errors.Is(err, fs.ErrNotExist) || errors.As(err, &ke) || errors.Is(err, ErrSymlink) {
			return false, nil
		}
		return false, err
	}
	defer f.Close()
	ok, err := tryFlock(f)
	if err != nil {
		return false, &fs.PathError{Op: "lock", Path: t.Path(name), Err: err}
	}
	if !ok || !t.names(f, name) {
		return false, nil
	}
	if err := step(OpRemove, name); err != nil {
		return false, &fs.PathError{Op: "remove", Path: t.Path(name), Err: err}
	}
	if err := t.root.Remove(name); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// TempHeld reports whether a live writer holds the temp file name: its
// flock cannot be taken. A name that is gone or not a regular file is
// not held. It changes nothing (the flock it may take is let go at once).
func (t *Tree) TempHeld(name string) bool {
	f, err := t.openFile(name, os.O_RDONLY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	ok, err := tryFlock(f)
	if ok {
		flock(f, unix.LOCK_UN)
	}
	return err == nil && !ok
}
