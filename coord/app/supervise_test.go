package app_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend/backendtest"
)

// TestRequeueFencesTheHolder: a person requeues a task a live agent works
// on; the agent's keeper (as the MCP server and run keep their tasks)
// finds it lost after its next beat and stops keeping it, and the agent's
// release at its epoch is refused (lost). The log names who asked and why.
func TestRequeueFencesTheHolder(t *testing.T) {
	p, _ := newCounted(t, `"stale_after": "2s"`)
	p.seed(&coord.Task{ID: "t1"})
	a := coord.Agent{ID: "a"}
	var lost lostLog
	k := p.s.Keep(a, app.KeepOptions{Verify: true, OnLost: lost.add})
	defer k.Close()
	held := p.claim("a", "t1")
	ref := app.TaskRef{Agent: a, TaskID: "t1", Epoch: held.Epoch}
	k.Hold(ref, time.Now())

	res, err := p.s.Supervisor().Requeue(p.ctx, app.Act{By: "pat", TaskID: "t1", Reason: "stuck on the flaky test"})
	if err != nil || res.Task.Status != coord.Unclaimed || res.Message != "requeued t1 (taken from a, epoch 1: its next write is refused)" {
		t.Fatalf("requeue: %+v %v", res, err)
	}
	backendtest.Wait(t, "the keeper to find t1 lost", func() bool { return len(lost.all()) > 0 })
	if got := lost.all(); len(got) != 1 || got[0] != "t1: it is now unclaimed by nobody" {
		t.Fatalf("lost: %q", got)
	}
	if err := k.Check("t1"); coord.CodeOf(err) != coord.CodeLost {
		t.Fatalf("the keeper still trusts t1: %v", err)
	}
	if len(k.Owed()) != 0 {
		t.Fatalf("a requeued task is owed a hand-back: %+v", k.Owed())
	}
	if _, err := p.s.Release(p.ctx, ref, "done anyway"); coord.CodeOf(err) != coord.CodeLost {
		t.Fatalf("the old holder's release: %v, want lost (6)", err)
	}
	var log []string
	p.s.LogRead(p.ctx, 0, func(l string) error { log = append(log, l); return nil })
	if last := log[len(log)-1]; !strings.HasSuffix(last, "] pat ▶ requeued task t1 from a (epoch 1): stuck on the flaky test") {
		t.Fatalf("log: %q", last)
	}
}

// TestSupervisors: with config.json "supervisors", every supervisor's act
// by anyone else is refused (conflict, ErrNotSupervisor) with nothing
// written, while a supervisor may; the acts that are an agent's own work
// (unblocking its own task, approving or rejecting an unrouted review or
// one routed to it) are never refused for it.
func TestSupervisors(t *testing.T) {
	p := newPushProject(t, `{"supervisors": ["lead"], "review_gate": true}`,
		&coord.Task{ID: "held"}, &coord.Task{ID: "open"}, &coord.Task{ID: "blocked"}, &coord.Task{ID: "orphan"},
		&coord.Task{ID: "rev"}, &coord.Task{ID: "routed"}, &coord.Task{ID: "mine"})
	s := p.service(t)
	ctx := context.Background()
	register(t, s, "b", "")
	register(t, s, "r", "reviewer")
	claim := func(agent, id string) *coord.Task {
		t.Helper()
		res, err := s.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: agent}, TaskID: id})
		if err != nil {
			t.Fatal(err)
		}
		return res.Task
	}
	ref := func(agent string, task *coord.Task) app.TaskRef {
		return app.TaskRef{Agent: coord.Agent{ID: agent}, TaskID: task.ID, Epoch: task.Epoch}
	}
	claim("a", "held")
	if _, err := s.Block(ctx, ref("a", claim("a", "blocked")), "needs a key"); err != nil {
		t.Fatal(err)
	}
	orphan := claim("gone", "orphan")
	if _, err := s.Block(ctx, ref("gone", orphan), "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.HandBack(ctx, ref("gone", orphan), "left"); err != nil { // blocked, no owner
		t.Fatal(err)
	}
	for _, id := range []string{"rev", "routed"} {
		if _, err := s.Release(ctx, ref("a", claim("a", id)), "done"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Schedule(ctx, app.ScheduleRequest{}); err != nil { // routes a review to r
		t.Fatal(err)
	}
	routed := ""
	for _, id := range []string{"rev", "routed"} {
		if task(t, s, id).AssignedTo == "r" {
			routed = id
		}
	}
	unrouted := map[string]string{"rev": "routed", "routed": "rev"}[routed]
	if routed == "" {
		t.Fatal("the scheduler routed no review to r")
	}
	if _, err := s.Block(ctx, ref("b", claim("b", "mine")), "waiting"); err != nil {
		t.Fatal(err)
	}
	tree := filepath.Join(p.root, coord.TreeDir, "active_work_registry.json")
	before, _ := os.ReadFile(tree)

	v := s.Supervisor()
	act := func(by, id string) app.Act { return app.Act{By: by, TaskID: id, Reason: "because", To: "b"} }
	for name, call := range map[string]func() error{
		"requeue":         func() error { _, err := v.Requeue(ctx, act("bob", "held")); return err },
		"assign":          func() error { _, err := v.Assign(ctx, act("bob", "open")); return err },
		"unblock":         func() error { _, err := v.Unblock(ctx, act("bob", "blocked")); return err },
		"unblock orphan":  func() error { _, err := v.Unblock(ctx, act("bob", "orphan")); return err },
		"approve (human)": func() error { _, err := v.Approve(ctx, act("bob", unrouted)); return err },
		"reject (person)": func() error { _, err := v.Reject(ctx, act("bob", unrouted)); return err },
		"cli unblock orph": func() error {
			_, err := s.Unblock(ctx, app.TaskRef{Agent: coord.Agent{ID: "bob"}, TaskID: "orphan", Epoch: coord.NoEpoch})
			return err
		},
		"approve --human": func() error {
			_, err := s.Approve(ctx, app.ApproveRequest{Agent: "bob", TaskID: unrouted, Human: "alice"})
			return err
		},
		"approve another's review": func() error { _, err := s.Approve(ctx, app.ApproveRequest{Agent: "bob", TaskID: routed}); return err },
		"reject another's review":  func() error { _, err := s.Reject(ctx, "bob", routed, "no"); return err },
	} {
		err := call()
		if coord.CodeOf(err) != coord.CodeConflict || !errors.Is(err, coord.ErrNotSupervisor) || !strings.Contains(err.Error(), "bob may not") {
			t.Errorf("%s by bob: %v, want a conflict naming the supervisors", name, err)
		}
	}
	if after, _ := os.ReadFile(tree); string(after) != string(before) {
		t.Fatal("a refused act changed the registry")
	}

	// An agent's own work is never a supervisor's act.
	if _, err := s.Unblock(ctx, app.TaskRef{Agent: coord.Agent{ID: "b"}, TaskID: "mine", Epoch: coord.NoEpoch}); err != nil {
		t.Fatalf("b unblocks its own task: %v", err)
	}
	if _, err := s.Approve(ctx, app.ApproveRequest{Agent: "r", TaskID: routed}); err != nil {
		t.Fatalf("r approves the review routed to it: %v", err)
	}
	if _, err := s.Reject(ctx, "bob", unrouted, "not yet"); err != nil {
		t.Fatalf("bob rejects an unrouted review: %v", err)
	}

	// The supervisor may do it all.
	for name, call := range map[string]func() (app.ActResult, error){
		"requeue": func() (app.ActResult, error) { return v.Requeue(ctx, act("lead", "held")) },
		"assign":  func() (app.ActResult, error) { return v.Assign(ctx, act("lead", "open")) },
		"unblock": func() (app.ActResult, error) { return v.Unblock(ctx, act("lead", "blocked")) },
		"orphan":  func() (app.ActResult, error) { return v.Unblock(ctx, app.Act{By: "lead", TaskID: "orphan"}) },
	} {
		if res, err := call(); err != nil || res.Task == nil || res.Message == "" {
			t.Errorf("%s by lead: %+v %v", name, res, err)
		}
	}
	if got := task(t, s, "open"); got.AssignedTo != "b" {
		t.Fatalf("open after assign: %+v", got)
	}
	if got, err := s.Inbox(ctx, app.InboxRequest{Agent: "b"}); err != nil || got.Task == nil || got.Task.ID != "open" || got.Task.ClaimedBy != "b" {
		t.Fatalf("b's inbox after the assignment: %+v %v", got, err)
	}
	if got := task(t, s, "blocked"); got.Status != coord.Unclaimed || got.ClaimedBy != "" || got.Owner != "a" {
		t.Fatalf("blocked after the supervisor's unblock: %+v", got)
	}
}

// TestAssignToAStaleAgent: pushing work to a registered agent that has
// gone silent (longer than stale_after) is refused: it would never start
// it.
func TestAssignToAStaleAgent(t *testing.T) {
	p := newPushProject(t, `{"stale_after": "10m"}`, &coord.Task{ID: "t1"})
	s := p.service(t)
	ctx := context.Background()
	register(t, s, "b", "")
	p.advance(20 * time.Minute) // b stops beating
	_, err := s.Supervisor().Assign(ctx, app.Act{By: "pat", TaskID: "t1", To: "b"})
	if coord.CodeOf(err) != coord.CodeConflict || !strings.Contains(err.Error(), "b is registered but stale") {
		t.Fatalf("assign to a stale agent: %v", err)
	}
	if _, err := s.Supervisor().Assign(ctx, app.Act{By: "pat", TaskID: "t1"}); coord.CodeOf(err) != coord.CodeUsage {
		t.Fatalf("assign without --to: %v", err)
	}
}
