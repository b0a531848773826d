package fsops

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWriteFileFromKeeping: each replace keeps a copy of the new file as
// keep[0] and the ones it replaced as keep[1], keep[2], …, the oldest
// going; no backup shares an inode with the file, so the file written
// over in place (truncated, then written) leaves every backup as it was,
// keep[0] the newest good content; the backup directory is made when
// missing; a tree written before (no keep[0]) keeps the file it replaces
// all the same; a backup that cannot be kept is a *KeepError after the
// replace took place, and a write that fails changes nothing. Against
// the build that kept keep[0] as a hard link to the file, the in-place
// write reaches keep[0] too.
func TestWriteFileFromKeeping(t *testing.T) {
	dir := t.TempDir()
	tr, err := OpenTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	keep := []string{"bk/f.0", "bk/f.1", "bk/f.2", "bk/f.3"}
	put := func(s string) error {
		return tr.WriteFileFromKeeping("f", 0o644, func(w io.Writer) error { _, err := io.WriteString(w, s); return err }, keep)
	}
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "-"
		}
		return string(data)
	}
	all := func() string {
		return strings.Join([]string{read("f"), read(keep[0]), read(keep[1]), read(keep[2]), read(keep[3])}, " ")
	}
	ino := func(name string) uint64 {
		var st syscall.Stat_t
		if err := syscall.Stat(filepath.Join(dir, name), &st); err != nil {
			t.Fatal(err)
		}
		return st.Ino
	}
	for _, v := range []string{"v1", "v2", "v3", "v4", "v5"} {
		if err := put(v); err != nil {
			t.Fatalf("write %s: %v", v, err)
		}
	}
	if got := all(); got != "v5 v5 v4 v3 v2" {
		t.Fatalf("file and backups: %s, want v5 v5 v4 v3 v2", got)
	}
	for _, k := range keep {
		if ino("f") == ino(k) {
			t.Fatalf("%s shares the file's inode", k)
		}
	}
	// Written over in place, as a shell's '>' and then a write leave it:
	// the same inode, new content. The backups are untouched.
	in, err := os.OpenFile(filepath.Join(dir, "f"), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	in.WriteString("garbage")
	in.Close()
	if got := all(); got != "garbage v5 v4 v3 v2" {
		t.Fatalf("after an in-place write of the file: %s, want garbage v5 v4 v3 v2", got)
	}
	if err := put("v5"); err != nil || all() != "v5 v5 v5 v4 v3" {
		t.Fatalf("the write after: %v, %s", err, all())
	}
	// A write that fails keeps the file and the backups as they were.
	if err := tr.WriteFileFromKeeping("f", 0o644, func(w io.Writer) error { return errors.New("no") }, keep); err == nil || all() != "v5 v5 v5 v4 v3" {
		t.Fatalf("a failed write changed the file or its backups (%v): %s", err, all())
	}
	// A tree from before backups, or a crash before the last link: no
	// keep[0]. The file replaced is kept all the same.
	os.Remove(filepath.Join(dir, keep[0]))
	if err := put("v6"); err != nil || all() != "v6 v6 v5 v5 v4" {
		t.Fatalf("without keep[0]: %v, %s", err, all())
	}
	// The file replaced by other means (an editor's save): keep[0], as
	// written last, moves on as the newest backup.
	os.WriteFile(filepath.Join(dir, "g"), []byte("edited"), 0o644)
	os.Rename(filepath.Join(dir, "g"), filepath.Join(dir, "f"))
	if err := put("v7"); err != nil || all() != "v7 v7 v6 v5 v5" {
		t.Fatalf("after an edit by rename: %v, %s", err, all())
	}
	// A backup that cannot be kept (a file where its directory goes) does
	// not stop the replace.
	if err := os.RemoveAll(filepath.Join(dir, "bk")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bk"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err = put("v8")
	var ke *KeepError
	if !errors.As(err, &ke) || read("f") != "v8" {
		t.Fatalf("replace with no backup possible: %v, file %q", err, read("f"))
	}
}
