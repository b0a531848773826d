package file

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/fsops"
)

const epochSeed = `{"version":1,"last_epoch":0,"tasks":[
{"id":"t1"},{"id":"t2"},{"id":"t3"},{"id":"t4"},{"id":"t5"},{"id":"t6"}
]}
`

func claimAs(t *testing.T, s *Backend, agent, id string) int64 {
	t.Helper()
	var epoch int64
	err := s.update(context.Background(), func(tx *coord.Txn) error {
		task, err := tx.Claim(coord.Agent{ID: agent}, coord.ClaimOptions{TaskID: id})
		if err == nil {
			epoch = task.Epoch
		}
		return err
	})
	if err != nil {
		t.Fatalf("claim %s by %s: %v", id, agent, err)
	}
	return epoch
}

func releaseAs(t *testing.T, s *Backend, agent, id string) {
	t.Helper()
	if err := s.update(context.Background(), func(tx *coord.Txn) error {
		_, err := tx.Release(agent, id, coord.NoEpoch, "done", false)
		return err
	}); err != nil {
		t.Fatalf("release %s: %v", id, err)
	}
}

func readTreeFile(t *testing.T, s *Backend, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(s.tree.Path(name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func writeTreeFile(t *testing.T, s *Backend, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(s.tree.Path(name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func removeAll(t *testing.T, s *Backend, dir, suffix string) {
	t.Helper()
	ents, _ := os.ReadDir(s.tree.Path(dir))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), suffix) {
			if err := os.Remove(filepath.Join(s.tree.Path(dir), e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestEpochNeverReissued: a registry restored from a backup (or a
// committed .rotd/ and a 'git checkout') never makes coord hand out an
// epoch it already issued, whatever else survives the restore: the epoch
// mark, an unbacked lock, the log's tail, a rotated log, the archive.
//
// Broken build this fails against: the counter taken from the registry
// alone (every case: the reconcile removes t4's lock and the next claim
// gets epoch 3 again).
func TestEpochNeverReissued(t *testing.T) {
	cases := []struct {
		name string
		// after the registry is restored, make the rest of the tree so
		restore func(t *testing.T, s *Backend, oldMark []byte)
		// the new epoch must exceed this (the highest still recorded)
		above int64
	}{
		{"mark kept", func(*testing.T, *Backend, []byte) {}, 4},
		{"mark restored, unbacked lock", func(t *testing.T, s *Backend, m []byte) {
			writeTreeFile(t, s, EpochFile, m)
		}, 4},
		{"mark restored, locks gone, log tail", func(t *testing.T, s *Backend, m []byte) {
			writeTreeFile(t, s, EpochFile, m)
			removeAll(t, s, LocksDir, ".lock")
		}, 4},
		{"mark lost, unbacked lock", func(t *testing.T, s *Backend, _ []byte) {
			os.Remove(s.tree.Path(EpochFile))
		}, 4},
		{"mark lost, locks gone, rotated log", func(t *testing.T, s *Backend, _ []byte) {
			os.Remove(s.tree.Path(EpochFile))
			removeAll(t, s, LocksDir, ".lock")
			if err := os.Rename(s.tree.Path(LogFile), s.tree.Path(RotatedName("2026-01-01"))); err != nil {
				t.Fatal(err)
			}
		}, 4},
		{"mark lost, locks and logs gone, archive", func(t *testing.T, s *Backend, _ []byte) {
			os.Remove(s.tree.Path(EpochFile))
			removeAll(t, s, LocksDir, ".lock")
			removeAll(t, s, ".", ".log")
		}, 3},
		{"mark emptied by a power cut", func(t *testing.T, s *Backend, _ []byte) {
			writeTreeFile(t, s, EpochFile, nil)
		}, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := freshStore(t, epochSeed)
			issued := map[int64]string{}
			issue := func(agent, id string) {
				e := claimAs(t, s, agent, id)
				if prev, dup := issued[e]; dup {
					t.Fatalf("epoch %d issued twice: to %s and to %s", e, prev, id)
				}
				issued[e] = id
			}
			issue("a", "t1")
			issue("a", "t2")
			oldReg, oldMark := readTreeFile(t, s, RegistryFile), readTreeFile(t, s, EpochFile)
			issue("b", "t3") // epoch 3, released and archived
			releaseAs(t, s, "b", "t3")
			if _, err := s.archive(context.Background(), time.Time{}); err != nil {
				t.Fatal(err)
			}
			issue("c", "t4") // epoch 4, its lock stays
			writeTreeFile(t, s, RegistryFile, oldReg)
			c.restore(t, s, oldMark)
			e := claimAs(t, s, "d", "t5")
			if e <= c.above {
				t.Fatalf("after the restore the next claim got epoch %d; the tree records up to %d (issued: %v)", e, c.above, issued)
			}
			if probs := s.diagnose(); len(probs) > 0 {
				t.Fatalf("doctor after the claim: %v", probs)
			}
		})
	}
}

// TestDoctorEpochBehind: doctor reports a counter behind the highest epoch
// recorded anywhere (here only the archive remembers it) and --repair
// raises the mark and the registry's last_epoch; a damaged mark is
// reported and rewritten.
//
// Broken build this fails against: diagnose without epochProblems (doctor
// says every invariant holds, and the next claim reissues epoch 3).
func TestDoctorEpochBehind(t *testing.T) {
	s := freshStore(t, `{"version":1,"last_epoch":2,"tasks":[{"id":"t1"}]}`+"\n")
	if err := os.MkdirAll(s.tree.Path(ArchiveDir), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTreeFile(t, s, ArchiveDir+"/2026-11.jsonl", []byte(`{"id":"old","status":"done","epoch":7}`+"\n"))
	writeTreeFile(t, s, EpochFile, []byte("2\n"))
	probs, err := s.Doctor(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	want := "epoch counter 2 is behind the highest epoch 7 recorded in archive/2026-11.jsonl: a claim would reissue a fencing token"
	if len(probs) != 1 || probs[0].What != want {
		t.Fatalf("doctor: %v, want [%s]", probs, want)
	}
	probs, err = s.Doctor(context.Background(), true)
	if err != nil || len(probs) != 1 || !probs[0].Fixed {
		t.Fatalf("doctor --repair: %v, %v", probs, err)
	}
	if got := strings.TrimSpace(string(readTreeFile(t, s, EpochFile))); got != "7" {
		t.Fatalf("mark after repair %q, want 7", got)
	}
	if !strings.Contains(string(readTreeFile(t, s, RegistryFile)), `"last_epoch":7`) {
		t.Fatalf("registry last_epoch not raised: %s", readTreeFile(t, s, RegistryFile))
	}
	if !strings.Contains(strings.Join(allLogLines(t, s), "\n"), "coordinator ▶ repaired: epoch counter 2 is behind") {
		t.Fatalf("the repair was not logged: %q", allLogLines(t, s))
	}
	if e := claimAs(t, s, "a", "t1"); e != 8 {
		t.Fatalf("claim after repair got epoch %d, want 8", e)
	}

	writeTreeFile(t, s, EpochFile, []byte("garbage"))
	probs, _ = s.Doctor(context.Background(), false)
	if len(probs) != 1 || !strings.Contains(probs[0].What, "does not hold a number") {
		t.Fatalf("doctor on a damaged mark: %v", probs)
	}
	if probs, _ = s.Doctor(context.Background(), true); len(probs) != 1 || !probs[0].Fixed {
		t.Fatalf("doctor --repair on a damaged mark: %v", probs)
	}
	if got := strings.TrimSpace(string(readTreeFile(t, s, EpochFile))); got != "8" {
		t.Fatalf("mark after repair %q, want 8", got)
	}
}

// TestEpochMarkWrittenBeforeHandout: the mark is raised before the lock
// file and the registry that hand the epoch out.
func TestEpochMarkWrittenBeforeHandout(t *testing.T) {
	s := freshStore(t, epochSeed)
	claimAs(t, s, "a", "t1")
	var steps []string
	fsops.SetFaultHook(func(op fsops.Op, path string) error {
		steps = append(steps, fmt.Sprintf("%s %s", op, path))
		return nil
	})
	claimAs(t, s, "a", "t2")
	fsops.SetFaultHook(nil)
	all := strings.Join(steps, "\n")
	mark, lock, reg := strings.Index(all, "rename "+EpochFile), strings.Index(all, "create "+LocksDir+"/t2.a.lock"), strings.Index(all, "rename "+RegistryFile)
	if mark < 0 || lock < 0 || reg < 0 || !(mark < lock && lock < reg) {
		t.Fatalf("steps of a claim:\n%s\nwant the mark renamed before the lock is created and the registry renamed", all)
	}
}
