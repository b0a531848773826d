package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/rotd/coordination/coord"
)

// LeaseTTL is the lifetime of a lease acquired without one, the one
// default every front end gets: COORD_LEASE_TTL (read through
// Options.Getenv), else config.json's lease_ttl, else
// coord.DefaultLeaseTTL (2h). A COORD_LEASE_TTL that is not a positive
// duration is CodeUsage.
func (s *Service) LeaseTTL() (time.Duration, error) {
	if s.getenv != nil {
		if v := s.getenv(coord.EnvLeaseTTL); v != "" {
			return coord.ParsePositive(coord.EnvLeaseTTL, v)
		}
	}
	return s.conf().LeaseTTL, nil
}

// AcquireLease grants a lease (for LeaseTTL when r.TTL is 0), or
// CodeConflict naming its holder.
func (s *Service) AcquireLease(ctx context.Context, r coord.LeaseRequest) (coord.Lease, error) {
	if r.TTL == 0 {
		ttl, err := s.LeaseTTL()
		if err != nil {
			return coord.Lease{}, err
		}
		r.TTL = ttl
	}
	if err := r.Check(); err != nil {
		return coord.Lease{}, err
	}
	l, err := s.b.Leases().Acquire(ctx, r)
	if err != nil {
		return l, interrupted(ctx, err)
	}
	if !r.DryRun {
		s.log(ctx, r.Holder, "acquired lease %s until %s", r.Name, l.ExpiresAt)
	}
	return l, nil
}

// RenewLease extends holder's lease by ttl (0: its own TTL); CodeLost if
// holder no longer holds it (at epoch, unless NoEpoch).
func (s *Service) RenewLease(ctx context.Context, name, holder string, epoch int64, ttl time.Duration) (coord.Lease, error) {
	if err := coord.ValidLeaseName(name); err != nil {
		return coord.Lease{}, err
	}
	if err := coord.ValidActingAgent(holder); err != nil {
		return coord.Lease{}, err
	}
	l, err := s.b.Leases().Renew(ctx, name, holder, epoch, ttl)
	return l, interrupted(ctx, err)
}

// ReleaseLease ends holder's lease; CodeLost if it no longer holds it.
func (s *Service) ReleaseLease(ctx context.Context, name, holder string, epoch int64) error {
	if err := coord.ValidLeaseName(name); err != nil {
		return err
	}
	if err := coord.ValidActingAgent(holder); err != nil {
		return err
	}
	if err := s.b.Leases().Release(ctx, name, holder, epoch); err != nil {
		return interrupted(ctx, err)
	}
	s.log(ctx, holder, "released lease %s", name)
	return nil
}

// Leases returns the leases in force, by name.
func (s *Service) Leases(ctx context.Context) ([]coord.Lease, error) {
	ls, err := s.b.Leases().List(ctx)
	return nonNil(ls), interrupted(ctx, err)
}

// TorchPeriod is the lease-name period of a cadence at now: the UTC day
// for daily, the ISO week for weekly.
func TorchPeriod(cadence string, now time.Time) (string, error) {
	now = now.UTC()
	switch cadence {
	case "daily":
		return now.Format("2006-01-02"), nil
	case "weekly":
		y, w := now.ISOWeek()
		return fmt.Sprintf("%04d-W%02d", y, w), nil
	}
	return "", coord.Errorf(coord.CodeUsage, "cadence must be daily or weekly, not %q", cadence)
}

// TorchLease is the lease name of agent's lock for a cadence's period.
func TorchLease(cadence, period, agent string) string {
	return "torch:" + cadence + ":" + period + ":" + agent
}

// LeaseCheck is TORCH's view of one period: which roster agents are
// locked and which are available.
type LeaseCheck struct {
	Cadence   string        `json:"cadence"`
	Date      string        `json:"date"`
	Locked    []string      `json:"locked"`
	Available []string      `json:"available"`
	LockCount int           `json:"lockCount"`
	Locks     []coord.Lease `json:"locks"`
}

// CheckLeases answers TORCH's check for cadence's current period.
func (s *Service) CheckLeases(ctx context.Context, cadence string) (LeaseCheck, error) {
	date, err := TorchPeriod(cadence, s.clock())
	if err != nil {
		return LeaseCheck{}, err
	}
	ls, err := s.Leases(ctx)
	if err != nil {
		return LeaseCheck{}, err
	}
	c := LeaseCheck{Cadence: cadence, Date: date, Locked: []string{}, Available: []string{}, Locks: []coord.Lease{}}
	prefix := "torch:" + cadence + ":" + date + ":"
	isLocked := map[string]bool{}
	for _, l := range ls {
		if agent, ok := strings.CutPrefix(l.Name, prefix); ok {
			c.Locked = append(c.Locked, agent)
			c.Locks = append(c.Locks, l)
			isLocked[agent] = true
		}
	}
	for _, a := range s.conf().Roster[cadence] {
		if !isLocked[a] {
			c.Available = append(c.Available, a)
		}
	}
	c.LockCount = len(c.Locked)
	return c, nil
}

// KVGet returns a key in force; ok is false when it is absent or expired.
func (s *Service) KVGet(ctx context.Context, key string) (coord.KVEntry, bool, error) {
	if err := coord.ValidKey(key); err != nil {
		return coord.KVEntry{}, false, err
	}
	e, ok, err := s.b.KV().Get(ctx, key)
	return e, ok, interrupted(ctx, err)
}

// KVList returns the keys in force under prefix, sorted.
func (s *Service) KVList(ctx context.Context, prefix string) ([]coord.KVEntry, error) {
	l, err := s.b.KV().List(ctx, prefix)
	return nonNil(l), interrupted(ctx, err)
}

// KVSet writes key = value (one JSON value, at most coord.MaxKVValue
// bytes: coord.CheckKVValue) for ttl if cond holds; by is recorded as the
// writer. A value that coord would not read back (keys that differ only
// in case) is refused by the store, before anything is written.
func (s *Service) KVSet(ctx context.Context, key string, value json.RawMessage, ttl time.Duration, by string, cond coord.KVCond) (coord.KVEntry, error) {
	if err := coord.ValidKey(key); err != nil {
		return coord.KVEntry{}, err
	}
	if err := coord.CheckKVTTL(ttl); err != nil {
		return coord.KVEntry{}, err
	}
	if cond.ExpectRev > 0 && cond.ExpectAbsent {
		return coord.KVEntry{}, coord.Errorf(coord.CodeUsage, "a write expects a revision or absence, not both")
	}
	if err := coord.CheckKVValue(value); err != nil {
		return coord.KVEntry{}, err
	}
	e, err := s.b.KV().Set(ctx, key, value, ttl, by, cond)
	return e, interrupted(ctx, err)
}

// KVDelete deletes a key; it reports whether the key was in force.
func (s *Service) KVDelete(ctx context.Context, key string) (bool, error) {
	if err := coord.ValidKey(key); err != nil {
		return false, err
	}
	ok, err := s.b.KV().Delete(ctx, key)
	return ok, interrupted(ctx, err)
}

// KVChange is one change kv watch reports: a key set (Entry) or gone.
type KVChange struct {
	Entry   *coord.KVEntry
	Deleted string // the key that was deleted or expired
}

// KVWatch waits until some key under prefix changes (set, deleted or
// expired) and returns the changes; ErrTimeout after timeout (0: none).
func (s *Service) KVWatch(ctx context.Context, prefix string, timeout time.Duration) ([]KVChange, error) {
	snap := func() (map[string]coord.KVEntry, error) {
		list, err := s.b.KV().List(ctx, prefix)
		m := map[string]coord.KVEntry{}
		for _, en := range list {
			m[en.Key] = en
		}
		return m, err
	}
	before, err := snap()
	if err != nil {
		return nil, interrupted(ctx, err)
	}
	var changes []KVChange
	err = s.Until(ctx, timeout, 0, func() (bool, error) {
		now, err := snap()
		if err != nil {
			return false, err
		}
		for k, en := range now {
			if old, ok := before[k]; !ok || old.Rev != en.Rev {
				en := en
				changes = append(changes, KVChange{Entry: &en})
			}
		}
		for k := range before {
			if _, ok := now[k]; !ok {
				changes = append(changes, KVChange{Deleted: k})
			}
		}
		return len(changes) > 0, nil
	})
	return changes, err
}

// QuotaAdd adds agent's usage within the configured daily limits.
func (s *Service) QuotaAdd(ctx context.Context, agent string, tokens, requests int64) (*coord.Quota, error) {
	if err := coord.ValidActingAgent(agent); err != nil {
		return nil, err
	}
	if tokens < 0 || requests < 0 || tokens == 0 && requests == 0 {
		return nil, coord.Errorf(coord.CodeUsage, "quota add needs tokens and/or requests (non-negative, not both zero)")
	}
	q, err := s.b.Quota().Update(ctx, func(q *coord.Quota) error {
		return q.Add(agent, tokens, requests, s.conf().Quota, s.clock())
	})
	return q, interrupted(ctx, err)
}

// QuotaShow returns today's counters (rolled over to the current UTC day).
func (s *Service) QuotaShow(ctx context.Context) (*coord.Quota, error) {
	q, err := s.b.Quota().Load(ctx)
	if err != nil {
		return nil, interrupted(ctx, err)
	}
	q.Rollover(s.clock())
	return q, nil
}

// ArtifactAppend appends one line to a ROTD artifact (one JSON object for
// .jsonl) under its lock.
func (s *Service) ArtifactAppend(ctx context.Context, name string, line []byte) error {
	a, err := s.artifacts(name)
	if err != nil {
		return err
	}
	return interrupted(ctx, a.Append(ctx, name, line))
}

// ArtifactWrite replaces a ROTD artifact atomically (valid JSON for .json).
func (s *Service) ArtifactWrite(ctx context.Context, name string, data []byte) error {
	a, err := s.artifacts(name)
	if err != nil {
		return err
	}
	return interrupted(ctx, a.Write(ctx, name, data))
}

func (s *Service) artifacts(name string) (coord.ArtifactStore, error) {
	if _, err := coord.ArtifactName(name); err != nil {
		return nil, err
	}
	a := s.b.Artifacts()
	if a == nil {
		return nil, coord.Errorf(coord.CodeUsage, "no local repository to write %s into", name).
			WithHint("run the command inside the project's checkout")
	}
	return a, nil
}
