package heartbeat

import (
	"context"
	"time"

	"github.com/rotd/coord/coord"
)

// Freed is one lock the sweep freed (or, dry-run, would free).
type Freed struct {
	TaskID string        `json:"task"`
	Agent  string        `json:"agent"`
	Epoch  int64         `json:"epoch"`
	Idle   time.Duration `json:"-"`
	IdleS  int64         `json:"idle_seconds"`
	Status coord.Status  `json:"status"` // the task's status afterwards

	progress int
}

// Sweeper frees the locks of agents whose heartbeat is older than Timeout.
type Sweeper struct {
	Backend coord.Updater
	Beats   *Dir
	Timeout time.Duration
	Policy  coord.StalePolicy
	Clock   coord.Clock
	DryRun  bool
}

// lastSeen is the agent's liveness instant: its heartbeat mtime (clamped to
// now), or, with no heartbeat file, the lock's since (claimed_at).
func (s *Sweeper) lastSeen(t *coord.Task, now time.Time) (time.Time, error) {
	mt, ok, err := s.Beats.MTime(t.ClaimedBy)
	if err != nil {
		return time.Time{}, err
	}
	if ok {
		if mt.After(now) {
			return now, nil
		}
		return mt, nil
	}
	since, err := coord.ParseTime(t.ClaimedAt)
	if err != nil {
		return time.Time{}, nil // no liveness at all: stale
	}
	if since.After(now) {
		return now, nil
	}
	return since, nil
}

// Sweep judges every lock without the registry lock, then frees the stale
// ones under it, re-checking each. It returns what it freed. Heartbeats are
// read in one pass over the directory, and only lock holders' future
// mtimes are clamped (an idle agent's cannot pin anything; its next claim
// beats). When nothing is stale it costs one registry read and one pass
// over the holders' heartbeats, and takes no lock.
func (s *Sweeper) Sweep(ctx context.Context) ([]Freed, error) {
	now := s.Clock()
	var cands []Freed
	var future []string
	err := s.Backend.View(ctx, func(tx *coord.Txn) error {
		var err error
		cands, future, err = s.judge(tx, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	if s.DryRun {
		for i, c := range cands {
			switch {
			case c.Status == coord.Blocked:
			case s.Policy == coord.BlockIfProgress && c.progress > 0:
				cands[i].Status = coord.Blocked
			default:
				cands[i].Status = coord.Unclaimed
			}
		}
		return cands, nil
	}
	// Clamp future heartbeats so they age from now.
	for _, a := range future {
		if _, err := s.Beats.ClampFuture(a, now); err != nil {
			return nil, err
		}
	}
	if len(cands) == 0 {
		return nil, nil
	}
	var freed []Freed
	err = s.Backend.Update(ctx, func(tx *coord.Txn) error {
		freed = freed[:0]
		now := s.Clock()
		names := make([]string, 0, len(cands))
		for _, c := range cands {
			names = append(names, c.Agent)
		}
		mtimes, err := s.Beats.MTimes(names)
		if err != nil {
			return err
		}
		for _, c := range cands {
			t := tx.Task(c.TaskID)
			if t == nil {
				continue
			}
			// Re-check liveness under the lock: the agent may have revived.
			seen, ok := mtimes[t.ClaimedBy]
			if !ok || t.ClaimedBy != c.Agent {
				if seen, err = s.lastSeen(t, now); err != nil {
					return err
				}
			} else if seen.After(now) {
				seen = now
			}
			if now.Sub(seen) <= s.Timeout {
				continue
			}
			if tx.FreeStale(coord.LockRef{TaskID: c.TaskID, Agent: c.Agent, Epoch: c.Epoch}, s.Policy) {
				c.Status = t.Status
				freed = append(freed, c)
			}
		}
		return nil
	})
	return freed, err
}

// judge returns the locks in tx whose agent has been silent longer than
// the timeout at now, and the holders whose heartbeat lies in the future.
func (s *Sweeper) judge(tx *coord.Txn, now time.Time) (cands []Freed, future []string, err error) {
	var held []*coord.Task
	agents := map[string]bool{}
	for _, t := range tx.Tasks {
		if t.HoldsLock() {
			held = append(held, t)
			agents[t.ClaimedBy] = true
		}
	}
	if len(held) == 0 {
		return nil, nil, nil
	}
	names := make([]string, 0, len(agents))
	for a := range agents {
		names = append(names, a)
	}
	mtimes, err := s.Beats.MTimes(names)
	if err != nil {
		return nil, nil, err
	}
	for a, mt := range mtimes {
		if mt.After(now) {
			future = append(future, a)
		}
	}
	for _, t := range held {
		seen, ok := mtimes[t.ClaimedBy]
		if !ok {
			seen, _ = s.lastSeen(t, now) // no heartbeat: ages from the lock's since
		} else if seen.After(now) {
			seen = now
		}
		if idle := now.Sub(seen); idle > s.Timeout {
			cands = append(cands, Freed{TaskID: t.ID, Agent: t.ClaimedBy, Epoch: t.Epoch, Idle: idle, IdleS: int64(idle / time.Second), Status: t.Status, progress: t.Progress})
		}
	}
	return cands, future, nil
}

// FreeIn is the sweep inside a transaction the caller already holds (under
// the registry flock): it judges the locks in tx and frees the stale ones
// there, so a claim sweeps in its own commit at the cost of one pass over
// the holders' heartbeats. Future heartbeats are clamped as Sweep does.
func (s *Sweeper) FreeIn(tx *coord.Txn) ([]Freed, error) {
	now := s.Clock()
	cands, future, err := s.judge(tx, now)
	if err != nil {
		return nil, err
	}
	for _, a := range future {
		if _, err := s.Beats.ClampFuture(a, now); err != nil {
			return nil, err
		}
	}
	var freed []Freed
	for _, c := range cands {
		if tx.FreeStale(coord.LockRef{TaskID: c.TaskID, Agent: c.Agent, Epoch: c.Epoch}, s.Policy) {
			c.Status = tx.Task(c.TaskID).Status
			freed = append(freed, c)
		}
	}
	return freed, nil
}

// AnyStale reports whether some lock in tx is stale now: the cheap test a
// waiting command makes on the snapshot it reads anyway, before it calls
// Sweep (which takes the lock).
func (s *Sweeper) AnyStale(tx *coord.Txn) (bool, error) {
	cands, _, err := s.judge(tx, s.Clock())
	return len(cands) > 0, err
}

// NextDue returns the earliest instant at which some lock held now would
// become stale (its agent's last sign of life plus the timeout), and false
// when no lock is held. A watcher sleeps until then instead of polling.
func (s *Sweeper) NextDue(ctx context.Context) (time.Time, bool, error) {
	now := s.Clock()
	var due time.Time
	found := false
	err := s.Backend.View(ctx, func(tx *coord.Txn) error {
		for _, t := range tx.Tasks {
			if !t.HoldsLock() {
				continue
			}
			seen, err := s.lastSeen(t, now)
			if err != nil {
				return err
			}
			if d := seen.Add(s.Timeout); !found || d.Before(due) {
				due, found = d, true
			}
		}
		return nil
	})
	return due, found, err
}
