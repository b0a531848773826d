package format

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rotd/coordination/coord"
)

// A registry from before push scheduling (no "agents", no assignment
// fields) parses and encodes byte for byte; the members appear only once
// there is something to write.
func TestPoolWrittenOnlyWhenNeeded(t *testing.T) {
	in := `{"version":1,"last_epoch":3,"tasks":[` + "\n" +
		`{"id":"a","status":"claimed","claimed_by":"x","epoch":3}` + ",\n" +
		`{"id":"b","title":"B","status":"unclaimed","claimed_by":null,"epoch":0}` + "\n" + `],"x":1}` + "\n"
	f, err := Parse("r", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if f.HasAgents() || len(f.Agents) != 0 {
		t.Fatalf("no member, yet HasAgents %v, %v", f.HasAgents(), f.Agents)
	}
	if out := string(mustEncode(t, f)); out != in {
		t.Fatalf("unchanged registry rewritten:\n%s\nwant\n%s", out, in)
	}
	// A task changed without an assignment gains no assignment field.
	f.Tasks[1].Title, f.Tasks[1].Dirty = "B2", true
	if out := string(mustEncode(t, f)); strings.Contains(out, "assigned") || strings.Contains(out, "review_started_at") || strings.Contains(out, `"agents"`) {
		t.Fatalf("assignment fields written for a registry without them:\n%s", out)
	}
	f.Agents = []coord.PoolAgent{{ID: "a", Role: coord.Implementer, Caps: []string{"go"}, RegisteredAt: "2026-11-22T10:00:00Z", Dirty: true}}
	f.Tasks[1].AssignedTo, f.Tasks[1].AssignedAt = "a", "2026-11-22T10:00:01Z"
	out := string(mustEncode(t, f))
	want := `],"agents":[` + "\n" +
		`{"id":"a","role":"implementer","capabilities":["go"],"skill_level":null,"worktree":null,"branch":null,"registered_at":"2026-11-22T10:00:00Z"}` +
		"\n" + `],"x":1}`
	if !strings.Contains(out, want) || !strings.Contains(out, `"reviewer_id":null,"assigned_to":"a","assigned_at":"2026-11-22T10:00:01Z"}`) {
		t.Fatalf("pool and assignment not written as expected:\n%s", out)
	}
	g, err := Parse("again", []byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if !g.HasAgents() || !samePool(g.Agents, f.Agents) || g.Tasks[1].AssignedTo != "a" || g.Tasks[1].AssignedAt != "2026-11-22T10:00:01Z" {
		t.Fatalf("read back %+v, task %+v", g.Agents, g.Tasks[1])
	}
	// Emptied, the member stays; a consumed assignment is written null.
	g.Agents = nil
	g.Tasks[1].AssignedTo, g.Tasks[1].AssignedAt, g.Tasks[1].Dirty = "", "", true
	out = string(mustEncode(t, g))
	if !strings.Contains(out, `],"agents":[],"x":1}`) || !strings.Contains(out, `"assigned_to":null,"assigned_at":null}`) {
		t.Fatalf("emptied:\n%s", out)
	}
}

// Pool records keep their place and, while unchanged, their bytes
// (unknown members included); a changed one is re-encoded keeping its
// unknown members.
func TestPoolKeptInPlace(t *testing.T) {
	in := `{"agents":[` + "\n" +
		`{"role":"reviewer","id":"r","x-team":{"n":[1]},"skill_level":"expert"},` + "\n" +
		`{"id":"a","role":"implementer","capabilities":["go","ts"],"skill_level":"=entry","worktree":"/src/wt a","branch":"wt-a","registered_at":"2026-11-22T10:00:00Z"}` + "\n" +
		`],"version":1,"last_epoch":0,"tasks":[]}` + "\n"
	f, err := Parse("r", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Agents) != 2 || f.Agents[0].Skill.String() != "<=expert" || f.Agents[1].Skill.String() != "=entry" ||
		f.Agents[1].Worktree != "/src/wt a" || !reflect.DeepEqual(f.Agents[1].Caps, []string{"go", "ts"}) {
		t.Fatalf("decoded %+v", f.Agents)
	}
	if out := string(mustEncode(t, f)); out != in {
		t.Fatalf("unchanged pool rewritten:\n%s\nwant\n%s", out, in)
	}
	f.Agents[0].Branch, f.Agents[0].Dirty = "main", true
	out := string(mustEncode(t, f))
	if !strings.HasPrefix(out, `{"agents":[`+"\n"+`{"role":"reviewer","id":"r","x-team":{"n":[1]},"skill_level":"<=expert","capabilities":[],"worktree":null,"branch":"main","registered_at":null},`) {
		t.Fatalf("changed record:\n%s", out)
	}
	if _, err := Parse("again", []byte(out)); err != nil {
		t.Fatal(err)
	}
}

func TestParsePoolRefuses(t *testing.T) {
	pool := func(s string) string { return `{"tasks":[],"agents":[` + s + `]}` }
	cases := []struct{ name, in, want string }{
		{"not an array", `{"tasks":[],"agents":{}}`, `"agents" must be an array`},
		{"not an object", pool(`"a"`), "agent 1 must be an object"},
		{"no id", pool(`{"role":"implementer"}`), `needs "id" and "role"`},
		{"no role", pool(`{"id":"a"}`), `needs "id" and "role"`},
		{"bad id", pool(`{"id":"../a","role":"implementer"}`), "invalid agent id"},
		{"bad role", pool(`{"id":"a","role":"boss"}`), "role"},
		{"bad skill", pool(`{"id":"a","role":"planner","skill_level":"guru"}`), "skill level"},
		{"capabilities not strings", pool(`{"id":"a","role":"planner","capabilities":[1]}`), "must be a string"},
		{"id twice", pool(`{"id":"a","role":"planner"},{"id":"a","role":"reviewer"}`), "appears twice"},
		{"case twin", pool(`{"id":"a","role":"planner","Role":"x"}`), "differ only in case"},
		{"case-variant field", pool(`{"id":"a","Role":"planner"}`), "names are case-sensitive"},
		{"case-variant member", `{"tasks":[],"Agents":[]}`, "names are case-sensitive"},
		{"bad assignee", `{"tasks":[{"id":"t","assigned_to":"a.b"}]}`, "assigned_to"},
		{"assignee a number", `{"tasks":[{"id":"t","assigned_to":7}]}`, "must be a string"},
		{"case-variant task field", `{"tasks":[{"id":"t","Assigned_to":"a"}]}`, "names are case-sensitive"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("reg.json", []byte(c.in))
			if err == nil || !strings.HasPrefix(err.Error(), "reg.json: ") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Parse(%s) = %v, want an error naming reg.json and %q", c.in, err, c.want)
			}
		})
	}
	if f, err := Parse("r", []byte(`{"tasks":[],"agents":null}`)); err != nil || !f.HasAgents() || len(f.Agents) != 0 {
		t.Fatalf("null agents: %v, %v", f, err)
	}
}

// A seed line may not bring an assignment: only a scheduler assigns. The
// coord dialect refuses the field; the domain refuses the state whatever
// parser built the task.
func TestSeedRefusesAssignments(t *testing.T) {
	if _, err := ParseSeedLine("seed:1", []byte(`{"id":"a","assigned_to":"b"}`)); coord.CodeOf(err) != coord.CodeUsage ||
		!strings.Contains(err.Error(), `seed:1: field "assigned_to" is coord's to set`) {
		t.Fatalf("seed line with assigned_to: %v", err)
	}
	task, err := ParseTaskLine("seed:1", []byte(`{"id":"a","assigned_to":"b"}`))
	if err != nil {
		t.Fatal(err)
	}
	tx := &coord.Txn{}
	if _, err := tx.CheckSeed([]coord.SeedLine{{Line: 1, Task: task}}, false); coord.CodeOf(err) != coord.CodeUsage || !strings.Contains(err.Error(), "cannot be assigned") {
		t.Fatalf("seeded assignment: %v", err)
	}
}

func samePool(a, b []coord.PoolAgent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		x.Raw, y.Raw, x.Dirty, y.Dirty = nil, nil, false, false
		if len(x.Caps) == 0 && len(y.Caps) == 0 {
			x.Caps, y.Caps = nil, nil
		}
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

// A record's host (the machine it registered from) is written when known
// and read back; a record without one gains no member.
func TestPoolHost(t *testing.T) {
	f, err := Parse("r", []byte(`{"version":1,"tasks":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	f.Agents = []coord.PoolAgent{{ID: "a", Role: coord.Implementer, Host: "build-1", Worktree: "/src/a", Dirty: true}}
	out := mustEncode(t, f)
	if !strings.Contains(string(out), `"registered_at":null,"host":"build-1"}`) {
		t.Fatalf("host not written:\n%s", out)
	}
	g, err := Parse("again", out)
	if err != nil || len(g.Agents) != 1 || g.Agents[0].Host != "build-1" {
		t.Fatalf("read back: %+v, %v", g.Agents, err)
	}
	if _, err := Parse("bad", []byte(`{"version":1,"tasks":[],"agents":[{"id":"a","role":"implementer","host":7}]}`)); err == nil {
		t.Fatal("a host that is not a string was read")
	}
}
