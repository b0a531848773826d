package file

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rotd/coordination/coord"
)

const doctorSeed = `{"version":1,"last_epoch":1,"tasks":[
{"id":"held","status":"claimed","claimed_by":"a","claimed_at":"2026-01-01T00:00:00Z","epoch":1},
{"id":"free"},
{"id":"c","deps":["free"]}
]}
`

// doctorStore is a healthy tree: a claimed task with its lock and
// heartbeat, a path lock, kv, leases, quota, the log and an archive.
func doctorStore(t *testing.T) *Backend {
	t.Helper()
	s := freshStore(t, doctorSeed)
	ctx := context.Background()
	if err := s.update(ctx, func(*coord.Txn) error { return nil }); err != nil { // reconcile: the lock
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.tree.WriteFile(HeartbeatDir+"/a.beat", []byte(`{"agent_id":"a","status":"working"}`+"\n"), 0o644))
	must(s.update(ctx, func(tx *coord.Txn) error { return tx.LockPaths("a", []string{"src/x"}, 0) }))
	_, err := s.KV().Set(ctx, "k", []byte(`"v"`), time.Hour, "a", coord.KVCond{})
	must(err)
	_, err = s.Leases().Acquire(ctx, coord.LeaseRequest{Name: "L", Holder: "a", TTL: time.Hour})
	must(err)
	_, err = s.Quota().Update(ctx, func(q *coord.Quota) error { return q.Add("a", 5, 1, coord.QuotaLimits{}, s.clock()) })
	must(err)
	must(s.tree.MkdirAll(ArchiveDir, 0o755))
	must(s.tree.WriteFile(ArchiveDir+"/2026-01.jsonl", []byte(`{"id":"old","status":"done","completed_at":"2026-01-02T00:00:00Z"}`+"\n"), 0o644))
	if probs, err := s.Doctor(ctx, false); err != nil || len(probs) != 0 {
		t.Fatalf("the healthy tree has problems: %v %v", probs, err)
	}
	return s
}

// treeDigest lists every entry under dir (but .lock/, whose sidecars any
// command writes its holder line into) with its kind and, for regular
// files, a hash of the content. It never opens anything but regular files.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() && rel == LockDir {
			return filepath.SkipDir
		}
		line := rel + " " + d.Type().String()
		if d.Type().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			line += " " + hex.EncodeToString(sum[:8])
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	os.RemoveAll(path)
	if err := unix.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mkdirWith(t *testing.T, path string) {
	t.Helper()
	os.RemoveAll(path)
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "keep"), []byte("data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Every problem kind doctor knows: it is reported (one line naming the
// file) without anything changing; --repair fixes the repairable ones
// (doctor is clean afterwards, each fix logged) and leaves the others
// reported, their files byte for byte as they were.
//
// Broken build this fails against: the doctor before it checked every file (it said
// "ok" on every cycle, corrupt kv, leases and quota file and special file
// here, and blocked on the FIFOs).
func TestDoctorFindsEverything(t *testing.T) {
	pathLock := PathLockName("src/x")
	cases := []struct {
		name       string
		plant      func(t *testing.T, dir string)
		want       string // in the problem line
		repairable bool
		file       string // unrepairable: must stay byte-identical
	}{
		{"cycle in the map", func(t *testing.T, d string) {
			write(t, filepath.Join(d, DepMapFile), `{"held":["free"],"free":["held"]}`)
		}, "dependency cycle free -> held -> free", false, DepMapFile},
		{"cycle through deps and the map", func(t *testing.T, d string) {
			write(t, filepath.Join(d, DepMapFile), `{"free":["c"]}`)
		}, "dependency cycle c -> free -> c", false, DepMapFile},
		{"cycle among unknown ids", func(t *testing.T, d string) {
			write(t, filepath.Join(d, DepMapFile), `{"x":["y"],"y":["x"]}`)
		}, "dependency cycle x -> y -> x", false, DepMapFile},
		{"dependency map not strict", func(t *testing.T, d string) {
			write(t, filepath.Join(d, DepMapFile), `{"c":["free"],"c":["held"]}`)
		}, DepMapFile + ": ", false, DepMapFile},
		{"kv duplicate key", func(t *testing.T, d string) {
			write(t, filepath.Join(d, KVFile), `{"version":1,"keys":[],"keys":[]}`)
		}, KVFile + ": ", false, KVFile},
		{"kv trailing data", func(t *testing.T, d string) {
			write(t, filepath.Join(d, KVFile), `{"keys":[]} x`)
		}, KVFile + ": ", false, KVFile},
		{"leases case twin", func(t *testing.T, d string) {
			write(t, filepath.Join(d, LeasesFile), `{"leases":[{"name":"a","Name":"b"}]}`)
		}, LeasesFile + ": ", false, LeasesFile},
		{"leases wrong type", func(t *testing.T, d string) {
			write(t, filepath.Join(d, LeasesFile), `{"leases":"none"}`)
		}, LeasesFile + ": ", false, LeasesFile},
		{"quota truncated", func(t *testing.T, d string) {
			write(t, filepath.Join(d, QuotaFile), `{"tokens_used":`)
		}, QuotaFile + ": ", false, QuotaFile},
		{"config bad value", func(t *testing.T, d string) {
			write(t, filepath.Join(d, ConfigFile), `{"stale_after":"soon"}`)
		}, ConfigFile + ": ", false, ConfigFile},
		{"config invalid UTF-8", func(t *testing.T, d string) {
			write(t, filepath.Join(d, ConfigFile), "{\"x\":\"\xff\"}")
		}, ConfigFile + ": ", false, ConfigFile},
		{"path lock does not parse", func(t *testing.T, d string) {
			write(t, filepath.Join(d, pathLock), `{"path":`)
		}, "path lock " + pathLock + " does not parse", true, ""}, // the registry holds the lock: the file is rewritten
		{"unbacked path lock does not parse", func(t *testing.T, d string) {
			write(t, filepath.Join(d, PathLockName("src/y")), `{"path":`)
		}, "path lock " + PathLockName("src/y") + " does not parse", false, PathLockName("src/y")},
		{"path lock of an unmigrated registry does not parse", func(t *testing.T, d string) {
			write(t, filepath.Join(d, RegistryFile), doctorSeed) // no "path_locks": the files are the locks
			write(t, filepath.Join(d, pathLock), `{"path":`)
		}, "path lock " + pathLock + " does not parse", false, pathLock},
		{"path lock file not backed", func(t *testing.T, d string) {
			write(t, filepath.Join(d, PathLockName("src/y")), `{"path":"src/y","holder":"b","since":"2026-01-01T00:00:00Z"}`+"\n")
		}, "path lock file " + PathLockName("src/y") + " is not backed by the registry", true, ""},
		{"path lock file missing", func(t *testing.T, d string) { os.Remove(filepath.Join(d, pathLock)) },
			"path lock src/x (held by a) has no file " + pathLock, true, ""},
		{"path lock file of another content", func(t *testing.T, d string) {
			write(t, filepath.Join(d, pathLock), `{"path":"src/x","holder":"b","since":"2026-01-01T00:00:00Z"}`+"\n")
		}, "path lock " + pathLock + " content does not match the registry (src/x, held by a)", true, ""},
		{"archive line does not parse", func(t *testing.T, d string) {
			write(t, filepath.Join(d, ArchiveDir, "2026-02.jsonl"), "{\"id\":\n")
		}, ArchiveDir + "/2026-02.jsonl", false, ArchiveDir + "/2026-02.jsonl"},
		{"FIFO at the log", func(t *testing.T, d string) { mkfifo(t, filepath.Join(d, LogFile)) },
			LogFile + " is a FIFO, not a regular file", true, ""},
		{"FIFO at the registry lock", func(t *testing.T, d string) { mkfifo(t, filepath.Join(d, registryLock)) },
			registryLock + " is a FIFO, not a regular file", true, ""},
		{"directory at the log lock", func(t *testing.T, d string) { mkdirWith(t, filepath.Join(d, logLock)) },
			logLock + " is a directory, not a regular file", true, ""},
		{"directory at kv.json", func(t *testing.T, d string) { mkdirWith(t, filepath.Join(d, KVFile)) },
			KVFile + " is a directory, not a regular file", true, ""},
		{"FIFO at the dependency map", func(t *testing.T, d string) { mkfifo(t, filepath.Join(d, DepMapFile)) },
			DepMapFile + " is a FIFO, not a regular file", true, ""},
		{"FIFO at config.json", func(t *testing.T, d string) { mkfifo(t, filepath.Join(d, ConfigFile)) },
			ConfigFile + " is a FIFO, not a regular file", true, ""},
		{"FIFO heartbeat", func(t *testing.T, d string) { mkfifo(t, filepath.Join(d, HeartbeatDir, "a.beat")) },
			HeartbeatDir + "/a.beat is a FIFO, not a regular file", true, ""},
		{"directory heartbeat", func(t *testing.T, d string) { mkdirWith(t, filepath.Join(d, HeartbeatDir, "b.beat")) },
			HeartbeatDir + "/b.beat is a directory, not a regular file", true, ""},
		{"FIFO at a held task's lock", func(t *testing.T, d string) { mkfifo(t, filepath.Join(d, LocksDir, "held.a.lock")) },
			LocksDir + "/held.a.lock is a FIFO, not a regular file", true, ""},
		{"directory at a held task's lock", func(t *testing.T, d string) { mkdirWith(t, filepath.Join(d, LocksDir, "held.a.lock")) },
			LocksDir + "/held.a.lock is a directory, not a regular file", true, ""},
		{"lock that does not parse", func(t *testing.T, d string) { write(t, filepath.Join(d, LocksDir, "held.a.lock"), "{") },
			"lock " + LocksDir + "/held.a.lock does not parse", true, ""},
		{"unbacked FIFO lock", func(t *testing.T, d string) { mkfifo(t, filepath.Join(d, LocksDir, "free.z.lock")) },
			LocksDir + "/free.z.lock is a FIFO, not a regular file", true, ""},
		{"FIFO path lock", func(t *testing.T, d string) { mkfifo(t, filepath.Join(d, pathLock)) },
			pathLock + " is a FIFO, not a regular file", true, ""},
		{"FIFO archive", func(t *testing.T, d string) { mkfifo(t, filepath.Join(d, ArchiveDir, "2026-01.jsonl")) },
			ArchiveDir + "/2026-01.jsonl is a FIFO, not a regular file", true, ""},
		{"FIFO rotated log", func(t *testing.T, d string) { mkfifo(t, filepath.Join(d, "coordination-2026-01-01.log")) },
			"coordination-2026-01-01.log is a FIFO, not a regular file", true, ""},
		{"FIFO for agent_locks", func(t *testing.T, d string) { mkfifo(t, filepath.Join(d, LocksDir)) },
			LocksDir + " is a FIFO, not a directory", true, ""},
		{"FIFO for .lock", func(t *testing.T, d string) { mkfifo(t, filepath.Join(d, LockDir)) },
			LockDir + " is a FIFO, not a directory", true, ""},
		{"file for heartbeat", func(t *testing.T, d string) {
			os.RemoveAll(filepath.Join(d, HeartbeatDir))
			write(t, filepath.Join(d, HeartbeatDir), "notes\n")
		}, HeartbeatDir + " is a regular file, not a directory", true, ""},
		{"symlink for heartbeat", func(t *testing.T, d string) {
			os.RemoveAll(filepath.Join(d, HeartbeatDir))
			os.Symlink(FileLocksDir, filepath.Join(d, HeartbeatDir))
		}, HeartbeatDir + " is a symlink, not a directory", true, ""},
		{"missing .lock", func(t *testing.T, d string) { os.RemoveAll(filepath.Join(d, LockDir)) },
			"directory " + LockDir + " is missing", true, ""},
		{"symlink for archive", func(t *testing.T, d string) {
			os.Rename(filepath.Join(d, ArchiveDir), filepath.Join(d, "..", "elsewhere"))
			os.Symlink("../elsewhere", filepath.Join(d, ArchiveDir))
		}, ArchiveDir + " is a symlink, not a directory; replace the link", false, ArchiveDir},
		{"symlink at the registry", func(t *testing.T, d string) {
			os.Rename(filepath.Join(d, RegistryFile), filepath.Join(d, "..", "registry.json"))
			os.Symlink("../registry.json", filepath.Join(d, RegistryFile))
		}, RegistryFile + " is a symlink, not a regular file; replace the link", false, RegistryFile},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := doctorStore(t)
			dir := s.tree.Dir()
			tc.plant(t, dir)
			s2, err := Open(dir, Options{Lenient: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			s2.lockWait = time.Minute
			s2.clock = s.clock
			before := treeDigest(t, dir)
			probs := boundedDoctor(t, s2, false)
			if !hasProblem(probs, tc.want, false) {
				t.Fatalf("doctor did not report %q:\n%s", tc.want, listProblems(probs))
			}
			if after := treeDigest(t, dir); after != before {
				t.Fatalf("doctor without --repair changed the tree:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			var kept string
			if tc.file != "" {
				kept = entryDigest(filepath.Join(dir, tc.file))
			}
			probs = boundedDoctor(t, s2, true)
			if tc.repairable {
				if !hasProblem(probs, tc.want, true) {
					t.Fatalf("doctor --repair did not fix %q:\n%s", tc.want, listProblems(probs))
				}
				if again := boundedDoctor(t, s2, false); len(again) != 0 {
					t.Fatalf("problems after --repair:\n%s", listProblems(again))
				}
				if log, _ := os.ReadFile(filepath.Join(dir, LogFile)); !strings.Contains(string(log), "repaired: "+tc.want) {
					t.Fatalf("the fix was not logged:\n%s", log)
				}
				if strings.HasPrefix(tc.name, "directory ") { // moved aside, not deleted
					m1, _ := filepath.Glob(filepath.Join(dir, "*"+AsideMark+"*", "keep"))
					m2, _ := filepath.Glob(filepath.Join(dir, "*", "*"+AsideMark+"*", "keep"))
					if len(m1)+len(m2) != 1 {
						t.Fatalf("the directory's content was not kept aside: %v %v", m1, m2)
					}
				}
				return
			}
			if !hasProblem(probs, tc.want, false) {
				t.Fatalf("an unrepairable problem is no longer reported after --repair:\n%s", listProblems(probs))
			}
			if now := entryDigest(filepath.Join(dir, tc.file)); now != kept {
				t.Fatalf("doctor --repair changed %s: %q -> %q", tc.file, kept, now)
			}
		})
	}
}

// entryDigest is what stands at path: a symlink's target, or a regular
// file's content.
func entryDigest(path string) string {
	if l, err := os.Readlink(path); err == nil {
		return "-> " + l
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return string(data)
}

// boundedDoctor runs Doctor and fails the test if it does not return (it
// used to block on a FIFO forever).
func boundedDoctor(t *testing.T, s *Backend, repair bool) []coord.Problem {
	t.Helper()
	type result struct {
		p   []coord.Problem
		err error
	}
	done := make(chan result, 1)
	go func() {
		p, err := s.Doctor(context.Background(), repair)
		done <- result{p, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("doctor (repair=%v): %v", repair, r.err)
		}
		return r.p
	case <-time.After(60 * time.Second):
		t.Fatalf("doctor (repair=%v) blocked", repair)
	}
	return nil
}

// hasProblem: a problem containing want, fixed as asked, naming one file
// on one line.
func hasProblem(probs []coord.Problem, want string, fixed bool) bool {
	for _, p := range probs {
		if strings.Contains(p.What, want) && p.Fixed == fixed && !strings.Contains(p.What, "\n") {
			return true
		}
	}
	return false
}

func listProblems(probs []coord.Problem) string {
	var b strings.Builder
	for _, p := range probs {
		b.WriteString(p.What)
		if p.Fixed {
			b.WriteString(" [fixed]")
		}
		b.WriteString("\n")
	}
	return b.String()
}
