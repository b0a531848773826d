package coord

import (
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// PathLock is a path-scoped lock on a repository path: a file, a
// directory (everything under it) or a glob (everything matching it).
// Path locks live in the registry with the tasks, so releasing a task
// frees the locks taken for it in the same commit.
type PathLock struct {
	Path    string `json:"path"`
	Holder  string `json:"holder"`
	Since   string `json:"since"`
	TaskID  string `json:"task_id,omitempty"`
	Expires string `json:"expires,omitempty"` // RFC 3339; empty: until released
}

// Expired reports whether the lock's TTL has run out at now.
func (l *PathLock) Expired(now time.Time) bool {
	if l.Expires == "" {
		return false
	}
	t, err := ParseTime(l.Expires)
	return err == nil && !now.Before(t)
}

// CleanRepoPath normalises a repository-relative path and refuses paths
// that leave the repository or that JSON could not keep as they are.
func CleanRepoPath(p string) (string, error) {
	if p == "" || strings.ContainsRune(p, 0) || HasDotDot(p) {
		return "", Errorf(CodeUsage, "invalid path %q", clip(p))
	}
	if !utf8.ValidString(p) {
		// JSON would store it as U+FFFD, so the lock would not name its
		// own path and could never be released by it.
		return "", Errorf(CodeUsage, "path %q is not valid UTF-8", clip(p))
	}
	c := CleanPath(p)
	if strings.HasPrefix(p, "/") || c == "" || c == ".." || strings.HasPrefix(c, "../") {
		return "", Errorf(CodeUsage, "path %q must be relative to the repository and stay inside it", clip(p))
	}
	return strings.TrimSuffix(c, "/"), nil
}

// LivePathLocks returns the path locks in force at now, by path.
func (tx *Txn) LivePathLocks() []PathLock {
	var out []PathLock
	for _, l := range tx.PathLocks {
		if !l.Expired(tx.Now) {
			out = append(out, l)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// LockPaths locks paths (clean repository paths) for agent, all or
// nothing: a path another agent's lock covers in part or whole, or that
// overlaps the files of a task another agent holds, refuses the whole
// request (CodeConflict naming the holder). Locks agent already holds are
// refreshed. ttl 0 means until released. Each lock records the task agent
// holds, so it goes with that task.
func (tx *Txn) LockPaths(agent string, paths []string, ttl time.Duration) error {
	if err := ValidActingAgent(agent); err != nil {
		return err
	}
	for _, p := range paths {
		for _, l := range tx.PathLocks {
			if l.Holder == agent || l.Expired(tx.Now) || !LocksOverlap(p, l.Path) {
				continue
			}
			if l.Path == p {
				return Errorf(CodeConflict, "path %s is locked by %s since %s", p, l.Holder, l.Since).
					WithHint("wait for 'coord unlock-file' by that agent, or pick other work").WithHolder(l.Holder)
			}
			return Errorf(CodeConflict, "path %s overlaps %s, locked by %s since %s", p, l.Path, l.Holder, l.Since).
				WithHint("a lock on a directory or glob covers everything under or matching it; wait for 'coord unlock-file' by that agent, or pick other work").WithHolder(l.Holder)
		}
		// A path inside the files of a task another agent holds is that
		// agent's to change (guard would refuse its commit): not lockable.
		for _, t := range tx.Tasks {
			if t.HoldsLock() && t.ClaimedBy != agent && len(t.Files) > 0 && LockOverlapsFiles(p, t.Files) {
				return Errorf(CodeConflict, "path %s overlaps the files of task %s, held by %s", p, t.ID, t.ClaimedBy).
					WithHint("wait until that task is released, or pick other work").WithHolder(t.ClaimedBy)
			}
		}
	}
	// A path another task in flight has written is that task's until its
	// work lands (its write claims).
	for _, h := range tx.LockClaims(agent, paths) {
		if !h.Warn {
			what := "path " + h.Path + " is"
			if h.Claimed != h.Path {
				what = "path " + h.Path + " covers " + h.Claimed + ", which is"
			}
			return Errorf(CodeConflict, "%s write-claimed by %s", what, claimDesc(h)).
				WithHint("a write claim holds until the task's work has landed on the target; pick other work").WithHolder(h.Holder)
		}
	}
	task := ""
	if held := tx.HeldBy(agent); len(held) > 0 {
		task = held[0].ID
	}
	for _, p := range paths {
		l := PathLock{Path: p, Holder: agent, Since: FormatTime(tx.Now), TaskID: task}
		if ttl > 0 {
			l.Expires = FormatTime(tx.Now.Add(ttl))
		}
		tx.PathLocks = slices.DeleteFunc(tx.PathLocks, func(o PathLock) bool { return o.Path == p })
		tx.PathLocks = append(tx.PathLocks, l)
		tx.Log(agent, "locked file %s", p)
	}
	tx.PathLocksDirty = true
	return nil
}

// UnlockPaths removes agent's locks on paths; a path whose lock another
// agent holds (in force) refuses the whole request with CodeConflict.
// It returns the paths unlocked (a path not locked at all is skipped).
func (tx *Txn) UnlockPaths(agent string, paths []string) ([]string, error) {
	if err := ValidActingAgent(agent); err != nil {
		return nil, err
	}
	var mine []string
	for _, p := range paths {
		i := slices.IndexFunc(tx.PathLocks, func(l PathLock) bool { return l.Path == p })
		if i < 0 {
			continue
		}
		if l := tx.PathLocks[i]; l.Holder != agent && !l.Expired(tx.Now) {
			return nil, Errorf(CodeConflict, "path %s is locked by %s, not by %s", p, l.Holder, agent).WithHolder(l.Holder)
		}
		mine = append(mine, p)
	}
	for _, p := range mine {
		tx.PathLocks = slices.DeleteFunc(tx.PathLocks, func(l PathLock) bool { return l.Path == p })
		tx.Log(agent, "unlocked file %s", p)
	}
	if len(mine) > 0 {
		tx.PathLocksDirty = true
	}
	return mine, nil
}

// dropPathLocks removes the path locks drop selects, logging each as by.
func (tx *Txn) dropPathLocks(by string, drop func(PathLock) bool) []string {
	var gone []string
	tx.PathLocks = slices.DeleteFunc(tx.PathLocks, func(l PathLock) bool {
		if !drop(l) {
			return false
		}
		gone = append(gone, l.Path)
		tx.Log(by, "unlocked file %s (held by %s)", l.Path, l.Holder)
		return true
	})
	if len(gone) > 0 {
		tx.PathLocksDirty = true
	}
	return gone
}

// releasePathLocksWith frees, as part of releasing task, the path locks
// agent took for it, or all of agent's once it holds no task any more.
func (tx *Txn) releasePathLocksWith(agent, task string) {
	stillHolds := len(tx.HeldBy(agent)) > 0
	tx.dropPathLocks(agent, func(l PathLock) bool {
		return l.Holder == agent && (!stillHolds || l.TaskID == task)
	})
}

// DropExpiredPathLocks removes locks whose TTL has run out; readers
// already ignore them.
func (tx *Txn) DropExpiredPathLocks() []string {
	return tx.dropPathLocks(CoordinatorID, func(l PathLock) bool { return l.Expired(tx.Now) })
}

// GuardHit is one staged path another agent holds.
type GuardHit struct {
	Path   string `json:"path"`
	Holder string `json:"holder"`
	Lock   string `json:"lock,omitempty"` // the path lock covering it
	TaskID string `json:"task,omitempty"` // or the task whose files cover it
	// LockTask is the task the holder held when it took Lock ("" : none).
	LockTask string `json:"lock_task,omitempty"`
	// Claimed is the path of task TaskID's write claim that meets Path
	// (docs/GIT.md), "" when the hit is not a write claim; Status is
	// that task's status.
	Claimed string `json:"claimed,omitempty"`
	Status  Status `json:"status,omitempty"`
	// Warn marks a hit that is named but does not refuse
	// (write_claims warn, or write_claims_untasked warn).
	Warn bool `json:"warn,omitempty"`
}

func (h GuardHit) String() string {
	switch {
	case h.Claimed == h.Path && h.Claimed != "":
		return h.Path + " (write-claimed by " + claimDesc(h) + ")"
	case h.Claimed != "":
		return h.Path + " (covers " + h.Claimed + ", write-claimed by " + claimDesc(h) + ")"
	case h.TaskID != "":
		return h.Path + " (task " + h.TaskID + " of " + h.Holder + ")"
	case h.Lock == h.Path:
		return h.Path + " (locked by " + h.Holder + ")"
	}
	return h.Path + " (under " + h.Lock + ", locked by " + h.Holder + ")"
}

// Guard returns the paths (repository paths, taken as names) another agent
// holds: covered by its path lock in force, by the files of a task it
// holds, or written by another task in flight (its write claims, as
// the project's settings treat them for agent: refusing, or only named
// with Warn set). Used by the pre-commit guard and the agents' edit
// hooks.
func (tx *Txn) Guard(agent string, paths []string) []GuardHit {
	var hits []GuardHit
	for _, p := range paths {
		for _, l := range tx.PathLocks {
			if l.Holder != agent && !l.Expired(tx.Now) && LockCovers(l.Path, p) {
				hits = append(hits, GuardHit{Path: p, Holder: l.Holder, Lock: l.Path, LockTask: l.TaskID})
			}
		}
	}
	for _, t := range tx.Tasks {
		if !t.HoldsLock() || t.ClaimedBy == agent || len(t.Files) == 0 {
			continue
		}
		for _, p := range paths {
			if AnyOverlap([]string{QuoteGlob(p)}, t.Files) { // a path is a name, not a glob
				hits = append(hits, GuardHit{Path: p, Holder: t.ClaimedBy, TaskID: t.ID})
			}
		}
	}
	if tr := tx.treatment(agent); tr != claimIgnored {
		hits = append(hits, tx.claimsOn(agent, paths, samePath, tr == claimWarns)...)
	}
	return hits
}
