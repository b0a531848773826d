package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/fsops"
	"github.com/rotd/coordination/registry/format"
)

// AsideMark is in the name of anything doctor --repair moved aside
// (<name>.corrupt-<UTC time>): a directory or regular file found where
// the other kind belongs. Doctor ignores such names; delete them once
// you have looked at them.
const AsideMark = ".corrupt-"

// DataFiles are the regular files of the tree that hold data coord needs
// (corrupt ones are reported, never rewritten or removed by doctor).
var DataFiles = []string{RegistryFile, DepMapFile, ConfigFile, QuotaFile, KVFile, LeasesFile}

// Doctor checks every invariant under the registry lock: every name holds
// the kind of file that belongs there, the files parse, the dependencies
// have no cycle, every lock-holding task has exactly one lock file and
// every lock file is backed by such a task with matching content, no temp
// files are left. With repair it fixes what it safely can, logs each fix,
// and re-checks.
//
// The flock sidecars in .lock/ are checked first: with repair, one that is
// not a regular file is removed before doctor takes the registry lock
// (nobody can hold a flock on it: coord refuses to open it); without
// repair, doctor reports it and reads without the lock (it writes
// nothing).
func (s *Backend) Doctor(ctx context.Context, repair bool) ([]coord.Problem, error) {
	var early []coord.Problem
	var events []coord.Event
	now := s.clock().UTC()
	apply := func(p *coord.Problem) error {
		if p.Fix == nil {
			return nil
		}
		done, err := p.Fix()
		if err != nil {
			return IOError(err, "")
		}
		p.Fixed = true
		text := "repaired: " + p.What
		if done != "" {
			text += " (" + done + ")"
		}
		events = append(events, coord.Event{Time: now, Agent: coord.CoordinatorID, Text: text})
		return nil
	}
	if repair {
		early = s.checkLockDir()
		for i := range early {
			if err := apply(&early[i]); err != nil {
				return early, err
			}
		}
	}
	unlock := func() {}
	if _, err := s.tree.Lstat(LockDir); repair || err == nil && s.tree.CheckDir(LockDir) == nil && s.tree.CheckFile(registryLock) == nil {
		var err error
		if unlock, err = s.lock(ctx, registryLock); err != nil {
			return early, err
		}
	}
	defer unlock()
	if !repair {
		return s.diagnose(), nil
	}
	// A repair can bring further problems to light (a directory put back
	// shows which lock files are missing from it): repeat while fixing.
	probs := early
	for round := 0; round < 4; round++ {
		fixed := false
		for _, p := range s.diagnose() {
			if alreadyFixed(probs, p.What) {
				continue // fixed once and back: reported as remaining below
			}
			if err := apply(&p); err != nil {
				return append(probs, p), err
			}
			fixed = fixed || p.Fixed
			probs = mergeProblem(probs, p)
		}
		if !fixed {
			break
		}
	}
	if err := s.appendLog(ctx, events...); err != nil {
		return probs, err
	}
	// Anything left is reported as not fixed.
	after := s.diagnose()
	seen := map[string]bool{}
	for _, p := range after {
		seen[p.What] = true
	}
	// A problem still there is not fixed; one gone is, whether its own fix
	// or another's removed it (an unreadable directory also hid what the
	// epoch scan would have read there).
	for i := range probs {
		probs[i].Fixed = !seen[probs[i].What]
	}
	for _, p := range after {
		probs = mergeProblem(probs, p)
	}
	return probs, nil
}

func alreadyFixed(probs []coord.Problem, what string) bool {
	for _, p := range probs {
		if p.What == what && p.Fixed {
			return true
		}
	}
	return false
}

// mergeProblem adds p unless a problem of the same text is listed; a
// listed one takes p's Fixed if p was fixed.
func mergeProblem(probs []coord.Problem, p coord.Problem) []coord.Problem {
	for i := range probs {
		if probs[i].What == p.What {
			probs[i].Fixed = probs[i].Fixed || p.Fixed
			return probs
		}
	}
	return append(probs, p)
}

// problems collects doctor's findings.
type problems []coord.Problem

func (ps *problems) add(fix func() (string, error), format string, args ...any) {
	*ps = append(*ps, coord.Problem{What: fmt.Sprintf(format, args...), Fix: fix})
}

// note adds a finding that breaks no invariant (coord.Problem.Note).
func (ps *problems) note(fix func() (string, error), format string, args ...any) {
	*ps = append(*ps, coord.Problem{What: fmt.Sprintf(format, args...), Fix: fix, Note: true})
}

// tempNote reports the temp file path unless a live writer holds it
// (fsops: its flock is taken): a dead writer's leftover breaks no
// invariant, and the next commit or sweep removes it (RemoveDeadTemps);
// --repair removes it now, re-checking under its flock that no writer
// holds it.
func (s *Backend) tempNote(ps *problems, path string) {
	if s.tree.TempHeld(path) {
		return
	}
	ps.note(func() (string, error) {
		_, err := s.tree.RemoveStaleTemp(path)
		return "removed it", err
	}, "temp file %s left by an interrupted write (no writer holds it; the next commit removes it)", path)
}

// removeFix wraps a plain removal as a fix.
func removeFix(rm func() error) func() (string, error) {
	return func() (string, error) { return "", rm() }
}

// kindProblem reports name if it is not of the kind that belongs there
// (wantDir: a directory, else a regular file); it returns false then. The
// repair clears the name: a FIFO, socket, device or symlink holds no data
// and is removed, as is an empty directory; a directory with entries, or a
// regular file where a directory belongs, is moved aside to
// <name>.corrupt-<time>, so nothing is ever deleted that might hold data.
// A missing directory is created.
func (s *Backend) kindProblem(ps *problems, name string, wantDir bool) bool {
	return s.kindProblemThen(ps, name, wantDir, nil)
}

// kindProblemThen is kindProblem with a step run after the name was
// cleared (recreating what belongs there).
func (s *Backend) kindProblemThen(ps *problems, name string, wantDir bool, then func() error) bool {
	want, check := "a regular file", s.tree.CheckFile
	if wantDir {
		want, check = "a directory", s.tree.CheckDir
		then = func() error { return s.tree.MkdirAll(name, 0o755) }
	}
	err := check(name)
	if err == nil {
		return true
	}
	is := "an entry of another kind"
	var ke *fsops.KindError
	switch {
	case errors.As(err, &ke):
		is = ke.Is
	case errors.Is(err, fsops.ErrSymlink):
		is = "a symlink"
		if holdsData(name) {
			// Removing the link would lose nothing, but would leave coord
			// without the data the link was meant to provide.
			ps.add(nil, "%s is a symlink, not %s; replace the link with what it points to (coord never follows symlinks in the tree)", name, want)
			return false
		}
	}
	ps.add(func() (string, error) {
		done, err := s.clearName(name)
		if err == nil && then != nil {
			if err = then(); !wantDir {
				done += " and recreated it from the registry"
			}
		}
		return done, err
	}, "%s is %s, not %s", name, is, want)
	return false
}

// clearName removes what stands at name if it can hold no data (a FIFO,
// socket, device, symlink or empty directory) and otherwise renames it to
// name.corrupt-<time>. It says which it did.
func (s *Backend) clearName(name string) (string, error) {
	fi, err := s.tree.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return "removed it", s.tree.Remove(name)
	}
	if fi.IsDir() {
		if err := s.tree.Remove(name); err == nil {
			return "removed the empty directory", nil
		}
	}
	aside := name + AsideMark + s.clock().UTC().Format("20060102T150405Z")
	for i := 1; ; i++ {
		if _, err := s.tree.Lstat(aside); errors.Is(err, fs.ErrNotExist) {
			break
		}
		aside = name + AsideMark + s.clock().UTC().Format("20060102T150405Z") + "." + strconv.Itoa(i)
	}
	if err := s.tree.Rename(name, aside); err != nil {
		return "", err
	}
	return "moved it to " + aside, s.tree.SyncDir(dirOf(name))
}

// holdsData reports whether name holds data coord cannot rebuild: the
// data files, the logs and the archive.
func holdsData(name string) bool {
	for _, f := range DataFiles {
		if name == f {
			return true
		}
	}
	return name == LogFile || isRotatedLog(name) || name == ArchiveDir || strings.HasPrefix(name, ArchiveDir+"/")
}

func dirOf(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[:i]
	}
	return "."
}

// checkLockDir checks the .lock directory and its flock sidecars: they
// must be a directory and regular files.
func (s *Backend) checkLockDir() []coord.Problem {
	var ps problems
	if _, err := s.tree.Lstat(LockDir); errors.Is(err, fs.ErrNotExist) {
		ps.add(func() (string, error) { return "", s.tree.MkdirAll(LockDir, 0o755) }, "directory %s is missing", LockDir)
		return ps
	}
	if s.kindProblem(&ps, LockDir, true) {
		s.checkEntries(&ps, LockDir, hasSuffix(".lock"), nil)
	}
	return ps
}

func hasSuffix(suffix string) func(string) bool {
	return func(n string) bool { return strings.HasSuffix(n, suffix) }
}

// isRotatedLog matches coordination-YYYY-MM-DD[.N].log.
func isRotatedLog(n string) bool {
	return strings.HasPrefix(n, "coordination-") && strings.HasSuffix(n, ".log")
}

// checkEntries reports every entry of dir whose name match accepts and
// that is not a regular file; each regular one is passed to each (which
// may be nil). Temp files and names moved aside are skipped.
func (s *Backend) checkEntries(ps *problems, dir string, match func(string) bool, each func(name string, e fs.DirEntry)) {
	ents, err := s.tree.ReadDir(dir)
	if err != nil {
		ps.add(nil, "%v", IOError(err, ""))
		return
	}
	for _, e := range ents {
		n := e.Name()
		if !match(n) || IsTempName(n) || strings.Contains(n, AsideMark) {
			continue
		}
		path := n
		if dir != "." {
			path = dir + "/" + n
		}
		if !s.kindProblem(ps, path, false) || each == nil {
			continue
		}
		each(path, e)
	}
}

func (s *Backend) diagnose() []coord.Problem {
	var ps problems
	add := ps.add
	// Every name holds the kind of file that belongs there.
	dirOK := map[string]bool{}
	for _, d := range Subdirs {
		if _, err := s.tree.Lstat(d); errors.Is(err, fs.ErrNotExist) {
			if d == BackupDir { // made by the first commit that keeps a backup
				dirOK[d] = true
				continue
			}
			d := d
			add(func() (string, error) { return "", s.tree.MkdirAll(d, 0o755) }, "directory %s is missing", d)
			dirOK[d] = true // lists as empty
			continue
		}
		dirOK[d] = s.kindProblem(&ps, d, true)
	}
	fileOK := map[string]bool{}
	for _, f := range append(DataFiles, LogFile) {
		fileOK[f] = s.kindProblem(&ps, f, false)
	}
	s.checkEntries(&ps, ".", isRotatedLog, nil)
	if dirOK[LockDir] {
		s.checkEntries(&ps, LockDir, hasSuffix(".lock"), nil)
	}
	if dirOK[HeartbeatDir] {
		s.checkEntries(&ps, HeartbeatDir, hasSuffix(".beat"), nil)
	}
	if dirOK[FileLocksDir] {
		s.diagnosePathLocks(&ps, fileOK[RegistryFile])
	}
	if dirOK[ArchiveDir] {
		s.checkEntries(&ps, ArchiveDir, hasSuffix(".jsonl"), nil)
		if _, err := s.archivedTasks(context.Background()); err != nil {
			add(nil, "%s; fix that line by hand (the archive is append-only history)", s.rel(unwrapCoded(err)))
		}
	}
	// The small data files parse (strictly). Doctor never rewrites or
	// removes one it cannot read: it reports it with the fix.
	parse := func(file string, read func() error) {
		if !fileOK[file] {
			return
		}
		if err := read(); err != nil {
			add(nil, "%s; fix it by hand or restore it from version control", s.rel(unwrapCoded(err)))
		}
	}
	parse(ConfigFile, func() error { _, err := s.readConfig(); return err })
	parse(KVFile, func() error { _, err := readDoc[coord.KVSpace](s, KVFile); return err })
	parse(LeasesFile, func() error { _, err := readDoc[coord.LeaseSet](s, LeasesFile); return err })
	parse(QuotaFile, func() error { _, err := s.loadQuota(); return err })
	if fileOK[LeasesFile] && fileOK[KVFile] && dirOK[LockDir] {
		ps = append(ps, s.counterProblems()...)
	}
	if fileOK[DepMapFile] {
		if _, err := s.loadDepMap(); err != nil {
			add(nil, "%s; fix it by hand or restore it from version control", s.rel(unwrapCoded(err)))
			fileOK[DepMapFile] = false
		}
	}
	if fileOK[RegistryFile] && fileOK[DepMapFile] && dirOK[LocksDir] {
		s.diagnoseRegistry(&ps)
	}
	// Temp leftovers (in the tree's top directory, where every write
	// makes its temp file, and where older coords made some).
	for _, dir := range []string{".", HeartbeatDir, FileLocksDir, ArchiveDir, BackupDir} {
		if dir != "." && !dirOK[dir] {
			continue
		}
		ents, err := s.tree.ReadDir(dir)
		if err != nil {
			add(nil, "%v", IOError(err, ""))
			continue
		}
		for _, e := range ents {
			if !IsTempName(e.Name()) || !e.Type().IsRegular() {
				continue
			}
			path := e.Name()
			if dir != "." {
				path = dir + "/" + path
			}
			s.tempNote(&ps, path)
		}
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].What < ps[j].What })
	return ps
}

// diagnoseRegistry checks the registry against itself, its dependencies
// and the lock files.
func (s *Backend) diagnoseRegistry(ps *problems) {
	add := ps.add
	tx, f, err := s.load()
	if err != nil {
		if s.registryDamaged() {
			// The newest readable backup is the repair.
			s.restoreFix(ps, s.rel(unwrapCoded(err)))
		} else {
			add(nil, "%v", err)
		}
		return
	}
	// Registry-internal consistency.
	for _, t := range tx.Tasks {
		t := t
		if (t.Status == coord.Claimed || t.Status == coord.Review) && t.ClaimedBy == "" {
			add(removeFix(func() error {
				t.Status, t.Dirty = coord.Unclaimed, true
				return s.writeRegistry(f, true)
			}), "task %s is %s but has no claimed_by", t.ID, t.Status)
		}
	}
	// Dependency cycles, over the tasks' deps merged with the map's.
	graph := map[string][]string{}
	for _, t := range tx.Tasks {
		graph[t.ID] = tx.Deps(t)
	}
	for id, d := range tx.DepMap {
		if tx.Task(id) == nil {
			graph[id] = d
		}
	}
	if cyc := coord.FindCycle(graph); cyc != nil {
		add(nil, "dependency cycle %s (the tasks' deps in %s merged with %s); remove one of its edges by hand",
			strings.Join(cyc, " -> "), RegistryFile, DepMapFile)
	}
	// Lock files against the registry.
	ents, err := s.tree.ReadDir(LocksDir)
	if err != nil {
		add(nil, "%v", IOError(err, ""))
		return
	}
	have := map[string]bool{}
	for _, e := range ents {
		name := e.Name()
		path := LocksDir + "/" + name
		rm := removeFix(func() error { return s.tree.Remove(path) })
		if strings.Contains(name, AsideMark) {
			continue
		}
		if IsTempName(name) {
			s.tempNote(ps, path)
			continue
		}
		task, agent, ok := SplitLockName(name)
		if !ok {
			if s.kindProblem(ps, path, false) {
				add(rm, "%s is not a lock file (<task>.<agent>.lock, regular file)", path)
			}
			continue
		}
		t := tx.Task(task)
		backed := t != nil && t.HoldsLock() && t.ClaimedBy == agent
		var recreate func() error
		if backed {
			recreate = func() error { return s.tree.CreateExcl(path, lockContent(t, "", 0), true) }
		}
		if !s.kindProblemThen(ps, path, false, recreate) {
			have[task] = have[task] || backed
			continue
		}
		if !backed {
			add(rm, "lock %s is not backed by the registry", path)
			continue
		}
		have[task] = true
		data, err := s.tree.ReadFile(path, maxSmallFile)
		var li format.LockInfo
		if err == nil {
			li, err = format.ParseLockInfo(s.tree.Path(path), data)
		}
		rewrite := removeFix(func() error { return s.tree.WriteFile(path, lockContent(t, "", 0), 0o644) })
		switch {
		case err != nil:
			add(rewrite, "lock %s does not parse (%v); it is rewritten from the registry (holder %s, epoch %d)", path, unwrapParse(err), agent, t.Epoch)
		case li.Holder != agent || li.TaskID != task || li.Epoch != t.Epoch:
			add(rewrite, "lock %s content does not match the registry (holder %s, epoch %d)", path, agent, t.Epoch)
		}
	}
	for _, t := range tx.Tasks {
		if t.HoldsLock() && !have[t.ID] {
			t := t
			name := LocksDir + "/" + LockName(t.ID, t.ClaimedBy)
			add(removeFix(func() error {
				return s.tree.CreateExcl(name, lockContent(t, "", 0), true)
			}), "task %s is %s by %s but has no lock file", t.ID, t.Status, t.ClaimedBy)
		}
	}
	*ps = append(*ps, s.epochProblems(tx, f)...)
}

// rel gives a message on one line, with the tree's own path dropped from
// file names (doctor names every file relative to the tree).
func (s *Backend) rel(msg string) string {
	return coord.OneLine(strings.ReplaceAll(msg, s.tree.Dir()+"/", ""))
}

// unwrapParse gives a parse error's message without the file name (the
// problem line names the file already).
func unwrapParse(err error) string {
	var pe *format.ParseError
	if errors.As(err, &pe) {
		return coord.OneLine(pe.Msg)
	}
	return coord.OneLine(err.Error())
}

// unwrapCoded drops the hint of a coded error (doctor gives its own fix).
func unwrapCoded(err error) string {
	var ce *coord.Error
	if errors.As(err, &ce) {
		if ce.Err != nil && ce.Err.Error() != ce.Msg {
			return ce.Msg + ": " + ce.Err.Error()
		}
		return ce.Msg
	}
	return err.Error()
}

// diagnosePathLocks checks file_locks/. On a registry that holds the path
// locks (migrated), the files are its mirror: each must be a regular file
// backed by a lock of the registry, with that lock as its content, and
// every lock must have its file; each is repaired from the registry. On
// an unmigrated registry (or one that cannot be read) the files are the
// locks: one that does not parse is reported for a person to fix.
func (s *Backend) diagnosePathLocks(ps *problems, registryOK bool) {
	var f *format.Registry
	if registryOK {
		_, f, _ = s.load()
	}
	if f == nil || !f.HasPathLocks() {
		s.checkEntries(ps, FileLocksDir, hasSuffix(".lock"), func(name string, _ fs.DirEntry) {
			if _, err := s.readPathLock(name); err != nil {
				ps.add(nil, "path lock %s does not parse (%v); fix it by hand, or remove it if that path should not be locked", name, unwrapParse(err))
			}
		})
		return
	}
	backed := map[string]coord.PathLock{}
	for _, l := range f.PathLocks {
		backed[PathLockName(l.Path)] = l
	}
	ents, err := s.tree.ReadDir(FileLocksDir)
	if err != nil {
		ps.add(nil, "%v", IOError(err, ""))
		return
	}
	seen := map[string]bool{}
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".lock") || IsTempName(n) || strings.Contains(n, AsideMark) {
			continue
		}
		path := FileLocksDir + "/" + n
		l, isBacked := backed[path]
		var recreate func() error
		if isBacked {
			seen[path] = true
			recreate = func() error { return s.writeMirror(l) }
		}
		if !s.kindProblemThen(ps, path, false, recreate) {
			continue
		}
		if !isBacked {
			if _, err := s.readPathLock(path); err != nil { // not coord's: for a person
				ps.add(nil, "path lock %s does not parse (%v); fix it by hand, or remove it if that path should not be locked", path, unwrapParse(err))
			} else {
				ps.add(removeFix(func() error { return s.tree.Remove(path) }), "path lock file %s is not backed by the registry", path)
			}
			continue
		}
		rewrite := removeFix(func() error { return s.writeMirror(l) })
		switch got, err := s.readPathLock(path); {
		case err != nil:
			ps.add(rewrite, "path lock %s does not parse (%v); it is rewritten from the registry (%s, held by %s)", path, unwrapParse(err), l.Path, l.Holder)
		case got != l:
			ps.add(rewrite, "path lock %s content does not match the registry (%s, held by %s)", path, l.Path, l.Holder)
		}
	}
	for _, l := range f.PathLocks {
		if name := PathLockName(l.Path); !seen[name] {
			l := l
			ps.add(removeFix(func() error { return s.writeMirror(l) }), "path lock %s (held by %s) has no file %s", l.Path, l.Holder, name)
		}
	}
}

// removeDeadTemps removes the temp files in the tree's top directory
// that no live writer holds (fsops.RemoveStaleTemp: judged by the flock
// every writer holds on its temp file, never by age) and returns their
// names. Every Update runs it under the registry's flock, so what a
// killed writer left (a 'schedule' SIGKILLed mid-commit) goes with the
// next commit; Tidy runs it for maintenance. Best effort: a temp file
// that cannot be removed now is tried again next time.
func (s *Backend) removeDeadTemps() []string {
	ents, err := s.tree.ReadDir(".")
	if err != nil {
		return nil
	}
	var gone []string
	for _, e := range ents {
		if !IsTempName(e.Name()) || !e.Type().IsRegular() {
			continue
		}
		if ok, err := s.tree.RemoveStaleTemp(e.Name()); ok && err == nil {
			gone = append(gone, e.Name())
		}
	}
	return gone
}

// Tidy removes what interrupted writers left that no live writer holds
// (coord.Tidier): the temp files of the tree's top directory, logged
// each as the commit that finds one logs it.
func (s *Backend) Tidy(ctx context.Context) ([]string, error) {
	gone := s.removeDeadTemps()
	var events []coord.Event
	for _, name := range gone {
		events = append(events, coord.Event{Time: s.clock().UTC(), Agent: coord.CoordinatorID, Text: "removed temp file " + name + " left by an interrupted write"})
	}
	return gone, s.appendLog(ctx, events...)
}
