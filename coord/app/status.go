package app

import (
	"context"

	"github.com/rotd/coordination/coord"
)

// StatusView is one agent's view of the registry: the tasks it holds, its
// path locks in force, how many tasks stand in each status, and whether
// the work is drained (no task left that is not done).
type StatusView struct {
	Agent   string
	Holding []*coord.Task // claimed or blocked by the agent, registry order
	Locks   []coord.PathLock
	Counts  map[coord.Status]int // every status, zeros included
	Drained bool
	// Conflicts are those recorded on the agent's tasks in flight (its
	// finished work not yet landed included), from its side.
	Conflicts []coord.ConflictPair
}

// Status is what an agent asks when it starts or resumes: what it holds
// and where the work stands. It reads one snapshot and changes nothing.
func (s *Service) Status(ctx context.Context, agent string) (StatusView, error) {
	if err := coord.ValidActingAgent(agent); err != nil {
		return StatusView{}, err
	}
	v := StatusView{Agent: agent, Counts: map[coord.Status]int{}}
	for _, st := range coord.Statuses {
		v.Counts[st] = 0
	}
	err := s.tasks().View(ctx, func(tx *coord.Txn) error {
		v.Holding = tx.HeldBy(agent)
		for _, l := range tx.LivePathLocks() {
			if l.Holder == agent {
				v.Locks = append(v.Locks, l)
			}
		}
		for _, t := range tx.Tasks {
			v.Counts[t.Status]++
		}
		v.Drained = tx.Drained()
		v.Conflicts = tx.ConflictsOf(agent)
		return nil
	})
	v.Holding, v.Locks, v.Conflicts = nonNil(v.Holding), nonNil(v.Locks), nonNil(v.Conflicts)
	return v, interrupted(ctx, err)
}
