package app_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend/backendtest"
)

// benchProject lays down a tree on disk with n tasks (the shape of
// coord's BenchmarkScheduleRound: conflict groups, patterns over 100
// modules, dependencies, priorities, capabilities) and 50 registered
// agents (45 implementers, 5 reviewers).
func benchProject(b *testing.B, n int) *app.Service {
	b.Helper()
	s := backendtest.NewProject(b, backendtest.Options{}).Service
	var batch []coord.SeedLine
	for i := range n {
		t := &coord.Task{ID: fmt.Sprintf("t%05d", i), Title: "a task with a title", Status: coord.Unclaimed,
			Priority: []coord.Priority{coord.Urgent, coord.High, coord.Medium, coord.Low}[i%4], Dirty: true}
		switch i % 3 {
		case 0:
			t.ConflictGroup = fmt.Sprintf("g%d", i%200)
		case 1:
			t.Files = []string{fmt.Sprintf("src/m%d/**", i%100)}
		case 2:
			t.Files = []string{fmt.Sprintf("src/m%d/f%d.go", i%100, i)}
		}
		if i%10 == 7 {
			t.Deps = []string{fmt.Sprintf("t%05d", i-5)}
		}
		if i%4 == 1 {
			t.Capability = "go"
		}
		batch = append(batch, coord.SeedLine{Line: i + 1, Task: t})
	}
	ctx := context.Background()
	if _, err := s.Seed(ctx, app.SeedRequest{Name: "bench", Batch: batch}); err != nil {
		b.Fatal(err)
	}
	for i := range 50 {
		r := app.RegisterRequest{Agent: fmt.Sprintf("a%02d", i)}
		if i%2 == 0 {
			r.Caps = []string{"go"}
		}
		if i >= 45 {
			r.Role = "reviewer"
		}
		if _, err := s.Register(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkScheduleCommit: one scheduling round through the file engine
// on disk, with 50 agents. "assign": the round assigns 45 tasks into
// empty inboxes and commits them (a snapshot read and plan, then the
// exclusive re-read, plan, durable registry write and 45 log lines); the
// assignments are taken back outside the timer. "idle": every inbox is
// full and the round only reads a snapshot and plans.
func BenchmarkScheduleCommit(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1000, 10000} {
		s := benchProject(b, n)
		b.Run(fmt.Sprintf("tasks=%d/agents=50/assign", n), func(b *testing.B) {
			for b.Loop() {
				res, err := s.Schedule(ctx, app.ScheduleRequest{})
				if err != nil || len(res.Assigned) != 45 {
					b.Fatalf("round: %d assigned, %v", len(res.Assigned), err)
				}
				b.StopTimer()
				err = s.Backend().Tasks().Update(ctx, func(tx *coord.Txn) error {
					for _, t := range tx.Tasks {
						if t.AssignedTo != "" {
							t.AssignedTo, t.AssignedAt, t.Dirty = "", "", true
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
		b.Run(fmt.Sprintf("tasks=%d/agents=50/idle", n), func(b *testing.B) {
			if _, err := s.Schedule(ctx, app.ScheduleRequest{}); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				res, err := s.Schedule(ctx, app.ScheduleRequest{})
				if err != nil || res.Changed() {
					b.Fatalf("idle round changed %+v, %v", res, err)
				}
			}
		})
	}
}
