package format

import (
	"fmt"

	"github.com/rotd/coordination/coord"
)

// The pool of registered agents is the registry's top-level "agents"
// member (docs/SCHEDULING.md), one object per agent:
//
//	{"id":"agent-a","role":"implementer","capabilities":["go"],
//	 "skill_level":"<=expert","worktree":"/src/wt-a","branch":"wt-a",
//	 "registered_at":"2026-11-22T10:00:00Z","host":"build-1"}
//
// Read strictly (id and role required, every known member typed, an id
// once); unknown members are kept, and an unchanged record is written
// back byte for byte.

// agentFields are the members of a pool record, in the order written.
var agentFields = []string{"id", "role", "capabilities", "skill_level", "worktree", "branch", "registered_at", "host"}

func agentFieldIndex(name string) int {
	for i, f := range agentFields {
		if f == name {
			return i
		}
	}
	return -1
}

// HasAgents reports whether the registry holds an "agents" member
// (possibly empty).
func (f *Registry) HasAgents() bool {
	for _, m := range f.top {
		if m.kind == agentsMember {
			return true
		}
	}
	return false
}

// parseAgents reads "agents": an array of pool records (null is an empty
// one).
func (f *Registry) parseAgents(s *scanner) error {
	if s.peek() == 'n' {
		return s.literal("null")
	}
	if s.peek() != '[' {
		return s.errf(`"agents" must be an array, found %s`, s.kindName())
	}
	seen := map[string]int{}
	return s.array(func() error {
		n := len(f.Agents) + 1
		if s.peek() != '{' {
			return s.errf("agent %d must be an object, found %s", n, s.kindName())
		}
		a := s.i
		var p coord.PoolAgent
		hasID, hasRole := false, false
		err := s.objectKnown(agentFields, agentFieldIndex, func(name string, k int) error {
			var err error
			var str string
			what := fmt.Sprintf("agent %d %q", n, name)
			switch k {
			case 0:
				hasID = true
				p.ID, err = s.strVal(what, false)
			case 1:
				hasRole = true
				str, err = s.strVal(what, false)
				p.Role = coord.Role(str)
			case 2:
				p.Caps, err = s.strsVal(what)
			case 3:
				if str, err = s.strVal(what, true); err == nil {
					if p.Skill, err = coord.ParseAgentSkill(str); err != nil {
						err = s.errf("agent %d: %v", n, err)
					}
				}
			case 4:
				p.Worktree, err = s.strVal(what, true)
			case 5:
				p.Branch, err = s.strVal(what, true)
			case 6:
				p.RegisteredAt, err = s.strVal(what, true)
			case 7:
				p.Host, err = s.strVal(what, true)
			default:
				if k := caseTwin(name, agentFields); k != "" {
					return s.errf("agent %d: %q is not a field; names are case-sensitive (did you mean %q?)", n, name, k)
				}
				err = s.value()
			}
			return err
		})
		if err != nil {
			return err
		}
		if !hasID || !hasRole {
			return s.errf(`agent %d needs "id" and "role"`, n)
		}
		if err := p.Check(); err != nil {
			return s.errf("agent %d: %v", n, err)
		}
		if prev, dup := seen[p.ID]; dup {
			return s.errf("agent id %q appears twice (agents %d and %d)", p.ID, prev, n)
		}
		seen[p.ID] = n
		p.Raw = s.data[a:s.i]
		f.Agents = append(f.Agents, p)
		return nil
	})
}

// appendPoolAgent writes p as it was read if it is unchanged, else anew,
// keeping its unknown members in place.
func appendPoolAgent(b []byte, p *coord.PoolAgent) []byte {
	if p.Raw != nil && !p.Dirty {
		return append(b, p.Raw...)
	}
	b = append(b, '{')
	n := 0
	written := map[string]bool{}
	field := func(name string) {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = appendString(b, name)
		b = append(b, ':')
		b = appendAgentField(b, p, name)
		written[name] = true
	}
	if p.Raw != nil {
		for _, m := range Members(p.Raw) {
			if agentFieldIndex(m.Name) >= 0 {
				field(m.Name)
				continue
			}
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = appendString(b, m.Name)
			b = append(b, ':')
			b = append(b, m.Raw...)
		}
	}
	for _, name := range agentFields {
		if !written[name] && (name != "host" || p.Host != "") { // host: only when known
			field(name)
		}
	}
	return append(b, '}')
}

func appendAgentField(b []byte, p *coord.PoolAgent, name string) []byte {
	nullable := func(s string) []byte {
		if s == "" {
			return append(b, "null"...)
		}
		return appendString(b, s)
	}
	switch name {
	case "id":
		return appendString(b, p.ID)
	case "role":
		return appendString(b, string(p.Role))
	case "capabilities":
		return appendStrings(b, p.Caps)
	case "skill_level":
		return nullable(p.Skill.String())
	case "worktree":
		return nullable(p.Worktree)
	case "branch":
		return nullable(p.Branch)
	case "registered_at":
		return nullable(p.RegisteredAt)
	case "host":
		return nullable(p.Host)
	}
	return append(b, "null"...)
}
