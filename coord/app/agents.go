package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rotd/coordination/coord"
)

// Beat marks agent alive now (info nil: only the instant moves).
func (s *Service) Beat(ctx context.Context, agent string, info *coord.BeatInfo) error {
	if err := coord.ValidActingAgent(agent); err != nil {
		return err
	}
	return interrupted(ctx, s.b.Beats().Beat(ctx, agent, info))
}

// Agents is the one view of who is alive (coord.Txn.Liveness): stale after
// timeout (0: the configured stale_after), judged on the beat store's
// clock.
func (s *Service) Agents(ctx context.Context, timeout time.Duration) ([]coord.AgentView, error) {
	if timeout <= 0 {
		timeout = s.conf().StaleAfter
	}
	beats, now, err := s.b.Beats().List(ctx)
	if err != nil {
		return nil, interrupted(ctx, err)
	}
	var out []coord.AgentView
	err = s.tasks().View(ctx, func(tx *coord.Txn) error {
		out = tx.Liveness(beats, now, timeout)
		return nil
	})
	return nonNil(out), interrupted(ctx, err)
}

// SweepRequest asks for a stale sweep.
type SweepRequest struct {
	Timeout time.Duration // 0: the configured stale_after
	DryRun  bool          // judge and report; change nothing
}

// Sweep frees the locks of agents silent longer than the timeout, the
// task going where on_stale says (coord.StaleOutcome) and the agent's path
// locks with it. It judges without exclusion, then re-checks each lock
// under it (same agent, same epoch, still silent) before freeing, so a
// revived agent or a reclaimed task is never touched. A dry run reports
// exactly what the sweep would do. It costs one read when nothing is stale.
func (s *Service) Sweep(ctx context.Context, r SweepRequest) ([]coord.Stale, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = s.conf().StaleAfter
	}
	var cands []coord.Stale
	err := s.tasks().View(ctx, func(tx *coord.Txn) error {
		holders := tx.LockHolders()
		if len(holders) == 0 {
			return nil
		}
		seen, now, err := s.b.Beats().LastSeen(ctx, holders)
		if err != nil {
			return err
		}
		cands = tx.JudgeStale(seen, now, timeout, s.conf().OnStale)
		return nil
	})
	if err != nil || r.DryRun || len(cands) == 0 {
		return nonNil(cands), interrupted(ctx, err)
	}
	var freed []coord.Stale
	err = s.tasks().Update(ctx, func(tx *coord.Txn) error {
		freed = freed[:0]
		agents := make([]string, 0, len(cands))
		for _, c := range cands {
			agents = append(agents, c.Agent)
		}
		seen, now, err := s.b.Beats().LastSeen(ctx, agents)
		if err != nil {
			return err
		}
		// Re-judge under exclusion: only a lock still stale now, at the
		// epoch judged, is freed.
		still := map[coord.LockRef]coord.Stale{}
		for _, st := range tx.JudgeStale(seen, now, timeout, s.conf().OnStale) {
			still[st.Ref()] = st
		}
		for _, c := range cands {
			st, ok := still[c.Ref()]
			if ok && tx.FreeStale(c.Ref(), s.conf().OnStale) {
				freed = append(freed, st)
			}
		}
		return nil
	})
	return nonNil(freed), interrupted(ctx, err)
}

// NextDue is the earliest instant a lock held now could go stale, on the
// beat store's clock, with that clock's now; ok is false when nothing is
// held. A sweeper sleeps until then.
func (s *Service) NextDue(ctx context.Context, timeout time.Duration) (due, now time.Time, ok bool, err error) {
	if timeout <= 0 {
		timeout = s.conf().StaleAfter
	}
	err = s.tasks().View(ctx, func(tx *coord.Txn) error {
		holders := tx.LockHolders()
		if len(holders) == 0 {
			now = s.clock()
			return nil
		}
		seen, n, err := s.b.Beats().LastSeen(ctx, holders)
		if err != nil {
			return err
		}
		now = n
		due, ok = tx.NextDue(seen, n, timeout)
		return nil
	})
	return due, now, ok, interrupted(ctx, err)
}

// MaintainRequest is one maintenance step.
type MaintainRequest struct {
	Timeout time.Duration // stale after (0: configured)
	DryRun  bool          // only judge the sweep
	// Full also drops expired leases and keys, rotates the log at a new
	// UTC day and archives (archive_after); without it only stale locks
	// and expired path locks are dealt with (the cheap step a watcher runs
	// on every notification).
	Full bool
}

// MaintainResult is what one maintenance step did.
type MaintainResult struct {
	DryRun   bool          `json:"dry_run"`
	Freed    []coord.Stale `json:"freed"`
	Unlocked []string      `json:"unlocked,omitempty"` // expired path locks dropped
	Leases   int           `json:"leases_dropped,omitempty"`
	Keys     int           `json:"keys_dropped,omitempty"`
	Rotated  string        `json:"rotated,omitempty"`
	Archived []string      `json:"archived,omitempty"`
	Landed   []string      `json:"landed,omitempty"`   // finished tasks found on the target: their write claims are free
	Tidied   []string      `json:"tidied,omitempty"`   // temp files left by writers killed mid-write, removed
	Problems []string      `json:"problems,omitempty"` // steps that failed (the others ran)
}

// Maintain is the one maintenance step clean-stale and watch run: the
// stale sweep, expired path locks, and with Full expired leases and keys,
// log rotation, the finished work found landed on the target (with a
// repository: Landed) and archiving. A step that fails does not stop the others;
// its error is reported in Problems and returned (joined) as well.
func (s *Service) Maintain(ctx context.Context, r MaintainRequest) (MaintainResult, error) {
	res := MaintainResult{DryRun: r.DryRun}
	var errs []error
	fail := func(what string, err error) {
		err = interrupted(ctx, err)
		errs = append(errs, fmt.Errorf("%s: %w", what, err))
		res.Problems = append(res.Problems, what+": "+coord.OneLine(err.Error()))
	}
	freed, err := s.Sweep(ctx, SweepRequest{Timeout: r.Timeout, DryRun: r.DryRun})
	res.Freed = freed
	if err != nil {
		fail("sweep", err)
	}
	if r.DryRun {
		return res, errors.Join(errs...)
	}
	if unlocked, err := s.dropExpiredPathLocks(ctx); err != nil {
		fail("expired path locks", err)
	} else {
		res.Unlocked = unlocked
	}
	if !r.Full {
		return res, errors.Join(errs...)
	}
	if t, ok := s.b.(coord.Tidier); ok {
		if gone, err := t.Tidy(ctx); err != nil {
			fail("temp files", err)
		} else {
			res.Tidied = gone
		}
	}
	if n, err := s.b.Leases().Sweep(ctx); err != nil {
		fail("leases", err)
	} else {
		res.Leases = n
	}
	if n, err := s.b.KV().Sweep(ctx); err != nil {
		fail("kv", err)
	} else {
		res.Keys = n
	}
	if name, err := s.b.Log().Rotate(ctx, s.clock()); err != nil {
		fail("log rotation", err)
	} else {
		res.Rotated = name
	}
	if ids, err := s.Landed(ctx); err != nil {
		fail("landed", err)
	} else if len(ids) > 0 {
		res.Landed = ids
	}
	if s.conf().ArchiveAfter > 0 {
		ids, err := s.Archive(ctx, s.clock().Add(-s.conf().ArchiveAfter))
		if err != nil {
			fail("archive", err)
		}
		res.Archived = ids
	}
	return res, errors.Join(errs...)
}

// dropExpiredPathLocks removes path locks whose TTL ran out, taking
// exclusion only when there is one.
func (s *Service) dropExpiredPathLocks(ctx context.Context) ([]string, error) {
	any := false
	err := s.tasks().View(ctx, func(tx *coord.Txn) error {
		for _, l := range tx.PathLocks {
			any = any || l.Expired(tx.Now)
		}
		return nil
	})
	if err != nil || !any {
		return nil, err
	}
	var gone []string
	err = s.tasks().Update(ctx, func(tx *coord.Txn) error {
		gone = tx.DropExpiredPathLocks()
		return nil
	})
	return gone, err
}
