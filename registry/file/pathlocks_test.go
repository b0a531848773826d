package file

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/fsops"
	"github.com/rotd/coordination/registry/format"
)

// pathLocksOf reads the registry's path locks and whether it holds the
// member at all.
func pathLocksOf(t *testing.T, s *Backend) ([]coord.PathLock, bool) {
	t.Helper()
	data, err := s.tree.ReadFile(RegistryFile, MaxRegistrySize)
	if err != nil {
		t.Fatal(err)
	}
	f, err := format.Parse("registry", data)
	if err != nil {
		t.Fatal(err)
	}
	return f.PathLocks, f.HasPathLocks()
}

func lockPaths(t *testing.T, s *Backend, agent string, paths ...string) {
	t.Helper()
	if err := s.update(context.Background(), func(tx *coord.Txn) error { return tx.LockPaths(agent, paths, 0) }); err != nil {
		t.Fatalf("lock %v for %s: %v", paths, agent, err)
	}
}

func exists(s *Backend, name string) bool {
	_, err := s.tree.Lstat(name)
	return err == nil
}

// A path lock lives in the registry with its task, and its mirror file
// follows: written when the lock is taken, removed when the task is
// released, in the commit that releases it.
func TestPathLockReleasedWithItsTask(t *testing.T) {
	s := freshStore(t, crashSeed)
	lockPaths(t, s, "old", "src/x", "docs/*.md")
	locks, _ := pathLocksOf(t, s)
	if len(locks) != 2 || locks[0].TaskID != "held" || locks[0].Holder != "old" {
		t.Fatalf("registry path locks %+v", locks)
	}
	for _, p := range []string{"src/x", "docs/*.md"} {
		data, err := s.tree.ReadFile(PathLockName(p), maxSmallFile)
		if err != nil {
			t.Fatalf("mirror of %s: %v", p, err)
		}
		if l, err := format.ParsePathLock("mirror", data); err != nil || l.Path != p || l.Holder != "old" {
			t.Fatalf("mirror of %s holds %+v, %v", p, l, err)
		}
	}
	var steps []string
	fsops.SetFaultHook(func(op fsops.Op, path string) error {
		steps = append(steps, fmt.Sprintf("%s %s", op, path))
		return nil
	})
	err := s.update(context.Background(), func(tx *coord.Txn) error {
		_, err := tx.Release("old", "held", coord.NoEpoch, "x", false)
		return err
	})
	fsops.SetFaultHook(nil)
	if err != nil {
		t.Fatal(err)
	}
	if locks, present := pathLocksOf(t, s); len(locks) != 0 || !present {
		t.Fatalf("after the release the registry holds %+v (member %v)", locks, present)
	}
	if exists(s, PathLockName("src/x")) || exists(s, PathLockName("docs/*.md")) {
		t.Fatal("mirror files survived the release")
	}
	// One registry rename carries the release and the unlock; the mirror
	// is removed after it.
	all := strings.Join(steps, "\n")
	renames := strings.Count(all, "rename "+RegistryFile)
	rm := strings.Index(all, "unlink "+PathLockName("src/x"))
	if renames != 1 || rm < strings.Index(all, "rename "+RegistryFile) {
		t.Fatalf("steps of the release:\n%s\nwant one registry rename, then the mirror removed", all)
	}
	log := strings.Join(allLogLines(t, s), "\n")
	if !strings.Contains(log, "old ▶ unlocked file src/x") || !strings.Contains(log, "old ▶ released task held") {
		t.Fatalf("log:\n%s", log)
	}
}

// A registry from before path locks moved into it: the lock files are the
// locks. Readers see them, the first Update adopts them (and logs it), and
// the files stay as the mirror.
func TestPathLockMigration(t *testing.T) {
	s := freshStore(t, crashSeed)
	old := func(path, holder string) {
		// As an older coord wrote them: json.Marshal of its PathLock.
		data := fmt.Sprintf(`{"path":%q,"holder":%q,"since":"2026-11-22T10:00:00Z","task_id":"held"}`+"\n", path, holder)
		if err := s.tree.WriteFile(PathLockName(path), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old("src/x", "old")
	old("src/y", "b")
	var seen []string
	s.view(context.Background(), func(tx *coord.Txn) error {
		for _, l := range tx.LivePathLocks() {
			seen = append(seen, l.Path)
		}
		return nil
	})
	if strings.Join(seen, " ") != "src/x src/y" {
		t.Fatalf("a reader of the unmigrated tree sees %v", seen)
	}
	if _, present := pathLocksOf(t, s); present {
		t.Fatal("a read migrated the registry")
	}
	// Another agent's path is refused against the adopted locks.
	err := s.update(context.Background(), func(tx *coord.Txn) error { return tx.LockPaths("c", []string{"src"}, 0) })
	if coord.CodeOf(err) != coord.CodeConflict {
		t.Fatalf("lock over adopted locks: %v, want a conflict", err)
	}
	if _, present := pathLocksOf(t, s); present {
		t.Fatal("a refused transaction migrated the registry")
	}
	if err := s.update(context.Background(), func(*coord.Txn) error { return nil }); err != nil {
		t.Fatal(err)
	}
	locks, present := pathLocksOf(t, s)
	if !present || len(locks) != 2 || locks[0].Path != "src/x" || locks[1].Holder != "b" {
		t.Fatalf("after the first Update the registry holds %+v (member %v)", locks, present)
	}
	log := strings.Join(allLogLines(t, s), "\n")
	for _, want := range []string{"coordinator ▶ reconciled: adopted path lock src/x (held by old)", "reconciled: adopted path lock src/y (held by b)"} {
		if !strings.Contains(log, want) {
			t.Fatalf("log lacks %q:\n%s", want, log)
		}
	}
	if strings.Count(log, "adopted") != 2 {
		t.Fatalf("adopted more than once:\n%s", log)
	}
	if !exists(s, PathLockName("src/x")) || !exists(s, PathLockName("src/y")) {
		t.Fatal("the adopted files were removed")
	}
	// From now on the registry is the truth: its release removes the file.
	if err := s.update(context.Background(), func(tx *coord.Txn) error {
		_, err := tx.Release("old", "held", coord.NoEpoch, "x", false)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if exists(s, PathLockName("src/x")) || !exists(s, PathLockName("src/y")) {
		t.Fatal("the release did not remove exactly its agent's mirror")
	}
	if probs := s.diagnose(); len(probs) > 0 {
		t.Fatalf("doctor after the migration: %v", probs)
	}
}

// An unmigrated lock file that cannot be read stops the migration (its
// path, and so what it covers, is unknown): every Update exits 2 naming
// it, and nothing is written, until it is fixed.
func TestPathLockMigrationRefusesUnreadable(t *testing.T) {
	s := freshStore(t, crashSeed)
	bad := PathLockName("src/x")
	if err := s.tree.WriteFile(bad, []byte(`{"path":`), 0o644); err != nil {
		t.Fatal(err)
	}
	before := readTreeFile(t, s, RegistryFile)
	err := s.update(context.Background(), func(tx *coord.Txn) error {
		t.Fatal("fn ran on an unreadable path lock")
		return nil
	})
	if coord.CodeOf(err) != coord.CodeIO || !strings.Contains(err.Error(), s.tree.Path(bad)) {
		t.Fatalf("Update: %v, want exit 2 naming %s", err, bad)
	}
	if after := readTreeFile(t, s, RegistryFile); string(after) != string(before) {
		t.Fatal("the registry changed")
	}
}

// The mirror is reconciled like the task locks: a file the registry does
// not back is removed, a missing one recreated (each logged); a mirror name
// holding something that is not a regular file is refused, named.
func TestPathLockMirrorReconciled(t *testing.T) {
	s := freshStore(t, crashSeed)
	lockPaths(t, s, "old", "src/x")
	if err := os.Remove(s.tree.Path(PathLockName("src/x"))); err != nil {
		t.Fatal(err)
	}
	stray := PathLockName("src/gone")
	if err := s.tree.WriteFile(stray, []byte(`{"path":"src/gone","holder":"z","since":"2026-01-01T00:00:00Z"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.update(context.Background(), func(*coord.Txn) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if !exists(s, PathLockName("src/x")) || exists(s, stray) {
		t.Fatal("the mirror was not reconciled")
	}
	log := strings.Join(allLogLines(t, s), "\n")
	if !strings.Contains(log, "reconciled: restored missing path lock file "+PathLockName("src/x")) ||
		!strings.Contains(log, "reconciled: removed path lock file "+stray+" not backed by the registry") {
		t.Fatalf("log:\n%s", log)
	}
	mkfifo(t, s.tree.Path(PathLockName("src/x")))
	err := s.update(context.Background(), func(*coord.Txn) error { return nil })
	if coord.CodeOf(err) != coord.CodeIO || !strings.Contains(err.Error(), "is a FIFO") || !strings.Contains(err.Error(), "doctor --repair") {
		t.Fatalf("Update over a FIFO mirror: %v, want exit 2 naming it and the fix", err)
	}
}

// A file in file_locks/ that is no path lock at all (it does not parse) is
// not coord's: the reconcile leaves it, whatever its name.
func TestPathLockReconcileLeavesForeignFiles(t *testing.T) {
	s := freshStore(t, crashSeed)
	lockPaths(t, s, "old", "src/x")
	foreign := PathLockName("src/y")
	writeTreeFile(t, s, foreign, []byte("notes\n"))
	if err := s.update(context.Background(), func(*coord.Txn) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got := readTreeFile(t, s, foreign); string(got) != "notes\n" {
		t.Fatalf("the foreign file became %q", got)
	}
}
