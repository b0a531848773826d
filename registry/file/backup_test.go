package file

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rotd/coordination/coord"
)

// claimRelease commits twice: free claimed by a, then released.
func claimRelease(t *testing.T, s *Backend) {
	t.Helper()
	ctx := context.Background()
	if err := s.update(ctx, func(tx *coord.Txn) error {
		_, err := tx.Claim(coord.Agent{ID: "a"}, coord.ClaimOptions{TaskID: "free"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.update(ctx, func(tx *coord.Txn) error {
		_, err := tx.Release("a", "free", coord.NoEpoch, "", false)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// sameFile reports whether two files of s's tree hold the same bytes.
func sameFile(t *testing.T, s *Backend, a, b string) bool {
	t.Helper()
	x, err1 := os.ReadFile(s.tree.Path(a))
	y, err2 := os.ReadFile(s.tree.Path(b))
	return err1 == nil && err2 == nil && string(x) == string(y)
}

func inode(t *testing.T, s *Backend, name string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(s.tree.Path(name), &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// wantRepairHint: every command on the registry refuses with exit 2 and
// names 'coord doctor --repair'.
func wantRepairHint(t *testing.T, s *Backend) {
	t.Helper()
	ctx := context.Background()
	for what, err := range map[string]error{
		"view":   s.view(ctx, func(*coord.Txn) error { return nil }),
		"update": s.update(ctx, func(*coord.Txn) error { return nil }),
	} {
		if coord.CodeOf(err) != coord.CodeIO || !strings.Contains(err.Error(), "coord doctor --repair") {
			t.Errorf("%s on a damaged registry: %v (code %d), want exit 2 naming coord doctor --repair", what, err, coord.CodeOf(err))
		}
	}
}

// TestRestoreWrittenInPlace: a registry written over in place (its inode
// kept: truncated, then half of it written back, as a shell's '>' and a
// tool that dies mid-write leave it) is restored from .0, the registry
// of the last commit: no backup shares the registry's inode, so none was
// written with it. The damaged one is kept aside, the log says what was
// done, .0 is the registry again (a copy of its own), and commits go on.
// Against the build that kept .0 as a hard link to the registry, .0 is
// damaged too and the restore is from .1, losing the last commit.
func TestRestoreWrittenInPlace(t *testing.T) {
	s := freshStore(t, crashSeed)
	claimRelease(t, s)
	for n := 0; n <= Backups; n++ {
		if _, err := os.Stat(s.tree.Path(BackupName(n))); err == nil && inode(t, s, RegistryFile) == inode(t, s, BackupName(n)) {
			t.Fatalf("%s shares the registry's inode", BackupName(n))
		}
	}
	// Truncated where it stands, then half written back.
	data, _ := os.ReadFile(s.tree.Path(RegistryFile))
	before := inode(t, s, RegistryFile)
	f, err := os.OpenFile(s.tree.Path(RegistryFile), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(data[:len(data)/2])
	f.Close()
	if inode(t, s, RegistryFile) != before {
		t.Fatal("the write was not in place")
	}
	wantRepairHint(t, s)
	ctx := context.Background()
	probs, err := s.Doctor(ctx, true)
	restored := false
	for _, p := range probs {
		restored = restored || strings.Contains(p.What, BackupName(0))
		if !p.Fixed {
			err = errFixed(p.What)
		}
	}
	// The restored registry's claim gets its lock back in the same run.
	if err != nil || !restored {
		t.Fatalf("doctor --repair: %+v, %v", probs, err)
	}
	var got string
	if err := s.view(ctx, func(tx *coord.Txn) error {
		got = string(tx.Task("free").Status) + " by " + tx.Task("free").ClaimedBy
		return nil
	}); err != nil {
		t.Fatalf("after the repair: %v", err)
	}
	if got != "done by a" {
		t.Fatalf("restored: free %s, want the registry of the last commit (done by a)", got)
	}
	aside, _ := filepath.Glob(s.tree.Path(RegistryFile + AsideMark + "*"))
	if len(aside) != 1 {
		t.Fatalf("the damaged registry was not kept aside: %v", aside)
	}
	if kept, _ := os.ReadFile(aside[0]); string(kept) != string(data[:len(data)/2]) {
		t.Fatalf("what was kept aside is not the damaged registry")
	}
	if reg, _ := os.ReadFile(s.tree.Path(RegistryFile)); inode(t, s, RegistryFile) == inode(t, s, BackupName(0)) || !sameFile(t, s, RegistryFile, BackupName(0)) {
		t.Fatalf("%s is not a copy of its own of the restored registry (%d bytes)", BackupName(0), len(reg))
	}
	log, _ := os.ReadFile(s.tree.Path(LogFile))
	if !strings.Contains(string(log), "coordinator ▶ repaired: ") || !strings.Contains(string(log), "restored it from "+BackupName(0)) {
		t.Fatalf("the log does not say the registry was restored:\n%s", log)
	}
	if err := s.update(ctx, func(tx *coord.Txn) error {
		_, err := tx.Progress("old", "held", coord.NoEpoch, 10, "")
		return err
	}); err != nil {
		t.Fatalf("a commit after the restore: %v", err)
	}
	if probs, err := s.Doctor(ctx, false); err != nil || len(probs) != 0 {
		t.Fatalf("doctor after the restore and a commit: %+v, %v", probs, err)
	}
}

// TestRegistryTooLargeNamesRepair: the field report's registry, larger
// than any reader takes: every command names 'coord doctor --repair',
// which puts back the last good one (.0: the file was replaced, not
// written in place).
func TestRegistryTooLargeNamesRepair(t *testing.T) {
	s := freshStore(t, crashSeed)
	claimRelease(t, s)
	big := s.tree.Path(RegistryFile + ".big")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(MaxRegistrySize + 1) // sparse: nothing is read, the size is refused
	f.Close()
	if err := os.Rename(big, s.tree.Path(RegistryFile)); err != nil {
		t.Fatal(err)
	}
	wantRepairHint(t, s)
	if _, err := s.Doctor(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	if err := s.view(context.Background(), func(tx *coord.Txn) error {
		if task := tx.Task("free"); task.Status != coord.Done {
			t.Errorf("restored: free is %s, want done (the last good registry)", task.Status)
		}
		return nil
	}); err != nil {
		t.Fatalf("after the repair: %v", err)
	}
}

// TestOldTreeWithoutBackups: a tree made before .backup/ existed works:
// doctor does not miss the directory, the first commit makes it, and
// backups are not taken for temp leftovers.
func TestOldTreeWithoutBackups(t *testing.T) {
	s := freshStore(t, crashSeed)
	ctx := context.Background()
	s.update(ctx, func(*coord.Txn) error { return nil }) // the lock of "held"
	if err := os.RemoveAll(s.tree.Path(BackupDir)); err != nil {
		t.Fatal(err)
	}
	if probs, err := s.Doctor(ctx, false); err != nil || len(probs) != 0 {
		t.Fatalf("doctor on a tree without %s: %+v, %v", BackupDir, probs, err)
	}
	claimRelease(t, s)
	for n := 0; n <= 2; n++ {
		if _, err := os.Stat(s.tree.Path(BackupName(n))); err != nil {
			t.Errorf("backup %d: %v", n, err)
		}
	}
	if probs, err := s.Doctor(ctx, false); err != nil || len(probs) != 0 {
		t.Fatalf("doctor with backups: %+v, %v", probs, err)
	}
}

type errFixed string

func (e errFixed) Error() string { return "not fixed: " + string(e) }

// TestRestoreKeepsEpochs: the registry restored from before the last
// commit, a claim, does not know that claim's epoch; the next claim still
// gets a greater one (the epoch mark and the claim's lock file keep it).
func TestRestoreKeepsEpochs(t *testing.T) {
	ctx := context.Background()
	s := freshStore(t, `{"version":1,"tasks":[{"id":"x"},{"id":"y"}]}`)
	claim := func(id string) int64 {
		t.Helper()
		var epoch int64
		if err := s.update(ctx, func(tx *coord.Txn) error {
			task, err := tx.Claim(coord.Agent{ID: "a"}, coord.ClaimOptions{TaskID: id})
			if err == nil {
				epoch = task.Epoch
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return epoch
	}
	issued := claim("x")
	data, _ := os.ReadFile(s.tree.Path(RegistryFile))
	if err := os.WriteFile(s.tree.Path(RegistryFile), data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Doctor(ctx, true); err != nil {
		t.Fatal(err)
	}
	if got := claim("y"); got <= issued {
		t.Fatalf("after the restore a claim got epoch %d; %d was issued before", got, issued)
	}
}
