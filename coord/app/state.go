package app

import (
	"context"
	"time"

	"github.com/rotd/coord/coord"
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
}

// StateRequest says how much of the state to gather.
type StateRequest struct {
	Timeout  time.Duration // stale after (0: configured)
	LogLines int           // the last N log lines (0: none)
}

// State gathers the project's state. It takes no lock a writer waits on:
// a slow reader never slows an agent.
func (s *Service) State(ctx context.Context, r StateRequest) (State, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = s.cfg.StaleAfter
	}
	st := State{Where: s.b.Where(), Now: coord.FormatTime(s.clock()), Counts: map[string]int{}}
	for _, x := range coord.Statuses {
		st.Counts[string(x)] = 0
	}
	beats, now, err := s.b.Beats().List(ctx)
	if err != nil {
		return st, interrupted(ctx, err)
	}
	err = s.b.Tasks().View(ctx, func(tx *coord.Txn) error {
		st.Tasks = tx.Tasks
		for _, t := range tx.Tasks {
			st.Counts[string(t.Status)]++
		}
		st.Agents = tx.Liveness(beats, now, timeout)
		st.Locks = tx.LivePathLocks()
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
	st.Agents, st.Locks, st.Log = nonNil(st.Agents), nonNil(st.Locks), nonNil(st.Log)
	return st, nil
}
