package app_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/coord/plan"
	"github.com/rotd/coordination/registry/backend/backendtest"
)

// history is an app.History over commits in memory, counting loads.
type history struct {
	commits []plan.Commit
	tree    []string
	loads   atomic.Int32
}

func (h *history) Load(context.Context) (app.HistoryData, error) {
	h.loads.Add(1)
	return app.HistoryData{Head: "h", Commits: h.commits, Tree: h.tree, Read: len(h.commits)}, nil
}

// printerHistory: docs commits touch docs/, printer commits printer.go.
func printerHistory() *history {
	h := &history{tree: []string{"docs/usage.md", "printer.go", "search.go"}}
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, c := range []struct{ subject, path string }{
		{"docs: explain --wrap", "docs/usage.md"},
		{"printer: fix the column width", "printer.go"},
		{"search: skip binary files", "search.go"},
		{"printer: wrap long lines", "printer.go"},
		{"docs: fix a typo", "docs/usage.md"},
		{"printer: colour the matches", "printer.go"},
	} {
		h.commits = append(h.commits, plan.Commit{Hash: fmt.Sprint(i), Time: t0.Add(time.Duration(i) * time.Hour), Subject: c.subject,
			Changes: []plan.Change{{Status: 'M', Path: c.path}}})
	}
	return h
}

// TestPlanRecordsAndSeedPlans: Plan records each unclaimed task's
// predicted paths (why included); seed-tasks plans its batch unless
// "plan": "manual"; without a history nothing is predicted.
func TestPlanRecordsAndSeedPlans(t *testing.T) {
	ctx := context.Background()
	h := printerHistory()
	p := backendtest.NewProject(t, backendtest.Options{History: h, Tasks: []*coord.Task{
		{ID: "p1", Title: "printer: trim trailing spaces"}, {ID: "s1", Title: "search: follow symbolic links"}}})
	ls := func() map[string]*coord.Task {
		tasks, err := p.Service.Tasks(ctx, app.ListRequest{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*coord.Task{}
		for _, x := range tasks {
			out[x.ID] = x
		}
		return out
	}
	if got := ls()["p1"].PredictedFiles; !slices.Equal(got, []string{"printer.go"}) {
		t.Fatalf("seeded p1 predicted %v, want printer.go (seed plans its batch)", got)
	}
	res, err := p.Service.Plan(ctx, app.PlanRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Predictions) != 2 || res.Recorded != 0 || res.Commits != 6 {
		t.Fatalf("plan again: %+v", res)
	}
	for _, pr := range res.Predictions {
		if pr.Task == "s1" && (len(pr.Paths) == 0 || pr.Paths[0].Path != "search.go" || len(pr.Paths[0].Why) == 0) {
			t.Fatalf("s1: %+v", pr)
		}
	}

	manual := backendtest.NewProject(t, backendtest.Options{History: h, Config: `{"plan":"manual"}`,
		Tasks: []*coord.Task{{ID: "p1", Title: "printer: trim trailing spaces"}}})
	tasks, _ := manual.Service.Tasks(ctx, app.ListRequest{})
	if len(tasks[0].PredictedFiles) != 0 {
		t.Fatalf(`"plan": "manual" planned the seed: %v`, tasks[0].PredictedFiles)
	}

	none := backendtest.NewProject(t, backendtest.Options{Tasks: []*coord.Task{{ID: "p1", Title: "printer: x"}}})
	if res, err := none.Service.Plan(ctx, app.PlanRequest{}); err != nil || !res.NoHistory || len(res.Predictions) != 0 {
		t.Fatalf("without history: %+v, %v", res, err)
	}
	if _, err := p.Service.Plan(ctx, app.PlanRequest{Tasks: []string{"nosuch"}}); coord.CodeOf(err) != coord.CodeConflict {
		t.Fatalf("unknown task: %v", err)
	}
}

// TestReplan: Replan reads no history until ReplanAfter tasks have
// landed since the last plan, plans the unclaimed tasks then, and not
// again for the same landings.
func TestReplan(t *testing.T) {
	ctx := context.Background()
	h := printerHistory()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tasks := []*coord.Task{{ID: "p0", Title: "printer: trim trailing spaces"}}
	for i := 1; i <= app.ReplanAfter; i++ {
		tasks = append(tasks, &coord.Task{ID: fmt.Sprint("d", i), Title: fmt.Sprint("docs: part ", i)})
	}
	p := backendtest.NewProject(t, backendtest.Options{History: h, Clock: func() time.Time { return now }, Tasks: tasks})
	replan := func() (bool, app.PlanResult) {
		t.Helper()
		loads := h.loads.Load()
		did, res, err := p.Service.Replan(ctx)
		if err != nil || did != (h.loads.Load() != loads) {
			t.Fatalf("replanned %v, history read %d times, %v", did, h.loads.Load()-loads, err)
		}
		return did, res
	}
	if did, _ := replan(); did {
		t.Fatal("nothing landed, yet replanned")
	}
	// The docs tasks are claimed, finished and land, one a minute.
	for i := 1; i <= app.ReplanAfter; i++ {
		now = now.Add(time.Minute)
		id := fmt.Sprint("d", i)
		if c, err := p.Service.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: "a"}, TaskID: id}); err != nil || c.Task == nil {
			t.Fatal(err)
		}
		err := p.Backend.Tasks().Update(ctx, func(tx *coord.Txn) error {
			x := tx.Task(id)
			x.Status, x.Head, x.Dirty = coord.Done, "abcd1234", true
			if !tx.Landed(id, "abcd1234", "abcd1234", "main") {
				t.Fatal("not landed")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		did, res := replan()
		if did != (i == app.ReplanAfter) {
			t.Fatalf("after %d landings: replanned %v", i, did)
		}
		if did && (len(res.Predictions) != 1 || res.Predictions[0].Task != "p0") {
			t.Fatalf("replanned %+v, want the one unclaimed task", res.Predictions)
		}
	}
	// The same landings again (the predictions unchanged, so their
	// predicted_at too): nothing read.
	now = now.Add(time.Minute)
	if did, res := replan(); did {
		t.Fatalf("replanned twice for the same landings: %+v", res)
	}
}

// failing is a history that cannot be read.
type failing struct{}

func (failing) Load(context.Context) (app.HistoryData, error) {
	return app.HistoryData{}, coord.Errorf(coord.CodeIO, "git log in /x: no answer within 60s")
}

// TestSeedSurvivesPlanning: a batch is seeded whatever happens to its
// planning; a failure is a note naming the fix.
func TestSeedSurvivesPlanning(t *testing.T) {
	ctx := context.Background()
	p := backendtest.NewProject(t, backendtest.Options{History: failing{}})
	res, err := p.Service.Seed(ctx, app.SeedRequest{Name: "b", Batch: []coord.SeedLine{{Line: 1, Task: &coord.Task{ID: "a", Title: "printer: x", Status: coord.Unclaimed}}}})
	if err != nil || res.Count != 1 || res.Planned != 0 || res.PlanNote != "planning the batch failed: git log in /x: no answer within 60s (run 'coord plan')" {
		t.Fatalf("seed: %+v, %v", res, err)
	}
	if tasks, _ := p.Service.Tasks(ctx, app.ListRequest{}); len(tasks) != 1 {
		t.Fatalf("the batch was lost: %d tasks", len(tasks))
	}
}

// contentsHistory is a history that also answers app.Contents, from
// files in memory, recording the names asked about; fail makes it fail.
type contentsHistory struct {
	*history
	files map[string][]string // path -> names it holds
	asked []string
	fail  bool
}

func (c *contentsHistory) Holders(_ context.Context, names []string) (map[string][]string, error) {
	c.asked = append(c.asked, names...)
	if c.fail {
		return nil, fmt.Errorf("git grep in /x: no answer within 10s")
	}
	out := map[string][]string{}
	for p, held := range c.files {
		for _, n := range names {
			if slices.Contains(held, n) {
				out[p] = append(out[p], n)
			}
		}
	}
	return out, nil
}

// TestPlanContents: Plan asks a history that looks into files about the
// identifiers the tasks name, and a task naming parseWidth is predicted
// to touch the file holding it although no commit mentions it; when the
// look fails, the plan goes on without contents and says so.
func TestPlanContents(t *testing.T) {
	ctx := context.Background()
	h := &contentsHistory{history: printerHistory(), files: map[string][]string{"layout.go": {"parseWidth"}}}
	h.tree = append(h.tree, "layout.go")
	p := backendtest.NewProject(t, backendtest.Options{History: h, Tasks: []*coord.Task{
		{ID: "w1", Title: "parseWidth() returns 0 for an empty spec"}}})
	res, err := p.Service.Plan(ctx, app.PlanRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(h.asked, "parseWidth") || res.Named != 1 || res.Holding != 1 {
		t.Fatalf("asked %q; named %d, holding %d", h.asked, res.Named, res.Holding)
	}
	pr := res.Predictions[0]
	if len(pr.Paths) == 0 || pr.Paths[0].Path != "layout.go" || pr.Paths[0].Why[0] != "it holds parseWidth, which the text names" {
		t.Fatalf("w1: %+v", pr.Paths)
	}
	h.fail = true
	if res, err = p.Service.Plan(ctx, app.PlanRequest{}); err != nil || !strings.Contains(res.Warning, "identifiers not looked up in the files: git grep") {
		t.Fatalf("a failed look: %v, warning %q", err, res.Warning)
	}
	if len(res.Predictions) != 1 || slices.ContainsFunc(res.Predictions[0].Paths, func(x plan.Path) bool { return x.Path == "layout.go" }) {
		t.Fatalf("without contents: %+v", res.Predictions)
	}
}
