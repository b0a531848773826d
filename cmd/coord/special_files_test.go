//go:build !race

package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rotd/coordination/registry/file"
)

// Special files (docs/CHOICES.md, "Files on disk"): a FIFO, socket, device or directory
// where coord expects a regular file made coord block forever in open(2)
// (ignoring signals) while it held the registry lock. Every command that
// reads or writes a name is run as a separate process with a bound: it
// must refuse with exit 2 naming the file and the fix, never hang. Then
// doctor reports the file (exit 3) and doctor --repair clears it. The
// processes are single-threaded where it matters (one open, one check),
// so this file is built only without the race detector, which would
// only slow each of its hundreds of processes (make test's procs pass
// runs it).
//
// Broken build this fails against: fsops without O_NONBLOCK and the
// fstat check (the log FIFO case hangs until the bound fires; the
// directory cases exit 2 without naming the kind or the fix).

// specialKind is a kind of file planted at a name.
type specialKind string

const (
	kFIFO   specialKind = "FIFO"
	kDir    specialKind = "directory"
	kSocket specialKind = "socket"
	kDevice specialKind = "device"
)

// plant puts an entry of kind at path (replacing what is there). A
// directory gets an entry of its own, so that nothing may rmdir it.
func plant(t *testing.T, path string, kind specialKind) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	var err error
	switch kind {
	case kFIFO:
		err = unix.Mkfifo(path, 0o644)
	case kDir:
		if err = os.Mkdir(path, 0o755); err == nil {
			err = os.WriteFile(filepath.Join(path, "keep"), []byte("someone's data\n"), 0o644)
		}
	case kSocket:
		err = plantSocket(path)
	case kDevice:
		err = unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))) // as /dev/null
	}
	if err != nil {
		t.Fatalf("plant %s at %s: %v", kind, path, err)
	}
}

// plantSocket binds a unix socket in a short directory (sun_path holds
// 108 bytes) and renames it into place; the listener is closed, the
// socket file stays.
func plantSocket(path string) error {
	// Where t.TempDir is (GOTMPDIR, as package testing does), so the
	// rename stays on one file system.
	dir, err := os.MkdirTemp(os.Getenv("GOTMPDIR"), "s")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	tmp := filepath.Join(dir, "s")
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: tmp}); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

var (
	deviceOnce sync.Once
	deviceOK   bool
)

// canMknod reports whether this process may create a device node (root
// with CAP_MKNOD, outside a user namespace that forbids it).
func canMknod(t *testing.T) bool {
	deviceOnce.Do(func() {
		p := filepath.Join(t.TempDir(), "dev")
		deviceOK = unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))) == nil
	})
	return deviceOK
}

// specialTemplate builds, once, a tree in which every file coord reads or
// writes exists: a claimed task with its lock and heartbeat, a done task
// to archive, a path lock, a kv key, a lease, quota, the log, an
// artifact, and every flock sidecar.
func specialTemplate(t *testing.T) string {
	t.Helper()
	root := seedTree(t, []string{`{"id":"t1"}`, `{"id":"t2"}`, `{"id":"t3"}`, `{"id":"t4","deps":["t1"]}`})
	r := []string{"--root", root}
	mustCoord(t, append(r, "--agent", "a", "claim", "--task", "t1")...)
	mustCoord(t, append(r, "--agent", "c", "claim", "--task", "t3")...)
	mustCoord(t, append(r, "--agent", "c", "release", "t3", "--summary", "x")...)
	mustCoord(t, append(r, "--agent", "a", "lock-file", "src/x")...)
	mustCoord(t, append(r, "--agent", "a", "kv", "set", "k", "v", "--ttl", "1h")...)
	mustCoord(t, append(r, "--agent", "a", "lease", "acquire", "L", "--ttl", "1h")...)
	mustCoord(t, append(r, "--agent", "a", "quota", "add", "--tokens", "1")...)
	mustCoord(t, append(r, "--agent", "a", "msg", "hi")...)
	if code, _, errs := boundedCoord(t, `{"x":1}`+"\n", append(r, "--agent", "a", "artifact", "append", "tasks.jsonl")...); code != 0 {
		t.Fatalf("artifact append: exit %d: %s", code, errs)
	}
	os.WriteFile(filepath.Join(root, file.RelDir, file.DepMapFile), []byte(`{"t4":["t3"]}`+"\n"), 0o644)
	// Take every remaining sidecar once (archive's, by archiving nothing
	// old enough).
	mustCoord(t, append(r, "archive", "--older-than", "1000h")...)
	return root
}

// copyTree copies a directory tree of regular files and directories.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if err := os.WriteFile(to, data, 0o644); err != nil {
			return err
		}
		return os.Chtimes(to, fi.ModTime(), fi.ModTime())
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSpecialFilesNeverBlock(t *testing.T) {
	t.Parallel()
	tmpl := specialTemplate(t)
	month := time.Now().UTC().Format("2006-01")
	pathLock := file.PathLockName("src/x")
	claimT2 := []string{"--agent", "b", "claim", "--task", "t2"}
	// Each name coord reads or writes, relative to the root, with the
	// commands that read or write it. replaced: a FIFO, socket or device
	// there is deliberately replaced by the command (a lock file is
	// derived from the registry), so it exits 0 instead.
	type use struct {
		args     []string
		stdin    string
		replaced bool
	}
	co := file.RelDir + "/"
	names := []struct {
		name string
		uses []use
	}{
		{co + file.RegistryFile, []use{{args: []string{"ls"}}, {args: claimT2}}},
		{co + file.DepMapFile, []use{{args: []string{"deps"}}, {args: claimT2}}},
		{co + file.ConfigFile, []use{{args: []string{"ls"}}}},
		{co + file.QuotaFile, []use{{args: []string{"quota", "show"}}, {args: []string{"--agent", "a", "quota", "add", "--tokens", "1"}}}},
		{co + file.KVFile, []use{{args: []string{"kv", "get", "k"}}, {args: []string{"--agent", "a", "kv", "set", "k", "w", "--ttl", "1h"}}}},
		{co + file.LeasesFile, []use{{args: []string{"lease", "list"}}, {args: []string{"--agent", "a", "lease", "acquire", "M", "--ttl", "1h"}}}},
		{co + file.LogFile, []use{{args: []string{"log"}}, {args: []string{"--agent", "a", "msg", "hi"}}}},
		{co + ".lock/registry.lock", []use{{args: claimT2}}},
		{co + ".lock/log.lock", []use{{args: []string{"--agent", "a", "msg", "hi"}}}},
		{co + ".lock/kv.lock", []use{{args: []string{"--agent", "a", "kv", "set", "k", "w", "--ttl", "1h"}}}},
		{co + ".lock/leases.lock", []use{{args: []string{"--agent", "a", "lease", "acquire", "M", "--ttl", "1h"}}}},
		{co + ".lock/quota.lock", []use{{args: []string{"--agent", "a", "quota", "add", "--tokens", "1"}}}},
		{co + ".lock/file_locks.lock", []use{{args: []string{"--agent", "a", "lock-file", "src/y"}}}},
		{co + ".lock/archive.lock", []use{{args: []string{"archive"}}}},
		{co + file.HeartbeatDir + "/a.beat", []use{{args: []string{"--agent", "a", "beat"}}, {args: []string{"--agent", "a", "claim", "--task", "t2"}}}},
		{co + pathLock, []use{{args: []string{"--agent", "a", "lock-file", "src/x"}}, {args: []string{"--agent", "a", "unlock-file", "src/x"}}}},
		{co + file.ArchiveDir + "/" + month + ".jsonl", []use{{args: []string{"archive"}}}},
		{co + file.LocksDir + "/t1.a.lock", []use{{args: claimT2, replaced: true}}},
		{".rotd/tasks.jsonl", []use{{args: []string{"--agent", "a", "artifact", "append", "tasks.jsonl"}, stdin: `{"y":2}` + "\n"}}},
		{".rotd/.lock/tasks.jsonl.lock", []use{{args: []string{"--agent", "a", "artifact", "append", "tasks.jsonl"}, stdin: `{"y":2}` + "\n"}}},
	}
	kinds := []specialKind{kFIFO, kDir, kSocket}
	if canMknod(t) {
		kinds = append(kinds, kDevice)
	} else {
		t.Log("device nodes not tested: mknod is not permitted here")
	}
	for ni, n := range names {
		ks := kinds
		if testing.Short() {
			// The default loop: a FIFO (the kind that hung) at every name,
			// and one other kind per name in turn, so each kind meets
			// several names (fsops's own tests take every kind on every
			// operation). The long tier takes every pair.
			ks = []specialKind{kFIFO, kinds[1+ni%(len(kinds)-1)]}
		}
		for _, kind := range ks {
			for i, u := range n.uses {
				t.Run(fmt.Sprintf("%s/%s/%d-%s", strings.TrimPrefix(n.name, co), kind, i, commandName(u.args)), func(t *testing.T) {
					t.Parallel()
					root := t.TempDir()
					copyTree(t, tmpl, root)
					path := filepath.Join(root, n.name)
					plant(t, path, kind)
					code, _, errs := boundedCoord(t, u.stdin, append([]string{"--root", root}, u.args...)...)
					if u.replaced && kind != kDir {
						fi, err := os.Lstat(path)
						if code != 0 || err != nil || !fi.Mode().IsRegular() {
							t.Fatalf("exit %d (%s); want the %s replaced by a lock file (exit 0)", code, errs, kind)
						}
						return
					}
					if code != 2 || !strings.Contains(errs, path) || !strings.Contains(errs, string(kind)) || !strings.Contains(errs, "doctor --repair") {
						t.Fatalf("exit %d, stderr %q; want exit 2 naming %s as a %s and the fix", code, errs, path, kind)
					}
					if i > 0 || !strings.HasPrefix(n.name, co) {
						return // doctor: once per name and kind, in the coordination tree
					}
					rel := strings.TrimPrefix(n.name, co)
					code, out, _ := boundedCoord(t, "", "--root", root, "doctor")
					if code != 3 || !strings.Contains(out, rel+" is a") {
						t.Fatalf("doctor: exit %d:\n%s\nwant exit 3 naming %s", code, out, rel)
					}
					code, out, errs = boundedCoord(t, "", "--root", root, "doctor", "--repair")
					fixedLine := "fixed: " + rel + " is a"
					if !strings.Contains(out, fixedLine) {
						t.Fatalf("doctor --repair: exit %d:\n%s%s\nwant %q", code, out, errs, fixedLine)
					}
					// Everything is whole again; where the test replaced
					// the registry itself, its newest backup brings the
					// tasks back.
					if code != 0 {
						t.Fatalf("doctor --repair: exit %d, want 0:\n%s%s", code, out, errs)
					}
					if strings.HasSuffix(n.name, file.RegistryFile) && !strings.Contains(out, "restores the newest readable backup") {
						t.Fatalf("doctor --repair did not restore the registry from its backups:\n%s", out)
					}
					if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
						t.Fatalf("after doctor --repair, %s is still %v", path, fi.Mode())
					}
					if kind == kDir { // moved aside, not deleted
						if m, _ := filepath.Glob(path + file.AsideMark + "*/keep"); len(m) != 1 {
							t.Fatalf("the directory's content was not kept aside: %v", m)
						}
					}
				})
			}
		}
	}
}

// commandName is the command (and subcommand) in args, without flags.
func commandName(args []string) string {
	var words []string
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "--agent" || args[i] == "--task" || args[i] == "--ttl" || args[i] == "--tokens":
			i++
		case strings.HasPrefix(args[i], "-"):
		default:
			words = append(words, args[i])
		}
	}
	if len(words) > 2 {
		words = words[:2]
	}
	return strings.Join(words, "-")
}

// Directories of the tree that are not directories: every command
// refuses at once (exit 2 naming it), and doctor puts the directory back.
func TestSpecialDirsNeverBlock(t *testing.T) {
	t.Parallel()
	tmpl := specialTemplate(t)
	kinds := []specialKind{kFIFO, kSocket}
	if canMknod(t) {
		kinds = append(kinds, kDevice)
	}
	for _, d := range file.Subdirs {
		for _, kind := range kinds {
			t.Run(d+"/"+string(kind), func(t *testing.T) {
				t.Parallel()
				root := t.TempDir()
				copyTree(t, tmpl, root)
				path := filepath.Join(root, file.RelDir, d)
				plant(t, path, kind)
				code, _, errs := boundedCoord(t, "", "--root", root, "--agent", "b", "claim", "--task", "t2")
				if code != 2 || !strings.Contains(errs, path+" is a") || !strings.Contains(errs, "not a directory") {
					t.Fatalf("exit %d, stderr %q; want exit 2 naming %s", code, errs, path)
				}
				code, out, _ := boundedCoord(t, "", "--root", root, "doctor")
				if code != 3 || !strings.Contains(out, d+" is a") {
					t.Fatalf("doctor: exit %d:\n%s", code, out)
				}
				code, out, errs = boundedCoord(t, "", "--root", root, "doctor", "--repair")
				if code != 0 {
					t.Fatalf("doctor --repair: exit %d:\n%s%s", code, out, errs)
				}
				if fi, err := os.Lstat(path); err != nil || !fi.IsDir() {
					t.Fatalf("after doctor --repair, %s is not a directory: %v", path, err)
				}
				if code, _, errs := boundedCoord(t, "", "--root", root, "--agent", "b", "claim", "--task", "t2"); code != 0 {
					t.Fatalf("claim after repair: exit %d: %s", code, errs)
				}
			})
		}
	}
}

// Files a person or an agent names by path, outside the tree: the env
// file of a session (CLAUDE_ENV_FILE, CODEX_ENV_FILE) and a seed file. A
// FIFO there (no one ever opens its other end) held the session-start
// hook and seed-tasks forever, deaf to SIGTERM; each is now refused at
// once, naming the file and its kind, and nothing is written.
//
// Broken build this fails against: the hook's os.OpenFile and
// seed-tasks' os.Open (each call hangs until the bound kills it).
func TestNamedFilesNeverBlock(t *testing.T) {
	root := seedTree(t, []string{`{"id":"t1"}`})
	fifo := filepath.Join(t.TempDir(), "fifo")
	plant(t, fifo, kFIFO)
	start := `{"session_id":"s","hook_event_name":"SessionStart","source":"startup","cwd":"` + root + `"}`
	for _, c := range []struct {
		name, env string
		args      []string
		stdin     string
		code      int
		want      string
	}{
		{"claude env file", "CLAUDE_ENV_FILE", []string{"--agent", "a", "hook", "claude", "SessionStart"}, start, 1,
			"cannot export COORD_AGENT to " + fifo + ": " + fifo + " is a FIFO, not a regular file"},
		{"codex env file", "CODEX_ENV_FILE", []string{"--agent", "a", "hook", "codex", "SessionStart"}, start, 1,
			"cannot export COORD_AGENT to " + fifo + ": " + fifo + " is a FIFO, not a regular file"},
		{"seed file", "", []string{"seed-tasks", fifo}, "", 1,
			"seed file " + fifo + " is a FIFO, not a regular file"},
		{"seed file, validate", "", []string{"seed-tasks", "--validate", fifo}, "", 1,
			"seed file " + fifo + " is a FIFO, not a regular file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.env != "" {
				t.Setenv(c.env, fifo)
			}
			code, _, errs := boundedCoord(t, c.stdin, append([]string{"--root", root}, c.args...)...)
			if code != c.code || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") > 2 {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, errs, c.code, c.want)
			}
			if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
				t.Fatalf("the FIFO was replaced or removed: %v", err)
			}
		})
	}
	if out := mustCoord(t, "--root", root, "ls", "--json"); strings.Count(out, `"id"`) != 1 {
		t.Fatalf("the registry changed: %s", out)
	}
}
