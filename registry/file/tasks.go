package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/format"
)

// load reads and parses the registry, the dependency map and the lock
// directory into a Txn.
func (s *Backend) load() (*coord.Txn, *format.Registry, error) {
	data, err := s.tree.ReadFile(RegistryFile, MaxRegistrySize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, coord.Errorf(coord.CodeIO, "no registry at %s", s.tree.Path(RegistryFile)).
				WithHint("if the project had tasks, %s; a new project: run 'coord init' in the project root", repairHint)
		}
		return nil, nil, registryError(err)
	}
	f, err := format.Parse(s.tree.Path(RegistryFile), data)
	if err != nil {
		return nil, nil, registryError(err)
	}
	deps, err := s.loadDepMap()
	if err != nil {
		return nil, nil, IOError(err, "")
	}
	tx := &coord.Txn{Tasks: f.Tasks, DepMap: deps, Now: s.clock().UTC(), Archived: s.archivedLookup(), PathLocks: f.PathLocks, Pool: f.Agents}
	tx.UseIndex(f.Index())
	tx.LastEpoch = max(tx.LastEpoch, coord.Counted(f.LastEpoch)) // one above the ceiling was never issued
	return tx, f, nil
}

// tasks is the registry as a coord.TaskStore.
type tasks struct{ b *Backend }

func (t tasks) Update(ctx context.Context, fn func(*coord.Txn) error) error {
	return t.b.update(ctx, fn)
}

func (t tasks) View(ctx context.Context, fn func(*coord.Txn) error) error {
	return t.b.view(ctx, fn)
}

func (t tasks) ArchivedTasks(ctx context.Context) ([]*coord.Task, error) {
	return t.b.archivedTasks(ctx)
}

// view loads a snapshot without the lock: the registry is only ever
// replaced by rename, so a reader sees the old or the new file, whole.
func (s *Backend) view(ctx context.Context, fn func(*coord.Txn) error) error {
	if err := ctx.Err(); err != nil {
		return IOError(err, "")
	}
	tx, f, err := s.load()
	if err != nil {
		return err
	}
	if !f.HasPathLocks() { // not migrated yet: the lock files are the locks
		if tx.PathLocks, err = s.filePathLocks(false); err != nil {
			return err
		}
	}
	return fn(tx)
}

// update runs fn under the registry's flock: it re-reads the registry,
// reconciles the lock files and the path-lock mirror against it (the
// registry is the truth), runs fn, and if fn changed anything commits it
// (see commit); then it appends the log lines. An error from fn leaves
// the registry as it was.
func (s *Backend) update(ctx context.Context, fn func(*coord.Txn) error) error {
	unlock, err := s.lock(ctx, registryLock)
	if err != nil {
		return err
	}
	defer unlock()
	return s.updateLocked(ctx, fn)
}

func (s *Backend) updateLocked(ctx context.Context, fn func(*coord.Txn) error) error {
	tx, f, err := s.load()
	if err != nil {
		return err
	}
	locks, err := s.listLocks()
	if err != nil {
		return err
	}
	mark, err := s.epochFloor(tx)
	if err != nil {
		return err
	}
	fixes, err := s.reconcile(tx, locks, &mark)
	if err != nil {
		return err
	}
	for _, name := range s.removeDeadTemps() {
		fixes = append(fixes, coord.Event{Time: tx.Now, Agent: coord.CoordinatorID, Text: "reconciled: removed temp file " + name + " left by an interrupted write"})
	}
	m := &mirror{s: s, ctx: ctx, before: map[string]coord.PathLock{}}
	defer m.release()
	var adoptions []coord.Event
	logTo := func(list *[]coord.Event) func(string, ...any) {
		return func(format string, args ...any) {
			*list = append(*list, coord.Event{Time: tx.Now, Agent: coord.CoordinatorID, Text: "reconciled: " + fmt.Sprintf(format, args...)})
		}
	}
	adopted, err := s.reconcilePathLocks(tx, f, m, logTo(&fixes), logTo(&adoptions))
	if err != nil {
		s.appendLog(ctx, fixes...)
		return err
	}
	before, n := tx.LastEpoch, len(tx.Tasks)
	tx.PathLocksDirty, tx.PoolDirty = false, false
	ferr := fn(tx)
	if ferr != nil {
		// Repairs on disk are logged; an adoption is not made (it is
		// committed with a transaction, and there is none).
		tx.Events = fixes
		if lerr := s.appendLog(ctx, tx.Events...); lerr != nil {
			return lerr
		}
		return ferr
	}
	dirty := tx.LastEpoch != before || len(tx.Tasks) != n || tx.PathLocksDirty || tx.PoolDirty || len(tx.Outbox) > 0 || adopted
	for _, t := range tx.Tasks {
		if t.Dirty {
			dirty = true
			break
		}
	}
	if dirty && ctx.Err() != nil {
		// Cancelled before the commit: nothing is changed (a commit
		// under way is never cut short; the steps below ignore ctx).
		s.appendLog(context.WithoutCancel(ctx), fixes...)
		return IOError(ctx.Err(), "")
	}
	if dirty {
		// The log lines come after the commit: one no reader would take
		// back refuses the commit now, before anything is written.
		if _, err := coord.LogLines(s.tree.Path(LogFile), tx.Events); err != nil {
			s.appendLog(context.WithoutCancel(ctx), fixes...)
			return err
		}
		if err := s.commit(context.WithoutCancel(ctx), tx, f, locks, mark, m); err != nil {
			return err
		}
	}
	// The commit is made: a log failure now must not turn the command's
	// result into an error the caller would read as "nothing changed".
	events := append(append(fixes, adoptions...), tx.Events...)
	if err := s.appendLog(context.WithoutCancel(ctx), events...); err != nil {
		s.warn(fmt.Errorf("committed, but the log line was not written: %w", err))
	}
	return nil
}

// commit makes the outbox's tasks durable in the archive, raises the
// epoch mark past any epoch it hands out, writes new locks, the registry
// (the commit point: tasks, path locks and the epoch counter in one
// rename), then removes unbacked locks and brings the path-lock mirror in
// line.
func (s *Backend) commit(ctx context.Context, tx *coord.Txn, f *format.Registry, locks map[string][]string, mark int64, m *mirror) error {
	if tx.PathLocksDirty {
		if err := m.lock(); err != nil {
			return err
		}
	}
	if len(tx.Outbox) > 0 {
		if err := s.archiveOutbox(ctx, tx); err != nil {
			return err
		}
	}
	if err := s.raiseEpochMark(&mark, tx.LastEpoch); err != nil {
		return err
	}
	var created []string
	for _, t := range tx.Tasks {
		if !t.Dirty || !t.HoldsLock() {
			continue
		}
		if hasAgent(locks[t.ID], t.ClaimedBy) {
			continue
		}
		name := LocksDir + "/" + LockName(t.ID, t.ClaimedBy)
		err := s.createLock(name, t)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			for _, c := range created {
				s.tree.Remove(c)
			}
			return IOError(err, "")
		}
		created = append(created, name)
	}
	f.Tasks = tx.Tasks
	f.PathLocks = tx.PathLocks
	f.Agents = tx.Pool
	if tx.LastEpoch > f.LastEpoch || !coord.CounterOK(f.LastEpoch) {
		f.LastEpoch = tx.LastEpoch // a value above the ceiling was never issued
	}
	f.Touch(tx.Now)
	if err := s.writeRegistry(f, true); err != nil {
		for _, c := range created {
			s.tree.Remove(c)
		}
		return err
	}
	var gone []string
	for _, t := range tx.Tasks {
		if !t.Dirty {
			continue
		}
		for _, a := range locks[t.ID] {
			if t.HoldsLock() && a == t.ClaimedBy {
				continue
			}
			gone = append(gone, LockName(t.ID, a))
		}
	}
	// Best effort: an unremoved lock is unbacked and the next reconcile
	// removes it.
	s.tree.RemoveIn(LocksDir, gone)
	if tx.PathLocksDirty {
		if err := s.syncMirror(m, tx.PathLocks); err != nil {
			s.warn(fmt.Errorf("committed, but the path lock files were not all brought in line (the next command does): %w", err))
		}
	}
	return nil
}

// createLock creates a task's lock file (O_EXCL), recreating the lock
// directory if someone removed it.
func (s *Backend) createLock(name string, t *coord.Task) error {
	err := s.tree.CreateExcl(name, lockContent(t, "", 0), false)
	if errors.Is(err, fs.ErrExist) {
		// Something that is not a lock file (a planted symlink, a FIFO, a
		// socket) sits at the name: it holds no data; remove it, never
		// follow or open it. A directory might hold someone's data: it is
		// refused, named.
		if fi, lerr := s.tree.Lstat(name); lerr == nil && !fi.Mode().IsRegular() {
			if fi.IsDir() {
				return s.tree.CheckFile(name)
			}
			if err := s.tree.Remove(name); err != nil {
				return err
			}
			return s.tree.CreateExcl(name, lockContent(t, "", 0), false)
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		if err := s.tree.MkdirAll(LocksDir, 0o755); err != nil {
			return err
		}
		err = s.tree.CreateExcl(name, lockContent(t, "", 0), false)
	}
	return err
}

func hasAgent(agents []string, a string) bool {
	for _, x := range agents {
		if x == a {
			return true
		}
	}
	return false
}

func lockContent(t *coord.Task, host string, pid int) []byte {
	if host == "" {
		host, _ = os.Hostname()
	}
	if pid == 0 {
		pid = os.Getpid()
	}
	since := t.ClaimedAt
	if since == "" {
		since = coord.FormatTime(time.Now())
	}
	return format.EncodeLockInfo(format.LockInfo{Holder: t.ClaimedBy, Since: since, TaskID: t.ID, Epoch: t.Epoch, PID: pid, Host: host})
}

// listLocks maps task id -> agents with a lock file for it. Names that
// are not lock files are ignored here (doctor reports them).
func (s *Backend) listLocks() (map[string][]string, error) {
	ents, err := s.tree.ReadDir(LocksDir)
	if err != nil {
		return nil, IOError(err, "")
	}
	m := make(map[string][]string, len(ents))
	for _, e := range ents {
		task, agent, ok := SplitLockName(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		m[task] = append(m[task], agent)
	}
	return m, nil
}

// reconcile makes the lock files agree with the registry: an unbacked
// lock is removed, a lock-holding task without its lock gets it back. It
// returns the log events describing each fix and updates locks.
//
// An unbacked lock may record the newest epoch the tree has issued (a
// registry restored from a backup no longer knows it): before such a lock
// goes, the counter and the epoch mark are raised past its epoch.
func (s *Backend) reconcile(tx *coord.Txn, locks map[string][]string, mark *int64) ([]coord.Event, error) {
	var fixes []coord.Event
	fix := func(format string, args ...any) {
		fixes = append(fixes, coord.Event{Time: tx.Now, Agent: coord.CoordinatorID, Text: "reconciled: " + fmt.Sprintf(format, args...)})
	}
	tasks := make([]string, 0, len(locks))
	for task := range locks {
		tasks = append(tasks, task)
	}
	sort.Strings(tasks)
	backed := func(t *coord.Task, a string) bool { return t != nil && t.HoldsLock() && t.ClaimedBy == a }
	for _, task := range tasks {
		t := tx.Task(task)
		for _, a := range locks[task] {
			if backed(t, a) {
				continue
			}
			if n, ok := s.lockEpoch(LockName(task, a)); ok && n > tx.LastEpoch {
				tx.LastEpoch = n
			}
		}
	}
	if err := s.raiseEpochMark(mark, tx.LastEpoch); err != nil {
		return nil, err
	}
	for _, task := range tasks {
		agents := locks[task]
		t := tx.Task(task)
		kept := agents[:0]
		for _, a := range agents {
			if backed(t, a) {
				kept = append(kept, a)
				continue
			}
			if err := s.tree.Remove(LocksDir + "/" + LockName(task, a)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, IOError(err, "")
			}
			fix("removed lock %s not backed by the registry", LockName(task, a))
		}
		if len(kept) == 0 {
			delete(locks, task)
		} else {
			locks[task] = kept
		}
	}
	for _, t := range tx.Tasks {
		if !t.HoldsLock() || hasAgent(locks[t.ID], t.ClaimedBy) {
			continue
		}
		name := LocksDir + "/" + LockName(t.ID, t.ClaimedBy)
		if err := s.createLock(name, t); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, IOError(err, "")
		}
		locks[t.ID] = append(locks[t.ID], t.ClaimedBy)
		fix("restored missing lock %s", LockName(t.ID, t.ClaimedBy))
	}
	return fixes, nil
}
