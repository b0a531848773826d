package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rotd/coordination/coord"
)

// Push scheduling (docs/SCHEDULING.md): the pool, the scheduler's round, the
// inbox. Everything lives in the registry document and the beat store, so
// it works on every engine.

// AgentRecord is a registered agent as `agents register` prints it: the
// members of its record in the registry's "agents" (null when unset).
type AgentRecord struct {
	ID           string   `json:"id"`
	Role         string   `json:"role"`
	Capabilities []string `json:"capabilities"`
	SkillLevel   *string  `json:"skill_level"`
	Worktree     *string  `json:"worktree"`
	Branch       *string  `json:"branch"`
	RegisteredAt string   `json:"registered_at"`
	Host         *string  `json:"host"`
}

func recordOf(p coord.PoolAgent) AgentRecord {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return AgentRecord{ID: p.ID, Role: string(p.Role), Capabilities: nonNil(p.Caps), SkillLevel: opt(p.Skill.String()),
		Worktree: opt(p.Worktree), Branch: opt(p.Branch), RegisteredAt: p.RegisteredAt, Host: opt(p.Host)}
}

// RegisterRequest adds the calling agent to the pool.
type RegisterRequest struct {
	Agent    string
	Role     string   // implementer (""), reviewer or planner
	Caps     []string // what it can do (a task with no capability suits everyone)
	Skill    string   // a level ("expert": up to expert) or claim's filter ("=expert")
	Worktree string   // its checkout and branch
	Branch   string
	Host     string // the machine it runs on
}

// Register adds the agent to the pool, or updates its record (keeping
// when it first registered), and beats for it inside the commit so it is
// alive at once. An id that a live agent registered from another host or
// worktree is refused (coord.Txn.Register: CodeConflict, ID_IN_USE), and
// then nothing is written, the heartbeat included. Assignments the new
// record no longer suits go back to the queue at the next scheduling
// round.
func (s *Service) Register(ctx context.Context, r RegisterRequest) (AgentRecord, error) {
	if err := coord.ValidActingAgent(r.Agent); err != nil {
		return AgentRecord{}, err
	}
	role, err := coord.ParseRole(r.Role)
	if err != nil {
		return AgentRecord{}, err
	}
	skill, err := coord.ParseAgentSkill(r.Skill)
	if err != nil {
		return AgentRecord{}, err
	}
	p := coord.PoolAgent{ID: r.Agent, Role: role, Caps: r.Caps, Skill: skill, Worktree: r.Worktree, Branch: r.Branch, Host: r.Host}
	if err := p.Check(); err != nil {
		return AgentRecord{}, err
	}
	linked := s.linkedWorktree(ctx, r.Worktree)
	var got coord.PoolAgent
	var held []*coord.Task
	err = s.tasks().Update(ctx, func(tx *coord.Txn) error {
		if other := tx.WorktreeOf(r.Worktree, r.Agent, r.Host); linked && other != "" {
			return coord.Errorf(coord.CodeConflict, "worktree %s is agent %s's (recorded at its registration)", r.Worktree, other).
				WithHint("work in a worktree of your own: coord worktree add %s", r.Agent).WithHolder(other)
		}
		var live map[string]bool
		if tx.Member(r.Agent) != nil {
			seen, now, err := s.b.Beats().LastSeen(ctx, []string{r.Agent})
			if err != nil {
				return err
			}
			live = tx.PoolLive(seen, now, s.conf().StaleAfter)
		}
		var err error
		if got, _, err = tx.Register(p, live); err != nil {
			return err
		}
		held = tx.HeldBy(r.Agent)
		return s.beatWithin(ctx, r.Agent)
	})
	if err != nil {
		return AgentRecord{}, interrupted(ctx, err)
	}
	s.beatHolding(ctx, got.Agent(), held)
	return recordOf(got), nil
}

// DeregisterResult is what leaving the pool handed back.
type DeregisterResult struct {
	Agent    string   `json:"agent_id"`
	Returned []string `json:"returned"` // assignments not started, back in the queue
	Held     []string `json:"held"`     // tasks it still holds: release or block them
}

// Deregister removes the agent from the pool and hands back what it was
// assigned and had not started (CodeConflict if it is not registered).
// Tasks it claimed stay its own.
func (s *Service) Deregister(ctx context.Context, agent string) (DeregisterResult, error) {
	if err := coord.ValidActingAgent(agent); err != nil {
		return DeregisterResult{}, err
	}
	res := DeregisterResult{Agent: agent}
	err := s.tasks().Update(ctx, func(tx *coord.Txn) error {
		back, err := tx.Deregister(agent)
		res.Returned, res.Held = nonNil(back), []string{}
		for _, t := range tx.HeldBy(agent) {
			res.Held = append(res.Held, t.ID)
		}
		return err
	})
	return res, interrupted(ctx, err)
}

// ScheduleRequest tunes a scheduling round.
type ScheduleRequest struct {
	Depth int // at most this many assignments waiting per agent (<1: 1)
	// Timeout is how long an agent may be silent before it leaves the pool
	// and its claims are freed (0: the configured stale_after).
	Timeout time.Duration
}

// ScheduleResult is what one round did: the round's changes and the stale
// claims it freed.
type ScheduleResult struct {
	coord.Round
	Freed []coord.Stale `json:"freed"`
	// Voided are the reviews found void before the round
	// (VoidMovedReviews): each task went back to its owner.
	Voided []coord.Assignment `json:"voided,omitempty"`
}

// changed reports whether the round is worth a commit: it changed what it
// reports, freed a claim, or set or cleared an alert's mark.
func (r *ScheduleResult) changed() bool { return r.Round.Dirty() || len(r.Freed) > 0 }

func (r *ScheduleResult) fill() {
	r.Left, r.Returned, r.Routed = nonNil(r.Left), nonNil(r.Returned), nonNil(r.Routed)
	r.Assigned, r.Moved, r.Freed = nonNil(r.Assigned), nonNil(r.Moved), nonNil(r.Freed)
	r.Unreviewable = nonNil(r.Unreviewable)
}

// Schedule runs one scheduling round (coord.Txn.Schedule) in one commit.
// The scheduler is a sweeper too: in the same commit it frees the claims
// of agents silent longer than the timeout (as clean-stale does, the task
// going where on_stale says) and drops them from the pool, their unstarted
// assignments returning to the queue. The round is first tried on a
// snapshot, without exclusion; only when it would change something is it
// run again, on the state re-read under exclusion, and committed: a round
// with nothing to do costs one read, and a second scheduler sees the
// first one's assignments.
func (s *Service) Schedule(ctx context.Context, r ScheduleRequest) (ScheduleResult, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = s.conf().StaleAfter
	}
	round := func(tx *coord.Txn) (ScheduleResult, error) {
		var res ScheduleResult
		ids := append(tx.LockHolders(), tx.PoolIDs()...)
		seen, now, err := s.b.Beats().LastSeen(ctx, ids)
		if err != nil {
			return res, err
		}
		for _, st := range tx.JudgeStale(seen, now, timeout, s.conf().OnStale) {
			if tx.FreeStale(st.Ref(), s.conf().OnStale) {
				res.Freed = append(res.Freed, st)
			}
		}
		res.Round = tx.Schedule(tx.PoolLive(seen, now, timeout), r.Depth)
		return res, nil
	}
	// Reviews made void by a later commit go back to their owners first
	// (a separate commit: the round below sees them claimed again).
	voided, verr := s.VoidMovedReviews(ctx)
	worth := false
	var plan ScheduleResult
	var done map[string]string
	err := s.tasks().View(ctx, func(tx *coord.Txn) error {
		var err error
		plan, err = round(tx.Clone())
		worth = plan.changed()
		if s.repo != nil {
			done = finished(tx)
		}
		return err
	})
	// Finished work found on the target frees its write claims before
	// the round: tasks waiting on them may be assigned in it.
	landed, tip := s.landedAmong(ctx, done)
	worth = worth || len(landed) > 0
	if verr != nil && ctx.Err() == nil {
		s.warnf(fmt.Errorf("reviews made void: %w", verr)) // the round goes on
	}
	if err != nil || !worth {
		var res ScheduleResult
		if err == nil {
			res.Unreviewable = plan.Unreviewable // nothing changed: the alerts stand as planned
		}
		res.fill()
		res.voided(voided)
		return res, interrupted(ctx, err)
	}
	var res ScheduleResult
	err = s.tasks().Update(ctx, func(tx *coord.Txn) error {
		s.recordLanded(tx, landed, tip)
		var err error
		res, err = round(tx)
		return err
	})
	if err != nil {
		res = ScheduleResult{}
	}
	res.fill()
	res.voided(voided)
	return res, interrupted(ctx, err)
}

// voided reports the tasks VoidMovedReviews sent back.
func (r *ScheduleResult) voided(sent []*coord.Task) {
	for _, t := range sent {
		r.Voided = append(r.Voided, coord.Assignment{Task: t.ID, Agent: t.ClaimedBy, Why: t.ReviewNotes})
	}
}

// RunScheduler runs scheduling rounds until ctx ends: one after every
// change the backend notifies (a burst coalesced over settle) and one at
// least every PollInterval, so liveness that changes without a write
// (an agent falling silent) is seen too. Each round's result, or its
// error, goes to report; a failed round (a lock not acquired in time, an
// unreadable registry) is reported and the next one tried. It returns
// coord.ErrInterrupted when ctx ends.
func (s *Service) RunScheduler(ctx context.Context, r ScheduleRequest, settle time.Duration, report func(ScheduleResult, error)) error {
	return s.Until(ctx, 0, settle, func() (bool, error) {
		res, err := s.Schedule(ctx, r)
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if err != nil && coord.CodeOf(err) == coord.CodeUsage {
			return false, err
		}
		report(res, err)
		return false, nil
	})
}

// InboxRequest asks for the caller's next pushed task.
type InboxRequest struct {
	Agent string
	// Wait blocks until something is assigned (or no work is left at
	// all), at most Timeout (0: no limit); the agent beats meanwhile, so it
	// stays in the pool.
	Wait    bool
	Timeout time.Duration
}

// InboxResult is what the inbox gave: Status "taken" with Task (an
// assignment claimed, a review taken, or work a reviewer handed back),
// "empty" (nothing assigned) or "drained" (no work is left at all).
type InboxResult struct {
	Status string      `json:"status"`
	Task   *coord.Task `json:"-"`
	Since  time.Time   `json:"-"` // as ClaimResult.Since
}

// Inbox atomically takes the caller's next piece of pushed work
// (coord.Txn.TakeAssignment): the oldest assignment is claimed as claim
// claims it (a beat inside the commit, stale claims freed in the same
// commit when sweep_on_claim allows), a routed review is marked started. An agent not
// in the pool is CodeConflict; a wait that times out is CodeConflict too.
func (s *Service) Inbox(ctx context.Context, r InboxRequest) (InboxResult, error) {
	if err := coord.ValidActingAgent(r.Agent); err != nil {
		return InboxResult{}, err
	}
	if !r.Wait {
		res, _, err := s.take(ctx, r.Agent)
		return res, err
	}
	var out InboxResult
	var lastBeat time.Time
	check := func() (bool, error) {
		some, drained := false, false
		err := s.tasks().View(ctx, func(tx *coord.Txn) error {
			if tx.Member(r.Agent) == nil {
				return coord.NotRegistered(r.Agent)
			}
			drained = tx.Drained()
			some = len(tx.Rejected(r.Agent)) > 0 || len(tx.Waiting(r.Agent)) > 0
			return nil
		})
		if err != nil {
			return false, err
		}
		// Beat once the agent is known to be in the pool: a refused inbox
		// leaves no trace.
		if time.Since(lastBeat) >= s.conf().BeatInterval {
			if err := s.b.Beats().Beat(ctx, r.Agent, nil); err != nil {
				return false, err
			}
			lastBeat = time.Now()
		}
		if !some && !drained {
			return false, nil
		}
		if !some {
			out = InboxResult{Status: "drained"}
			return true, nil
		}
		res, _, err := s.take(ctx, r.Agent)
		out = res
		return err != nil || res.Task != nil, err
	}
	err := s.Until(ctx, r.Timeout, 20*time.Millisecond, check)
	if errors.Is(err, ErrTimeout) {
		return InboxResult{}, inboxTimedOut(r.Timeout, r.Agent)
	}
	return out, err
}

func inboxTimedOut(timeout time.Duration, agent string) error {
	return coord.Errorf(coord.CodeConflict, "timed out after %s: nothing was assigned to %s", coord.RoundDuration(timeout), agent).
		WithHint("is a scheduler running ('coord schedule')?")
}

// take is one inbox take, in one commit; drained reports, when nothing
// was taken, that no work is left at all.
func (s *Service) take(ctx context.Context, agent string) (res InboxResult, drained bool, err error) {
	var got *coord.Task
	var m coord.Agent
	var since time.Time
	early := s.seenEarly(ctx)
	defer early.stop()
	p := s.placeEarly(ctx)
	defer p.wait() // nothing of the call outlives it
	fresh := false
	err = s.tasks().Update(ctx, func(tx *coord.Txn) error {
		if err := s.sweepIn(ctx, tx, early, agent); err != nil {
			return err
		}
		last := tx.LastEpoch
		t, err := tx.TakeAssignment(agent)
		if err != nil {
			return err
		}
		fresh = tx.LastEpoch != last
		if t != nil && t.ClaimedBy == agent && t.Status == coord.Claimed {
			if err := p.decide(t); err != nil {
				return err
			}
		}
		got = t
		drained = t == nil && tx.Drained()
		if p := tx.Member(agent); p != nil {
			m = p.Agent()
		}
		since = time.Now()
		return s.beatWithin(ctx, agent)
	})
	if err != nil {
		return InboxResult{}, false, interrupted(ctx, err)
	}
	if got == nil {
		return InboxResult{Status: "empty"}, drained, nil
	}
	if got.Status == coord.Claimed {
		if err := s.enter(ctx, p, got, s.undoTake(ctx, m, got, fresh)); err != nil {
			return InboxResult{}, false, err
		}
		s.beatHolding(ctx, m, []*coord.Task{got})
	}
	return InboxResult{Status: "taken", Task: got, Since: since}, false, nil
}

// linkedWorktree reports whether path is one of the repository's linked
// worktrees (not its main one, which people and agents share).
func (s *Service) linkedWorktree(ctx context.Context, path string) bool {
	if s.repo == nil || path == "" {
		return false
	}
	list, err := s.repo.Worktrees(ctx)
	if err != nil {
		return false
	}
	for i, w := range list {
		if i > 0 && w.Path == path {
			return true
		}
	}
	return false
}

// GiveBack hands an assignment the agent will not finish (a review it
// took, or one waiting in its inbox) back to the queue; the next round
// assigns it again.
func (s *Service) GiveBack(ctx context.Context, agent, taskID, why string) (*coord.Task, error) {
	if err := coord.CheckNote("reason", why); err != nil {
		return nil, err
	}
	var got *coord.Task
	err := s.tasks().Update(ctx, func(tx *coord.Txn) error {
		var err error
		got, err = tx.GiveBack(agent, taskID, why)
		return err
	})
	return got, interrupted(ctx, err)
}
