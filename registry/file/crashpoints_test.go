//go:build !race

package file

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/fsops"
)

// Crash points: every step of an operation is made to fail (a crash, an
// error, a power cut), and what is left must read back, pass doctor and
// go on. Each enumeration runs one goroutine through many steps, so the
// race detector, which could find nothing here, only slows it; this file
// is built only without it, and make test's procs pass runs it
// (Makefile). The helpers are in crash_test.go and crashops_test.go.

// TestCrashAtEveryStep: a crash (the step and everything after it never
// happen) at each mutating step of a commit leaves the old state or the new
// one, never a mix, and every file parses.
//
// Broken build this fails against: Store.updateLocked without the
// reconcile step (a lock created before a crash, or a lock removal the
// crash prevented, is never repaired: every crash point fails).
func TestCrashAtEveryStep(t *testing.T) {
	// Count the steps of one commit.
	s := freshStore(t, crashSeed)
	s.update(context.Background(), func(*coord.Txn) error { return nil }) // create lock sidecars
	var steps []string
	fsops.SetFaultHook(func(op fsops.Op, path string) error {
		steps = append(steps, string(op)+" "+path)
		return nil
	})
	err := s.update(context.Background(), claimAndRelease)
	fsops.SetFaultHook(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) < 5 {
		t.Fatalf("only %d steps seen: %v", len(steps), steps)
	}
	sawBefore, sawAfter := false, false
	for k := range steps {
		t.Run(fmt.Sprintf("%02d_%s", k, strings.ReplaceAll(steps[k], "/", "_")), func(t *testing.T) {
			s := freshStore(t, crashSeed)
			s.update(context.Background(), func(*coord.Txn) error { return nil })
			n := 0
			fsops.SetFaultHook(func(op fsops.Op, path string) error {
				n++
				if n > k {
					return errCrash // dead: nothing from here on reaches the disk
				}
				return nil
			})
			s.update(context.Background(), claimAndRelease)
			fsops.SetFaultHook(nil)
			got := state(t, s)
			switch got {
			case before:
				sawBefore = true
			case after:
				sawAfter = true
			default:
				t.Fatalf("crash before step %d (%s) left a mixed state: %s", k, steps[k], got)
			}
		})
	}
	if !sawBefore || !sawAfter {
		t.Fatalf("expected both outcomes across crash points (before %v, after %v)", sawBefore, sawAfter)
	}
}

// TestFaultAtEveryStep: an I/O error (EIO, ENOSPC, EROFS) at any step is
// reported as exit code 2 with nothing changed, or as success with the
// change made; the next command works and no temp file remains.
//
// Broken builds this failed against: before the NotDurableError change, a
// directory-fsync failure after the rename reported exit 2 although the
// claim was visible; without the reconcile step, faults at steps 3-5
// leave unbacked locks.
func TestFaultAtEveryStep(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EIO, syscall.ENOSPC, syscall.EROFS} {
		for k := 0; k < 24; k++ { // a claim+release commit has up to 22 steps (see TestPowerLossAtEveryStep)
			t.Run(fmt.Sprintf("%s_at_%d", errno, k), func(t *testing.T) {
				s := freshStore(t, crashSeed)
				s.update(context.Background(), func(*coord.Txn) error { return nil })
				n := 0
				fsops.SetFaultHook(func(op fsops.Op, path string) error {
					n++
					if n == k+1 {
						return errno
					}
					return nil
				})
				var warned []string
				s.warnFn = func(m string) { warned = append(warned, m) }
				err := s.update(context.Background(), claimAndRelease)
				fsops.SetFaultHook(nil)
				if err != nil && coord.CodeOf(err) != coord.CodeIO {
					t.Fatalf("fault gave exit code %d: %v", coord.CodeOf(err), err)
				}
				got := state(t, s)
				// An error means nothing changed; success means the change
				// is made (possibly with a warning about durability or the log).
				if err != nil && got != before {
					t.Fatalf("reported %v but the change was made: %s", err, got)
				}
				if err == nil && got != after {
					t.Fatalf("reported success but the state is %s (warnings %v)", got, warned)
				}
				// No temp file is left behind by a failed write.
				ents, _ := s.tree.ReadDir(".")
				for _, e := range ents {
					if IsTempName(e.Name()) {
						t.Errorf("temp file %s left behind", e.Name())
					}
				}
			})
		}
	}
}

// TestPowerLossAtEveryStep: cut the power after each step of a claim's
// commit. The registry on "disk" is always the old or the new version,
// and a claim that returned success always survives.
//
// Deliberately broken build this fails against: removing the directory
// fsync from fsops.Tree.WriteFile (the claim then returns success while
// the rename is not yet durable, and the restarted tree has lost it).
func TestPowerLossAtEveryStep(t *testing.T) {
	sawOK := false
	defer func() {
		if !t.Failed() && !sawOK {
			t.Error("no run completed: raise the step count")
		}
	}()
	for k := 0; k < 25; k++ { // a claim+release commit has up to 22 steps (the epoch mark, the lock, the registry with the copy kept as its newest backup and the older ones moved on, the unlink, the log)
		t.Run(fmt.Sprintf("after_%d_steps", k), func(t *testing.T) {
			s := freshStore(t, crashSeed)
			s.update(context.Background(), func(*coord.Txn) error { return nil })
			old, err := s.tree.ReadFile(RegistryFile, MaxRegistrySize)
			if err != nil {
				t.Fatal(err)
			}
			m := &powerModel{stopAt: k}
			fsops.SetFaultHook(m.hook)
			uerr := s.update(context.Background(), claimAndRelease)
			fsops.SetFaultHook(nil)
			// Power comes back: what was not durable is gone.
			if !m.durable {
				if err := s.tree.WriteFile(RegistryFile, old, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ents, _ := s.tree.ReadDir(LocksDir)
			for _, e := range ents {
				s.tree.Remove(LocksDir + "/" + e.Name()) // never fsynced
			}
			got := state(t, s)
			// Only a run the power cut did not stop returned to its caller.
			exitedOK := uerr == nil && !m.stopped
			switch {
			case exitedOK && got != after:
				t.Fatalf("claim returned success but after power loss the tree is %s", got)
			case got != before && got != after:
				t.Fatalf("mixed state %s", got)
			case m.durable && got != after:
				t.Fatalf("durable commit lost: %s", got)
			}
			sawOK = sawOK || exitedOK
		})
	}
}

// TestCrashPointsSweepBeatRotate: every crash point of the stale sweep, a
// heartbeat rewrite, a log rotation and an archive run recovers.
//
// Broken build this fails against: Store.updateLocked without the
// reconcile step (the sweep's crash points leave a lock the registry no
// longer backs).
func TestCrashPointsSweepBeatRotate(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	cases := []crashCase{
		{
			name: "sweep",
			setup: func(t *testing.T, s *Backend) {
				s.update(context.Background(), func(*coord.Txn) error { return nil }) // lock for "held"
				if err := beatDir(s).Beat(context.Background(), "old", nil); err != nil {
					t.Fatal(err)
				}
				if err := s.tree.Chtimes("heartbeat/old.beat", now.Add(-time.Hour)); err != nil {
					t.Fatal(err)
				}
			},
			op: func(s *Backend) error {
				svc, err := app.New(context.Background(), s, app.Options{})
				if err != nil {
					return err
				}
				_, err = svc.Sweep(context.Background(), app.SweepRequest{Timeout: time.Minute})
				return err
			},
			check: func(t *testing.T, s *Backend) {
				got := state(t, s)
				if got != before && got != "free=unclaimed/ held=unclaimed/" {
					t.Fatalf("sweep crash left %s", got)
				}
			},
		},
		{
			name: "beat",
			setup: func(t *testing.T, s *Backend) {
				if err := beatDir(s).Beat(context.Background(), "a", &coord.BeatInfo{Status: coord.AgentIdle}); err != nil {
					t.Fatal(err)
				}
			},
			op: func(s *Backend) error {
				task := "free"
				return beatDir(s).Beat(context.Background(), "a", &coord.BeatInfo{Status: coord.AgentWorking, CurrentTask: &task})
			},
			check: func(t *testing.T, s *Backend) {
				info, err := beatDir(s).Read("a")
				if err != nil {
					t.Fatalf("heartbeat unreadable after a crash: %v", err)
				}
				if info.Status != coord.AgentIdle && info.Status != coord.AgentWorking {
					t.Fatalf("heartbeat status %q", info.Status)
				}
				state(t, s) // reconcile and invariants
			},
		},
		{
			name: "rotate",
			setup: func(t *testing.T, s *Backend) {
				lines := "[2025-01-01T10:00:00Z] a ▶ one\n[2025-01-01T11:00:00Z] a ▶ two\n"
				if err := s.tree.WriteFile(LogFile, []byte(lines), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			op: func(s *Backend) error {
				return s.appendLog(context.Background(), coord.Event{Time: now, Agent: "a", Text: "three"})
			},
			check: func(t *testing.T, s *Backend) {
				lines := allLogLines(t, s)
				want := []string{"one", "two"}
				if len(lines) == 3 {
					want = append(want, "three")
				}
				if len(lines) != len(want) {
					t.Fatalf("log lines after a crash: %q", lines)
				}
				for i, w := range want {
					if !strings.HasSuffix(lines[i], "▶ "+w) {
						t.Fatalf("line %d is %q, want … %s (lost or duplicated)", i, lines[i], w)
					}
				}
				// The next append works and lands after the others.
				if err := s.appendLog(context.Background(), coord.Event{Time: now, Agent: "a", Text: "four"}); err != nil {
					t.Fatal(err)
				}
				if l := allLogLines(t, s); !strings.HasSuffix(l[len(l)-1], "four") || len(l) != len(want)+1 {
					t.Fatalf("after recovery: %q", l)
				}
			},
		},
		{
			name: "archive",
			setup: func(t *testing.T, s *Backend) {
				err := s.update(context.Background(), func(tx *coord.Txn) error {
					_, err := tx.Release("old", "held", -1, "x", false)
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
			},
			op: func(s *Backend) error {
				_, err := s.archive(context.Background(), time.Time{})
				return err
			},
			check: func(t *testing.T, s *Backend) {
				if err := s.update(context.Background(), func(*coord.Txn) error { return nil }); err != nil {
					t.Fatalf("restart: %v", err)
				}
				if probs := s.diagnose(); len(probs) > 0 {
					t.Fatalf("invariants broken after restart: %v", probs)
				}
				// "held" is done: in the registry, in the archive, or both
				// (a crash between the archive append and the commit), and
				// never lost; a torn archive line is skipped.
				var inReg bool
				s.view(context.Background(), func(tx *coord.Txn) error {
					inReg = tx.Task("held") != nil
					return nil
				})
				arch, err := s.archivedTasks(context.Background())
				if err != nil {
					t.Fatalf("archive unreadable after a crash: %v", err)
				}
				inArch := len(arch) == 1 && arch[0].ID == "held" && arch[0].Status == coord.Done
				if !inReg && !inArch {
					t.Fatalf("the done task was lost (archive %v)", arch)
				}
				// Archiving again completes the move exactly once.
				if _, err := s.archive(context.Background(), time.Time{}); err != nil {
					t.Fatal(err)
				}
				arch, _ = s.archivedTasks(context.Background())
				if len(arch) != 1 {
					t.Fatalf("after a second archive: %d archived copies", len(arch))
				}
			},
		},
	}
	for _, c := range cases {
		eachCrashPoint(t, c)
	}
}

// TestEpochCrashPoints: every crash point of a claim on a restored tree
// (the mark missing, or rolled back with the registry) leaves a tree whose
// next claim still gets an epoch above every epoch it records, also when
// a power cut then empties the mark; doctor finds nothing to repair.
//
// Broken build this fails against: the counter taken from the registry
// alone (every crash point: the next claim gets epoch 3, t4's).
func TestEpochCrashPoints(t *testing.T) {
	restored := `{"version":1,"last_epoch":2,"tasks":[
{"id":"t1","status":"claimed","claimed_by":"a","claimed_at":"2026-11-22T10:00:00Z","epoch":1},
{"id":"t2","status":"claimed","claimed_by":"a","claimed_at":"2026-11-22T10:00:00Z","epoch":2},
{"id":"t3"},{"id":"t4"},{"id":"t5"},{"id":"t6"}
]}
`
	for _, mark := range []string{"missing", "rolled back", "emptied after"} {
		eachCrashPoint(t, crashCase{
			name: "claim/mark_" + strings.ReplaceAll(mark, " ", "_"),
			setup: func(t *testing.T, s *Backend) {
				writeTreeFile(t, s, RegistryFile, []byte(restored))
				// t4 was claimed at epoch 4 after the backup was taken.
				writeTreeFile(t, s, LocksDir+"/t4.c.lock", []byte(`{"holder":"c","since":"2026-11-22T10:00:00Z","task_id":"t4","epoch":4,"pid":1,"host":"h"}`+"\n"))
				writeTreeFile(t, s, LogFile, []byte("[2026-11-22T10:00:00Z] c ▶ claimed task t4 (epoch 4)\n"))
				if mark == "missing" {
					os.Remove(s.tree.Path(EpochFile))
				} else {
					writeTreeFile(t, s, EpochFile, []byte("2\n"))
				}
			},
			op: func(s *Backend) error {
				return s.update(context.Background(), func(tx *coord.Txn) error {
					_, err := tx.Claim(coord.Agent{ID: "d"}, coord.ClaimOptions{TaskID: "t5"})
					return err
				})
			},
			check: func(t *testing.T, s *Backend) {
				if mark == "emptied after" {
					writeTreeFile(t, s, EpochFile, nil)
				}
				e := claimAs(t, s, "e", "t6")
				var t5 int64
				s.view(context.Background(), func(tx *coord.Txn) error {
					t5 = tx.Task("t5").Epoch
					return nil
				})
				if e <= 4 || e == t5 {
					t.Fatalf("next claim got epoch %d (t4 had 4, t5 has %d)", e, t5)
				}
				if probs := s.diagnose(); len(probs) > 0 {
					t.Fatalf("doctor after the crash: %v", probs)
				}
			},
		})
	}
}

// TestCrashReleaseWithPathLock: at every crash point of a release whose
// agent holds path locks, the tree is the old state (the task held, its
// path lock in the registry) or the new one (the task done, the lock
// gone); never a released task with its path lock still in the registry.
// The mirror follows after the restart. With a power cut, the mirror files
// (never fsynced) may be lost as well: the restart recreates them from
// the registry.
func TestCrashReleaseWithPathLock(t *testing.T) {
	setup := func(t *testing.T, s *Backend) {
		lockPaths(t, s, "old", "src/x", "src/y")
	}
	release := func(s *Backend) error {
		return s.update(context.Background(), func(tx *coord.Txn) error {
			_, err := tx.Release("old", "held", coord.NoEpoch, "x", false)
			return err
		})
	}
	check := func(t *testing.T, s *Backend) {
		got := state(t, s) // restarts: reconcile, then invariants (doctor clean)
		locks, _ := pathLocksOf(t, s)
		mirror := exists(s, PathLockName("src/x")) && exists(s, PathLockName("src/y"))
		switch {
		case got == before && len(locks) == 2 && mirror:
		case got == "free=unclaimed/ held=done/old" && len(locks) == 0 && !exists(s, PathLockName("src/x")) && !exists(s, PathLockName("src/y")):
		default:
			t.Fatalf("crash left %s with path locks %+v (mirror present %v)", got, locks, mirror)
		}
	}
	eachCrashPoint(t, crashCase{name: "release_with_path_locks", setup: setup, op: release, check: check})

	// The power cut: the steps of the release, each the last one made.
	total := 0
	s := freshStore(t, crashSeed)
	setup(t, s)
	fsops.SetFaultHook(func(fsops.Op, string) error { total++; return nil })
	release(s)
	fsops.SetFaultHook(nil)
	for k := 0; k <= total; k++ {
		t.Run(fmt.Sprintf("power_cut_after_%d_of_%d", k, total), func(t *testing.T) {
			s := freshStore(t, crashSeed)
			setup(t, s)
			old := readTreeFile(t, s, RegistryFile)
			m := &powerModel{stopAt: k}
			fsops.SetFaultHook(m.hook)
			uerr := release(s)
			fsops.SetFaultHook(nil)
			if !m.durable {
				writeTreeFile(t, s, RegistryFile, old)
			}
			for _, dir := range []string{LocksDir, FileLocksDir} { // never fsynced
				removeAll(t, s, dir, ".lock")
			}
			check(t, s)
			if uerr == nil && !m.stopped {
				if locks, _ := pathLocksOf(t, s); len(locks) != 0 {
					t.Fatalf("the release returned, but after the power cut its path locks are back: %+v", locks)
				}
			}
		})
	}
}

// TestCrashLockPath: every crash point of taking a path lock leaves it
// taken (in the registry, its mirror restored at the restart) or not taken
// (no trace in the registry, no mirror file).
func TestCrashLockPath(t *testing.T) {
	eachCrashPoint(t, crashCase{
		name:  "lock_path",
		setup: func(*testing.T, *Backend) {},
		op: func(s *Backend) error {
			return s.update(context.Background(), func(tx *coord.Txn) error { return tx.LockPaths("old", []string{"src/x"}, 0) })
		},
		check: func(t *testing.T, s *Backend) {
			state(t, s)
			locks, _ := pathLocksOf(t, s)
			if taken := len(locks) == 1 && locks[0].Path == "src/x"; taken != exists(s, PathLockName("src/x")) || len(locks) > 1 {
				t.Fatalf("path locks %+v, mirror present %v", locks, exists(s, PathLockName("src/x")))
			}
		},
	})
}

// TestFaultReleaseWithPathLock: an I/O error at any step of a release
// with path locks is exit 2 with nothing changed, or success with the
// change made (a failed mirror write after the commit is a warning).
func TestFaultReleaseWithPathLock(t *testing.T) {
	for _, errno := range []error{errCrash, os.ErrPermission} {
		for k := 0; k < 12; k++ {
			t.Run(fmt.Sprintf("%v_at_%d", errno, k), func(t *testing.T) {
				s := freshStore(t, crashSeed)
				lockPaths(t, s, "old", "src/x")
				n := 0
				fsops.SetFaultHook(func(fsops.Op, string) error {
					if n++; n == k+1 {
						return errno
					}
					return nil
				})
				var warned []string
				s.warnFn = func(m string) { warned = append(warned, m) }
				err := s.update(context.Background(), func(tx *coord.Txn) error {
					_, err := tx.Release("old", "held", coord.NoEpoch, "x", false)
					return err
				})
				fsops.SetFaultHook(nil)
				got := state(t, s)
				locks, _ := pathLocksOf(t, s)
				switch {
				case err != nil && (got != before || len(locks) != 1):
					t.Fatalf("reported %v, but the tree is %s with path locks %+v", err, got, locks)
				case err == nil && (got == before || len(locks) != 0):
					t.Fatalf("reported success (warnings %v), but the tree is %s with path locks %+v", warned, got, locks)
				}
			})
		}
	}
}

// TestCrashKeepsBackupsOlder: a crash at any step of a commit that keeps
// backups leaves every backup a whole registry that was in place before
// or is in place now: none is torn, and none is newer than the registry.
func TestCrashKeepsBackupsOlder(t *testing.T) {
	ctx := context.Background()
	warm := func(s *Backend) {
		s.update(ctx, func(*coord.Txn) error { return nil })
		if err := s.update(ctx, func(tx *coord.Txn) error { _, err := tx.Progress("old", "held", coord.NoEpoch, 10, ""); return err }); err != nil {
			t.Fatal(err)
		}
	}
	// Count the steps of the commit under test.
	s := freshStore(t, crashSeed)
	warm(s)
	steps := 0
	fsops.SetFaultHook(func(fsops.Op, string) error { steps++; return nil })
	err := s.update(ctx, claimAndRelease)
	fsops.SetFaultHook(nil)
	if err != nil {
		t.Fatal(err)
	}
	for k := range steps {
		s := freshStore(t, crashSeed)
		seed, _ := os.ReadFile(s.tree.Path(RegistryFile))
		warm(s)
		warmed, _ := os.ReadFile(s.tree.Path(RegistryFile))
		n := 0
		fsops.SetFaultHook(func(fsops.Op, string) error {
			if n++; n > k {
				return errCrash
			}
			return nil
		})
		s.update(ctx, claimAndRelease)
		fsops.SetFaultHook(nil)
		reg, err := os.ReadFile(s.tree.Path(RegistryFile))
		if err != nil {
			t.Fatalf("crash before step %d: %v", k, err)
		}
		// Allowed: the registries in place before (the seed, the warmed
		// one) and the registry as it is now, whichever it is; the new
		// registry of a commit the crash stopped is not allowed.
		for b := 0; b <= Backups; b++ {
			data, err := os.ReadFile(s.tree.Path(BackupName(b)))
			if os.IsNotExist(err) {
				continue
			}
			if got := string(data); got != string(seed) && got != string(warmed) && got != string(reg) {
				t.Errorf("crash before step %d: backup %d is neither an earlier registry nor the registry", k, b)
			}
		}
	}
}
