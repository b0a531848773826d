package app_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/internal/check"
	"github.com/rotd/coordination/registry/backend/backendtest"
)

// fakeLander is a repository in memory: commits with parents, one
// target, merges that conflict where told to. moveTimes makes the first
// MoveTarget calls find the target moved (someone else committed).
type fakeLander struct {
	parents   map[string][]string
	tip       string
	conflicts map[string][]string // head -> files
	failCheck map[string]bool     // head -> the check fails on its merge
	moveTimes int
	checks    int
	n         int
}

func newFakeLander() *fakeLander {
	return &fakeLander{parents: map[string][]string{"0000": nil}, tip: "0000", conflicts: map[string][]string{}, failCheck: map[string]bool{}}
}

// commit adds a commit on parent and returns its id.
func (f *fakeLander) commit(parents ...string) string {
	f.n++
	id := fmt.Sprintf("%04x", 0xa000+f.n)
	f.parents[id] = parents
	return id
}

func (f *fakeLander) Head(_ context.Context, ref string) (string, error) { return f.tip, nil }

func (f *fakeLander) IsAncestor(_ context.Context, a, b string) (bool, error) {
	if _, ok := f.parents[a]; !ok {
		return false, errors.New("no such commit")
	}
	seen := map[string]bool{}
	var walk func(c string) bool
	walk = func(c string) bool {
		if c == a {
			return true
		}
		if seen[c] {
			return false
		}
		seen[c] = true
		for _, p := range f.parents[c] {
			if walk(p) {
				return true
			}
		}
		return false
	}
	return walk(b), nil
}

func (f *fakeLander) OnFirstParents(_ context.Context, tip, head string) (bool, error) {
	for c := head; c != ""; {
		if c == tip {
			return true, nil
		}
		ps := f.parents[c]
		if len(ps) == 0 {
			return false, nil
		}
		c = ps[0]
	}
	return false, nil
}

func (f *fakeLander) Contains(ctx context.Context, into, commit string) (bool, error) {
	return f.IsAncestor(ctx, commit, into)
}

func (f *fakeLander) Merge(_ context.Context, target, head string) (app.LandMerge, error) {
	if files := f.conflicts[head]; len(files) > 0 {
		return app.LandMerge{Conflict: true, Files: files}, nil
	}
	return app.LandMerge{Tree: "tree:" + target + "+" + head}, nil
}

func (f *fakeLander) CommitMerge(_ context.Context, tree string, parents []string, msg string) (string, error) {
	return f.commit(parents...), nil
}

func (f *fakeLander) MoveTarget(_ context.Context, branch, new, old, reason string) error {
	if f.moveTimes > 0 {
		f.moveTimes--
		f.tip = f.commit(f.tip) // someone else's commit
		return fmt.Errorf("%w: moved", app.ErrTargetMoved)
	}
	if f.tip != old {
		return fmt.Errorf("%w: moved", app.ErrTargetMoved)
	}
	f.tip = new
	return nil
}

func (f *fakeLander) Checkout(context.Context, string, string) (string, error) {
	return "/nowhere", nil
}
func (f *fakeLander) RemoveCheckout(context.Context, string) error { return nil }
func (f *fakeLander) CleanCheckouts(context.Context) (int, error)  { return 0, nil }

func (f *fakeLander) Check(_ context.Context, dir, cmd string, env []string, timeout time.Duration) (check.Result, error) {
	f.checks++
	for _, e := range env {
		if h, ok := strings.CutPrefix(e, "COORD_LAND_HEAD="); ok && f.failCheck[h] {
			return check.Result{Exit: 1, Tail: "FAIL: TestX"}, nil
		}
	}
	return check.Result{}, nil
}

// landProject is a project whose tasks are done by their owners with
// the heads given (task id -> head), finished in the order of their ids.
func landProject(t *testing.T, config string, heads map[string]string) *backendtest.Project {
	t.Helper()
	var tasks []*coord.Task
	for id := range heads {
		tasks = append(tasks, &coord.Task{ID: id, Title: "task " + id})
	}
	p := backendtest.NewProject(t, backendtest.Options{Config: config, Tasks: tasks})
	err := p.Service.Backend().Tasks().Update(context.Background(), func(tx *coord.Txn) error {
		ids := slices.Sorted(maps.Keys(heads))
		for i, id := range ids {
			head := heads[id]
			tk := tx.Task(id)
			tk.Status, tk.ClaimedBy, tk.Epoch, tk.Head, tk.Dirty = coord.Done, "owner-"+id, 1, head, true
			tk.ClaimedAt, tk.CompletedAt = "2026-01-01T00:00:00Z", fmt.Sprintf("2026-01-01T00:00:%02dZ", i)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func taskOf(t *testing.T, s *app.Service, id string) *coord.Task {
	t.Helper()
	var got *coord.Task
	s.Backend().Tasks().View(context.Background(), func(tx *coord.Txn) error {
		c := *tx.Task(id)
		got = &c
		return nil
	})
	return got
}

// TestLand_TargetMoved: a target that moved under the lander is merged
// again and checked again, never overwritten: the landing's first
// parent is the commit that moved it.
func TestLand_TargetMoved(t *testing.T) {
	f := newFakeLander()
	head := f.commit("0000")
	p := landProject(t, "", map[string]string{"a": head})
	f.moveTimes = 2
	res, err := p.Service.Land(context.Background(), f, app.LandRequest{Agent: "lander", Check: "make test"})
	if err != nil || len(res) != 1 || res[0].Outcome != app.Landed || res[0].How != "merge" {
		t.Fatalf("Land = %+v, %v", res, err)
	}
	if f.checks != 3 {
		t.Errorf("checked %d times, want 3 (once per merge)", f.checks)
	}
	land := f.parents[f.tip]
	if len(land) != 2 || land[1] != head || f.parents[land[0]][0] == "" {
		t.Fatalf("the landing %s has parents %v", f.tip, land)
	}
	if tk := taskOf(t, p.Service, "a"); tk.LandedCommit != f.tip || tk.LandedAt == "" || tk.LandingAt != "" {
		t.Fatalf("task a: landed %q at %q, landing_at %q", tk.LandedCommit, tk.LandedAt, tk.LandingAt)
	}
}

// TestLand_SendBack: a conflict and a failed check send the task back
// to its owner; at max_rejections it is blocked, and the outcome says
// so. Work the target already holds is recorded, not merged again.
func TestLand_SendBack(t *testing.T) {
	f := newFakeLander()
	held := f.commit("0000")
	f.tip = f.commit(held)
	conflicted, failing := f.commit("0000"), f.commit("0000")
	f.conflicts[conflicted] = []string{"f.txt"}
	f.failCheck[failing] = true
	p := landProject(t, `{"max_rejections":1}`, map[string]string{"a": held, "b": conflicted, "c": failing})
	tip := f.tip
	res, err := p.Service.Land(context.Background(), f, app.LandRequest{Agent: "lander", Check: "go test"})
	if err != nil || len(res) != 3 {
		t.Fatalf("Land = %+v, %v", res, err)
	}
	if r := res[0]; r.Task != "a" || r.Outcome != app.Landed || r.How != "found" || r.Commit != tip {
		t.Errorf("a: %+v", r)
	}
	if r := res[1]; r.Task != "b" || r.Outcome != app.SentBack || !strings.Contains(r.Why, "conflicts in f.txt") || !strings.Contains(r.Why, "(blocked: sent back 1 times)") {
		t.Errorf("b: %+v", r)
	}
	if r := res[2]; r.Task != "c" || r.Outcome != app.SentBack || !strings.Contains(r.Why, "FAIL: TestX") {
		t.Errorf("c: %+v", r)
	}
	if f.tip != tip {
		t.Errorf("the target moved to %s", f.tip)
	}
	if tk := taskOf(t, p.Service, "b"); tk.Status != coord.Blocked || tk.ClaimedBy != "owner-b" || tk.Head != "" {
		t.Errorf("b: %s by %s, head %q", tk.Status, tk.ClaimedBy, tk.Head)
	}
}

// TestLand_Lease: a lander holding the lease keeps another out (naming
// it), unless the other's process is known gone.
func TestLand_Lease(t *testing.T) {
	f := newFakeLander()
	p := landProject(t, "", map[string]string{"a": f.commit("0000")})
	ctx := context.Background()
	if _, err := p.Service.AcquireLease(ctx, coord.LeaseRequest{Name: coord.LandLease, Holder: "first", TTL: time.Minute,
		Meta: map[string]string{"pid": "1", "host": "h"}}); err != nil {
		t.Fatal(err)
	}
	_, err := p.Service.Land(ctx, f, app.LandRequest{Agent: "second"})
	var ce *coord.Error
	if !errors.As(err, &ce) || ce.Code != coord.CodeConflict || ce.Holder != "first" {
		t.Fatalf("second lander: %v", err)
	}
	res, err := p.Service.Land(ctx, f, app.LandRequest{Agent: "second", HolderGone: func(m map[string]string) bool { return m["host"] == "h" }})
	if err != nil || len(res) != 1 || res[0].Outcome != app.Landed {
		t.Fatalf("after the first is gone: %+v, %v", res, err)
	}
	if ls, _ := p.Service.Leases(ctx); len(ls) != 0 {
		t.Fatalf("leases left: %+v", ls)
	}
}

// TestLandReplans: a landing pass that lands ReplanAfter tasks plans the
// unclaimed ones again (what landed is history the predictions did not
// know) and says so; a pass that lands nothing does not.
func TestLandReplans(t *testing.T) {
	f := newFakeLander()
	tasks := []*coord.Task{{ID: "p0", Title: "printer: trim trailing spaces"}}
	for i := 1; i <= app.ReplanAfter; i++ {
		tasks = append(tasks, &coord.Task{ID: fmt.Sprint("d", i), Title: fmt.Sprint("docs: part ", i)})
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := backendtest.NewProject(t, backendtest.Options{History: printerHistory(), Tasks: tasks, Clock: func() time.Time { return now }})
	now = now.Add(time.Hour) // the landings come after the seed's plan
	err := p.Service.Backend().Tasks().Update(context.Background(), func(tx *coord.Txn) error {
		for i := 1; i <= app.ReplanAfter; i++ {
			tk := tx.Task(fmt.Sprint("d", i))
			tk.Status, tk.ClaimedBy, tk.Epoch, tk.Head, tk.Dirty = coord.Done, "owner", 1, f.commit("0000"), true
			tk.ClaimedAt, tk.CompletedAt = "2026-01-01T00:00:00Z", fmt.Sprintf("2026-01-01T00:00:%02dZ", i)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var told []int
	req := app.LandRequest{Agent: "lander", OnReplan: func(n int, err error) {
		if err != nil {
			t.Errorf("replan: %v", err)
		}
		told = append(told, n)
	}}
	res, err := p.Service.Land(context.Background(), f, req)
	if err != nil || len(res) != app.ReplanAfter {
		t.Fatalf("Land = %+v, %v", res, err)
	}
	if len(told) != 1 || told[0] != 1 {
		t.Fatalf("replans told %v, want one of the one unclaimed task", told)
	}
	if tk := taskOf(t, p.Service, "p0"); len(tk.PredictedFiles) == 0 || tk.PredictedFiles[0] != "printer.go" {
		t.Fatalf("p0 predicted %v after the replan", tk.PredictedFiles)
	}
	if _, err := p.Service.Land(context.Background(), f, req); err != nil || len(told) != 1 {
		t.Fatalf("a pass that landed nothing replanned (%v, %v)", told, err)
	}
}
