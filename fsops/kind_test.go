package fsops

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// plantKind puts an entry of kind at path: "FIFO", "directory" (with an
// entry), "socket" or "device" (a /dev/null-like node; false if mknod is
// not permitted).
func plantKind(t *testing.T, path, kind string) bool {
	t.Helper()
	var err error
	switch kind {
	case "FIFO":
		err = unix.Mkfifo(path, 0o644)
	case "directory":
		if err = os.Mkdir(path, 0o755); err == nil {
			err = os.WriteFile(filepath.Join(path, "x"), nil, 0o644)
		}
	case "socket":
		var fd int
		if fd, err = unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0); err == nil {
			// sun_path is short; made where t.TempDir is (GOTMPDIR, as
			// package testing does), so the rename stays on one file system.
			dir, _ := os.MkdirTemp(os.Getenv("GOTMPDIR"), "s")
			defer os.RemoveAll(dir)
			if err = unix.Bind(fd, &unix.SockaddrUnix{Name: filepath.Join(dir, "s")}); err == nil {
				err = os.Rename(filepath.Join(dir, "s"), path)
			}
			unix.Close(fd)
		}
	case "device":
		if unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))) != nil {
			return false
		}
	}
	if err != nil {
		t.Fatalf("plant %s: %v", kind, err)
	}
	return true
}

// bounded runs op and fails the test if it does not return within a
// generous bound (an op blocked in open(2) on a FIFO never returns).
func bounded(t *testing.T, what string, op func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- op() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("%s blocked", what)
		return nil
	}
}

// Every Tree operation on a name refuses a FIFO, socket, device or
// directory at once, with a *KindError naming the path and the kind, and
// leaves it in place.
//
// Broken build this fails against: openFile without O_NONBLOCK (Open,
// ReadFile, AppendLine and SyncFile block on the FIFO) or without the
// fstat check (AppendLine writes into the device, Lock locks a FIFO).
func TestEveryOpRefusesSpecialFiles(t *testing.T) {
	ops := map[string]func(tr *Tree, name string) error{
		"Open": func(tr *Tree, name string) error {
			f, err := tr.Open(name)
			if err == nil {
				f.Close()
			}
			return err
		},
		"ReadFile":   func(tr *Tree, name string) error { _, err := tr.ReadFile(name, 1<<20); return err },
		"AppendLine": func(tr *Tree, name string) error { return tr.AppendLine(name, []byte("x\n")) },
		"Lock": func(tr *Tree, name string) error {
			unlock, err := tr.Lock(context.Background(), name, time.Second, []byte("me"))
			if err == nil {
				unlock()
			}
			return err
		},
		"WriteFile": func(tr *Tree, name string) error { return tr.WriteFile(name, []byte("x"), 0o644) },
		"WriteFileFrom": func(tr *Tree, name string) error {
			return tr.WriteFileFrom(name, 0o644, func(io.Writer) error { return nil })
		},
		"ReplaceFile": func(tr *Tree, name string) error { return tr.ReplaceFile(name, []byte("x"), 0o644) },
		"Chtimes":     func(tr *Tree, name string) error { return tr.Chtimes(name, time.Now()) },
		"SyncFile":    func(tr *Tree, name string) error { return tr.SyncFile(name) },
		"CheckFile":   func(tr *Tree, name string) error { return tr.CheckFile(name) },
	}
	for _, kind := range []string{"FIFO", "directory", "socket", "device"} {
		for opName, op := range ops {
			t.Run(kind+"/"+opName, func(t *testing.T) {
				dir := t.TempDir()
				if !plantKind(t, filepath.Join(dir, "f"), kind) {
					t.Skip("mknod not permitted")
				}
				tr, err := OpenTree(dir)
				if err != nil {
					t.Fatal(err)
				}
				defer tr.Close()
				err = bounded(t, opName, func() error { return op(tr, "f") })
				var ke *KindError
				if !errors.As(err, &ke) || !errors.Is(err, ErrWrongKind) {
					t.Fatalf("%s on a %s: %v; want a *KindError", opName, kind, err)
				}
				if msg := err.Error(); !strings.Contains(msg, filepath.Join(dir, "f")) || !strings.Contains(msg, kind) || !strings.Contains(msg, "not a regular file") {
					t.Fatalf("message %q does not name the file and its kind", msg)
				}
				fi, err := os.Lstat(filepath.Join(dir, "f"))
				if err != nil || fi.Mode().IsRegular() {
					t.Fatalf("the %s was replaced or removed: %v", kind, err)
				}
			})
		}
	}
}

// CreateExcl never replaces anything: a special file at the name is
// fs.ErrExist, as any existing entry.
func TestCreateExclOverSpecialFile(t *testing.T) {
	dir := t.TempDir()
	plantKind(t, filepath.Join(dir, "f"), "FIFO")
	tr, err := OpenTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if err := bounded(t, "CreateExcl", func() error { return tr.CreateExcl("f", []byte("x"), true) }); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("CreateExcl over a FIFO: %v", err)
	}
}

// Directories: a FIFO, socket, device or file where a directory belongs
// is refused by OpenTree (for the known subdirectories), ReadDir, SyncDir,
// LstatAll, RemoveIn, MkdirAll, and by any file operation beneath it.
func TestEveryOpRefusesSpecialDirs(t *testing.T) {
	ops := map[string]func(tr *Tree) error{
		"ReadDir":   func(tr *Tree) error { _, err := tr.ReadDir("d"); return err },
		"SyncDir":   func(tr *Tree) error { return tr.SyncDir("d") },
		"LstatAll":  func(tr *Tree) error { _, err := tr.LstatAll("d", []string{"x"}); return err },
		"RemoveIn":  func(tr *Tree) error { return tr.RemoveIn("d", []string{"x"}) },
		"MkdirAll":  func(tr *Tree) error { return tr.MkdirAll("d", 0o755) },
		"ReadFile":  func(tr *Tree) error { _, err := tr.ReadFile("d/x", 1<<20); return err },
		"WriteFile": func(tr *Tree) error { return tr.WriteFile("d/x", nil, 0o644) },
		"Lock": func(tr *Tree) error {
			_, err := tr.Lock(context.Background(), "d/x", time.Second, nil)
			return err
		},
		"AppendLine": func(tr *Tree) error { return tr.AppendLine("d/x", []byte("x\n")) },
		"CheckDir":   func(tr *Tree) error { return tr.CheckDir("d") },
	}
	for _, kind := range []string{"FIFO", "socket", "device"} {
		t.Run(kind+"/OpenTree", func(t *testing.T) {
			dir := t.TempDir()
			if !plantKind(t, filepath.Join(dir, "d"), kind) {
				t.Skip("mknod not permitted")
			}
			_, err := OpenTree(dir, "d")
			if !errors.Is(err, ErrWrongKind) || !strings.Contains(err.Error(), "not a directory") {
				t.Fatalf("OpenTree with a %s for a subdirectory: %v", kind, err)
			}
		})
		for opName, op := range ops {
			t.Run(kind+"/"+opName, func(t *testing.T) {
				dir := t.TempDir()
				if !plantKind(t, filepath.Join(dir, "d"), kind) {
					t.Skip("mknod not permitted")
				}
				tr, err := OpenTree(dir)
				if err != nil {
					t.Fatal(err)
				}
				defer tr.Close()
				err = bounded(t, opName, func() error { return op(tr) })
				if !errors.Is(err, ErrWrongKind) || !strings.Contains(err.Error(), filepath.Join(dir, "d")+" is a") {
					t.Fatalf("%s under a %s: %v; want a *KindError naming it", opName, kind, err)
				}
			})
		}
	}
}

// A regular file opened through openFile is in blocking mode again
// (O_NONBLOCK only guarded the open).
func TestOpenClearsNonblock(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644)
	tr, err := OpenTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	f, err := tr.Open("f")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rc, _ := f.SyscallConn()
	var flags int
	rc.Control(func(fd uintptr) { flags, err = unix.FcntlInt(fd, unix.F_GETFL, 0) })
	if err != nil || flags&unix.O_NONBLOCK != 0 {
		t.Fatalf("flags %#x, %v: O_NONBLOCK still set", flags, err)
	}
}

// The lock still excludes: a second Lock on the same sidecar waits and
// times out while the first is held, and gets it once released.
func TestLockExcludes(t *testing.T) {
	tr, err := OpenTree(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	unlock, err := tr.Lock(context.Background(), "l", time.Second, []byte(`{"holder":"one"}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = tr.Lock(context.Background(), "l", 50*time.Millisecond, nil)
	var lt *LockTimeoutError
	if !errors.As(err, &lt) || lt.Holder != `{"holder":"one"}` {
		t.Fatalf("second lock while held: %v", err)
	}
	got := make(chan error, 1)
	go func() {
		u, err := tr.Lock(context.Background(), "l", time.Minute, nil)
		if err == nil {
			u()
		}
		got <- err
	}()
	unlock()
	if err := bounded(t, "Lock after release", func() error { return <-got }); err != nil {
		t.Fatal(err)
	}
}
