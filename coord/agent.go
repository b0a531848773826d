package coord

import (
	"strings"
)

// SkillFilter restricts the skill level of tasks an agent takes:
// "<=intermediate", ">=entry", "=expert", "<expert", ">entry", or a bare
// level meaning "=". The zero filter accepts every level.
type SkillFilter struct {
	Op    string // "", "<=", ">=", "=", "<", ">"
	Level SkillLevel
}

// ParseSkillFilter parses a --skill-level argument.
func ParseSkillFilter(s string) (SkillFilter, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return SkillFilter{}, nil
	}
	op := "="
	for _, p := range []string{"<=", ">=", "=", "<", ">"} {
		if strings.HasPrefix(s, p) {
			op, s = p, strings.TrimSpace(s[len(p):])
			break
		}
	}
	lvl := SkillLevel(s)
	if lvl.Rank() <= 0 {
		return SkillFilter{}, Errorf(CodeUsage, "invalid skill level filter %q", clip(s)).WithHint("use e.g. '<=intermediate', '>=entry' or '=expert' with entry, intermediate or expert")
	}
	return SkillFilter{Op: op, Level: lvl}, nil
}

// Accepts reports whether a task of level l passes the filter. A task with
// no skill level passes every filter.
func (f SkillFilter) Accepts(l SkillLevel) bool {
	if f.Op == "" || l == "" {
		return true
	}
	a, b := l.Rank(), f.Level.Rank()
	switch f.Op {
	case "<=":
		return a <= b
	case ">=":
		return a >= b
	case "<":
		return a < b
	case ">":
		return a > b
	}
	return a == b
}

func (f SkillFilter) String() string {
	if f.Op == "" {
		return ""
	}
	return f.Op + string(f.Level)
}

// Agent is who asks for work: its id, its capabilities and its skill filter.
type Agent struct {
	ID    string
	Caps  []string
	Skill SkillFilter
}

// ParseCaps splits "a,b, c" into capabilities, dropping empties.
func ParseCaps(s string) []string {
	var out []string
	for _, c := range strings.Split(s, ",") {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// HasCap reports whether the agent can do work needing capability c. A task
// with no capability suits everyone; otherwise c must be in the agent's set.
func (a Agent) HasCap(c string) bool {
	if c == "" {
		return true
	}
	for _, x := range a.Caps {
		if x == c {
			return true
		}
	}
	return false
}

// ValidActingAgent checks the id under which an agent acts (claims, holds,
// releases, reviews, takes a lease, beats): a valid agent id that is not
// CoordinatorID in any case. The log shows coord's own sweeps and repairs
// under that name; an agent called so could pass its actions off as the
// sweeper's. Ids read back from files are checked with ValidAgentID only.
func ValidActingAgent(id string) error {
	if err := ValidAgentID(id); err != nil {
		return err
	}
	if strings.EqualFold(id, CoordinatorID) {
		return Errorf(CodeUsage, "agent id %q is reserved: the log names coord's own sweeps and repairs so", clip(id)).
			WithHint("choose another agent id")
	}
	return nil
}

// ValidActor checks who acts for a command that holds no task: an acting
// agent's id (ValidActingAgent), or a service on a host, "<name>@<host>"
// (ServiceID: the lander is lander@<host> unless told another id), which
// no agent can take as its own (an agent id holds no '@').
func ValidActor(id string) error {
	name, host, ok := strings.Cut(id, "@")
	if !ok {
		return ValidActingAgent(id)
	}
	if err := ValidActingAgent(name); err != nil {
		return err
	}
	if err := validID("host", host, true); err != nil {
		return Errorf(CodeUsage, "invalid actor %q: the host after '@' must be letters, digits, '.', '_' and '-'", clip(id))
	}
	return nil
}

// ServiceID is the actor a service runs as on host ("lander@build-1"):
// the host name cut to what ValidActor accepts (other characters become
// '-'; "host" when nothing is left).
func ServiceID(name, host string) string {
	b := []byte(host)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || i > 0 && (c == '.' || c == '_' || c == '-')) {
			b[i] = '-'
		}
	}
	h := strings.Trim(string(b), "-")
	if len(h) > maxIDLen {
		h = strings.TrimRight(h[:maxIDLen], ".-_")
	}
	if h == "" || ValidActor(name+"@"+h) != nil {
		h = "host"
	}
	return name + "@" + h
}
