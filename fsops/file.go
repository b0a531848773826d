package fsops

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
)

// Files named by their path, outside any Tree: a seed file given on the
// command line, the env file an agent names for its session
// (CLAUDE_ENV_FILE), git's pointer files, /proc. Every open here is made
// as openFile makes one inside a Tree: it can never block on what it
// finds, and only a regular file is ever read or written.

// OpenFile is like os.OpenFile, but it never blocks on what it finds at
// name and opens only a regular file: the open is O_NONBLOCK|O_NOCTTY (a
// FIFO without a writer or a device returns at once instead of waiting
// in open(2)), the descriptor is fstat'ed and anything but a regular
// file is closed and refused with a *KindError naming it, and only then
// is O_NONBLOCK cleared. A symlink at name is followed (a person or an
// agent named the path and means its target, which is checked the same
// way) unless flag holds O_NOFOLLOW, which refuses it with ErrSymlink.
// fs.ErrExist and fs.ErrNotExist are returned as they are.
func OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(name, flag|syscall.O_NONBLOCK|syscall.O_NOCTTY, perm)
	if err != nil {
		if errors.Is(err, fs.ErrExist) || errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		// ENXIO (a FIFO opened for writing without a reader, a socket),
		// EISDIR (a directory opened for writing), ELOOP (a symlink with
		// O_NOFOLLOW): name what is there.
		if kerr := checkPath(name, flag&syscall.O_NOFOLLOW == 0); kerr != nil {
			return nil, kerr
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &KindError{Path: name, Is: Kind(fi.Mode()), Want: wantFile}
	}
	if err := setBlocking(f); err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return f, nil
}

// checkPath names what stands at name when it is not a regular file: a
// *KindError, or ErrSymlink for a symlink when follow is false. It only
// looks (stat or lstat).
func checkPath(name string, follow bool) error {
	stat := os.Lstat
	if follow {
		stat = os.Stat
	}
	fi, err := stat(name)
	switch {
	case err != nil || fi.Mode().IsRegular():
		return nil
	case fi.Mode()&fs.ModeSymlink != 0:
		return &fs.PathError{Op: "open", Path: name, Err: ErrSymlink}
	}
	return &KindError{Path: name, Is: Kind(fi.Mode()), Want: wantFile}
}

// ReadFile is like os.ReadFile for a regular file (see OpenFile), bounded:
// a file of more than max bytes is refused with ErrTooLarge. Files whose
// size the kernel does not report (/proc) are read to their end.
func ReadFile(name string, max int64) ([]byte, error) {
	return readFile(name, 0, max)
}

// ReadFileNoFollow is ReadFile refusing a symlink at name (ErrSymlink):
// for a file coord itself keeps outside any Tree (.rotd/agent_id).
func ReadFileNoFollow(name string, max int64) ([]byte, error) {
	return readFile(name, syscall.O_NOFOLLOW, max)
}

func readFile(name string, flag int, max int64) ([]byte, error) {
	f, err := OpenFile(name, os.O_RDONLY|flag, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: unwrapPath(err)}
	}
	if int64(len(data)) > max {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w (limit %d bytes)", ErrTooLarge, max)}
	}
	return data, nil
}

// AppendFile appends data to the regular file name (see OpenFile),
// creating it with perm, in one write(2) on an O_APPEND descriptor; a
// short or failed write is truncated away. A FIFO, socket, device or
// directory at name is refused with a *KindError, never waited on.
func AppendFile(name string, data []byte, perm fs.FileMode) error {
	if err := step(OpCreate, name); err != nil {
		return &fs.PathError{Op: "append", Path: name, Err: err}
	}
	f, err := OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, perm)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	if err := step(OpWrite, name); err != nil {
		f.Close()
		return &fs.PathError{Op: "append", Path: name, Err: err}
	}
	n, err := f.Write(data)
	if err != nil || n != len(data) {
		if n > 0 {
			f.Truncate(fi.Size())
		}
		if err == nil {
			err = io.ErrShortWrite
		}
		f.Close()
		return &fs.PathError{Op: "append", Path: name, Err: unwrapPath(err)}
	}
	return f.Close()
}

// ReadDir is like os.ReadDir, but it opens name with O_DIRECTORY and
// O_NONBLOCK, so that a FIFO or device there is refused at once with a
// *KindError instead of being opened (os.ReadDir would wait on a FIFO).
// The entries are sorted by name.
func ReadDir(name string) ([]fs.DirEntry, error) {
	d, err := os.OpenFile(name, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, syscall.ENOTDIR) {
			if fi, serr := os.Stat(name); serr == nil && !fi.IsDir() {
				return nil, &KindError{Path: name, Is: Kind(fi.Mode()), Want: wantDir}
			}
		}
		return nil, err
	}
	defer d.Close()
	ents, err := d.ReadDir(-1)
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, err
}
