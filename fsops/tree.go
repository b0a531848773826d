package fsops

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrSymlink reports a symlink where coord needs a real file or directory.
var ErrSymlink = errors.New("is a symlink; coord never follows symlinks inside the coordination tree")

// ErrTooLarge reports a file over the read bound.
var ErrTooLarge = errors.New("file is larger than the read limit")

// Tree is a directory that every operation is confined to.
type Tree struct {
	root *os.Root
	dir  string
}

// OpenTree opens dir as a Tree. Each of subdirs that exists must be a real
// directory, not a symlink.
func OpenTree(dir string, subdirs ...string) (*Tree, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	// os.OpenRoot opens without O_DIRECTORY: check first, without
	// blocking, that abs is a directory (a FIFO there would block it).
	fd, err := unix.Open(abs, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: abs, Err: err}
	}
	unix.Close(fd)
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, err
	}
	t := &Tree{root: r, dir: abs}
	for _, s := range subdirs {
		if _, err := r.Lstat(s); err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.Close()
			return nil, err
		}
		if err := t.CheckDir(s); err != nil {
			r.Close()
			return nil, err
		}
	}
	return t, nil
}

// LstatAll lstats many entries of one directory through a single handle
// on it (one fstatat each, instead of resolving dir again per name). A
// missing entry maps to nil; a missing directory to an empty map.
func (t *Tree) LstatAll(dir string, names []string) (map[string]fs.FileInfo, error) {
	out := make(map[string]fs.FileInfo, len(names))
	d, err := t.openDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer d.Close()
	for _, n := range names {
		fi, err := lstatAt(d, n)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, &fs.PathError{Op: "lstat", Path: t.Path(dir + "/" + n), Err: err}
		}
		out[n] = fi
	}
	return out, nil
}

// Close releases the tree's directory handle.
func (t *Tree) Close() error { return t.root.Close() }

// Dir is the tree's absolute path.
func (t *Tree) Dir() string { return t.dir }

// Path returns the absolute path of a name inside the tree (for messages).
func (t *Tree) Path(name string) string { return filepath.Join(t.dir, name) }

// MkdirAll creates a directory (and parents) inside the tree.
func (t *Tree) MkdirAll(name string, perm fs.FileMode) error {
	if fi, err := t.root.Lstat(name); err == nil && fi.IsDir() {
		return nil
	}
	if err := step(OpMkdir, name); err != nil {
		return &fs.PathError{Op: "mkdir", Path: t.Path(name), Err: err}
	}
	if err := t.root.MkdirAll(name, perm); err != nil {
		return t.dirError(name, err)
	}
	fi, err := t.root.Lstat(name)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return &fs.PathError{Op: "mkdir", Path: t.Path(name), Err: ErrSymlink}
	}
	return nil
}

// Lstat is os.Lstat inside the tree.
func (t *Tree) Lstat(name string) (fs.FileInfo, error) { return t.root.Lstat(name) }

// Open opens a regular file for reading. It never blocks on what it finds
// (see openFile): a symlink is refused with ErrSymlink, a FIFO, socket,
// device or directory with a *KindError.
func (t *Tree) Open(name string) (*os.File, error) {
	return t.openFile(name, os.O_RDONLY, 0)
}

// ReadFile reads a whole regular file (see Open), refusing files over
// max bytes.
func (t *Tree) ReadFile(name string, max int64) ([]byte, error) {
	f, err := t.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > max {
		return nil, &fs.PathError{Op: "read", Path: t.Path(name), Err: fmt.Errorf("%w (%d bytes, limit %d)", ErrTooLarge, fi.Size(), max)}
	}
	buf := make([]byte, fi.Size()+1)
	n, err := io.ReadFull(f, buf)
	if err == nil { // grew past its stat size while we read
		if int64(n) > max {
			return nil, &fs.PathError{Op: "read", Path: t.Path(name), Err: ErrTooLarge}
		}
		rest, err := io.ReadAll(io.LimitReader(f, max-int64(n)+1))
		if err != nil {
			return nil, err
		}
		buf = append(buf[:n], rest...)
		if int64(len(buf)) > max {
			return nil, &fs.PathError{Op: "read", Path: t.Path(name), Err: ErrTooLarge}
		}
		return buf, nil
	}
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return buf[:n], nil
	}
	return nil, err
}

// WriteFile atomically replaces name with data: a temp file in the same
// directory, fsync, rename over name, fsync of the directory. On any error
// the temp file is removed and name is unchanged.
func (t *Tree) WriteFile(name string, data []byte, perm fs.FileMode) error {
	return t.WriteFileFrom(name, perm, writeBytes(data))
}

func writeBytes(data []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}
}

// WriteFileFrom is WriteFile with the content streamed by write into the
// temp file, so a large file is never held whole in memory. Only a regular
// file is replaced: a symlink, FIFO, socket, device or directory at name
// is refused before anything is written (a rename would never block on
// it, but silently replacing what someone put there is not coord's call).
func (t *Tree) WriteFileFrom(name string, perm fs.FileMode, write func(io.Writer) error) error {
	if err := t.CheckFile(name); err != nil {
		return err
	}
	pf, err := t.pending(name, write, perm)
	if err != nil {
		return err
	}
	defer pf.Cleanup()
	// Never rename a file whose fsync failed: pending returns before.
	if err := step(OpRename, name); err != nil {
		return &fs.PathError{Op: "replace", Path: t.Path(name), Err: err}
	}
	if err := pf.replace(name); err != nil {
		if kerr := t.CheckFile(name); kerr != nil { // a directory appeared at name
			return kerr
		}
		return &fs.PathError{Op: "replace", Path: t.Path(name), Err: unwrapPath(err)}
	}
	if err := t.SyncDir(filepath.Dir(name)); err != nil {
		return &NotDurableError{Path: t.Path(name), Err: err}
	}
	return nil
}

// WriteFileFromKeeping is WriteFileFrom that keeps backups of name in
// generations: keep[0] a copy of the content just written, keep[1] the
// content it replaced, keep[2] the one before, and so on. No backup ever
// shares an inode with name, so nothing written into name in place (a
// shell's '>', an editor saving in place, cp) reaches a backup: keep[0]
// is the newest good content whatever happens to name.
//
// Once the new content is written and synced to its temp file, a second
// temp file beside it gets a copy (copy_file_range: no data through user
// space where the kernel can; not synced: it guards against writes to
// name, not against power loss, after which name itself is durable).
// Before the new content replaces name, each keep[i] moves to keep[i+1]
// (the last one is dropped), keep[0] landing in keep[1]; when there was
// no keep[0] (a tree written before, or a crash between the two renames
// below), a copy of name is kept as keep[1]. Then the new content
// replaces name (the commit point), and only then does its copy become
// keep[0], so no backup is ever newer than name. A file replaced by
// other means than this (an editor's save by rename) leaves keep[0] as
// written last, which then moves on as the newest backup. keep[0]'s
// directory is made if it is missing.
//
// A failure to keep a backup does not stop the replace: it is returned
// as a *KeepError after the replace took place (joined with a
// *NotDurableError if the directory fsync failed too). A failure of the
// replace itself leaves name unchanged; the backups may then have moved
// one generation on.
func (t *Tree) WriteFileFromKeeping(name string, perm fs.FileMode, write func(io.Writer) error, keep []string) error {
	if err := t.CheckFile(name); err != nil {
		return err
	}
	pf, err := t.pending(name, write, perm)
	if err != nil {
		return err
	}
	defer pf.Cleanup()
	var kerr error
	var copied *pendingFile
	if len(keep) > 0 {
		if copied, kerr = t.copyPending(pf, keep[0], perm); copied != nil {
			defer copied.Cleanup()
		}
	}
	if kerr == nil {
		kerr = t.keepOld(name, keep, perm)
	}
	if err := step(OpRename, name); err != nil {
		return &fs.PathError{Op: "replace", Path: t.Path(name), Err: err}
	}
	if err := pf.replace(name); err != nil {
		if kerr := t.CheckFile(name); kerr != nil { // a directory appeared at name
			return kerr
		}
		return &fs.PathError{Op: "replace", Path: t.Path(name), Err: unwrapPath(err)}
	}
	if kerr == nil && copied != nil {
		if err := step(OpRename, keep[0]); err != nil {
			kerr = &KeepError{Path: t.Path(keep[0]), Err: err}
		} else if err := copied.replace(keep[0]); err != nil {
			kerr = &KeepError{Path: t.Path(keep[0]), Err: unwrapPath(err)}
		}
	}
	var derr error
	if err := t.SyncDir(filepath.Dir(name)); err != nil {
		derr = &NotDurableError{Path: t.Path(name), Err: err}
	}
	return errors.Join(kerr, derr)
}

// copyPending is a new pending file for name holding a copy of src's
// content (src written and synced). Its error is a *KeepError.
func (t *Tree) copyPending(src *pendingFile, name string, perm fs.FileMode) (*pendingFile, error) {
	fail := func(err error) error { return &KeepError{Path: t.Path(name), Err: unwrapPath(err)} }
	if err := t.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return nil, fail(err)
	}
	dst, err := t.newPending(name, perm)
	if err != nil {
		return nil, fail(err)
	}
	if err := step(OpWrite, name+".tmp"); err != nil {
		dst.Cleanup()
		return nil, fail(err)
	}
	if _, err := dst.ReadFrom(io.NewSectionReader(src.File, 0, 1<<62)); err != nil {
		dst.Cleanup()
		return nil, fail(err)
	}
	return dst, nil
}

// keepOld moves the backups of name one generation on before name is
// replaced (see WriteFileFromKeeping): nil or a *KeepError.
func (t *Tree) keepOld(name string, keep []string, perm fs.FileMode) error {
	if len(keep) == 0 {
		return nil
	}
	fail := func(at string, err error) error { return &KeepError{Path: t.Path(at), Err: unwrapPath(err)} }
	if err := t.MkdirAll(filepath.Dir(keep[0]), 0o755); err != nil {
		return fail(keep[0], err)
	}
	_, err := t.root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // nothing to keep yet
	}
	if err != nil {
		return fail(keep[0], err)
	}
	// keep[0] is a copy of name (the last write made it); otherwise it
	// is missing, or an older file that moves on below in name's place
	// (name was replaced by other means since).
	_, err = t.root.Lstat(keep[0])
	missing := errors.Is(err, fs.ErrNotExist)
	for i := len(keep) - 1; i > 0; i-- {
		if err := t.Rename(keep[i-1], keep[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fail(keep[i], err)
		}
	}
	if missing && len(keep) > 1 {
		if err := t.copyFile(name, keep[1], perm); err != nil {
			return fail(keep[1], err)
		}
	}
	return nil
}

// copyFile replaces dst with a copy of src's content (not synced).
func (t *Tree) copyFile(src, dst string, perm fs.FileMode) error {
	f, err := t.openFile(src, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	p, err := t.newPending(dst, perm)
	if err != nil {
		return err
	}
	defer p.Cleanup()
	if err := step(OpWrite, dst+".tmp"); err != nil {
		return err
	}
	if _, err := p.ReadFrom(f); err != nil {
		return err
	}
	if err := step(OpRename, dst); err != nil {
		return err
	}
	return p.replace(dst)
}

// Link makes newname a hard link to oldname inside the tree, replacing
// nothing (fs.ErrExist if newname exists).
func (t *Tree) Link(oldname, newname string) error {
	if err := step(OpRename, newname); err != nil {
		return &fs.PathError{Op: "link", Path: t.Path(newname), Err: err}
	}
	return t.root.Link(oldname, newname)
}

// KeepError reports a replace that took place (readers see the new
// content) without keeping the file it replaced as a backup. Callers
// treat the write as done and warn.
type KeepError struct {
	Path string // the backup that was not made
	Err  error
}

func (e *KeepError) Error() string {
	return "no backup was kept at " + e.Path + " (" + e.Err.Error() + ")"
}

func (e *KeepError) Unwrap() error { return e.Err }

// NotDurableError reports a replace that took place (readers see the new
// content) but whose directory fsync failed, so a power loss might still
// undo it. Callers treat the write as done and warn.
type NotDurableError struct {
	Path string
	Err  error
}

func (e *NotDurableError) Error() string {
	return e.Path + " was replaced but the directory fsync failed (" + unwrapPath(e.Err).Error() + "); a power loss may undo it"
}

func (e *NotDurableError) Unwrap() error { return e.Err }

// pending writes data to a pending file for name (pending.go) and
// fsyncs it. Each step passes the fault seam.
func (t *Tree) pending(name string, write func(io.Writer) error, perm fs.FileMode) (*pendingFile, error) {
	pf, err := t.newPending(name, perm)
	if err != nil {
		return nil, err
	}
	fail := func(op string, err error) (*pendingFile, error) {
		pf.Cleanup()
		return nil, &fs.PathError{Op: op, Path: t.Path(name), Err: unwrapPath(err)}
	}
	if err := step(OpWrite, name+".tmp"); err != nil {
		return fail("write", err)
	}
	if err := write(pf); err != nil {
		return fail("write", err)
	}
	if err := step(OpSync, name+".tmp"); err != nil {
		return fail("fsync", err)
	}
	if err := pf.Sync(); err != nil {
		return fail("fsync", err)
	}
	return pf, nil
}

// CreateExcl creates name with data, failing with fs.ErrExist if it exists
// (O_CREAT|O_EXCL|O_NOFOLLOW). With sync it fsyncs the file and directory.
func (t *Tree) CreateExcl(name string, data []byte, sync bool) error {
	if err := step(OpCreate, name); err != nil {
		return &fs.PathError{Op: "create", Path: t.Path(name), Err: err}
	}
	f, err := t.openFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	werr := step(OpWrite, name)
	if werr == nil {
		_, werr = f.Write(data)
	}
	if werr == nil && sync {
		if werr = step(OpSync, name); werr == nil {
			werr = f.Sync()
		}
	}
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr != nil {
		t.root.Remove(name)
		return &fs.PathError{Op: "write", Path: t.Path(name), Err: unwrapPath(werr)}
	}
	if sync {
		return t.SyncDir(filepath.Dir(name))
	}
	return nil
}

// AppendLine appends line (which must end in '\n') in one write(2). The
// caller holds the file's lock. A short or failed write is truncated away;
// after a torn last line left by a crash, the line starts on a new line.
// Only a regular file is appended to (see openFile): a FIFO at name is
// refused, never waited on.
func (t *Tree) AppendLine(name string, line []byte) error {
	if err := step(OpCreate, name); err != nil {
		return &fs.PathError{Op: "append", Path: t.Path(name), Err: err}
	}
	f, err := t.openFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	// A torn last line (a write cut short by a power loss) must not have
	// this line glued to it: start on a line of our own. The fragment stays
	// a separate line that readers skip.
	if fi.Size() > 0 {
		var last [1]byte
		if r, err := t.openFile(name, os.O_RDONLY, 0); err == nil {
			_, rerr := r.ReadAt(last[:], fi.Size()-1)
			r.Close()
			if rerr == nil && last[0] != '\n' {
				line = append([]byte{'\n'}, line...)
			}
		}
	}
	if err := step(OpWrite, name); err != nil {
		return &fs.PathError{Op: "append", Path: t.Path(name), Err: err}
	}
	n, err := f.Write(line)
	if err != nil || n != len(line) {
		if n > 0 {
			f.Truncate(fi.Size())
		}
		if err == nil {
			err = io.ErrShortWrite
		}
		return &fs.PathError{Op: "append", Path: t.Path(name), Err: unwrapPath(err)}
	}
	return nil
}

// Remove removes name (never following a symlink; it removes the link).
func (t *Tree) Remove(name string) error {
	if err := step(OpRemove, name); err != nil {
		return &fs.PathError{Op: "remove", Path: t.Path(name), Err: err}
	}
	return t.root.Remove(name)
}

// RemoveIn removes several entries of one directory through a single
// handle on it, best effort: it returns the first error but tries them
// all. Each removal passes the fault seam as dir/name.
func (t *Tree) RemoveIn(dir string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	d, err := t.openDir(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	var first error
	for _, n := range names {
		err := step(OpRemove, dir+"/"+n)
		if err == nil {
			err = removeAt(d, n)
		}
		if err != nil && first == nil {
			first = &fs.PathError{Op: "remove", Path: t.Path(dir + "/" + n), Err: err}
		}
	}
	return first
}

// Rename renames inside the tree, replacing newname.
func (t *Tree) Rename(oldname, newname string) error {
	if err := step(OpRename, newname); err != nil {
		return &fs.PathError{Op: "rename", Path: t.Path(oldname), Err: err}
	}
	return t.root.Rename(oldname, newname)
}

// Chtimes sets a regular file's access and modification times. It
// refuses a symlink, so that a planted link cannot be used to touch a file
// elsewhere, and anything else that is not a regular file (a FIFO or
// directory at a heartbeat's name is not a heartbeat).
func (t *Tree) Chtimes(name string, at time.Time) error {
	if err := t.CheckFile(name); err != nil {
		return err
	}
	if err := step(OpChtimes, name); err != nil {
		return &fs.PathError{Op: "chtimes", Path: t.Path(name), Err: err}
	}
	return t.root.Chtimes(name, at, at)
}

// SyncFile fsyncs a regular file's data (after appends that must be
// durable before a later commit).
func (t *Tree) SyncFile(name string) error {
	if err := step(OpSync, name); err != nil {
		return &fs.PathError{Op: "fsync", Path: t.Path(name), Err: err}
	}
	f, err := t.openFile(name, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return &fs.PathError{Op: "fsync", Path: t.Path(name), Err: unwrapPath(err)}
	}
	return nil
}

// SyncDir fsyncs a directory so that entries created, renamed or removed
// in it survive a power loss.
func (t *Tree) SyncDir(name string) error {
	if err := step(OpSyncDir, name); err != nil {
		return &fs.PathError{Op: "fsync", Path: t.Path(name), Err: err}
	}
	d, err := t.openDir(name)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return &fs.PathError{Op: "fsync", Path: t.Path(name), Err: unwrapPath(err)}
	}
	return nil
}

// ReadDir lists a directory's entries sorted by name, without following
// symlinks; a missing directory lists as empty, anything else at name is
// refused (see openDir).
func (t *Tree) ReadDir(name string) ([]fs.DirEntry, error) {
	d, err := t.openDir(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer d.Close()
	ents, err := d.ReadDir(-1)
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	return ents, err
}

// dirError names a wrong kind of entry where a directory failed to open.
func (t *Tree) dirError(dir string, err error) error {
	if kerr := t.CheckDir(dir); kerr != nil {
		return kerr
	}
	return err
}

func fixELOOP(t *Tree, name string, err error) error {
	if err != nil && errors.Is(err, syscall.ELOOP) {
		return &fs.PathError{Op: "open", Path: t.Path(name), Err: ErrSymlink}
	}
	return err
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// CreateFile creates name with data atomically and durably, but only if it
// does not exist (fs.ErrExist otherwise): the data is written and fsynced
// to a temp file that is then hard-linked to name (link(2) never
// replaces), so name never exists half-written.
func (t *Tree) CreateFile(name string, data []byte, perm fs.FileMode) error {
	if _, err := t.root.Lstat(name); err == nil {
		return &fs.PathError{Op: "create", Path: t.Path(name), Err: fs.ErrExist}
	}
	pf, err := t.pending(name, writeBytes(data), perm)
	if err != nil {
		return err
	}
	defer pf.Cleanup()
	if err := step(OpRename, name); err != nil {
		return &fs.PathError{Op: "create", Path: t.Path(name), Err: err}
	}
	if err := pf.link(name); err != nil {
		return &fs.PathError{Op: "create", Path: t.Path(name), Err: unwrapPath(err)}
	}
	return t.SyncDir(filepath.Dir(name))
}

// ReplaceFile atomically replaces name with data without making the
// change durable: readers see the old or the new content, whole, but a
// power loss may bring back the old one. For advisory content only
// (heartbeat descriptions), where two fsyncs per state change buy nothing.
// As WriteFile, it replaces only a regular file.
func (t *Tree) ReplaceFile(name string, data []byte, perm fs.FileMode) error {
	if err := t.CheckFile(name); err != nil {
		return err
	}
	p, err := t.newPending(name, perm)
	if err != nil {
		return err
	}
	defer p.Cleanup()
	werr := step(OpWrite, name+".tmp")
	if werr == nil {
		_, werr = p.Write(data)
	}
	if werr == nil {
		if werr = step(OpRename, name); werr == nil {
			werr = p.replace(name)
		}
	}
	if werr != nil {
		if kerr := t.CheckFile(name); kerr != nil { // a directory appeared at name
			return kerr
		}
		return &fs.PathError{Op: "replace", Path: t.Path(name), Err: unwrapPath(werr)}
	}
	return nil
}
