package coord

import (
	"sort"
	"time"
)

// BeatInfo is an agent's description kept with its heartbeat (ROTD's
// heartbeat.schema.json, plus what the agent registered).
type BeatInfo struct {
	AgentID      string   `json:"agent_id"`
	LastBeat     string   `json:"last_beat"`
	PID          int      `json:"pid"`
	Hostname     string   `json:"hostname,omitempty"`
	Capabilities []string `json:"capabilities,omitempty"`
	SkillLevel   string   `json:"skill_level,omitempty"`
	CurrentTask  *string  `json:"current_task"`
	Status       string   `json:"status"`
}

// Agent statuses kept in heartbeats.
const (
	AgentIdle    = "idle"
	AgentWorking = "working"
	AgentBlocked = "blocked"
)

// Beat is one agent's heartbeat as a store read it: At is its last sign of
// life on the store's clock; Info may be nil (none written, or unreadable).
type Beat struct {
	Agent string
	At    time.Time
	Info  *BeatInfo
}

// Age is how long ago an instant was, seen from now; the future counts as
// now (age 0).
func Age(at, now time.Time) time.Duration {
	if at.After(now) {
		return 0
	}
	return now.Sub(at)
}

// AgentView is one agent as people and scripts see it: its last beat,
// whether it counts as alive, and the tasks it holds; for a registered
// agent (Role set) also its record and its inbox.
type AgentView struct {
	Agent    string   `json:"agent_id"`
	LastBeat *string  `json:"last_beat"`
	AgeS     *int64   `json:"age_seconds"`
	Alive    bool     `json:"alive"`
	Status   string   `json:"status,omitempty"`
	Tasks    []string `json:"tasks"`

	Role         string   `json:"role,omitempty"` // "" : not registered
	Capabilities []string `json:"capabilities,omitempty"`
	SkillLevel   string   `json:"skill_level,omitempty"`
	Host         string   `json:"host,omitempty"`
	Worktree     string   `json:"worktree,omitempty"`
	Branch       string   `json:"branch,omitempty"`
	RegisteredAt string   `json:"registered_at,omitempty"`
	// Inbox is what is assigned to the agent and not started, oldest
	// first (its inbox depth is its length); Reviewing the reviews it took.
	Inbox     []string `json:"inbox,omitempty"`
	Reviewing []string `json:"reviewing,omitempty"`
}

// Liveness is the one view of who is alive: every agent with a heartbeat,
// then every registered agent and every agent holding a task without one.
// An agent is alive while its last sign of life (LastSignOfLife: the
// heartbeat, else the claim; for a registered agent without a heartbeat,
// its registration, as PoolLive judges it) is within timeout of now,
// exactly as the sweep and the scheduler judge it.
func (tx *Txn) Liveness(beats []Beat, now time.Time, timeout time.Duration) []AgentView {
	rows := map[string]*AgentView{}
	var order []string
	at := make(map[string]time.Time, len(beats))
	sort.Slice(beats, func(i, j int) bool { return beats[i].Agent < beats[j].Agent })
	for _, b := range beats {
		lb := FormatTime(b.At)
		age := int64(Age(b.At, now) / time.Second)
		r := &AgentView{Agent: b.Agent, LastBeat: &lb, AgeS: &age, Alive: Age(b.At, now) <= timeout, Tasks: []string{}}
		if b.Info != nil {
			r.Status = b.Info.Status
		}
		rows[b.Agent] = r
		order = append(order, b.Agent)
		at[b.Agent] = b.At
	}
	seen := make(map[string]time.Time, len(beats))
	for _, b := range beats {
		seen[b.Agent] = b.At
	}
	live := tx.PoolLive(seen, now, timeout)
	inboxes := tx.inboxes()
	for i := range tx.Pool {
		p := &tx.Pool[i]
		r := rows[p.ID]
		if r == nil {
			r = &AgentView{Agent: p.ID, Tasks: []string{}, Alive: live[p.ID]}
			rows[p.ID] = r
			order = append(order, p.ID)
		}
		r.Role, r.Capabilities, r.SkillLevel = string(p.Role), p.Caps, p.Skill.String()
		r.Host, r.Worktree, r.Branch, r.RegisteredAt = p.Host, p.Worktree, p.Branch, p.RegisteredAt
		for _, t := range inboxes[p.ID] {
			r.Inbox = append(r.Inbox, t.ID)
		}
	}
	for _, t := range tx.Tasks {
		if r := rows[t.AssignedTo]; r != nil && t.Status == Review && t.ReviewStartedAt != "" {
			r.Reviewing = append(r.Reviewing, t.ID)
		}
	}
	for _, t := range tx.Tasks {
		if !t.HoldsLock() {
			continue
		}
		r := rows[t.ClaimedBy]
		if r == nil {
			r = &AgentView{Agent: t.ClaimedBy, Tasks: []string{}}
			rows[t.ClaimedBy] = r
			order = append(order, t.ClaimedBy)
		}
		if r.LastBeat == nil { // no heartbeat: alive while one of its claims is
			if seen, ok := LastSignOfLife(t, at, now, timeout); ok && Age(seen, now) <= timeout {
				r.Alive = true
			}
		}
		r.Tasks = append(r.Tasks, t.ID)
	}
	out := make([]AgentView, 0, len(order))
	for _, a := range order {
		out = append(out, *rows[a])
	}
	return out
}
