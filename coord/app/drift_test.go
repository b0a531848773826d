package app_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend/backendtest"
)

// The rules that once lived in several drifting copies, tested
// through the Service over the file engine: wait, claim and ready make
// one best-task choice; the sweep's dry run says what the sweep does;
// maintenance frees a dead agent's path locks.

// project is a fresh file project opened on a clock that moves when told.
type project struct {
	t   *testing.T
	s   *app.Service
	now time.Time
	ctx context.Context
}

// openProject opens a fresh project (backendtest) on p.now, with
// config.json's keys replaced by config (JSON members, "" for the
// template's) and the engine seen through wrap (nil: as it is).
func openProject(t *testing.T, config string, wrap func(coord.Backend) coord.Backend) *project {
	t.Helper()
	p := &project{t: t, now: time.Now().Truncate(time.Second), ctx: context.Background()}
	if config != "" {
		config = "{" + config + "}\n"
	}
	p.s = backendtest.NewProject(t, backendtest.Options{Config: config, Clock: func() time.Time { return p.now }, Wrap: wrap}).Service
	return p
}

func (p *project) seed(tasks ...*coord.Task) {
	p.t.Helper()
	batch := make([]coord.SeedLine, len(tasks))
	for i, task := range tasks {
		task.Status = coord.Unclaimed
		batch[i] = coord.SeedLine{Line: i + 1, Task: task}
	}
	if _, err := p.s.Seed(p.ctx, app.SeedRequest{Name: "test", Batch: batch}); err != nil {
		p.t.Fatal(err)
	}
}

func (p *project) claim(agent, id string) *coord.Task {
	p.t.Helper()
	res, err := p.s.Claim(p.ctx, app.ClaimRequest{Agent: coord.Agent{ID: agent}, TaskID: id})
	if err != nil || res.Task == nil {
		p.t.Fatalf("%s claims %s: %v", agent, id, err)
	}
	return res.Task
}

func (p *project) done(agent, id string) {
	p.t.Helper()
	task := p.claim(agent, id)
	if _, err := p.s.Release(p.ctx, app.TaskRef{Agent: coord.Agent{ID: agent}, TaskID: id, Epoch: task.Epoch}, ""); err != nil {
		p.t.Fatal(err)
	}
}

func (p *project) task(id string) *coord.Task {
	p.t.Helper()
	list, err := p.s.Tasks(p.ctx, app.ListRequest{})
	if err != nil {
		p.t.Fatal(err)
	}
	for _, task := range list {
		if task.ID == id {
			return task
		}
	}
	p.t.Fatalf("no task %s", id)
	return nil
}

// Wait reports the task claim then takes: the eligible task of highest
// priority, registry order breaking ties, whatever makes the others
// ineligible; ready lists it first.
func TestWaitPicksTheBestEligibleTask(t *testing.T) {
	expert, _ := coord.ParseSkillFilter("=expert")
	for _, c := range []struct {
		name  string
		tasks []*coord.Task
		done  []string // finished first
		held  []string // claimed by another agent
		agent coord.Agent
		want  string
	}{
		{name: "priority over registry order",
			tasks: []*coord.Task{{ID: "low", Priority: coord.Low}, {ID: "med"}, {ID: "high", Priority: coord.High}, {ID: "high2", Priority: coord.High}},
			want:  "high"},
		{name: "urgent waiting for a dependency",
			tasks: []*coord.Task{{ID: "dep"}, {ID: "urgent", Priority: coord.Urgent, Deps: []string{"dep"}}, {ID: "high", Priority: coord.High}},
			want:  "high"},
		{name: "urgent whose dependency is done",
			tasks: []*coord.Task{{ID: "dep", Priority: coord.Low}, {ID: "high", Priority: coord.High}, {ID: "urgent", Priority: coord.Urgent, Deps: []string{"dep"}}},
			done:  []string{"dep"},
			want:  "urgent"},
		{name: "urgent in a held conflict group",
			tasks: []*coord.Task{{ID: "g1", ConflictGroup: "ui"}, {ID: "g2", Priority: coord.Urgent, ConflictGroup: "ui"}, {ID: "low", Priority: coord.Low}},
			held:  []string{"g1"},
			want:  "low"},
		{name: "urgent overlapping a held task's files",
			tasks: []*coord.Task{{ID: "a", Files: []string{"src/**"}}, {ID: "b", Priority: coord.Urgent, Files: []string{"src/x.go"}}, {ID: "c", Priority: coord.High, Files: []string{"docs/*"}}},
			held:  []string{"a"},
			want:  "c"},
		{name: "urgent needing a capability the agent lacks",
			tasks: []*coord.Task{{ID: "gpu", Priority: coord.Urgent, Capability: "gpu"}, {ID: "any", Priority: coord.Low}},
			want:  "any"},
		{name: "urgent needing a capability the agent has",
			tasks: []*coord.Task{{ID: "any", Priority: coord.High}, {ID: "gpu", Priority: coord.Urgent, Capability: "gpu"}},
			agent: coord.Agent{Caps: []string{"gpu"}},
			want:  "gpu"},
		{name: "skill outside the agent's filter",
			tasks: []*coord.Task{{ID: "easy", Priority: coord.Urgent, SkillLevel: coord.Entry}, {ID: "hard", SkillLevel: coord.Expert}},
			agent: coord.Agent{Skill: expert},
			want:  "hard"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := openProject(t, "", nil)
			p.seed(c.tasks...)
			for _, id := range c.done {
				p.done("other", id)
			}
			for _, id := range c.held {
				p.claim("other", id)
			}
			a := c.agent
			a.ID = "me"
			r, err := p.s.Wait(p.ctx, app.WaitRequest{Agent: a, Timeout: time.Minute})
			if err != nil || r.Status != "eligible" || r.Task != c.want {
				t.Fatalf("wait: %+v, %v; want %s eligible", r, err, c.want)
			}
			ready, _, err := p.s.Ready(p.ctx, a)
			if err != nil || len(ready) == 0 || ready[0].ID != c.want {
				t.Fatalf("ready: %+v, %v; want %s first", ready, err, c.want)
			}
			res, err := p.s.Claim(p.ctx, app.ClaimRequest{Agent: a})
			got := res.Task
			if err != nil || got == nil || got.ID != c.want {
				t.Fatalf("claim took %+v (%v); wait said %s", got, err, c.want)
			}
		})
	}
}

// The sweep's dry run reports what the sweep then does: with
// block-if-progress a dead agent's task with progress is blocked, one
// without is unclaimed; under requeue both are unclaimed; a blocked task
// stays blocked.
func TestSweepDryRunReportsThePolicy(t *testing.T) {
	for _, c := range []struct {
		policy   coord.StalePolicy
		progress int
		block    bool
		want     coord.Status
	}{
		{coord.BlockIfProgress, 40, false, coord.Blocked},
		{coord.BlockIfProgress, 0, false, coord.Unclaimed},
		{coord.BlockIfProgress, 0, true, coord.Blocked},
		{coord.Requeue, 40, false, coord.Unclaimed},
		{coord.Requeue, 0, false, coord.Unclaimed},
		{coord.Requeue, 0, true, coord.Blocked},
	} {
		name := fmt.Sprintf("%s/progress-%d", c.policy, c.progress)
		if c.block {
			name += "/blocked"
		}
		t.Run(name, func(t *testing.T) {
			p := openProject(t, `"on_stale": "`+string(c.policy)+`"`, nil)
			p.seed(&coord.Task{ID: "t1"})
			task := p.claim("dead", "t1")
			ref := app.TaskRef{Agent: coord.Agent{ID: "dead"}, TaskID: "t1", Epoch: task.Epoch}
			if c.progress > 0 {
				if _, err := p.s.Progress(p.ctx, ref, c.progress, ""); err != nil {
					t.Fatal(err)
				}
			}
			if c.block {
				if _, err := p.s.Block(p.ctx, ref, "waiting"); err != nil {
					t.Fatal(err)
				}
			}
			before := p.task("t1").Status
			p.now = p.now.Add(20 * time.Minute)
			dry, err := p.s.Sweep(p.ctx, app.SweepRequest{DryRun: true})
			if err != nil || len(dry) != 1 || dry[0].Status != c.want || dry[0].TaskID != "t1" {
				t.Fatalf("dry run: %+v, %v; want t1 %s", dry, err, c.want)
			}
			if st := p.task("t1"); st.Status != before || st.ClaimedBy != "dead" {
				t.Fatalf("the dry run changed t1: %+v", st)
			}
			res, err := p.s.Maintain(p.ctx, app.MaintainRequest{DryRun: true})
			if err != nil || !res.DryRun || len(res.Freed) != 1 || res.Freed[0].Status != c.want {
				t.Fatalf("maintain's dry run: %+v, %v", res, err)
			}
			freed, err := p.s.Sweep(p.ctx, app.SweepRequest{})
			if err != nil || len(freed) != 1 || freed[0].Status != c.want {
				t.Fatalf("sweep: %+v, %v; its dry run said %s", freed, err, c.want)
			}
			if st := p.task("t1"); st.Status != c.want || st.ClaimedBy != "" {
				t.Fatalf("t1 after the sweep: %s by %q, want %s", st.Status, st.ClaimedBy, c.want)
			}
		})
	}
}

// Maintenance (the step clean-stale and watch both run, cheap or full)
// frees a dead agent's task and every path lock it held, with the task or
// not, and leaves a live agent's alone.
func TestMaintainFreesDeadAgentsPathLocks(t *testing.T) {
	for _, full := range []bool{false, true} {
		t.Run(map[bool]string{false: "watch", true: "clean-stale"}[full], func(t *testing.T) {
			p := openProject(t, "", nil)
			p.seed(&coord.Task{ID: "t1"}, &coord.Task{ID: "t2"})
			if _, err := p.s.LockPaths(p.ctx, "dead", []string{"docs"}, 0); err != nil {
				t.Fatal(err)
			}
			p.claim("dead", "t1")
			p.claim("alive", "t2")
			for agent, paths := range map[string][]string{"dead": {"src/pkg", "lib/*.go"}, "alive": {"web"}} {
				if _, err := p.s.LockPaths(p.ctx, agent, paths, 0); err != nil {
					t.Fatal(err)
				}
			}
			p.now = p.now.Add(20 * time.Minute)
			if err := p.s.Beat(p.ctx, "alive", nil); err != nil {
				t.Fatal(err)
			}
			res, err := p.s.Maintain(p.ctx, app.MaintainRequest{Full: full})
			if err != nil || len(res.Freed) != 1 || res.Freed[0].Agent != "dead" {
				t.Fatalf("maintain: %+v, %v", res, err)
			}
			locks, err := p.s.PathLocks(p.ctx)
			if err != nil {
				t.Fatal(err)
			}
			var held []string
			for _, l := range locks {
				held = append(held, l.Path+"@"+l.Holder)
			}
			if !slices.Equal(held, []string{"web@alive"}) {
				t.Fatalf("path locks after maintenance: %v, want only web@alive", held)
			}
			// What the dead agent held is free to others now.
			if _, err := p.s.LockPaths(p.ctx, "next", []string{"src/pkg/x.go", "docs/a.md", "lib/y.go"}, 0); err != nil {
				t.Fatalf("locking the dead agent's paths: %v", err)
			}
		})
	}
}
