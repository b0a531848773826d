package coord

import (
	"strings"
	"time"
)

// The pool: agents that volunteered for pushed work (docs/SCHEDULING.md). It
// lives in the registry document beside the tasks, so one transaction
// sees tasks, claims, assignments and the pool together, and a scheduling
// round is one commit whatever the engine.

// Role is what kind of work a registered agent is pushed.
type Role string

// The roles. An implementer is assigned unclaimed tasks, a reviewer tasks
// in review (never one it claimed), a planner nothing (it plans: seeds
// and orders tasks; it is in the pool to be seen).
const (
	Implementer Role = "implementer"
	Reviewer    Role = "reviewer"
	Planner     Role = "planner"
)

// Valid reports whether r is one of the three roles.
func (r Role) Valid() bool { return r == Implementer || r == Reviewer || r == Planner }

// ParseRole reads a --role argument; "" is implementer.
func ParseRole(s string) (Role, error) {
	r := Role(strings.TrimSpace(s))
	if r == "" {
		return Implementer, nil
	}
	if !r.Valid() {
		return "", Errorf(CodeUsage, "invalid role %q", clip(s)).WithHint("use implementer, reviewer or planner")
	}
	return r, nil
}

// ParseAgentSkill reads the skill level an agent registers with. It is
// claim's filter syntax and parser (ParseSkillFilter), except that a bare
// level describes the agent, not a filter: "expert" takes tasks up to
// expert ("<=expert"). An explicit operator ("=expert", ">=intermediate")
// is kept as written. "" accepts every level.
func ParseAgentSkill(s string) (SkillFilter, error) {
	f, err := ParseSkillFilter(s)
	if err != nil {
		return f, err
	}
	if t := strings.TrimSpace(s); f.Op == "=" && !strings.HasPrefix(t, "=") {
		f.Op = "<="
	}
	return f, nil
}

// PoolAgent is one registered agent (the registry's "agents" member).
type PoolAgent struct {
	ID           string
	Role         Role
	Caps         []string
	Skill        SkillFilter
	Worktree     string // the agent's checkout ("" unknown)
	Branch       string
	Host         string // the machine it registered from ("" unknown)
	RegisteredAt string // RFC 3339 UTC

	// Dirty and Raw play the part they play in Task: a changed record is
	// re-encoded, an unchanged one written back as it was read (unknown
	// members included).
	Dirty bool
	Raw   []byte
}

// Agent is the record as claim rules see an agent.
func (p *PoolAgent) Agent() Agent { return Agent{ID: p.ID, Caps: p.Caps, Skill: p.Skill} }

// Check validates a record (as read from a file or given to Register).
func (p *PoolAgent) Check() error {
	if err := ValidAgentID(p.ID); err != nil {
		return err
	}
	if !p.Role.Valid() {
		return Errorf(CodeUsage, "agent %q: role %q is not implementer, reviewer or planner", p.ID, clip(string(p.Role)))
	}
	if p.Skill.Op != "" && p.Skill.Level.Rank() <= 0 {
		return Errorf(CodeUsage, "agent %q: invalid skill level %q", p.ID, clip(p.Skill.String()))
	}
	for _, c := range p.Caps {
		if c == "" || c != OneLine(c) || strings.Contains(c, ",") {
			return Errorf(CodeUsage, "agent %q: invalid capability %q", p.ID, clip(c))
		}
	}
	return nil
}

// NotRegistered is the refusal of pushed work to an agent outside the
// pool (CodeConflict).
func NotRegistered(agent string) *Error {
	return Errorf(CodeConflict, "agent %s is not registered: nothing is pushed to it", agent).
		WithHint("run 'coord agents register' first (an agent whose heartbeat went stale has left the pool)")
}

// Member returns the registered agent with this id, or nil.
func (tx *Txn) Member(id string) *PoolAgent {
	for i := range tx.Pool {
		if tx.Pool[i].ID == id {
			return &tx.Pool[i]
		}
	}
	return nil
}

// IDInUse is the name a refusal of a taken agent id carries
// (docs/SCHEDULING.md, "One agent, one id").
const IDInUse = "ID_IN_USE"

// Register adds p to the pool, or replaces the caller's own record (an
// agent registering again keeps its registered_at). It reports whether the
// agent is new to the pool. Assignments the new record no longer suits are
// returned to the queue by the next scheduling round.
//
// One agent, one id: when the id's record is held by an agent that live
// (PoolLive's verdict; nil: nobody) says is alive, and that record names
// another host or another worktree than p, the id is in use by another
// agent and Register refuses (CodeConflict, IDInUse, naming where the
// holder runs). The same host and worktree registering again is the same
// agent coming back. A side that names no host (or no worktree) is not
// told apart by it.
func (tx *Txn) Register(p PoolAgent, live map[string]bool) (PoolAgent, bool, error) {
	if err := ValidActingAgent(p.ID); err != nil {
		return PoolAgent{}, false, err
	}
	if err := CheckPathText("worktree", p.Worktree); err != nil {
		return PoolAgent{}, false, err
	}
	p.Worktree, p.Branch, p.Host = OneLine(p.Worktree), OneLine(p.Branch), OneLine(p.Host)
	if err := p.Check(); err != nil {
		return PoolAgent{}, false, err
	}
	if old := tx.Member(p.ID); old != nil && live[p.ID] && !old.samePlace(&p) {
		return PoolAgent{}, false, Errorf(CodeConflict, "%s: agent id %s is in use by a live agent on host %s, worktree %s",
			IDInUse, p.ID, orUnknown(old.Host), orUnknown(old.Worktree)).WithHolder(p.ID).
			WithHint("choose another id (--agent or COORD_AGENT); if that agent is you from another checkout, 'coord agents deregister' there first")
	}
	p.Dirty = true
	detail := p.describe()
	if old := tx.Member(p.ID); old != nil {
		p.RegisteredAt, p.Raw = old.RegisteredAt, old.Raw
		*old = p
		tx.PoolDirty = true
		tx.Log(p.ID, "registered again (%s)", detail)
		return p, false, nil
	}
	p.RegisteredAt, p.Raw = FormatTime(tx.Now), nil
	tx.Pool = append(tx.Pool, p)
	tx.PoolDirty = true
	tx.Log(p.ID, "registered (%s)", detail)
	return p, true, nil
}

// WorktreeOf is the pool member other than agent that records the
// worktree at path as its own (on host, when both name one), or "".
// A linked worktree is one agent's: an agent registering from inside
// another's would take it over (and a forced worktree remove of the
// newcomer would then remove the other's work).
func (tx *Txn) WorktreeOf(path, agent, host string) string {
	for i := range tx.Pool {
		if o := &tx.Pool[i]; o.ID != agent && o.Worktree == path && (o.Host == "" || host == "" || o.Host == host) {
			return o.ID
		}
	}
	return ""
}

// samePlace reports whether q registers from where p did: the same host
// and the same worktree, a side that names none matching any.
func (p *PoolAgent) samePlace(q *PoolAgent) bool {
	same := func(a, b string) bool { return a == "" || b == "" || a == b }
	return same(p.Host, q.Host) && same(p.Worktree, q.Worktree)
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

func (p *PoolAgent) describe() string {
	parts := []string{"role " + string(p.Role)}
	if len(p.Caps) > 0 {
		parts = append(parts, "capabilities "+strings.Join(p.Caps, ","))
	}
	if p.Skill.Op != "" {
		parts = append(parts, "skill "+p.Skill.String())
	}
	if p.Worktree != "" {
		parts = append(parts, "worktree "+p.Worktree)
	}
	if p.Branch != "" {
		parts = append(parts, "branch "+p.Branch)
	}
	if p.Host != "" {
		parts = append(parts, "host "+p.Host)
	}
	return strings.Join(parts, "; ")
}

// Deregister removes agent from the pool and hands back every assignment
// it had not started (its unclaimed tasks and the reviews routed to it go
// back to the queue); tasks it claimed stay its own until it releases them
// or goes stale. It returns the ids handed back. An agent not in the pool
// is CodeConflict.
func (tx *Txn) Deregister(agent string) ([]string, error) {
	if err := ValidActingAgent(agent); err != nil {
		return nil, err
	}
	if tx.Member(agent) == nil {
		return nil, Errorf(CodeConflict, "agent %s is not registered", agent).
			WithHint("'coord agents' lists the pool; 'coord agents register' joins it")
	}
	tx.dropMember(agent)
	tx.Log(agent, "deregistered")
	var back []string
	for _, t := range tx.Tasks {
		if t.AssignedTo == agent {
			tx.unassign(t, agent, "deregistered")
			back = append(back, t.ID)
		}
	}
	return back, nil
}

func (tx *Txn) dropMember(id string) {
	for i := range tx.Pool {
		if tx.Pool[i].ID == id {
			tx.Pool = append(tx.Pool[:i:i], tx.Pool[i+1:]...)
			tx.PoolDirty = true
			return
		}
	}
}

// PoolLive says which registered agents are alive at now: last seen (their
// heartbeat, from seen; without one, their registration, read by
// SignFromFile) within timeout, judged as Liveness and the stale sweep
// judge it.
func (tx *Txn) PoolLive(seen map[string]time.Time, now time.Time, timeout time.Duration) map[string]bool {
	live := make(map[string]bool, len(tx.Pool))
	for i := range tx.Pool {
		p := &tx.Pool[i]
		at, ok := seen[p.ID]
		if !ok {
			if at, ok = SignFromFile(p.RegisteredAt, now, timeout); !ok {
				continue // no sign (or one from far in the future): not live
			}
		}
		live[p.ID] = Age(at, now) <= timeout
	}
	return live
}

// PoolIDs returns the ids of the registered agents, in pool order.
func (tx *Txn) PoolIDs() []string {
	out := make([]string, len(tx.Pool))
	for i := range tx.Pool {
		out[i] = tx.Pool[i].ID
	}
	return out
}
