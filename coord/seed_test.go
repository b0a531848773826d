package coord

import (
	"slices"
	"strings"
	"testing"
)

func TestNearest(t *testing.T) {
	known := append(slices.Clone(SeedFields), OwnedFields...)
	for in, want := range map[string]string{
		"titel":        "title", // a swap of neighbours is one edit
		"tilte":        "title",
		"title":        "title",
		"Title":        "title",
		"desc":         "description",
		"descripton":   "description",
		"dependencies": "deps",
		"dep":          "deps",
		"prio":         "priority",
		"skill":        "skill_level",
		"file":         "files",
		"epoc":         "epoch",
		"claimedby":    "claimed_by",
		"":             "id",
	} {
		if got := Nearest(in, known); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", in, got, want)
		}
	}
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"", "ab", 2}, {"ab", "ba", 1}, {"abc", "ca", 3}, {"kitten", "sitting", 3}, {"titel", "title", 1}} {
		if got := editDistance(c.a, c.b); got != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}

// CheckSeed plans a batch against the registry: new tasks are added, a
// line identical to a registry task is skipped, another definition of an
// existing id is refused unless update, which may redefine only a task
// not yet claimed; state coord owns is refused whatever built the task.
func TestCheckSeed(t *testing.T) {
	registry := func() *Txn {
		return newTxn(
			&Task{ID: "a", Title: "A", Priority: Medium, Deps: []string{}},
			&Task{ID: "b", Title: "B", Deps: []string{"a"}, Status: Claimed, ClaimedBy: "x", Epoch: 3},
			&Task{ID: "c", Title: "C", Status: Done, Epoch: 2},
		)
	}
	line := func(n int, t *Task) SeedLine {
		if t.Status == "" {
			t.Status = Unclaimed
		}
		return SeedLine{Line: n, Task: t}
	}

	tx := registry()
	plan, err := tx.CheckSeed([]SeedLine{
		line(1, &Task{ID: "a", Title: "A"}), // priority "" is medium, no deps is []
		line(2, &Task{ID: "b", Title: "B", Deps: []string{"a"}}),
		line(3, &Task{ID: "c", Title: "C"}),
		line(4, &Task{ID: "d", Title: "D", Deps: []string{"b"}}),
	}, false)
	if err != nil || len(plan.Add) != 1 || plan.Add[0].ID != "d" || len(plan.Update) != 0 || strings.Join(plan.Unchanged, " ") != "a b c" {
		t.Fatalf("plan %+v, %v; want d added, a b c unchanged", plan, err)
	}

	for _, c := range []struct {
		name   string
		update bool
		line   *Task
		want   string
	}{
		{"redefined without update", false, &Task{ID: "a", Title: "A2", Priority: High}, `line 1: task "a" already exists in the registry with another definition (title, priority differ); seed-tasks --update`},
		{"claimed, with update", true, &Task{ID: "b", Title: "B2", Deps: []string{"a"}}, `line 1: task "b" is claimed by x: only a task not yet claimed can be redefined`},
		{"done, with update", true, &Task{ID: "c", Title: "C2"}, `task "c" is done: only a task not yet claimed`},
		{"cycle through an update", true, &Task{ID: "a", Title: "A", Deps: []string{"b"}}, "dependency cycle"},
		{"epoch", false, &Task{ID: "e", Epoch: 1 << 62}, `line 1: task "e": field "epoch" is coord's to set`},
		{"claimed_at", false, &Task{ID: "e", ClaimedAt: "2026-01-01T00:00:00Z"}, `field "claimed_at" is coord's to set`},
		{"reviewer", false, &Task{ID: "e", ReviewerID: "r"}, `field "reviewer_id" is coord's to set`},
		{"claimed", false, &Task{ID: "e", Status: Claimed}, "cannot start claimed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tx := registry()
			before := *tx.Task("a")
			_, err := tx.CheckSeed([]SeedLine{line(1, c.line)}, c.update)
			if CodeOf(err) != CodeUsage || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%v\nwant a usage error containing %s", err, c.want)
			}
			if a := tx.Task("a"); a.Title != before.Title || a.Dirty {
				t.Fatalf("a refused batch changed the registry: %+v", a)
			}
		})
	}

	tx = registry()
	plan, err = tx.CheckSeed([]SeedLine{line(1, &Task{ID: "a", Title: "A2", Description: "more", Priority: High, Files: []string{"x/**"}})}, true)
	if err != nil || len(plan.Update) != 1 || strings.Join(plan.Update[0].Changed, ",") != "title,description,priority,files" {
		t.Fatalf("plan %+v, %v; want a redefined (title, description, priority, files)", plan, err)
	}
	u := plan.Update[0]
	u.Task.Redefine(u.Def)
	if a := tx.Task("a"); a.Title != "A2" || a.Priority != High || a.Status != Unclaimed || !a.Dirty || !SameDefinition(a, u.Def) {
		t.Fatalf("redefined a: %+v", a)
	}
}
