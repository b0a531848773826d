package app

import (
	"context"
	"time"

	"github.com/rotd/coordination/coord"
)

// State is one consistent picture of a project for people (top, the
// dashboard) and scripts: who is alive (the one liveness view), the tasks,
// the path locks and leases in force, and the end of the log.
type State struct {
	Where  string            `json:"where"`
	Now    string            `json:"now"`
	Agents []coord.AgentView `json:"agents"`
	Tasks  []*coord.Task     `json:"-"` // front ends print tasks in the registry's own encoding
	Counts map[string]int    `json:"counts"`
	Locks  []coord.PathLock  `json:"locks"`
	Leases []coord.Lease     `json:"leases"`
	Log    []string          `json:"log"`

	// The overview for people (the dashboard): the unclaimed work seen
	// from no particular agent (coord.Txn.Queue: Ready in claim order,
	// Waiting with why), the pace of the work (coord.ThroughputOf) and
	// what needs a person (coord.Alerts).
	Ready      []*coord.Task    `json:"-"`
	Waiting    []Waiting        `json:"-"`
	Throughput coord.Throughput `json:"throughput"`
	Alerts     []coord.Alert    `json:"alerts"`
	// Conflicts are the conflicts recorded on the work in flight
	// (coord.Txn.Conflicts: a pair once), as coord conflicts --json
	// prints them.
	Conflicts []coord.ConflictPair `json:"conflicts"`
	// Landing is the landing queue (coord.Txn.LandingQueue): the task
	// the lander checks, what waits to land, what went back and why.
	Landing []coord.LandingRow `json:"landing"`
	// Advice is how many agents to run now, with the rates behind it
	// (coord advise: Service.Advise).
	Advice coord.Advice `json:"advice"`

	// The project's settings this state was judged by, read afresh for
	// every State (a change shows without a restart): StaleAfter is the
	// silence after which an agent counts as stale (the request's
	// Timeout, else the project's stale_after), ReviewGate whether a
	// released task waits in review before it is done.
	StaleAfter int64 `json:"stale_after_seconds"`
	ReviewGate bool  `json:"review_gate"`
}

// Waiting is an unclaimed task that no agent can claim yet, and why.
type Waiting struct {
	Task *coord.Task
	Why  string
}

// StateRequest says how much of the state to gather.
type StateRequest struct {
	Timeout  time.Duration // stale after (0: configured)
	LogLines int           // the last N log lines (0: none)
	Hours    int           // the throughput window in hours (0: 24)
}

// State gathers the project's state. It takes no lock a writer waits on:
// a slow reader never slows an agent. The project's settings are read
// again for every call (a long-running reader, the dashboard, follows a
// change of stale_after or review_gate) where the engine re-reads them
// (config.json; a hub's namespace keeps what it read when opened).
func (s *Service) State(ctx context.Context, r StateRequest) (State, error) {
	st := State{Where: s.b.Where(), Now: coord.FormatTime(s.clock()), Counts: map[string]int{}}
	cfg, err := s.b.Config(ctx)
	if err != nil {
		return st, interrupted(ctx, err)
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = cfg.StaleAfter
	}
	st.StaleAfter, st.ReviewGate = int64(timeout/time.Second), cfg.ReviewGate
	for _, x := range coord.Statuses {
		st.Counts[string(x)] = 0
	}
	beats, now, err := s.b.Beats().List(ctx)
	if err != nil {
		return st, interrupted(ctx, err)
	}
	ev, err := s.conflictEvents(ctx, s.clock())
	if err != nil {
		return st, err
	}
	err = s.tasks().View(ctx, func(tx *coord.Txn) error {
		st.Tasks = tx.Tasks
		for _, t := range tx.Tasks {
			st.Counts[string(t.Status)]++
		}
		st.Agents = tx.Liveness(beats, now, timeout)
		st.Locks = tx.LivePathLocks()
		ready, waiting, why := tx.Queue()
		st.Ready = ready
		st.Waiting = make([]Waiting, len(waiting))
		for i, t := range waiting {
			st.Waiting[i] = Waiting{t, why[i]}
		}
		hours := r.Hours
		if hours <= 0 {
			hours = 24
		}
		st.Throughput = coord.ThroughputOf(tx.Tasks, s.clock(), hours)
		st.Alerts = coord.Alerts(st.Agents, tx.Tasks, len(ready))
		for _, u := range tx.Unreviewable() {
			st.Alerts = append(st.Alerts, u.Alert())
		}
		st.Conflicts = tx.Conflicts()
		st.Landing = tx.LandingQueue(cfg.ReviewGate)
		st.Advice = tx.Advise(s.clock(), ev)
		return nil
	})
	if err != nil {
		return st, interrupted(ctx, err)
	}
	if st.Leases, err = s.Leases(ctx); err != nil {
		return st, err
	}
	if r.LogLines > 0 {
		if _, err := s.LogRead(ctx, r.LogLines, func(l string) error {
			st.Log = append(st.Log, l)
			return nil
		}); err != nil {
			return st, err
		}
	}
	st.Agents, st.Locks, st.Log, st.Alerts = nonNil(st.Agents), nonNil(st.Locks), nonNil(st.Log), nonNil(st.Alerts)
	st.Conflicts, st.Landing = nonNil(st.Conflicts), nonNil(st.Landing)
	return st, nil
}

// Reader is the read-only part of the Service: what a front end that must
// never change anything is given (the dashboard), so that it cannot call
// a write at all. Its reads take no lock a writer waits on, except
// Problems (see there).
type Reader struct{ s *Service }

// Reader returns the Service's read-only part.
func (s *Service) Reader() Reader { return Reader{s} }

// Where names the project for people (a directory, or a URL with its
// password masked).
func (r Reader) Where() string { return r.s.b.Where() }

// Config is the project's configuration.
func (r Reader) Config() coord.Config { return *r.s.conf() }

// Now is the Service's clock.
func (r Reader) Now() time.Time { return r.s.clock() }

// State is Service.State.
func (r Reader) State(ctx context.Context, req StateRequest) (State, error) {
	return r.s.State(ctx, req)
}

// LogRead is Service.LogRead: the last n log lines, oldest first.
func (r Reader) LogRead(ctx context.Context, n int, fn func(line string) error) (int, error) {
	return r.s.LogRead(ctx, n, fn)
}

// Until is Service.Until: check after every change the backend notifies
// (coalesced over settle) and at least every PollInterval.
func (r Reader) Until(ctx context.Context, timeout, settle time.Duration, check func() (bool, error)) error {
	return r.s.Until(ctx, timeout, settle, check)
}

// Problems is what `coord doctor` (without --repair) reports; it repairs
// nothing and the problems it returns carry no fix. It is the one read
// that takes the registry's lock (on files: the engine compares the
// registry with the lock files under it, so that a claim in progress is
// not reported as a broken invariant), for as long as the check takes;
// call it rarely.
func (r Reader) Problems(ctx context.Context) ([]coord.Problem, error) {
	probs, err := r.s.Doctor(ctx, false)
	for i := range probs {
		probs[i].Fix = nil
	}
	return probs, err
}
