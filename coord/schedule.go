package coord

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Push scheduling (docs/SCHEDULING.md): a scheduler assigns ready tasks to
// registered live agents, which take them from their inboxes. Every rule
// here is a pure function over a Txn; a round is one transaction, hence
// one commit, so two schedulers running by mistake serialise like any two
// writers and the second sees the first's assignments.

// Assignment is one change a scheduling round (or a deregistration) made
// to who a task is assigned to.
type Assignment struct {
	Task  string `json:"task"`
	Agent string `json:"agent"`          // the assignee (the one it was taken from, for a return)
	From  string `json:"from,omitempty"` // moved: the agent it was taken from
	Why   string `json:"why,omitempty"`  // returned: why it went back to the queue
}

// Round is what one scheduling round did.
type Round struct {
	Left     []string     `json:"left"`     // registered agents that left the pool (heartbeat stale)
	Returned []Assignment `json:"returned"` // assignments handed back to the queue
	Routed   []Assignment `json:"routed"`   // tasks in review routed to reviewers
	Assigned []Assignment `json:"assigned"` // ready tasks assigned
	Moved    []Assignment `json:"moved"`    // unstarted work moved to an idle agent (work stealing)
	// Unreviewable are the tasks in review that no registered reviewer
	// may take (Txn.Unreviewable), after the round: an alert, logged once
	// per task and review (New marks the ones this round logged).
	Unreviewable []Unreviewable `json:"unreviewable"`

	marks int // alert marks set or cleared (a change to commit, not to report)
}

// Changed reports whether the round changed anything it reports: an
// assignment, a member leaving, or a new alert.
func (r *Round) Changed() bool {
	n := len(r.Left) + len(r.Returned) + len(r.Routed) + len(r.Assigned) + len(r.Moved)
	for _, u := range r.Unreviewable {
		if u.New {
			n++
		}
	}
	return n > 0
}

// Dirty reports whether the round changed the registry at all: what it
// reports, or only the marks that keep an alert from being logged twice.
func (r *Round) Dirty() bool { return r.Changed() || r.marks > 0 }

// Unreviewable is a task in review waiting for a reviewer that no
// registered reviewer may take, and why.
type Unreviewable struct {
	Task  string `json:"task"`
	Why   string `json:"why"`
	Since string `json:"since"`         // when it was first found so (RFC 3339 UTC; "" outside a round)
	New   bool   `json:"new,omitempty"` // first found by this round (and logged)
}

// Alert is the alert a person sees for it.
func (u Unreviewable) Alert() Alert {
	return Alert{Kind: "no_reviewer", Task: u.Task,
		Text: fmt.Sprintf("task %s waits in review and %s: register a reviewer that suits it ('coord agents register --role reviewer'), or approve or reject it by hand", u.Task, u.Why)}
}

// reviewUnsuited says why reviewer p may not review t ("" if it may): it
// claimed the task, or its skill level does not accept the task's, or it
// registered capabilities and the task's is not among them. A reviewer
// registered without capabilities reviews tasks of any capability.
func reviewUnsuited(t *Task, p *PoolAgent) string {
	if t.ClaimedBy == p.ID {
		return "claimed it"
	}
	a := p.Agent()
	if len(a.Caps) == 0 {
		a.Caps = []string{t.Capability} // any capability: the task's own
	}
	return unsuited(t, a)
}

// suits says why the pool member p may not be assigned t ("" if it may):
// a review as reviewUnsuited judges it, other work as claim does.
func suits(t *Task, p *PoolAgent) string {
	if t.Status == Review {
		return reviewUnsuited(t, p)
	}
	return unsuited(t, p.Agent())
}

// Unreviewable lists the tasks in review that wait for a reviewer (none
// routed to them) and that no registered reviewer may take: none is
// registered, or each claimed the task or does not suit it
// (reviewUnsuited); why names each. Reviews are only routed to a pool, so
// with no agent registered at all (reviews done by hand) it lists
// nothing. A reviewer that suits but has no room is no alert.
func (tx *Txn) Unreviewable() []Unreviewable {
	if len(tx.Pool) == 0 {
		return nil
	}
	var out []Unreviewable
	for _, t := range tx.Tasks {
		if t.Status != Review || t.AssignedTo != "" {
			continue
		}
		if why := tx.unreviewable(t); why != "" {
			out = append(out, Unreviewable{Task: t.ID, Why: why, Since: t.ReviewAlertAt})
		}
	}
	return out
}

// unreviewable says why no registered reviewer may take t, or "".
func (tx *Txn) unreviewable(t *Task) string {
	var whys []string
	for i := range tx.Pool {
		p := &tx.Pool[i]
		if p.Role != Reviewer {
			continue
		}
		why := reviewUnsuited(t, p)
		if why == "" {
			return ""
		}
		whys = append(whys, p.ID+" "+why)
	}
	if len(whys) == 0 {
		return "no reviewer is registered"
	}
	return "no registered reviewer may take it (" + strings.Join(whys, "; ") + ")"
}

// Waiting returns the tasks assigned to agent that it has not started
// (unclaimed tasks, and reviews it has not taken), oldest assignment
// first, registry order breaking ties.
func (tx *Txn) Waiting(agent string) []*Task {
	var out []*Task
	for _, t := range tx.Tasks {
		if t.AssignedTo == agent && waiting(t) {
			out = append(out, t)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].AssignedAt < out[j].AssignedAt })
	return out
}

// inboxes maps every assignee to its waiting assignments, each list
// ordered as Waiting orders it.
func (tx *Txn) inboxes() map[string][]*Task {
	m := map[string][]*Task{}
	for _, t := range tx.Tasks {
		if waiting(t) {
			m[t.AssignedTo] = append(m[t.AssignedTo], t)
		}
	}
	for _, q := range m {
		sort.SliceStable(q, func(i, j int) bool { return q[i].AssignedAt < q[j].AssignedAt })
	}
	return m
}

// waiting reports whether t is an assignment not yet started.
func waiting(t *Task) bool {
	return t.AssignedTo != "" && (t.Status == Unclaimed || (t.Status == Review && t.ReviewStartedAt == ""))
}

// Rejected returns the tasks agent holds that a reviewer handed back
// (claimed, with review notes): its own work to finish before any new
// assignment or claim.
func (tx *Txn) Rejected(agent string) []*Task {
	var out []*Task
	for _, t := range tx.Tasks {
		if t.Status == Claimed && t.ClaimedBy == agent && t.ReviewNotes != "" {
			out = append(out, t)
		}
	}
	return out
}

// Reviewing returns the reviews agent has taken and not yet decided.
func (tx *Txn) Reviewing(agent string) []*Task {
	var out []*Task
	for _, t := range tx.Tasks {
		if t.Status == Review && t.AssignedTo == agent && t.ReviewStartedAt != "" {
			out = append(out, t)
		}
	}
	return out
}

// unassign hands t's assignment to agent back to the queue, logged.
func (tx *Txn) unassign(t *Task, agent, why string) {
	t.AssignedTo, t.AssignedAt, t.ReviewStartedAt = "", "", ""
	t.Dirty = true
	tx.Log(CoordinatorID, "returned task %s from %s to the queue: %s", t.ID, agent, why)
}

// assign pushes t to agent now, logged with what it occupies so that the
// log alone shows no two conflicting tasks were ever out at once.
func (tx *Txn) assign(t *Task, agent string) {
	setAssigned(t, agent, tx.Now)
	if t.Status == Review {
		tx.Log(CoordinatorID, "routed task %s to %s for review", t.ID, agent)
		return
	}
	var occ []string
	if t.ConflictGroup != "" {
		occ = append(occ, "conflict group "+t.ConflictGroup)
	}
	if len(t.Files) > 0 {
		occ = append(occ, "files "+strings.Join(t.Files, " "))
	}
	if len(occ) == 0 {
		tx.Log(CoordinatorID, "assigned task %s to %s", t.ID, agent)
		return
	}
	tx.Log(CoordinatorID, "assigned task %s to %s (%s)", t.ID, agent, strings.Join(occ, "; "))
}

func setAssigned(t *Task, agent string, now time.Time) {
	t.AssignedTo, t.AssignedAt, t.ReviewStartedAt = agent, FormatTime(now), ""
	t.Dirty = true
}

// TakeAssignment is the inbox: atomically, agent (registered) gets its
// next piece of work. First a task it holds that a reviewer rejected
// (returned as it stands: it is already the agent's); then its oldest
// waiting assignment: an unclaimed task is claimed as Claim claims it
// (the claim consumes the assignment), a review is marked started. An
// assignment the agent can no longer claim (a conflict or a dependency
// appeared since) goes back to the queue and the next one is tried. It
// returns nil when there is nothing; an agent not in the pool is
// CodeConflict.
func (tx *Txn) TakeAssignment(agent string) (*Task, error) {
	if err := ValidActingAgent(agent); err != nil {
		return nil, err
	}
	m := tx.Member(agent)
	if m == nil {
		return nil, NotRegistered(agent)
	}
	if back := tx.Rejected(agent); len(back) > 0 {
		return back[0], nil
	}
	for _, t := range tx.Waiting(agent) {
		if t.Status == Review {
			t.ReviewStartedAt = FormatTime(tx.Now)
			t.Dirty = true
			tx.Log(agent, "took review of task %s", t.ID)
			return t, nil
		}
		got, err := tx.Claim(m.Agent(), ClaimOptions{TaskID: t.ID})
		if err == nil {
			return got, nil
		}
		if CodeOf(err) != CodeConflict {
			return nil, err
		}
		tx.unassign(t, agent, "it cannot be claimed now ("+strings.TrimPrefix(err.(*Error).Msg, "task \""+t.ID+"\" cannot be claimed: ")+")")
	}
	return nil, nil
}

// Schedule runs one scheduling round over the Txn. live says which pool
// agents are alive (PoolLive); a registered agent not live leaves the pool
// and every assignment to it returns to the queue (a task it claimed is
// the stale sweep's, under on_stale, as for any agent). Then, in order:
//
//   - assignments that no longer fit (the assignee left or no longer suits
//     the task, or the task moved on) return to the queue;
//   - each task in review without a reviewer goes to a live reviewer that
//     did not claim it, suits it (skill level, and capability unless the
//     reviewer registered none: then it reviews any) and has room;
//   - ready tasks (Ready's eligibility, Best's order: priority, then the
//     least likely to meet the work in flight) go to live implementers
//     that suit them and have room, never two of one conflict group or
//     with overlapping files at once, counting claimed, blocked and
//     assigned tasks, and each assignment weighed against the work in
//     flight with the ones made before it;
//   - an idle agent (nothing held, nothing waiting) takes one waiting
//     assignment it suits from a busy agent of its role (one that holds
//     work, or has more than one waiting);
//   - a task in review that no registered reviewer may take is an alert
//     (Round.Unreviewable), logged the first time (alertUnreviewable).
//
// Room is fewer than depth (at least 1) assignments waiting. Among the
// agents that could take a task the least loaded (waiting plus held) gets
// it, pool order breaking ties. A planner is never assigned anything.
func (tx *Txn) Schedule(live map[string]bool, depth int) Round {
	if depth < 1 {
		depth = 1
	}
	var r Round
	for _, id := range tx.PoolIDs() {
		if !live[id] {
			tx.dropMember(id)
			r.Left = append(r.Left, id)
			tx.Log(CoordinatorID, "agent %s left the pool: its heartbeat is stale", id)
		}
	}
	left := make(map[string]bool, len(r.Left))
	for _, id := range r.Left {
		left[id] = true
	}
	pool := make(map[string]*PoolAgent, len(tx.Pool))
	for i := range tx.Pool {
		pool[tx.Pool[i].ID] = &tx.Pool[i]
	}

	// Assignments that no longer fit go back.
	for _, t := range tx.Tasks {
		if t.AssignedTo == "" {
			continue
		}
		a := t.AssignedTo
		if why := misfit(t, pool[a], left[a]); why != "" {
			tx.unassign(t, a, why)
			r.Returned = append(r.Returned, Assignment{Task: t.ID, Agent: a, Why: why})
		}
	}

	// What each agent has waiting (oldest first) and holds.
	queue := tx.inboxes()
	waitingN := make(map[string]int, len(pool))
	held := make(map[string]int, len(pool))
	for id, q := range queue {
		waitingN[id] = len(q)
	}
	for _, t := range tx.Tasks {
		switch {
		case t.HoldsLock():
			held[t.ClaimedBy]++
		case t.AssignedTo != "" && !waiting(t):
			held[t.AssignedTo]++ // a review taken
		}
	}
	members := func(role Role) []*PoolAgent {
		var out []*PoolAgent
		for i := range tx.Pool {
			if tx.Pool[i].Role == role {
				out = append(out, &tx.Pool[i])
			}
		}
		return out
	}
	// pick returns the least-loaded agent with room that ok accepts.
	pick := func(cands []*PoolAgent, ok func(*PoolAgent) bool) *PoolAgent {
		var best *PoolAgent
		for _, p := range cands {
			if waitingN[p.ID] >= depth || !ok(p) {
				continue
			}
			if best == nil || waitingN[p.ID]+held[p.ID] < waitingN[best.ID]+held[best.ID] {
				best = p
			}
		}
		return best
	}
	hasRoom := func(cands []*PoolAgent) bool {
		for _, p := range cands {
			if waitingN[p.ID] < depth {
				return true
			}
		}
		return false
	}
	assigned := map[string]bool{}

	// Reviews.
	reviewers := members(Reviewer)
	if hasRoom(reviewers) {
		var review []*Task
		for _, t := range tx.Tasks {
			if t.Status == Review && t.AssignedTo == "" {
				review = append(review, t)
			}
		}
		for _, t := range byPriority(review) {
			p := pick(reviewers, func(p *PoolAgent) bool { return reviewUnsuited(t, p) == "" })
			if p == nil {
				continue
			}
			tx.assign(t, p.ID)
			waitingN[p.ID]++
			assigned[p.ID] = true
			r.Routed = append(r.Routed, Assignment{Task: t.ID, Agent: p.ID})
			if !hasRoom(reviewers) {
				break
			}
		}
	}

	// Work: the ready tasks of the best priority, the least likely to
	// meet the work in flight first (each assignment joins that work).
	implementers := members(Implementer)
	if hasRoom(implementers) {
		h := tx.holders()
		var open []*Task
		for _, t := range tx.Tasks {
			if t.Status == Unclaimed && t.AssignedTo == "" {
				open = append(open, t)
			}
		}
		open = byPriority(open)
		for hasRoom(implementers) {
			var next *Task
			var np *PoolAgent
			rank, risk := 99, 2.0
			for i, t := range open {
				if t == nil || t.Priority.Rank() > rank {
					continue
				}
				if tx.taskBlocked(t, h) != "" {
					open[i] = nil // more work in flight never frees it
					continue
				}
				w := h.weigh(t, "")
				if w.Waits || t.Priority.Rank() == rank && w.P >= risk {
					continue
				}
				p := pick(implementers, func(p *PoolAgent) bool {
					// Work returned to its owner goes to that owner while it
					// is in the pool and alive.
					mine := t.Owner == "" || t.Owner == p.ID || !live[t.Owner]
					return mine && suits(t, p) == "" && h.writeClaimed(t, p.ID) == "" && !h.weigh(t, p.ID).Waits
				})
				if p == nil {
					continue
				}
				next, np, rank, risk = t, p, t.Priority.Rank(), w.P
				if risk == 0 {
					break // open is in priority order: none comes before it
				}
			}
			if next == nil {
				break
			}
			tx.assign(next, np.ID)
			h.add(next)
			waitingN[np.ID]++
			assigned[np.ID] = true
			r.Assigned = append(r.Assigned, Assignment{Task: next.ID, Agent: np.ID})
			open[slices.Index(open, next)] = nil
		}
	}

	// Work stealing: an idle agent takes one unstarted assignment from a
	// busy agent of its role (never work whose files meet write claims
	// that keep it from the thief).
	claims := tx.holders()
	for _, role := range []Role{Implementer, Reviewer} {
		group := members(role)
		for _, thief := range group {
			if waitingN[thief.ID]+held[thief.ID] > 0 || assigned[thief.ID] {
				continue
			}
			var victim *PoolAgent
			var loot *Task
			for _, v := range group {
				if v == thief || waitingN[v.ID] == 0 || (held[v.ID] == 0 && waitingN[v.ID] < 2) {
					continue
				}
				if victim != nil && (waitingN[v.ID] < waitingN[victim.ID] ||
					waitingN[v.ID] == waitingN[victim.ID] && held[v.ID] <= held[victim.ID]) {
					continue
				}
				for _, t := range queue[v.ID] {
					if suits(t, thief) == "" && claims.writeClaimed(t, thief.ID) == "" {
						victim, loot = v, t
						break
					}
				}
			}
			if loot == nil {
				continue
			}
			setAssigned(loot, thief.ID, tx.Now)
			tx.Log(CoordinatorID, "moved task %s from %s to %s (work stealing)", loot.ID, victim.ID, thief.ID)
			q := queue[victim.ID]
			for i, t := range q {
				if t == loot {
					queue[victim.ID] = append(q[:i:i], q[i+1:]...)
					break
				}
			}
			queue[thief.ID] = append(queue[thief.ID], loot)
			waitingN[victim.ID]--
			waitingN[thief.ID]++
			assigned[thief.ID] = true
			r.Moved = append(r.Moved, Assignment{Task: loot.ID, Agent: thief.ID, From: victim.ID})
		}
	}
	tx.alertUnreviewable(&r)
	return r
}

// alertUnreviewable records the round's review alerts: each task in
// review that no registered reviewer may take is logged the first time a
// round finds it so (ReviewAlertAt marks it, so later rounds, here or in
// another scheduler, stay silent), and the mark is cleared once the task
// may be taken again, so that a new episode is logged anew.
func (tx *Txn) alertUnreviewable(r *Round) {
	r.Unreviewable = tx.Unreviewable()
	now := FormatTime(tx.Now)
	alerted := make(map[string]bool, len(r.Unreviewable))
	for i := range r.Unreviewable {
		u := &r.Unreviewable[i]
		alerted[u.Task] = true
		if u.Since != "" {
			continue
		}
		t := tx.Task(u.Task)
		t.ReviewAlertAt, t.Dirty = now, true
		u.Since, u.New = now, true
		r.marks++
		tx.Log(CoordinatorID, "alert: task %s waits in review and %s", u.Task, u.Why)
	}
	for _, t := range tx.Tasks {
		if t.ReviewAlertAt != "" && !alerted[t.ID] {
			t.ReviewAlertAt, t.Dirty = "", true
			r.marks++
		}
	}
}

// misfit says why t's assignment to p (nil: not in the pool) no longer
// stands, or "".
func misfit(t *Task, p *PoolAgent, left bool) string {
	switch {
	case left:
		return "its assignee left the pool"
	case p == nil:
		return "its assignee is not registered"
	case t.Status == Unclaimed && p.Role != Implementer:
		return "its assignee is a " + string(p.Role) + " now"
	case t.Status == Review && p.Role != Reviewer:
		return "its reviewer is a " + string(p.Role) + " now"
	case t.Status == Review && t.ClaimedBy == p.ID:
		return "its reviewer claimed it"
	case t.Status != Unclaimed && t.Status != Review:
		return "it is " + string(t.Status)
	}
	if why := suits(t, p); why != "" {
		return "its assignee no longer suits it (" + why + ")"
	}
	return ""
}

// Clone returns a copy of the Txn that a planner may change freely (a
// scheduling round tried on a snapshot, to learn whether a real one under
// exclusion is worth taking): its tasks, path locks and pool are copies,
// its events empty. Slices inside a task or record (deps, files,
// capabilities) are shared: no operation changes them in place.
func (tx *Txn) Clone() *Txn {
	c := *tx
	c.Tasks = make([]*Task, len(tx.Tasks))
	copies := make([]Task, len(tx.Tasks))
	for i, t := range tx.Tasks {
		copies[i] = *t
		c.Tasks[i] = &copies[i]
	}
	c.PathLocks = append([]PathLock(nil), tx.PathLocks...)
	c.Pool = append([]PoolAgent(nil), tx.Pool...)
	c.Outbox = nil
	c.Events = nil
	c.index = nil // rebuilt on first use: the clone may add tasks
	return &c
}

// GiveBack hands back to the queue an assignment agent will not finish: a
// review it took (an interrupted `run --inbox`) or one still waiting in
// its inbox. A task no longer assigned to agent is CodeLost.
func (tx *Txn) GiveBack(agent, id, why string) (*Task, error) {
	if err := CheckNote("reason", why); err != nil {
		return nil, err
	}
	if err := ValidActingAgent(agent); err != nil {
		return nil, err
	}
	if err := ValidTaskID(id); err != nil {
		return nil, err
	}
	t := tx.Task(id)
	if t == nil || t.AssignedTo != agent {
		return nil, Errorf(CodeLost, "task %q is not assigned to %s", id, agent).WithHint("nothing to give back")
	}
	tx.unassign(t, agent, OneLine(why))
	return t, nil
}
