package file

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/fsops"
	"github.com/rotd/coordination/heartbeat"
	"github.com/rotd/coordination/registry/format"
)

// Options tune Open.
type Options struct {
	// Clock is the engine's clock: the time written into the registry and
	// the log, and the "now" heartbeats are judged against. nil is the
	// system clock.
	Clock coord.Clock
	// LockWait bounds every wait for a flock; 0 is config.json's
	// lock_wait (30 s by default).
	LockWait time.Duration
	// Warn receives problems that happened after a commit (the change is
	// made, so the call still succeeds): a failed directory fsync, a
	// mirror file or log line that could not be written. nil discards
	// them.
	Warn func(msg string)
	// Holder names this process in the flock sidecars it holds, for a
	// waiter's --lock-diagnose (SetHolder changes it later).
	Holder string
	// Lenient opens a tree that every other command refuses, for doctor:
	// a subdirectory of the wrong kind (a symlink, a regular file or a
	// FIFO at agent_locks/, …) and a config.json that does not parse
	// (Config then returns the defaults; Doctor reports the file).
	Lenient bool
	// RotdDir is the .rotd directory whose artifacts Artifacts writes;
	// "" means none (Artifacts returns nil).
	RotdDir string
}

// Backend is the file-system engine of one coordination tree. It
// implements coord.Backend; it is safe for concurrent use by several
// goroutines (the race detector cannot see flocks: goroutines of one
// process exclude each other through them as processes do).
type Backend struct {
	tree     *fsops.Tree
	clock    coord.Clock
	lockWait time.Duration
	warnFn   func(string)
	lenient  bool
	rotdDir  string
	beats    *heartbeat.Dir

	mu     sync.Mutex
	holder string
}

var _ coord.Backend = (*Backend)(nil)

// Open opens the coordination directory dir, which must exist and be
// reached without a symlink (package registry/backend checks that, and
// that the file system is local). Its subdirectories must be directories
// unless opt.Lenient.
func Open(dir string, opt Options) (*Backend, error) {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return nil, coord.Errorf(coord.CodeIO, "no coordination tree at %s", dir).
			WithHint("run 'coord init' in the project root")
	}
	var subdirs []string
	if !opt.Lenient {
		subdirs = Subdirs
	}
	t, err := fsops.OpenTree(dir, subdirs...)
	if errors.Is(err, fsops.ErrWrongKind) {
		return nil, IOError(err, "") // its own hint
	}
	if err != nil {
		return nil, IOError(err, "remove the symlink or file and run 'coord init' ('coord doctor --repair' does both)")
	}
	b := &Backend{tree: t, clock: opt.Clock, lockWait: opt.LockWait, warnFn: opt.Warn, lenient: opt.Lenient, rotdDir: opt.RotdDir, holder: opt.Holder}
	if b.clock == nil {
		b.clock = coord.SystemClock
	}
	b.beats = &heartbeat.Dir{Tree: t, Clock: func() time.Time { return b.clock() }}
	if b.lockWait <= 0 {
		cfg, err := b.Config(context.Background())
		if err != nil {
			t.Close()
			return nil, err
		}
		b.lockWait = cfg.LockWait
	}
	return b, nil
}

// Name is "file".
func (s *Backend) Name() string { return "file" }

// Where is the coordination directory.
func (s *Backend) Where() string { return s.tree.Dir() }

// Close releases the tree.
func (s *Backend) Close() error { return s.tree.Close() }

// SetHolder renames this process in the flock sidecars it takes from now
// on (a front end that learns the caller's identity after opening).
func (s *Backend) SetHolder(holder string) {
	s.mu.Lock()
	s.holder = holder
	s.mu.Unlock()
}

// Tasks is the registry.
func (s *Backend) Tasks() coord.TaskStore { return tasks{s} }

// Beats is the heartbeat directory.
func (s *Backend) Beats() coord.BeatStore { return beats{s} }

// Leases is leases.json.
func (s *Backend) Leases() coord.LeaseStore { return leases{s} }

// KV is kv.json.
func (s *Backend) KV() coord.KVStore { return kvStore{s} }

// Quota is quota.json.
func (s *Backend) Quota() coord.QuotaStore { return quota{s} }

// Log is coordination.log and its rotations.
func (s *Backend) Log() coord.LogStore { return logStore{s} }

// Changes notifies of changes in the tree (fsnotify).
func (s *Backend) Changes() coord.Notifier { return notifier{s} }

// Artifacts writes under RotdDir; nil without one.
func (s *Backend) Artifacts() coord.ArtifactStore {
	if s.rotdDir == "" {
		return nil
	}
	return artifacts{s}
}

// Config reads config.json strictly; a missing file is the defaults. A
// file that does not parse is an error (exit 2 naming it), or with
// Options.Lenient the defaults.
func (s *Backend) Config(ctx context.Context) (coord.Config, error) {
	c, err := s.readConfig()
	if err != nil {
		if s.lenient {
			return coord.DefaultConfig(), nil
		}
		return coord.DefaultConfig(), IOError(err, "")
	}
	return c, nil
}

func (s *Backend) warn(err error) {
	if s.warnFn != nil && err != nil {
		s.warnFn(err.Error())
	}
}

// holderLine is what this process writes into a flock sidecar it holds.
func (s *Backend) holderLine() []byte {
	s.mu.Lock()
	holder := s.holder
	s.mu.Unlock()
	line, _ := json.Marshal(struct {
		Holder string `json:"holder"`
		Since  string `json:"since"`
		PID    int    `json:"pid"`
	}{holder, coord.FormatTime(s.clock()), os.Getpid()})
	return line
}

// lock takes a flock sidecar of .lock/ for the engine's wait.
func (s *Backend) lock(ctx context.Context, name string) (func(), error) {
	unlock, err := s.tree.Lock(ctx, name, s.lockWait, s.holderLine())
	if err != nil {
		return nil, IOError(err, "")
	}
	return unlock, nil
}

// IOError turns a file-system error into a coded *coord.Error naming the
// file, with a hint fitting the failure; a *coord.Error is returned as it
// is. It is the one table from file-system failures to exit codes: a lock
// wait that ran out is CodeLockTimeout (with the holder as Detail), a
// cancelled context CodeInterrupted, everything else CodeIO.
func IOError(err error, hint string) error {
	if err == nil {
		return nil
	}
	var ce *coord.Error
	if errors.As(err, &ce) {
		return err
	}
	var lt *fsops.LockTimeoutError
	if errors.As(err, &lt) {
		return &coord.Error{Code: coord.CodeLockTimeout, Msg: lt.Error(), Err: coord.ErrLockTimeout, Detail: lt.Holder,
			Hint: "another coord process holds it; retry, or allow a longer lock wait (lock_wait in config.json)"}
	}
	var pe *format.ParseError
	if errors.As(err, &pe) {
		return &coord.Error{Code: coord.CodeIO, Msg: pe.Error(), Hint: "fix the file by hand or restore it from version control; 'coord doctor' lists problems"}
	}
	var ke *fsops.KindError
	if errors.As(err, &ke) {
		if hint == "" {
			hint = "remove it ('coord doctor --repair' does)"
			if ke.MayHoldData() {
				hint = "move it away ('coord doctor --repair' does)"
			}
		}
		return &coord.Error{Code: coord.CodeIO, Msg: ke.Error(), Err: ke, Hint: hint}
	}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &coord.Error{Code: coord.CodeInterrupted, Msg: "interrupted", Err: coord.ErrInterrupted}
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		hint = "the disk is full; free space and retry (nothing was changed)"
	case errors.Is(err, syscall.EROFS):
		hint = "the file system is read-only; remount it read-write (nothing was changed)"
	case errors.Is(err, fs.ErrPermission):
		hint = "check the permissions of the coordination tree"
	case errors.Is(err, fsops.ErrSymlink):
		hint = "remove the symlink; coord never follows symlinks inside the tree"
	case errors.Is(err, fsops.ErrTooLarge):
		hint = "the file is too large to be a registry; archive done tasks or restore it"
	}
	return &coord.Error{Code: coord.CodeIO, Msg: strings.TrimPrefix(err.Error(), "openat "), Hint: hint}
}

// rotdTree opens the .rotd directory for one artifact write.
func (s *Backend) rotdTree() (*fsops.Tree, error) {
	t, err := fsops.OpenTree(filepath.Clean(s.rotdDir), ".lock")
	if err != nil {
		return nil, IOError(err, "")
	}
	return t, nil
}
