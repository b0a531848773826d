package fsops

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A file named by its path (a seed file, CLAUDE_ENV_FILE, git's pointer
// files) is opened as a Tree's are: a FIFO, socket, device or directory
// there is refused at once with a *KindError naming it, never waited on,
// and left in place, also behind a symlink.
//
// Broken build this fails against: os.OpenFile without O_NONBLOCK (the
// FIFO cases block until the bound fires) or without the fstat check
// (AppendFile writes into the device).
func TestNamedFilesRefuseSpecialFiles(t *testing.T) {
	ops := map[string]func(name string) error{
		"OpenFile": func(name string) error {
			f, err := OpenFile(name, os.O_RDONLY, 0)
			if err == nil {
				f.Close()
			}
			return err
		},
		"ReadFile":         func(name string) error { _, err := ReadFile(name, 1<<20); return err },
		"ReadFileNoFollow": func(name string) error { _, err := ReadFileNoFollow(name, 1<<20); return err },
		"AppendFile":       func(name string) error { return AppendFile(name, []byte("x\n"), 0o600) },
	}
	for _, kind := range []string{"FIFO", "directory", "socket", "device"} {
		for _, via := range []string{"", "symlink"} {
			for opName, op := range ops {
				if via == "symlink" && opName == "ReadFileNoFollow" {
					continue
				}
				t.Run(kind+"/"+via+"/"+opName, func(t *testing.T) {
					dir := t.TempDir()
					target := filepath.Join(dir, "f")
					if !plantKind(t, target, kind) {
						t.Skip("mknod not permitted")
					}
					name := target
					if via == "symlink" {
						name = filepath.Join(dir, "link")
						if err := os.Symlink("f", name); err != nil {
							t.Fatal(err)
						}
					}
					err := bounded(t, opName, func() error { return op(name) })
					var ke *KindError
					if !errors.As(err, &ke) || !errors.Is(err, ErrWrongKind) {
						t.Fatalf("%s on a %s: %v; want a *KindError", opName, kind, err)
					}
					if msg := err.Error(); !strings.Contains(msg, name) || !strings.Contains(msg, kind) || !strings.Contains(msg, "not a regular file") {
						t.Fatalf("message %q does not name the file and its kind", msg)
					}
					if fi, err := os.Lstat(target); err != nil || fi.Mode().IsRegular() {
						t.Fatalf("the %s was replaced or removed: %v", kind, err)
					}
				})
			}
		}
	}
}

// The regular cases: a symlink to a regular file is followed unless
// refused (ReadFileNoFollow), ReadFile is bounded and reads /proc files
// (whose size the kernel reports as 0), AppendFile creates with its mode
// and appends, ReadDir lists sorted and refuses a FIFO at once.
func TestNamedFiles(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("f", link); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(link, 100); err != nil || string(b) != "hello\n" {
		t.Errorf("ReadFile through a symlink = %q, %v", b, err)
	}
	if _, err := ReadFileNoFollow(link, 100); !errors.Is(err, ErrSymlink) {
		t.Errorf("ReadFileNoFollow on a symlink: %v, want ErrSymlink", err)
	}
	if b, err := ReadFileNoFollow(f, 100); err != nil || string(b) != "hello\n" {
		t.Errorf("ReadFileNoFollow = %q, %v", b, err)
	}
	if _, err := ReadFile(f, 5); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFile over the bound: %v, want ErrTooLarge", err)
	}
	if b, err := ReadFile(f, 6); err != nil || len(b) != 6 {
		t.Errorf("ReadFile at the bound = %q, %v", b, err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile of a missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat("/proc/self/stat"); err == nil {
		b, err := ReadFile("/proc/"+strconv.Itoa(os.Getpid())+"/stat", 4096)
		if err != nil || !strings.HasPrefix(string(b), strconv.Itoa(os.Getpid())+" (") {
			t.Errorf("ReadFile of /proc/PID/stat = %q, %v", b, err)
		}
	}
	env := filepath.Join(dir, "env")
	for _, line := range []string{"a\n", "b\n"} {
		if err := AppendFile(env, []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(env); string(b) != "a\nb\n" {
		t.Errorf("after two appends: %q", b)
	}
	if fi, err := os.Stat(env); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("created with %v, %v; want 0600", fi.Mode(), err)
	}
	ents, err := ReadDir(dir)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if err != nil || strings.Join(got, " ") != "env f link" {
		t.Errorf("ReadDir = %q, %v", got, err)
	}
	plantKind(t, filepath.Join(dir, "fifo"), "FIFO")
	err = bounded(t, "ReadDir", func() error { _, err := ReadDir(filepath.Join(dir, "fifo")); return err })
	var ke *KindError
	if !errors.As(err, &ke) || !strings.Contains(err.Error(), "a FIFO, not a directory") {
		t.Errorf("ReadDir on a FIFO: %v, want a *KindError", err)
	}
}
