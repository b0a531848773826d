package fsops

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrWrongKind reports an entry of the wrong kind at a name: a FIFO, a
// socket, a device or a directory where a regular file belongs, or
// anything but a directory where a directory belongs.
var ErrWrongKind = errors.New("wrong kind of file")

// KindError names the entry, what it is and what belongs there:
// "/x/coordination.log is a FIFO, not a regular file".
type KindError struct {
	Path string
	Is   string // "a FIFO", "a directory", …: see Kind
	Want string // "a regular file" or "a directory"
}

func (e *KindError) Error() string { return e.Path + " is " + e.Is + ", not " + e.Want }

func (e *KindError) Unwrap() error { return ErrWrongKind }

// MayHoldData reports whether the entry found can hold data (a directory,
// or a regular file where a directory belongs); a FIFO, socket or device
// holds none and can simply be removed.
func (e *KindError) MayHoldData() bool { return e.Is == kindDir || e.Is == wantFile }

const (
	wantFile = "a regular file"
	wantDir  = "a directory"
	kindDir  = "a directory"
)

// Kind names a file mode's type for messages: "a regular file",
// "a directory", "a FIFO", "a socket", "a character device", "a block
// device", "a symlink", or "an irregular file".
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return wantFile
	case m.IsDir():
		return kindDir
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "an irregular file"
}

// openFile is the only way fsops opens a file. It can never block on what
// it finds at name: the open is O_NONBLOCK|O_NOFOLLOW|O_NOCTTY (a FIFO
// without a writer, a device or a terminal returns at once instead of
// waiting in open(2), a socket fails with ENXIO), the descriptor is then
// fstat'ed and anything but a regular file is closed and refused with a
// *KindError (a symlink with ErrSymlink, as everywhere), and only then is
// O_NONBLOCK cleared. Reads and writes on a regular file never wait for
// another process, so nothing after this point can hang either.
//
// fs.ErrExist and fs.ErrNotExist are returned as they are (callers test
// them).
func (t *Tree) openFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := t.root.OpenFile(name, flag|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_NOCTTY, perm)
	if err != nil {
		if errors.Is(err, fs.ErrExist) || errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		// ENXIO (a FIFO opened for writing without a reader, a socket),
		// EISDIR (a directory opened for writing), ELOOP (a symlink):
		// name what is there.
		if kerr := t.CheckFile(name); kerr != nil {
			return nil, kerr
		}
		return nil, fixELOOP(t, name, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &KindError{Path: t.Path(name), Is: Kind(fi.Mode()), Want: wantFile}
	}
	if err := setBlocking(f); err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: t.Path(name), Err: err}
	}
	return f, nil
}

// setBlocking clears O_NONBLOCK (without f.Fd, which would also change
// how the runtime treats f).
func setBlocking(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}

// openDir opens a directory of the tree without ever blocking: with
// O_DIRECTORY a FIFO or device at the name fails at once (ENOTDIR)
// instead of being opened, and is then named in a *KindError.
func (t *Tree) openDir(name string) (*os.File, error) {
	d, err := t.root.OpenFile(name, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if kerr := t.CheckDir(name); kerr != nil {
			return nil, kerr
		}
		return nil, fixELOOP(t, name, err)
	}
	return d, nil
}

// LstatAll and RemoveIn work through one descriptor of a directory opened
// by openDir; os.Root.OpenRoot would open the directory without
// O_DIRECTORY, and so block on a FIFO put in its place.

// oneName refuses a name that is not a single entry of a directory.
func oneName(n string) error {
	if n == "" || n == "." || n == ".." || strings.ContainsRune(n, '/') {
		return fs.ErrInvalid
	}
	return nil
}

// lstatAt is lstat of the entry n of the directory d (fstatat with
// AT_SYMLINK_NOFOLLOW).
func lstatAt(d *os.File, n string) (fs.FileInfo, error) {
	if err := oneName(n); err != nil {
		return nil, err
	}
	rc, err := d.SyscallConn()
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = ignoringEINTR(func() error { return unix.Fstatat(int(fd), n, &st, unix.AT_SYMLINK_NOFOLLOW) })
	}); err != nil {
		return nil, err
	}
	if serr != nil {
		return nil, serr
	}
	return &statInfo{name: n, st: st}, nil
}

// removeAt removes the entry n of the directory d (a file, or an empty
// directory), never following a symlink.
func removeAt(d *os.File, n string) error {
	if err := oneName(n); err != nil {
		return err
	}
	rc, err := d.SyscallConn()
	if err != nil {
		return err
	}
	var rerr error
	if err := rc.Control(func(fd uintptr) {
		rerr = ignoringEINTR(func() error { return unix.Unlinkat(int(fd), n, 0) })
		if rerr == unix.EISDIR || rerr == unix.EPERM {
			if e := ignoringEINTR(func() error { return unix.Unlinkat(int(fd), n, unix.AT_REMOVEDIR) }); e == nil || e != unix.ENOTDIR {
				rerr = e
			}
		}
	}); err != nil {
		return err
	}
	return rerr
}

func ignoringEINTR(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}

// statInfo is an fs.FileInfo from a stat(2) result.
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (fi *statInfo) Name() string       { return fi.name }
func (fi *statInfo) Size() int64        { return fi.st.Size }
func (fi *statInfo) ModTime() time.Time { return time.Unix(fi.st.Mtim.Unix()) }
func (fi *statInfo) IsDir() bool        { return fi.Mode().IsDir() }
func (fi *statInfo) Sys() any           { return &fi.st }

func (fi *statInfo) Mode() fs.FileMode {
	m := fs.FileMode(fi.st.Mode & 0o777)
	switch fi.st.Mode & unix.S_IFMT {
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if fi.st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if fi.st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if fi.st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// CheckFile returns nil if name is a regular file or does not exist, and
// otherwise an error naming what it is: ErrSymlink for a symlink, a
// *KindError for anything else. It only looks (lstat); it never opens.
func (t *Tree) CheckFile(name string) error {
	return t.check(name, wantFile)
}

// CheckDir is CheckFile for a name where a directory belongs.
func (t *Tree) CheckDir(name string) error {
	return t.check(name, wantDir)
}

func (t *Tree) check(name, want string) error {
	fi, err := t.root.Lstat(name)
	if errors.Is(err, syscall.ENOTDIR) {
		// Some parent is not a directory: name it instead.
		if dir := path.Dir(name); dir != "." && dir != name {
			return t.check(dir, wantDir)
		}
	}
	if err != nil {
		return nil // missing: not of a wrong kind; the operation reports it
	}
	m := fi.Mode()
	switch {
	case want == wantFile && m.IsRegular(), want == wantDir && m.IsDir():
		return nil
	case m&fs.ModeSymlink != 0:
		return &fs.PathError{Op: "open", Path: t.Path(name), Err: ErrSymlink}
	}
	return &KindError{Path: t.Path(name), Is: Kind(m), Want: want}
}
