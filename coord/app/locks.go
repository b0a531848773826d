package app

import (
	"context"
	"fmt"
	"time"

	"github.com/rotd/coordination/coord"
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
	for _, p := range paths {
		if err := coord.CheckPathText("path", p); err != nil {
			return nil, err
		}
	}
	if ttl < 0 {
		return nil, coord.Errorf(coord.CodeUsage, "a path lock's TTL must not be negative")
	}
	var done map[string]string
	var warned []coord.GuardHit
	lock := func(tx *coord.Txn) error {
		if err := tx.Fenced(agent, coord.Working{}); err != nil {
			return err
		}
		claims := tx.LockClaims(agent, paths)
		if err := tx.LockPaths(agent, paths, ttl); err != nil {
			done = doneClaims(tx, claims)
			return err
		}
		warned = claims // none refused: every one only warns
		return nil
	}
	err = s.tasks().Update(ctx, lock)
	if coord.CodeOf(err) == coord.CodeConflict && len(done) > 0 {
		// Refused by finished work: if it has landed since, its claims
		// are free; record that, and try again in the same commit.
		if landed, tip := s.landedAmong(ctx, done); len(landed) > 0 {
			err = s.tasks().Update(ctx, func(tx *coord.Txn) error {
				s.recordLanded(tx, landed, tip)
				return lock(tx)
			})
		}
	}
	if err == nil {
		s.warnClaims(warned)
	}
	return paths, interrupted(ctx, err)
}

// warnClaims names the write claims a change met that only warn.
func (s *Service) warnClaims(hits []coord.GuardHit) {
	for _, h := range hits {
		s.warnf(fmt.Errorf("%s (write_claims: warn; going ahead)", h.String()))
	}
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
// path lock, by the files of a task it holds, or by another in-flight
// task's write claim): what a pre-commit hook refuses (the hits with Warn
// set are only named). Finished work among the claims met is checked
// against the caller's repository first: work that has landed since
// frees its claims (recorded in a commit).
func (s *Service) Guard(ctx context.Context, agent string, paths []string) ([]coord.GuardHit, error) {
	var hits []coord.GuardHit
	var done map[string]string
	err := s.tasks().View(ctx, func(tx *coord.Txn) error {
		if err := tx.Fenced(agent, coord.Working{}); err != nil {
			return err
		}
		hits = tx.Guard(agent, paths)
		done = doneClaims(tx, hits)
		return nil
	})
	if err != nil {
		return nil, interrupted(ctx, err)
	}
	if landed, tip := s.landedAmong(ctx, done); len(landed) > 0 {
		err = s.tasks().Update(ctx, func(tx *coord.Txn) error {
			s.recordLanded(tx, landed, tip)
			hits = tx.Guard(agent, paths)
			return nil
		})
	}
	return nonNil(hits), interrupted(ctx, err)
}
