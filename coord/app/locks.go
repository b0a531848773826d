package app

import (
	"context"
	"time"

	"github.com/rotd/coord/coord"
)

// cleanPaths validates repository paths (already mapped from the caller's
// worktree by the front end) and drops duplicates.
func cleanPaths(paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, coord.Errorf(coord.CodeUsage, "no path given")
	}
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		cp, err := coord.CleanRepoPath(p)
		if err != nil {
			return nil, err
		}
		if !seen[cp] {
			seen[cp] = true
			out = append(out, cp)
		}
	}
	return out, nil
}

// LockPaths locks repository paths for agent, all or nothing, for ttl (0:
// until released or the agent's task is released); see
// coord.Txn.LockPaths for what conflicts. It returns the paths locked.
func (s *Service) LockPaths(ctx context.Context, agent string, paths []string, ttl time.Duration) ([]string, error) {
	paths, err := cleanPaths(paths)
	if err != nil {
		return nil, err
	}
	if ttl < 0 {
		return nil, coord.Errorf(coord.CodeUsage, "a path lock's TTL must not be negative")
	}
	err = s.tasks().Update(ctx, func(tx *coord.Txn) error {
		return tx.LockPaths(agent, paths, ttl)
	})
	return paths, interrupted(ctx, err)
}

// UnlockPaths releases agent's locks on paths; it returns those unlocked.
func (s *Service) UnlockPaths(ctx context.Context, agent string, paths []string) ([]string, error) {
	paths, err := cleanPaths(paths)
	if err != nil {
		return nil, err
	}
	var gone []string
	err = s.tasks().Update(ctx, func(tx *coord.Txn) error {
		gone, err = tx.UnlockPaths(agent, paths)
		return err
	})
	return nonNil(gone), interrupted(ctx, err)
}

// PathLocks returns the path locks in force, by path.
func (s *Service) PathLocks(ctx context.Context) ([]coord.PathLock, error) {
	var out []coord.PathLock
	err := s.tasks().View(ctx, func(tx *coord.Txn) error {
		out = tx.LivePathLocks()
		return nil
	})
	return nonNil(out), interrupted(ctx, err)
}

// Guard returns the repository paths another agent than agent holds (by a
// path lock, or by the files of a task it holds): what a pre-commit hook
// and an edit hook refuse.
func (s *Service) Guard(ctx context.Context, agent string, paths []string) ([]coord.GuardHit, error) {
	var hits []coord.GuardHit
	err := s.tasks().View(ctx, func(tx *coord.Txn) error {
		hits = tx.Guard(agent, paths)
		return nil
	})
	return nonNil(hits), interrupted(ctx, err)
}
