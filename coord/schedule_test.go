package coord

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// member builds a pool record: role, then "caps=a,b" and "skill=<=x".
func member(id string, role Role, opts ...string) PoolAgent {
	p := PoolAgent{ID: id, Role: role, RegisteredAt: "2026-11-22T09:00:00Z"}
	for _, o := range opts {
		k, v, _ := strings.Cut(o, "=")
		switch k {
		case "caps":
			p.Caps = ParseCaps(v)
		case "skill":
			f, err := ParseAgentSkill(v)
			if err != nil {
				panic(err)
			}
			p.Skill = f
		}
	}
	return p
}

func allLive(tx *Txn) map[string]bool {
	live := map[string]bool{}
	for _, id := range tx.PoolIDs() {
		live[id] = true
	}
	return live
}

// assignments renders who each task is assigned to: "t1=a t2=b".
func assignments(tx *Txn) string {
	var out []string
	for _, t := range tx.Tasks {
		if t.AssignedTo != "" {
			out = append(out, t.ID+"="+t.AssignedTo)
		}
	}
	return strings.Join(out, " ")
}

func TestSchedule(t *testing.T) {
	impl := func(id string, opts ...string) PoolAgent { return member(id, Implementer, opts...) }
	cases := []struct {
		name  string
		tasks []*Task
		pool  []PoolAgent
		dead  []string // pool agents not live
		depth int
		want  string // assignments after the round
		moved string // "task:from>to" of work stealing
		back  string // tasks returned to the queue
		left  string
	}{
		{name: "capability",
			tasks: []*Task{{ID: "go1", Capability: "go"}, {ID: "ts1", Capability: "ts"}, {ID: "any"}},
			pool:  []PoolAgent{impl("a", "caps=ts"), impl("b", "caps=go")},
			depth: 2, want: "go1=b ts1=a any=a"},
		{name: "capability nobody has",
			tasks: []*Task{{ID: "rust", Capability: "rust"}},
			pool:  []PoolAgent{impl("a", "caps=go")}, want: ""},
		{name: "skill level",
			tasks: []*Task{{ID: "hard", SkillLevel: Expert}, {ID: "easy", SkillLevel: Entry}},
			pool:  []PoolAgent{impl("junior", "skill=intermediate"), impl("senior", "skill=expert")},
			want:  "hard=senior easy=junior"},
		{name: "skill level exact filter",
			tasks: []*Task{{ID: "easy", SkillLevel: Entry}},
			pool:  []PoolAgent{impl("only-experts", "skill==expert")}, want: ""},
		{name: "role: reviewers and planners get no work",
			tasks: []*Task{{ID: "w"}},
			pool:  []PoolAgent{member("r", Reviewer), member("p", Planner)}, want: ""},
		{name: "role: implementers get no reviews",
			tasks: []*Task{{ID: "rv", Status: Review, ClaimedBy: "x", Epoch: 1}},
			pool:  []PoolAgent{impl("a")}, want: ""},
		{name: "conflict group: one at a time",
			tasks: []*Task{{ID: "g1", ConflictGroup: "g"}, {ID: "g2", ConflictGroup: "g"}, {ID: "h1", ConflictGroup: "h"}},
			pool:  []PoolAgent{impl("a"), impl("b"), impl("c")}, want: "g1=a h1=b"},
		{name: "conflict group held by a claim",
			tasks: []*Task{{ID: "g1", ConflictGroup: "g", Status: Claimed, ClaimedBy: "x", Epoch: 1}, {ID: "g2", ConflictGroup: "g"}},
			pool:  []PoolAgent{impl("a")}, want: ""},
		{name: "conflict group held by an assignment",
			tasks: []*Task{{ID: "g1", ConflictGroup: "g", AssignedTo: "a", AssignedAt: "2026-11-22T09:30:00Z"}, {ID: "g2", ConflictGroup: "g"}},
			pool:  []PoolAgent{impl("a"), impl("b")}, depth: 2, want: "g1=a"},
		{name: "conflict group held by a blocked task",
			tasks: []*Task{{ID: "g1", ConflictGroup: "g", Status: Blocked, BlockedReason: "x"}, {ID: "g2", ConflictGroup: "g"}},
			pool:  []PoolAgent{impl("a")}, want: ""},
		{name: "files overlap",
			tasks: []*Task{{ID: "f1", Files: []string{"src/**"}}, {ID: "f2", Files: []string{"src/a/x.go"}}, {ID: "f3", Files: []string{"docs/*.md"}}},
			pool:  []PoolAgent{impl("a"), impl("b"), impl("c")}, want: "f1=a f3=b"},
		{name: "files overlap a claim",
			tasks: []*Task{{ID: "f1", Files: []string{"src/a/*.go"}, Status: Claimed, ClaimedBy: "x", Epoch: 1}, {ID: "f2", Files: []string{"src/a/x.go"}}},
			pool:  []PoolAgent{impl("a")}, want: ""},
		{name: "files overlap an assignment",
			tasks: []*Task{{ID: "f1", Files: []string{"src/**"}, AssignedTo: "a", AssignedAt: "2026-11-22T09:30:00Z"}, {ID: "f2", Files: []string{"src/a/x.go"}}},
			pool:  []PoolAgent{impl("a"), impl("b")}, want: "f1=a"},
		{name: "depth 1",
			tasks: []*Task{{ID: "1"}, {ID: "2"}, {ID: "3"}, {ID: "4"}},
			pool:  []PoolAgent{impl("a"), impl("b")}, depth: 1, want: "1=a 2=b"},
		{name: "depth 2",
			tasks: []*Task{{ID: "1"}, {ID: "2"}, {ID: "3"}, {ID: "4"}, {ID: "5"}},
			pool:  []PoolAgent{impl("a"), impl("b")}, depth: 2, want: "1=a 2=b 3=a 4=b"},
		{name: "depth counts what is already waiting",
			tasks: []*Task{{ID: "old", AssignedTo: "a", AssignedAt: "2026-11-22T09:30:00Z"}, {ID: "new"}},
			pool:  []PoolAgent{impl("a")}, depth: 1, want: "old=a"},
		{name: "held work is not waiting",
			tasks: []*Task{{ID: "held", Status: Claimed, ClaimedBy: "a", Epoch: 1}, {ID: "new"}},
			pool:  []PoolAgent{impl("a")}, depth: 1, want: "new=a"},
		{name: "least loaded first",
			tasks: []*Task{{ID: "held", Status: Claimed, ClaimedBy: "a", Epoch: 1}, {ID: "new"}},
			pool:  []PoolAgent{impl("a"), impl("b")}, want: "new=b"},
		{name: "priorities",
			tasks: []*Task{{ID: "low", Priority: Low}, {ID: "med"}, {ID: "urgent", Priority: Urgent}, {ID: "high", Priority: High}},
			pool:  []PoolAgent{impl("a"), impl("b")}, want: "urgent=a high=b"},
		{name: "priority within a conflict group",
			tasks: []*Task{{ID: "g-low", ConflictGroup: "g", Priority: Low}, {ID: "g-high", ConflictGroup: "g", Priority: High}},
			pool:  []PoolAgent{impl("a"), impl("b")}, want: "g-high=a"},
		{name: "dependencies",
			tasks: []*Task{{ID: "base"}, {ID: "top", Deps: []string{"base"}, Priority: Urgent}, {ID: "done", Status: Done}, {ID: "after", Deps: []string{"done"}}},
			pool:  []PoolAgent{impl("a"), impl("b"), impl("c")}, want: "base=a after=b"},
		{name: "review routing: never to its claimer",
			tasks: []*Task{{ID: "rv", Status: Review, ClaimedBy: "r1", Epoch: 1}},
			pool:  []PoolAgent{member("r1", Reviewer), member("r2", Reviewer)}, want: "rv=r2"},
		{name: "review routing: only the claimer reviews",
			tasks: []*Task{{ID: "rv", Status: Review, ClaimedBy: "r1", Epoch: 1}},
			pool:  []PoolAgent{member("r1", Reviewer)}, want: ""},
		{name: "review routing: capability and depth",
			tasks: []*Task{{ID: "rv1", Status: Review, ClaimedBy: "x", Capability: "go"}, {ID: "rv2", Status: Review, ClaimedBy: "x"}, {ID: "rv3", Status: Review, ClaimedBy: "x"}},
			pool:  []PoolAgent{member("ts", Reviewer, "caps=ts"), member("go", Reviewer, "caps=go")}, want: "rv1=go rv2=ts"},
		{name: "review routing: a reviewer registered without capabilities reviews any",
			tasks: []*Task{{ID: "rv1", Status: Review, ClaimedBy: "x", Capability: "go"}, {ID: "rv2", Status: Review, ClaimedBy: "x", Capability: "ts"}},
			pool:  []PoolAgent{impl("x", "caps=go,ts"), member("rita", Reviewer)}, depth: 2, want: "rv1=rita rv2=rita"},
		{name: "review routing: a reviewer without capabilities keeps its skill level",
			tasks: []*Task{{ID: "rv", Status: Review, ClaimedBy: "x", Capability: "go", SkillLevel: Expert}},
			pool:  []PoolAgent{member("rita", Reviewer, "skill=intermediate")}, want: ""},
		{name: "review routing: a routed review stays with a reviewer without capabilities",
			tasks: []*Task{{ID: "rv", Status: Review, ClaimedBy: "x", Capability: "go", AssignedTo: "rita", AssignedAt: "2026-11-22T09:30:00Z"}},
			pool:  []PoolAgent{member("rita", Reviewer)}, want: "rv=rita"},
		{name: "stealing: a reviewer without capabilities takes a review of any",
			tasks: []*Task{{ID: "rv1", Status: Review, ClaimedBy: "x", Capability: "go", AssignedTo: "r1", AssignedAt: "2026-11-22T09:30:00Z", ReviewStartedAt: "2026-11-22T09:31:00Z"},
				{ID: "rv2", Status: Review, ClaimedBy: "x", Capability: "go", AssignedTo: "r1", AssignedAt: "2026-11-22T09:32:00Z"}},
			pool: []PoolAgent{member("r1", Reviewer, "caps=go"), member("r2", Reviewer)}, depth: 2, want: "rv1=r1 rv2=r2", moved: "rv2:r1>r2"},
		{name: "review routing: a started review is held",
			tasks: []*Task{{ID: "rv1", Status: Review, ClaimedBy: "x", AssignedTo: "r1", AssignedAt: "2026-11-22T09:30:00Z", ReviewStartedAt: "2026-11-22T09:31:00Z"}, {ID: "rv2", Status: Review, ClaimedBy: "x"}},
			pool:  []PoolAgent{member("r1", Reviewer), member("r2", Reviewer)}, want: "rv1=r1 rv2=r2"},
		{name: "stealing: an idle agent takes from a busy one",
			tasks: []*Task{{ID: "held", Status: Claimed, ClaimedBy: "a", Epoch: 1}, {ID: "next", AssignedTo: "a", AssignedAt: "2026-11-22T09:30:00Z"}},
			pool:  []PoolAgent{impl("a"), impl("b")}, want: "next=b", moved: "next:a>b"},
		{name: "stealing: from the agent with most waiting, oldest first",
			tasks: []*Task{{ID: "n1", AssignedTo: "a", AssignedAt: "2026-11-22T09:31:00Z"}, {ID: "n2", AssignedTo: "a", AssignedAt: "2026-11-22T09:30:00Z"}},
			pool:  []PoolAgent{impl("a"), impl("b")}, depth: 2, want: "n1=a n2=b", moved: "n2:a>b"},
		{name: "stealing: not from an agent about to start its only task",
			tasks: []*Task{{ID: "next", AssignedTo: "a", AssignedAt: "2026-11-22T09:30:00Z"}},
			pool:  []PoolAgent{impl("a"), impl("b")}, want: "next=a"},
		{name: "stealing: only what the thief suits",
			tasks: []*Task{{ID: "held", Status: Claimed, ClaimedBy: "a", Epoch: 1}, {ID: "next", Capability: "go", AssignedTo: "a", AssignedAt: "2026-11-22T09:30:00Z"}},
			pool:  []PoolAgent{impl("a", "caps=go"), impl("b", "caps=ts")}, want: "next=a"},
		{name: "stealing: never a started review, never by its claimer",
			tasks: []*Task{{ID: "rv1", Status: Review, ClaimedBy: "x", AssignedTo: "r1", AssignedAt: "2026-11-22T09:30:00Z", ReviewStartedAt: "2026-11-22T09:31:00Z"},
				{ID: "rv2", Status: Review, ClaimedBy: "r2", AssignedTo: "r1", AssignedAt: "2026-11-22T09:32:00Z"},
				{ID: "rv3", Status: Review, ClaimedBy: "x", AssignedTo: "r1", AssignedAt: "2026-11-22T09:33:00Z"}},
			pool: []PoolAgent{member("r1", Reviewer), member("r2", Reviewer)}, depth: 3, want: "rv1=r1 rv2=r1 rv3=r2", moved: "rv3:r1>r2"},
		{name: "stale agent leaves, its unstarted work returns and is reassigned",
			tasks: []*Task{{ID: "held", Status: Claimed, ClaimedBy: "dead", Epoch: 1}, {ID: "w", AssignedTo: "dead", AssignedAt: "2026-11-22T09:30:00Z"},
				{ID: "rv", Status: Review, ClaimedBy: "x", AssignedTo: "rdead", AssignedAt: "2026-11-22T09:30:00Z", ReviewStartedAt: "2026-11-22T09:31:00Z"}},
			pool: []PoolAgent{impl("dead"), impl("b"), member("rdead", Reviewer), member("r", Reviewer)}, dead: []string{"dead", "rdead"},
			want: "w=b rv=r", back: "w rv", left: "dead rdead"},
		{name: "an assignee that no longer suits gives its task back",
			tasks: []*Task{{ID: "w", Capability: "go", AssignedTo: "a", AssignedAt: "2026-11-22T09:30:00Z"}, {ID: "rv", Status: Review, ClaimedBy: "a", AssignedTo: "a"}},
			pool:  []PoolAgent{impl("a", "caps=ts")}, want: "", back: "w rv"},
		{name: "an assignee not in the pool gives its task back",
			tasks: []*Task{{ID: "w", AssignedTo: "ghost", AssignedAt: "2026-11-22T09:30:00Z"}, {ID: "d", Status: Done, AssignedTo: "a"}},
			pool:  []PoolAgent{impl("a")}, want: "w=a", back: "w d"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tx := newTxn(c.tasks...)
			tx.Pool = c.pool
			live := allLive(tx)
			for _, d := range c.dead {
				delete(live, d)
			}
			r := tx.Schedule(live, c.depth)
			if got := assignments(tx); got != c.want {
				t.Errorf("assignments %q, want %q\nlog: %v", got, c.want, tx.Events)
			}
			var moved, back []string
			for _, m := range r.Moved {
				moved = append(moved, m.Task+":"+m.From+">"+m.Agent)
			}
			for _, b := range r.Returned {
				back = append(back, b.Task)
			}
			if got := strings.Join(moved, " "); got != c.moved {
				t.Errorf("moved %q, want %q", got, c.moved)
			}
			if got := strings.Join(back, " "); got != c.back {
				t.Errorf("returned %q, want %q", got, c.back)
			}
			if got := strings.Join(r.Left, " "); got != c.left {
				t.Errorf("left %q, want %q", got, c.left)
			}
			for _, id := range r.Left {
				if tx.Member(id) != nil || !tx.PoolDirty {
					t.Errorf("%s still in the pool", id)
				}
			}
			if held := tx.Task("held"); held != nil && (held.Status != Claimed || held.ClaimedBy == "") {
				t.Errorf("a claimed task changed: %+v (claims are the stale sweep's)", held)
			}
			// One more round on the result changes nothing: no task is
			// assigned twice, nothing moves back and forth.
			before := assignments(tx)
			if r2 := tx.Schedule(allLive(tx), c.depth); r2.Changed() || assignments(tx) != before {
				t.Errorf("a second round changed %+v: %q -> %q", r2, before, assignments(tx))
			}
		})
	}
}

// Every assignment a round makes is logged with the conflict group and
// files it occupies, one line each, under the coordinator.
func TestScheduleLogs(t *testing.T) {
	tx := newTxn(&Task{ID: "w", ConflictGroup: "g", Files: []string{"src/*.go", "go.mod"}}, &Task{ID: "plain"},
		&Task{ID: "rv", Status: Review, ClaimedBy: "a"}, &Task{ID: "gone", AssignedTo: "ghost"})
	tx.Pool = []PoolAgent{member("a", Implementer), member("b", Implementer), member("r", Reviewer)}
	tx.Schedule(allLive(tx), 1)
	var lines []string
	for _, e := range tx.Events {
		lines = append(lines, e.Agent+" "+e.Text)
	}
	want := []string{
		"coordinator returned task gone from ghost to the queue: its assignee is not registered",
		"coordinator routed task rv to r for review",
		"coordinator assigned task w to a (conflict group g; files src/*.go go.mod)",
		"coordinator assigned task plain to b",
	}
	if !reflect.DeepEqual(lines, want) {
		t.Fatalf("log\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// Pull claims respect assignments: a task assigned to another agent is
// not eligible (not by Best, not by name), and what assigned tasks will
// occupy is counted like what claimed tasks occupy.
func TestClaimRespectsAssignments(t *testing.T) {
	tx := newTxn(&Task{ID: "mine", AssignedTo: "a"}, &Task{ID: "theirs", AssignedTo: "b", Priority: Urgent},
		&Task{ID: "g2", ConflictGroup: "g"}, &Task{ID: "g1", ConflictGroup: "g", AssignedTo: "b"})
	if _, err := tx.Claim(Agent{ID: "a"}, ClaimOptions{TaskID: "theirs"}); CodeOf(err) != CodeConflict || !strings.Contains(err.Error(), "assigned to b") {
		t.Fatalf("claiming b's assignment: %v, want a conflict naming b", err)
	}
	if why := tx.Ineligible(tx.Task("g2"), Agent{ID: "a"}); !strings.Contains(why, "conflict group g is held by task g1") {
		t.Fatalf("g2: %q, want held by the assigned g1", why)
	}
	if best := tx.Best(Agent{ID: "c"}, false); best != nil {
		t.Fatalf("c may claim %s; everything is assigned or in conflict", best.ID)
	}
	got, err := tx.Claim(Agent{ID: "a"}, ClaimOptions{})
	if err != nil || got == nil || got.ID != "mine" {
		t.Fatalf("a's claim took %v, %v; want its own assignment", got, err)
	}
	if got.AssignedTo != "" || got.AssignedAt != "" || got.ClaimedBy != "a" {
		t.Fatalf("the claim did not consume the assignment: %+v", got)
	}
}

func TestTakeAssignment(t *testing.T) {
	tx := newTxn(
		&Task{ID: "late", AssignedTo: "a", AssignedAt: "2026-11-22T09:40:00Z"},
		&Task{ID: "early", AssignedTo: "a", AssignedAt: "2026-11-22T09:30:00Z", ConflictGroup: "g"},
		&Task{ID: "other", AssignedTo: "b", AssignedAt: "2026-11-22T09:00:00Z"},
		&Task{ID: "rv", Status: Review, ClaimedBy: "x", AssignedTo: "r", AssignedAt: "2026-11-22T09:00:00Z"},
	)
	tx.Pool = []PoolAgent{member("a", Implementer), member("r", Reviewer)}
	if _, err := tx.TakeAssignment("b"); CodeOf(err) != CodeConflict || !strings.Contains(err.Error(), "not registered") {
		t.Fatalf("unregistered b: %v", err)
	}
	got, err := tx.TakeAssignment("a")
	if err != nil || got == nil || got.ID != "early" || got.Status != Claimed || got.ClaimedBy != "a" || got.AssignedTo != "" || got.Epoch != 1 {
		t.Fatalf("first take: %+v, %v; want early claimed with epoch 1, assignment consumed", got, err)
	}
	// A conflict that appeared since the assignment sends it back.
	tx.Task("late").ConflictGroup = "g"
	got, err = tx.TakeAssignment("a")
	if err != nil || got != nil {
		t.Fatalf("second take: %+v, %v; want nothing", got, err)
	}
	if l := tx.Task("late"); l.AssignedTo != "" || l.Status != Unclaimed {
		t.Fatalf("unclaimable assignment kept: %+v", l)
	}
	// A reviewer takes its review: still in review, marked started.
	got, err = tx.TakeAssignment("r")
	if err != nil || got == nil || got.ID != "rv" || got.Status != Review || got.ReviewStartedAt == "" || got.AssignedTo != "r" {
		t.Fatalf("review take: %+v, %v", got, err)
	}
	if got, _ := tx.TakeAssignment("r"); got != nil {
		t.Fatalf("a started review was taken twice: %s", got.ID)
	}
	// Rejected work the agent holds comes first.
	tx.Task("early").Status, tx.Task("early").CompletedAt = Review, "x"
	tx.Task("early").AssignedTo = "r"
	if _, err := tx.Reject("r", "early", "tests missing", DefaultMaxRejections); err != nil {
		t.Fatal(err)
	}
	if e := tx.Task("early"); e.AssignedTo != "" || e.ClaimedBy != "a" || e.Status != Claimed {
		t.Fatalf("reject kept the review assignment: %+v", e)
	}
	if got, err := tx.TakeAssignment("a"); err != nil || got == nil || got.ID != "early" {
		t.Fatalf("rejected work: %v, %v", got, err)
	}
}

func TestApproveEndsTheReviewAssignment(t *testing.T) {
	tx := newTxn(&Task{ID: "rv", Status: Review, ClaimedBy: "a", AssignedTo: "r", AssignedAt: "x", ReviewStartedAt: "y"})
	if _, err := tx.Approve("a", "rv"); CodeOf(err) != CodeConflict {
		t.Fatalf("the claimer approved: %v", err)
	}
	got, err := tx.Approve("someone-else", "rv")
	if err != nil || got.Status != Done || got.AssignedTo != "" || got.AssignedAt != "" || got.ReviewStartedAt != "" {
		t.Fatalf("approve: %+v, %v", got, err)
	}
}

func TestRegisterDeregister(t *testing.T) {
	tx := newTxn(&Task{ID: "w", AssignedTo: "a"}, &Task{ID: "rv", Status: Review, ClaimedBy: "x", AssignedTo: "a", ReviewStartedAt: "z"},
		&Task{ID: "held", Status: Claimed, ClaimedBy: "a", Epoch: 1})
	p, isNew, err := tx.Register(member("a", Implementer, "caps=go"), nil)
	if err != nil || !isNew || p.RegisteredAt != "2026-11-22T10:00:00Z" || !tx.PoolDirty {
		t.Fatalf("register: %+v, %v, %v", p, isNew, err)
	}
	tx.Now = tx.Now.Add(time.Hour)
	// a worktree path holding a control character is refused, never
	// recorded as something else
	if _, _, err := tx.Register(PoolAgent{ID: "a", Role: Reviewer, Worktree: "/w\n/x"}, nil); CodeOf(err) != CodeUsage || tx.Pool[0].Role != Implementer {
		t.Fatalf("re-register from a worktree path with a newline: %v, pool %+v", err, tx.Pool)
	}
	p, isNew, err = tx.Register(PoolAgent{ID: "a", Role: Reviewer, Worktree: "/w /x"}, nil)
	if err != nil || isNew || p.RegisteredAt != "2026-11-22T10:00:00Z" || len(tx.Pool) != 1 || tx.Pool[0].Role != Reviewer || p.Worktree != "/w /x" {
		t.Fatalf("re-register: %+v, new %v, %v, pool %+v", p, isNew, err, tx.Pool)
	}
	for _, bad := range []PoolAgent{{ID: "coordinator", Role: Implementer}, {ID: "a.b", Role: Implementer}, {ID: "b", Role: "boss"}, {ID: "b", Role: Planner, Caps: []string{"a,b"}}} {
		if _, _, err := tx.Register(bad, nil); CodeOf(err) != CodeUsage {
			t.Errorf("register %+v: %v, want usage", bad, err)
		}
	}
	back, err := tx.Deregister("a")
	if err != nil || strings.Join(back, " ") != "w rv" || tx.Member("a") != nil {
		t.Fatalf("deregister: %v, %v", back, err)
	}
	if h := tx.Task("held"); h.ClaimedBy != "a" || h.Status != Claimed {
		t.Fatalf("deregister dropped a claim: %+v", h)
	}
	if rv := tx.Task("rv"); rv.AssignedTo != "" || rv.ReviewStartedAt != "" {
		t.Fatalf("review kept: %+v", rv)
	}
	if _, err := tx.Deregister("a"); CodeOf(err) != CodeConflict {
		t.Fatalf("second deregister: %v", err)
	}
}

func TestParseAgentSkill(t *testing.T) {
	for in, want := range map[string]string{"": "", "expert": "<=expert", " entry ": "<=entry", "=expert": "=expert", ">=intermediate": ">=intermediate", "<expert": "<expert"} {
		f, err := ParseAgentSkill(in)
		if err != nil || f.String() != want {
			t.Errorf("ParseAgentSkill(%q) = %q, %v; want %q", in, f.String(), err, want)
		}
	}
	if _, err := ParseAgentSkill("guru"); CodeOf(err) != CodeUsage {
		t.Fatalf("guru: %v", err)
	}
	for in, want := range map[string]Role{"": Implementer, "reviewer": Reviewer, "planner": Planner} {
		if r, err := ParseRole(in); err != nil || r != want {
			t.Errorf("ParseRole(%q) = %q, %v", in, r, err)
		}
	}
	if _, err := ParseRole("Reviewer"); CodeOf(err) != CodeUsage {
		t.Fatal("roles are case-sensitive")
	}
}

func TestPoolLive(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	tx := newTxn()
	tx.Pool = []PoolAgent{member("beating", Implementer), member("silent", Implementer), member("fresh", Implementer), member("future", Implementer)}
	tx.Pool[2].RegisteredAt = "2026-11-22T09:59:00Z" // no heartbeat: registration counts
	live := tx.PoolLive(map[string]time.Time{"beating": now.Add(-time.Minute), "silent": now.Add(-time.Hour), "future": now.Add(time.Hour)}, now, 15*time.Minute)
	want := map[string]bool{"beating": true, "silent": false, "fresh": true, "future": true}
	if !reflect.DeepEqual(live, want) {
		t.Fatalf("live %v, want %v", live, want)
	}
}

// Liveness shows registered agents with their record and inbox, whether
// or not they beat.
func TestLivenessShowsThePool(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	tx := newTxn(&Task{ID: "w2", AssignedTo: "a", AssignedAt: "2026-11-22T09:50:00Z"}, &Task{ID: "w1", AssignedTo: "a", AssignedAt: "2026-11-22T09:40:00Z"},
		&Task{ID: "rv", Status: Review, ClaimedBy: "x", AssignedTo: "r", ReviewStartedAt: "y"})
	tx.Pool = []PoolAgent{member("a", Implementer, "caps=go"), member("r", Reviewer)}
	tx.Pool[0].Worktree, tx.Pool[0].Branch = "/src/wt-a", "wt-a"
	rows := tx.Liveness([]Beat{{Agent: "a", At: now}}, now, 15*time.Minute)
	got := fmt.Sprintf("%+v", rows)
	for _, want := range []string{"Agent:a", "Role:implementer", "Worktree:/src/wt-a", "Branch:wt-a", "Inbox:[w1 w2]", "Agent:r", "Role:reviewer", "Reviewing:[rv]"} {
		if !strings.Contains(got, want) {
			t.Errorf("liveness lacks %s: %s", want, got)
		}
	}
	if len(rows) != 2 || !rows[0].Alive || rows[1].Alive {
		t.Fatalf("rows %+v: a beats, r registered an hour ago without a beat", rows)
	}
}

// byPriority is the order Best takes tasks in.
func TestByPriorityMatchesBest(t *testing.T) {
	var tasks []*Task
	prios := []Priority{Low, "", Urgent, High, Medium, Low, Urgent, High}
	for i, p := range prios {
		tasks = append(tasks, &Task{ID: fmt.Sprint(i), Priority: p})
	}
	tx := newTxn(tasks...)
	var byBest []string
	for {
		t := tx.Best(Agent{ID: "a"}, false)
		if t == nil {
			break
		}
		byBest = append(byBest, t.ID)
		t.Status = Done
	}
	var ordered []string
	for _, t := range byPriority(tasks) {
		ordered = append(ordered, t.ID)
	}
	if strings.Join(byBest, " ") != strings.Join(ordered, " ") {
		t.Fatalf("Best takes %v, byPriority orders %v", byBest, ordered)
	}
}

func TestGiveBack(t *testing.T) {
	tx := newTxn(&Task{ID: "rv", Status: Review, ClaimedBy: "a", AssignedTo: "r", AssignedAt: "x", ReviewStartedAt: "y"})
	if _, err := tx.GiveBack("other", "rv", "why"); CodeOf(err) != CodeLost {
		t.Fatalf("giving back another's review: %v", err)
	}
	got, err := tx.GiveBack("r", "rv", "interrupted by SIGINT\nx")
	if err != nil || got.AssignedTo != "" || got.ReviewStartedAt != "" || got.Status != Review {
		t.Fatalf("give back: %+v, %v", got, err)
	}
	if last := tx.Events[len(tx.Events)-1].Text; last != "returned task rv from r to the queue: interrupted by SIGINT x" {
		t.Fatalf("logged %q", last)
	}
}

// TestScheduleAlertsUnreviewable: a task in review that no registered
// reviewer may take is an alert on every round, logged by the first round
// that finds it only (the mark on the task keeps later rounds, and other
// schedulers, silent), and over once a reviewer may take it; a new
// episode is logged anew. Without a pool there are no alerts: reviews are
// done by hand.
func TestScheduleAlertsUnreviewable(t *testing.T) {
	tx := newTxn(&Task{ID: "rv", Status: Review, ClaimedBy: "a", Capability: "go", Epoch: 1}, &Task{ID: "rv-free", Status: Review, ClaimedBy: "a", Epoch: 2})
	if got := tx.Unreviewable(); got != nil {
		t.Fatalf("no pool: %+v, want no alert", got)
	}
	tx.Pool = []PoolAgent{member("a", Implementer, "caps=go"), member("sam", Reviewer, "caps=ts")}
	logged := func() int {
		n := 0
		for _, e := range tx.Events {
			if strings.Contains(e.Text, "waits in review") {
				n++
			}
		}
		return n
	}
	want := Unreviewable{Task: "rv", Why: "no registered reviewer may take it (sam needs capability go)", Since: "2026-11-22T10:00:00Z", New: true}
	r := tx.Schedule(allLive(tx), 2)
	if len(r.Unreviewable) != 1 || r.Unreviewable[0] != want || !r.Changed() || logged() != 1 {
		t.Fatalf("first round: %+v (changed %v), %d logged; want %+v logged once", r.Unreviewable, r.Changed(), logged(), want)
	}
	if a := r.Unreviewable[0].Alert(); a.Kind != "no_reviewer" || a.Task != "rv" || !strings.Contains(a.Text, want.Why) {
		t.Fatalf("alert: %+v", a)
	}
	e := tx.Events[len(tx.Events)-1]
	if e.Agent != CoordinatorID || e.Text != "alert: task rv waits in review and "+want.Why {
		t.Fatalf("log: %+v", e)
	}
	if le, ok := ParseLogLine(FormatLogLine(e)); !ok || le.EventType != "warning" || le.TaskID == nil || *le.TaskID != "rv" {
		t.Fatalf("log --json: %+v", le)
	}
	tx.Now = tx.Now.Add(time.Minute)
	for i := 0; i < 3; i++ {
		r = tx.Schedule(allLive(tx), 2)
		want.New = false
		if len(r.Unreviewable) != 1 || r.Unreviewable[0] != want || r.Changed() || r.Dirty() || logged() != 1 {
			t.Fatalf("round %d: %+v (changed %v dirty %v), %d logged; want the alert standing, logged once", i+2, r.Unreviewable, r.Changed(), r.Dirty(), logged())
		}
	}
	if got := tx.Unreviewable(); len(got) != 1 || got[0].Task != "rv" || got[0].Since != want.Since {
		t.Fatalf("Unreviewable outside a round: %+v", got)
	}
	// A reviewer that suits but has no room is no alert.
	tx.Pool = append(tx.Pool, member("rita", Reviewer, "caps=go"))
	tx.Task("rv-free").AssignedTo, tx.Task("rv-free").AssignedAt = "rita", "2026-11-22T09:00:00Z"
	r = tx.Schedule(allLive(tx), 1)
	if len(r.Unreviewable) != 0 || tx.Task("rv").ReviewAlertAt != "" || !r.Dirty() {
		t.Fatalf("a suiting reviewer without room: %+v, mark %q, dirty %v", r.Unreviewable, tx.Task("rv").ReviewAlertAt, r.Dirty())
	}
	// It leaves the pool: a new episode, logged again.
	tx.dropMember("rita")
	tx.Task("rv-free").Status = Done
	r = tx.Schedule(allLive(tx), 1)
	if len(r.Unreviewable) != 1 || !r.Unreviewable[0].New || logged() != 2 {
		t.Fatalf("a new episode: %+v, %d logged", r.Unreviewable, logged())
	}
	// No reviewer registered at all.
	tx.dropMember("sam")
	if got := tx.Unreviewable(); len(got) != 1 || got[0].Why != "no reviewer is registered" {
		t.Fatalf("no reviewer: %+v", got)
	}
	// A reviewer without capabilities takes it: routed, the alert is over.
	tx.Pool = append(tx.Pool, member("any", Reviewer))
	r = tx.Schedule(allLive(tx), 1)
	if len(r.Routed) != 1 || r.Routed[0] != (Assignment{Task: "rv", Agent: "any"}) || len(r.Unreviewable) != 0 || tx.Task("rv").ReviewAlertAt != "" {
		t.Fatalf("routed: %+v, alerts %+v, mark %q", r.Routed, r.Unreviewable, tx.Task("rv").ReviewAlertAt)
	}
}

// TestRegisterOneAgentOneID: an id a live agent registered from another
// host or worktree is refused (ID_IN_USE, naming where it runs); the same
// place registering again, a stale holder, or a side that names no host
// is accepted.
func TestRegisterOneAgentOneID(t *testing.T) {
	holder := PoolAgent{ID: "a", Role: Implementer, Host: "h1", Worktree: "/src/a", RegisteredAt: "2026-11-22T09:00:00Z"}
	for _, c := range []struct {
		name     string
		old      PoolAgent
		live     bool
		host, wt string
		refused  bool
	}{
		{"same place", holder, true, "h1", "/src/a", false},
		{"other host", holder, true, "h2", "/src/a", true},
		{"other worktree", holder, true, "h1", "/src/b", true},
		{"other host, holder stale", holder, false, "h2", "/src/b", false},
		{"old record without a host", PoolAgent{ID: "a", Role: Implementer, Worktree: "/src/a"}, true, "h2", "/src/a", false},
		{"old record without a host, other worktree", PoolAgent{ID: "a", Role: Implementer, Worktree: "/src/a"}, true, "h2", "/src/b", true},
		{"caller names no worktree", holder, true, "h1", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tx := newTxn()
			tx.Pool = []PoolAgent{c.old}
			got, isNew, err := tx.Register(PoolAgent{ID: "a", Role: Reviewer, Host: c.host, Worktree: c.wt}, map[string]bool{"a": c.live})
			if c.refused {
				if CodeOf(err) != CodeConflict || !strings.Contains(err.Error(), IDInUse) ||
					!strings.Contains(err.Error(), "host "+orUnknown(c.old.Host)+", worktree "+c.old.Worktree) {
					t.Fatalf("register: %v, want %s naming host and worktree", err, IDInUse)
				}
				if tx.PoolDirty || len(tx.Events) != 0 || tx.Pool[0].Role != Implementer {
					t.Fatalf("a refused register changed the pool: %+v, events %v", tx.Pool, tx.Events)
				}
				return
			}
			if err != nil || isNew || got.Role != Reviewer || tx.Pool[0].Host != c.host {
				t.Fatalf("register: %+v, new %v, %v", got, isNew, err)
			}
		})
	}
}
