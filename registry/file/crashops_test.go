package file

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/fsops"
	"github.com/rotd/coordination/heartbeat"
)

// crashCase is one operation run to a crash at each of its mutating steps.
type crashCase struct {
	name  string
	setup func(t *testing.T, s *Backend)
	op    func(s *Backend) error
	// check inspects the tree after the restart (the reconcile has run).
	check func(t *testing.T, s *Backend)
}

// eachCrashPoint counts op's mutating steps, then for every N runs it on a
// fresh tree, stopping the "process" before step N, and checks recovery.
// 100% of the points must pass.
func eachCrashPoint(t *testing.T, c crashCase) {
	s := freshStore(t, crashSeed)
	c.setup(t, s)
	total := 0
	fsops.SetFaultHook(func(fsops.Op, string) error { total++; return nil })
	err := c.op(s)
	fsops.SetFaultHook(nil)
	if err != nil {
		t.Fatalf("%s without faults: %v", c.name, err)
	}
	if total == 0 {
		t.Fatalf("%s made no mutating step", c.name)
	}
	for k := 0; k <= total; k++ {
		t.Run(fmt.Sprintf("%s/crash_before_step_%d_of_%d", c.name, k, total), func(t *testing.T) {
			s := freshStore(t, crashSeed)
			c.setup(t, s)
			n := 0
			fsops.SetFaultHook(func(fsops.Op, string) error {
				if n >= k {
					return errCrash
				}
				n++
				return nil
			})
			c.op(s)
			fsops.SetFaultHook(nil)
			c.check(t, s)
		})
	}
}

func beatDir(s *Backend) *heartbeat.Dir { return s.beats }

// allLogLines reads every log file, rotated ones first.
func allLogLines(t *testing.T, s *Backend) []string {
	t.Helper()
	files, err := s.logFiles()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		data, err := s.tree.ReadFile(f, MaxRegistrySize)
		if err != nil {
			continue // the current log may not exist right after a rotation
		}
		for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if l != "" {
				out = append(out, l)
			}
		}
	}
	return out
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
