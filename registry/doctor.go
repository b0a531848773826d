package registry

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"time"

	"github.com/rotd/coord/coord"
)

// Problem is one broken invariant found by Doctor.
type Problem struct {
	What  string `json:"problem"`
	Fixed bool   `json:"fixed"`
	fix   func() error
}

// tempMinAge: a temp file younger than this may belong to a write in
// progress outside the registry lock (heartbeats), so it is left alone.
const tempMinAge = time.Minute

// Doctor checks every invariant under the registry lock: the files parse,
// every lock-holding task has exactly one lock file and every lock file is
// backed by such a task with matching content, no temp files are left.
// With repair it fixes what it can, logs each fix, and re-checks.
func (s *Store) Doctor(ctx context.Context, repair bool) ([]Problem, error) {
	unlock, err := s.LockRegistry(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	probs := s.diagnose()
	if !repair {
		return probs, nil
	}
	var events []coord.Event
	now := s.Clock().UTC()
	for i := range probs {
		p := &probs[i]
		if p.fix == nil {
			continue
		}
		if err := p.fix(); err != nil {
			return probs, IOError(err, "")
		}
		p.Fixed = true
		events = append(events, coord.Event{Time: now, Agent: coord.CoordinatorID, Text: "repaired: " + p.What})
	}
	if err := s.AppendLog(ctx, events...); err != nil {
		return probs, err
	}
	// Anything left is reported as not fixed.
	after := s.diagnose()
	seen := map[string]bool{}
	for _, p := range after {
		seen[p.What] = true
	}
	for i := range probs {
		if seen[probs[i].What] {
			probs[i].Fixed = false
		}
	}
	for _, p := range after {
		found := false
		for _, q := range probs {
			found = found || q.What == p.What
		}
		if !found {
			probs = append(probs, p)
		}
	}
	return probs, nil
}

func (s *Store) diagnose() []Problem {
	var probs []Problem
	add := func(fix func() error, format string, args ...any) {
		probs = append(probs, Problem{What: fmt.Sprintf(format, args...), fix: fix})
	}
	tx, f, err := s.load()
	if err != nil {
		add(nil, "%v", err)
		return probs
	}
	if _, err := LoadConfig(s.Tree); err != nil {
		add(nil, "%v", IOError(err, ""))
	}
	for _, d := range Subdirs {
		if _, err := s.Tree.Lstat(d); errors.Is(err, fs.ErrNotExist) {
			d := d
			add(func() error { return s.Tree.MkdirAll(d, 0o755) }, "directory %s is missing", d)
		}
	}
	// Registry-internal consistency.
	for _, t := range tx.Tasks {
		t := t
		if (t.Status == coord.Claimed || t.Status == coord.Review) && t.ClaimedBy == "" {
			add(func() error {
				t.Status, t.Dirty = coord.Unclaimed, true
				return s.Tree.WriteFile(RegistryFile, f.Encode(), 0o644)
			}, "task %s is %s but has no claimed_by", t.ID, t.Status)
		}
	}
	// Lock files against the registry.
	ents, err := s.Tree.ReadDir(LocksDir)
	if err != nil {
		add(nil, "%v", IOError(err, ""))
		return probs
	}
	have := map[string]bool{}
	for _, e := range ents {
		name := e.Name()
		path := LocksDir + "/" + name
		rm := func() error { return s.Tree.Remove(path) }
		if IsTempName(name) {
			add(rm, "temp file %s left by an interrupted write", path)
			continue
		}
		task, agent, ok := SplitLockName(name)
		if !ok || !e.Type().IsRegular() {
			add(rm, "%s is not a lock file (<task>.<agent>.lock, regular file)", path)
			continue
		}
		t := tx.Task(task)
		if t == nil || !t.HoldsLock() || t.ClaimedBy != agent {
			add(rm, "lock %s is not backed by the registry", path)
			continue
		}
		have[task] = true
		data, err := s.Tree.ReadFile(path, maxSmallFile)
		var li LockInfo
		if err == nil {
			li, err = ParseLockInfo(s.Tree.Path(path), data)
		}
		if err != nil || li.Holder != agent || li.TaskID != task || li.Epoch != t.Epoch {
			t := t
			add(func() error { return s.Tree.WriteFile(path, lockContent(t, "", 0), 0o644) },
				"lock %s content does not match the registry (holder %s, epoch %d)", path, agent, t.Epoch)
		}
	}
	for _, t := range tx.Tasks {
		if t.HoldsLock() && !have[t.ID] {
			t := t
			add(func() error {
				return s.Tree.CreateExcl(LocksDir+"/"+LockName(t.ID, t.ClaimedBy), lockContent(t, "", 0), true)
			}, "task %s is %s by %s but has no lock file", t.ID, t.Status, t.ClaimedBy)
		}
	}
	// Temp leftovers elsewhere.
	now := s.Clock()
	for _, dir := range []string{".", HeartbeatDir, FileLocksDir, ArchiveDir} {
		ents, err := s.Tree.ReadDir(dir)
		if err != nil {
			add(nil, "%v", IOError(err, ""))
			continue
		}
		for _, e := range ents {
			if !IsTempName(e.Name()) {
				continue
			}
			path := e.Name()
			if dir != "." {
				path = dir + "/" + path
			}
			if fi, err := e.Info(); err == nil && dir != "." && now.Sub(fi.ModTime()) < tempMinAge {
				continue
			}
			add(func() error { return s.Tree.Remove(path) }, "temp file %s left by an interrupted write", path)
		}
	}
	probs = append(probs, s.epochProblems(tx, f)...)
	sort.SliceStable(probs, func(i, j int) bool { return probs[i].What < probs[j].What })
	return probs
}
