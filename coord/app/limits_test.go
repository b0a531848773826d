package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// untouched is a backend whose stores must not be reached: the call under
// test refuses its input first.
type untouched struct {
	coord.Backend
	t *testing.T
}

func (u untouched) touched(what string) {
	u.t.Errorf("the %s store was touched before the text was checked", what)
}

func (u untouched) Tasks() coord.TaskStore   { u.touched("task"); return u.Backend.Tasks() }
func (u untouched) Beats() coord.BeatStore   { u.touched("beat"); return u.Backend.Beats() }
func (u untouched) Log() coord.LogStore      { u.touched("log"); return u.Backend.Log() }
func (u untouched) KV() coord.KVStore        { u.touched("kv"); return u.Backend.KV() }
func (u untouched) Leases() coord.LeaseStore { u.touched("lease"); return u.Backend.Leases() }
func (u untouched) Quota() coord.QuotaStore  { u.touched("quota"); return u.Backend.Quota() }

// TestBoundedTextBeforeAnyStore: every application call that takes free
// text refuses text over its bound (coord.MaxTitle, MaxDescription,
// MaxNote; a kv value its own MaxKVValue) with CodeUsage before it
// touches any store, so every front end (CLI, MCP, hooks, dashboard) gets
// the refusal, with nothing written, from the one check.
func TestBoundedTextBeforeAnyStore(t *testing.T) {
	var u untouched
	p := openProject(t, "", func(b coord.Backend) coord.Backend { u = untouched{b, t}; return u })
	s, ctx := p.s, context.Background()
	over := strings.Repeat("x", coord.MaxNote+1)
	ref := app.TaskRef{Agent: coord.Agent{ID: "a"}, TaskID: "t1", Epoch: coord.NoEpoch}
	seed := func(task *coord.Task) error {
		task.ID, task.Status = "t9", coord.Unclaimed
		_, err := s.Seed(ctx, app.SeedRequest{Name: "tasks.jsonl", Batch: []coord.SeedLine{{Line: 2, Task: task}}})
		return err
	}
	calls := map[string]func() error{
		"release":   func() error { _, err := s.Release(ctx, ref, over); return err },
		"block":     func() error { _, err := s.Block(ctx, ref, over); return err },
		"progress":  func() error { _, err := s.Progress(ctx, ref, 10, over); return err },
		"hand back": func() error { _, err := s.HandBack(ctx, ref, over); return err },
		"reject":    func() error { _, err := s.Reject(ctx, "r", "t1", over); return err },
		"give back": func() error { _, err := s.GiveBack(ctx, "a", "t1", over); return err },
		"msg":       func() error { return s.Msg(ctx, "a", over) },
		"requeue": func() error {
			_, err := s.Supervisor().Requeue(ctx, app.Act{By: "p", TaskID: "t1", Reason: over})
			return err
		},
		"assign": func() error {
			_, err := s.Supervisor().Assign(ctx, app.Act{By: "p", TaskID: "t1", To: "b", Reason: over})
			return err
		},
		"supervisor's unblock": func() error {
			_, err := s.Supervisor().Unblock(ctx, app.Act{By: "p", TaskID: "t1", Reason: over})
			return err
		},
		"supervisor's approve": func() error {
			_, err := s.Supervisor().Approve(ctx, app.Act{By: "p", TaskID: "t1", Reason: over})
			return err
		},
		"supervisor's reject": func() error {
			_, err := s.Supervisor().Reject(ctx, app.Act{By: "p", TaskID: "t1", Reason: over})
			return err
		},
		"seed title": func() error {
			return seed(&coord.Task{Title: strings.Repeat("x", coord.MaxTitle+1)})
		},
		"seed description": func() error {
			return seed(&coord.Task{Description: strings.Repeat("x", coord.MaxDescription+1)})
		},
		"kv value": func() error {
			_, err := s.KVSet(ctx, "k", []byte(`"`+strings.Repeat("x", coord.MaxKVValue)+`"`), 60e9, "a", coord.KVCond{})
			return err
		},
	}
	for name, call := range calls {
		err := call()
		if coord.CodeOf(err) != coord.CodeUsage {
			t.Errorf("%s over the bound: %v (code %d), want CodeUsage", name, err, coord.CodeOf(err))
		}
	}
}

// TestRulesBeforeAnyStore: the rules a request breaks whatever the state
// (a block or a rejection without a reason, a progress outside 0..100, a
// kv value that is not JSON or a key without a TTL)
// are the application's, answered with CodeUsage before any store is
// touched, so that no front end needs a copy of them.
func TestRulesBeforeAnyStore(t *testing.T) {
	var u untouched
	p := openProject(t, "", func(b coord.Backend) coord.Backend { u = untouched{b, t}; return u })
	s, ctx := p.s, context.Background()
	ref := app.TaskRef{Agent: coord.Agent{ID: "a"}, TaskID: "t1", Epoch: coord.NoEpoch}
	calls := []struct {
		name, msg string
		call      func() error
	}{
		{"block without a reason", "block needs a reason", func() error { _, err := s.Block(ctx, ref, " \n"); return err }},
		{"reject without a reason", "reject needs a reason", func() error { _, err := s.Reject(ctx, "r", "t1", ""); return err }},
		{"requeue without a reason", "requeue needs a reason", func() error {
			_, err := s.Supervisor().Requeue(ctx, app.Act{By: "p", TaskID: "t1", Reason: " "})
			return err
		}},
		{"assign without an agent", "assign needs the agent it goes to; give --to AGENT", func() error {
			_, err := s.Supervisor().Assign(ctx, app.Act{By: "p", TaskID: "t1"})
			return err
		}},
		{"progress 101", "progress 101 is outside 0..100", func() error { _, err := s.Progress(ctx, ref, 101, ""); return err }},
		{"progress -1", "progress -1 is outside 0..100", func() error { _, err := s.Progress(ctx, ref, -1, ""); return err }},
		{"kv value that is not JSON", "value is not JSON", func() error {
			_, err := s.KVSet(ctx, "k", []byte("{bad"), time.Minute, "a", coord.KVCond{})
			return err
		}},
		{"kv key without a ttl", "every key needs a positive TTL; keys without one are how protocols rot; give its lifetime, e.g. 10m", func() error {
			_, err := s.KVSet(ctx, "k", []byte(`"v"`), 0, "a", coord.KVCond{})
			return err
		}},
	}
	for _, c := range calls {
		err := c.call()
		if coord.CodeOf(err) != coord.CodeUsage || err.Error() != c.msg {
			t.Errorf("%s: %v (code %d), want CodeUsage %q", c.name, err, coord.CodeOf(err), c.msg)
		}
	}
}
