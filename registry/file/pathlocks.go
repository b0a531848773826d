package file

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/fsops"
	"github.com/rotd/coord/registry/format"
)

const fileLocksLock = LockDir + "/file_locks.lock"

// PathLock is a path-scoped lock: file_locks/<sha1 of the path>.lock.
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
	t, err := coord.ParseTime(l.Expires)
	return err == nil && !now.Before(t)
}

// PathLockName is the lock file of a repo-relative path.
func PathLockName(path string) string {
	sum := sha1.Sum([]byte(path))
	return FileLocksDir + "/" + hex.EncodeToString(sum[:]) + ".lock"
}

// CleanRepoPath normalises a repository-relative path and refuses paths
// that leave the repository.
func CleanRepoPath(p string) (string, error) {
	if p == "" || strings.ContainsRune(p, 0) || coord.HasDotDot(p) {
		return "", coord.Errorf(coord.CodeUsage, "invalid path %q", p)
	}
	c := coord.CleanPath(p)
	if strings.HasPrefix(p, "/") || c == "" || c == ".." || strings.HasPrefix(c, "../") {
		return "", coord.Errorf(coord.CodeUsage, "path %q must be relative to the repository and stay inside it", p)
	}
	return strings.TrimSuffix(c, "/"), nil
}

// PathLocks lists every path lock (expired ones included).
func (s *Store) PathLocks() ([]PathLock, error) {
	ents, err := s.Tree.ReadDir(FileLocksDir)
	if err != nil {
		return nil, IOError(err, "")
	}
	var out []PathLock
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".lock") || !e.Type().IsRegular() {
			continue
		}
		l, err := s.readPathLock(FileLocksDir + "/" + e.Name())
		if err != nil {
			continue
		}
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// pathLocksStrict lists every path lock like PathLocks, but a lock file
// that cannot be read is an error naming it: a lock whose path is unknown
// might cover any path, so taking a new lock beside it is refused.
func (s *Store) pathLocksStrict() ([]PathLock, error) {
	ents, err := s.Tree.ReadDir(FileLocksDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, IOError(err, "")
	}
	var out []PathLock
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".lock") {
			continue
		}
		name := FileLocksDir + "/" + e.Name()
		l, err := s.readPathLock(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if errors.Is(err, fsops.ErrWrongKind) {
			return nil, IOError(err, "") // the kind error's own fix
		}
		if err != nil {
			return nil, IOError(err, "remove "+s.Tree.Path(name)+" if no agent holds it (coord locks lists the readable ones)")
		}
		out = append(out, *l)
	}
	return out, nil
}

func (s *Store) readPathLock(name string) (*PathLock, error) {
	data, err := s.Tree.ReadFile(name, maxSmallFile)
	if err != nil {
		return nil, err
	}
	if err := format.CheckStrict(s.Tree.Path(name), data); err != nil {
		return nil, err
	}
	var l PathLock
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("%s: %w", s.Tree.Path(name), err)
	}
	return &l, nil
}

// LockPaths takes path locks for agent, all or nothing: if any path
// overlaps a lock another agent holds (unexpired), nothing is written and
// the error (exit 3) names the holder. Overlap follows coord.LocksOverlap:
// a lock on a directory or glob covers everything under or matching it,
// whichever of the two locks is the wider. Paths already held by agent
// are refreshed.
func (s *Store) LockPaths(ctx context.Context, agent, taskID string, paths []string, ttl time.Duration) error {
	for _, p := range paths {
		if !utf8.ValidString(p) {
			// JSON would store it as U+FFFD, so the lock's content would not
			// name its own file and could never be released by path.
			return coord.Errorf(coord.CodeUsage, "path %q is not valid UTF-8", p)
		}
	}
	unlock, err := s.Tree.Lock(ctx, fileLocksLock, s.LockWait, s.holderLine())
	if err != nil {
		return IOError(err, "")
	}
	defer unlock()
	now := s.Clock().UTC()
	held, err := s.pathLocksStrict()
	if err != nil {
		return err
	}
	for _, p := range paths {
		for _, l := range held {
			if l.Holder == agent || l.Expired(now) || !coord.LocksOverlap(p, l.Path) {
				continue
			}
			if l.Path == p {
				return coord.Errorf(coord.CodeConflict, "path %s is locked by %s since %s", p, l.Holder, l.Since).
					WithHint("wait for 'coord unlock-file' by that agent, or pick other work")
			}
			return coord.Errorf(coord.CodeConflict, "path %s overlaps %s, locked by %s since %s", p, l.Path, l.Holder, l.Since).
				WithHint("a lock on a directory or glob covers everything under or matching it; wait for 'coord unlock-file' by that agent, or pick other work")
		}
	}
	if err := s.Tree.MkdirAll(FileLocksDir, 0o755); err != nil {
		return IOError(err, "")
	}
	var events []coord.Event
	for _, p := range paths {
		l := PathLock{Path: p, Holder: agent, Since: coord.FormatTime(now), TaskID: taskID}
		if ttl > 0 {
			l.Expires = coord.FormatTime(now.Add(ttl))
		}
		b, _ := json.Marshal(l)
		if err := s.Tree.WriteFile(PathLockName(p), append(b, '\n'), 0o644); err != nil {
			return IOError(err, "")
		}
		events = append(events, coord.Event{Time: now, Agent: agent, Text: "locked file " + p})
	}
	return s.AppendLog(ctx, events...)
}

// UnlockPaths removes agent's locks on paths; a path held by another
// (unexpired) agent is refused with exit 3 before anything is removed.
func (s *Store) UnlockPaths(ctx context.Context, agent string, paths []string) error {
	unlock, err := s.Tree.Lock(ctx, fileLocksLock, s.LockWait, s.holderLine())
	if err != nil {
		return IOError(err, "")
	}
	defer unlock()
	now := s.Clock().UTC()
	var mine []string
	for _, p := range paths {
		l, err := s.readPathLock(PathLockName(p))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return IOError(err, "")
		}
		if l.Holder != agent && !l.Expired(now) {
			return coord.Errorf(coord.CodeConflict, "path %s is locked by %s, not by %s", p, l.Holder, agent)
		}
		mine = append(mine, p)
	}
	var events []coord.Event
	for _, p := range mine {
		if err := s.Tree.Remove(PathLockName(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return IOError(err, "")
		}
		events = append(events, coord.Event{Time: now, Agent: agent, Text: "unlocked file " + p})
	}
	if len(mine) > 0 {
		if err := s.Tree.SyncDir(FileLocksDir); err != nil {
			return IOError(err, "")
		}
	}
	return s.AppendLog(ctx, events...)
}

// ReleasePathLocks removes the path locks that keep must reject (called
// with the agent's task release and by the sweep); it logs each removal
// as agent by.
func (s *Store) ReleasePathLocks(ctx context.Context, by string, drop func(PathLock) bool) ([]string, error) {
	unlock, err := s.Tree.Lock(ctx, fileLocksLock, s.LockWait, s.holderLine())
	if err != nil {
		return nil, IOError(err, "")
	}
	defer unlock()
	locks, err := s.PathLocks()
	if err != nil {
		return nil, err
	}
	now := s.Clock().UTC()
	var gone []string
	var events []coord.Event
	for _, l := range locks {
		if !drop(l) {
			continue
		}
		if err := s.Tree.Remove(PathLockName(l.Path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return gone, IOError(err, "")
		}
		gone = append(gone, l.Path)
		events = append(events, coord.Event{Time: now, Agent: by, Text: "unlocked file " + l.Path + " (held by " + l.Holder + ")"})
	}
	return gone, s.AppendLog(ctx, events...)
}
