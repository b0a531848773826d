package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// release claims and releases id as agent.
func (e *env) done(s *app.Service, agent, id string) {
	e.t.Helper()
	ep := e.claim(s, agent, id)
	if _, err := s.Release(e.ctx, app.TaskRef{Agent: coord.Agent{ID: agent}, TaskID: id, Epoch: ep}, ""); err != nil {
		e.t.Fatalf("release %s: %v", id, err)
	}
}

func ids(list []*coord.Task) []string {
	var out []string
	for _, t := range list {
		out = append(out, t.ID)
	}
	return out
}

// checkArchive: archived tasks leave the active registry, stay listed with
// All and by ArchivedTasks, count as done for dependencies, cannot be
// claimed or seeded again; a cutoff archives only what finished before it.
func checkArchive(t *testing.T, e *env) {
	s := e.svc()
	e.seed(s, &coord.Task{ID: "a"}, &coord.Task{ID: "b"}, &coord.Task{ID: "c", Deps: []string{"a"}}, &coord.Task{ID: "d"})
	e.done(s, "x", "a")
	e.done(s, "x", "b")
	moved, err := s.Archive(e.ctx, time.Time{})
	ok(t, "archive", err)
	if !slices.Equal(moved, []string{"a", "b"}) {
		t.Fatalf("archived %v, want a b", moved)
	}
	active, err := s.Tasks(e.ctx, app.ListRequest{})
	ok(t, "list", err)
	if got := ids(active); !slices.Equal(got, []string{"c", "d"}) {
		t.Errorf("active tasks %v", got)
	}
	all, err := s.Tasks(e.ctx, app.ListRequest{All: true})
	ok(t, "list all", err)
	if got := ids(all); !slices.Equal(got, []string{"c", "d", "a", "b"}) {
		t.Errorf("all tasks %v", got)
	}
	arch, err := s.Backend().Tasks().ArchivedTasks(e.ctx)
	ok(t, "archived tasks", err)
	if got := ids(arch); !slices.Equal(got, []string{"a", "b"}) || arch[0].Status != coord.Done {
		t.Errorf("archived tasks %v", got)
	}

	// A dependency on an archived task is done.
	ready, _, err := s.Ready(e.ctx, coord.Agent{ID: "y"})
	ok(t, "ready", err)
	if len(ready) != 2 || ready[0].ID != "c" {
		t.Errorf("ready %+v, want c first", ready)
	}
	g, err := s.Deps(e.ctx)
	ok(t, "deps", err)
	if len(g.Unknown) != 0 || !slices.ContainsFunc(g.Tasks, func(n app.DepNode) bool { return n.ID == "a" && n.Status == "archived" }) {
		t.Errorf("dependency graph %+v", g)
	}
	_, err = s.Claim(e.ctx, app.ClaimRequest{Agent: coord.Agent{ID: "y"}, TaskID: "a"})
	wantCode(t, "claiming an archived task", err, coord.CodeConflict, "a")
	_, err = s.Seed(e.ctx, app.SeedRequest{Name: "again", Batch: []coord.SeedLine{{Line: 1, Task: &coord.Task{ID: "b", Status: coord.Unclaimed}}}})
	wantCode(t, "seeding an archived id", err, coord.CodeUsage, "b")
	e.seed(s, &coord.Task{ID: "e", Deps: []string{"b"}})
	ready, _, err = s.Ready(e.ctx, coord.Agent{ID: "y"})
	ok(t, "ready", err)
	if !slices.ContainsFunc(ready, func(r app.ReadyRow) bool { return r.ID == "e" }) {
		t.Errorf("a task whose dependency is archived is not ready: %+v", ready)
	}
	res, err := s.Claim(e.ctx, app.ClaimRequest{Agent: coord.Agent{ID: "y"}})
	c := res.Task
	if err != nil || c == nil || c.ID != "c" {
		t.Fatalf("claim took %+v (%v), want c", c, err)
	}
	if !e.p.Clocked {
		return
	}
	// A cutoff archives only tasks completed before it.
	e.done(s, "x", "d")
	e.clock.Advance(2 * time.Hour)
	_, err = s.Release(e.ctx, app.TaskRef{Agent: coord.Agent{ID: "y"}, TaskID: "c", Epoch: c.Epoch}, "")
	ok(t, "release c", err)
	moved, err = s.Archive(e.ctx, e.clock.Now().Add(-time.Hour))
	ok(t, "archive with a cutoff", err)
	if !slices.Equal(moved, []string{"d"}) {
		t.Errorf("archived %v before the cutoff, want d", moved)
	}
	if task := e.task(s, "c"); task == nil || task.Status != coord.Done {
		t.Errorf("c, done after the cutoff: %+v", task)
	}
}

// checkLog: lines appended are read back from the end, across a
// rotation, and a follower started before the rotation sees every line
// appended after it.
func checkLog(t *testing.T, e *env) {
	// Two minutes before a UTC midnight.
	day := e.clock.Now().UTC().Truncate(24 * time.Hour)
	e.clock.Set(day.Add(24*time.Hour - 2*time.Minute))
	s := e.svc()
	ok(t, "msg", s.Msg(e.ctx, "a", "before one"))
	ok(t, "msg", s.Msg(e.ctx, "a", "before two"))

	got := make(chan string, 16)
	started := make(chan struct{})
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	followed := make(chan error, 1)
	go func() {
		followed <- s.LogFollow(ctx, func() error { close(started); return nil }, func(lines []string) error {
			for _, l := range lines {
				got <- l
			}
			return nil
		})
	}()
	select {
	case <-started:
	case <-time.After(bound):
		t.Fatalf("the follower did not start")
	}

	e.clock.Advance(3 * time.Minute) // a new UTC day
	res, err := s.Maintain(e.ctx, app.MaintainRequest{Full: true})
	if err != nil || len(res.Problems) > 0 {
		t.Fatalf("maintain: %v %v", res.Problems, err)
	}
	if e.p.LogRotates && res.Rotated == "" {
		t.Fatalf("no rotation at a new UTC day")
	}
	ok(t, "msg", s.Msg(e.ctx, "a", "after one"))
	ok(t, "msg", s.Msg(e.ctx, "b", "after two"))

	var seen []string
	for len(seen) < 2 {
		select {
		case l := <-got:
			if le, isEvent := coord.ParseLogLine(l); isEvent && strings.HasPrefix(le.Message, "after") {
				seen = append(seen, le.AgentID+":"+le.Message)
			}
		case <-time.After(bound):
			t.Fatalf("the follower saw %v of the lines appended after the rotation", seen)
		}
	}
	if !slices.Equal(seen, []string{"a:after one", "b:after two"}) {
		t.Errorf("followed %v", seen)
	}
	cancel()
	if err := <-followed; !isInterrupted(err) {
		t.Errorf("a cancelled follow returned %v, want the interruption", err)
	}

	var tail []string
	skipped, err := s.LogRead(e.ctx, 3, func(line string) error { tail = append(tail, line); return nil })
	ok(t, "read", err)
	var msgs []string
	for _, l := range tail {
		le, _ := coord.ParseLogLine(l)
		msgs = append(msgs, le.Message)
	}
	if skipped != 0 || !slices.Equal(msgs, []string{"before two", "after one", "after two"}) {
		t.Errorf("the last 3 lines: %q (%d skipped)", msgs, skipped)
	}
	n := 0
	_, err = s.LogRead(e.ctx, 0, func(string) error { n++; return nil })
	ok(t, "read all", err)
	if n != 4 {
		t.Errorf("the whole log has %d lines, want 4", n)
	}
}

// checkStrict: damaged state is refused, never repaired by guessing or
// replaced: every operation on a damaged part fails with CodeIO naming
// it, and nothing is written. A damaged registry's refusal names 'coord
// doctor --repair', which restores the last good registry from its
// backups (checkRestore).
func checkStrict(t *testing.T, e *env) {
	type op struct {
		name string
		do   func(s *app.Service) error
	}
	a := coord.Agent{ID: "a"}
	value := json.RawMessage(`"v"`)
	ops := map[Part][]op{
		Registry: {
			{"seed", func(s *app.Service) error {
				_, err := s.Seed(e.ctx, app.SeedRequest{Name: "x", Batch: []coord.SeedLine{{Line: 1, Task: &coord.Task{ID: "t9", Status: coord.Unclaimed}}}})
				return err
			}},
			{"claim", func(s *app.Service) error {
				_, err := s.Claim(e.ctx, app.ClaimRequest{Agent: coord.Agent{ID: "b"}})
				return err
			}},
			{"release", func(s *app.Service) error {
				_, err := s.Release(e.ctx, app.TaskRef{Agent: a, TaskID: "t1", Epoch: coord.NoEpoch}, "")
				return err
			}},
			{"lock paths", func(s *app.Service) error { _, err := s.LockPaths(e.ctx, "b", []string{"src"}, 0); return err }},
			{"archive", func(s *app.Service) error { _, err := s.Archive(e.ctx, time.Time{}); return err }},
			{"sweep", func(s *app.Service) error { _, err := s.Sweep(e.ctx, app.SweepRequest{}); return err }},
			{"list", func(s *app.Service) error { _, err := s.Tasks(e.ctx, app.ListRequest{}); return err }},
			{"maintain", func(s *app.Service) error { _, err := s.Maintain(e.ctx, app.MaintainRequest{Full: true}); return err }},
		},
		KV: {
			{"set", func(s *app.Service) error {
				_, err := s.KVSet(e.ctx, "k2", value, time.Hour, "a", coord.KVCond{})
				return err
			}},
			{"delete", func(s *app.Service) error { _, err := s.KVDelete(e.ctx, "k"); return err }},
			{"get", func(s *app.Service) error { _, _, err := s.KVGet(e.ctx, "k"); return err }},
			{"list", func(s *app.Service) error { _, err := s.KVList(e.ctx, ""); return err }},
			{"maintain", func(s *app.Service) error { _, err := s.Maintain(e.ctx, app.MaintainRequest{Full: true}); return err }},
		},
		Leases: {
			{"acquire", func(s *app.Service) error {
				_, err := s.AcquireLease(e.ctx, coord.LeaseRequest{Name: "other", Holder: "b", TTL: time.Hour})
				return err
			}},
			{"renew", func(s *app.Service) error { _, err := s.RenewLease(e.ctx, "l", "a", coord.NoEpoch, 0); return err }},
			{"release", func(s *app.Service) error { return s.ReleaseLease(e.ctx, "l", "a", coord.NoEpoch) }},
			{"list", func(s *app.Service) error { _, err := s.Leases(e.ctx); return err }},
			{"maintain", func(s *app.Service) error { _, err := s.Maintain(e.ctx, app.MaintainRequest{Full: true}); return err }},
		},
		Quota: {
			{"add", func(s *app.Service) error { _, err := s.QuotaAdd(e.ctx, "a", 1, 1); return err }},
			{"show", func(s *app.Service) error { _, err := s.QuotaShow(e.ctx); return err }},
		},
	}
	for _, part := range Parts {
		t.Run(string(part), func(t *testing.T) {
			e := newEnv(t, e.h)
			s := e.svc()
			// Something of every part, so the damage is to data, not to a
			// missing file.
			e.seed(s, &coord.Task{ID: "t1"}, &coord.Task{ID: "t2"})
			e.claim(s, "a", "t1")
			_, err := s.KVSet(e.ctx, "k", value, time.Hour, "a", coord.KVCond{})
			ok(t, "kv", err)
			_, err = s.AcquireLease(e.ctx, coord.LeaseRequest{Name: "l", Holder: "a", TTL: time.Hour})
			ok(t, "lease", err)
			_, err = s.QuotaAdd(e.ctx, "a", 10, 1)
			ok(t, "quota", err)

			name := e.p.Corrupt(t, part)
			before := e.p.Raw(t)
			want := []string{name}
			if part == Registry {
				// The registry keeps backups: the way out is named.
				want = append(want, "coord doctor --repair")
			}
			for _, o := range ops[part] {
				wantCode(t, string(part)+": "+o.name, o.do(s), coord.CodeIO, want...)
			}
			if after := e.p.Raw(t); !maps.Equal(before, after) {
				for k := range maps.Keys(before) {
					if before[k] != after[k] {
						t.Errorf("%s changed under a refused operation", k)
					}
				}
				for k := range maps.Keys(after) {
					if _, ok := before[k]; !ok {
						t.Errorf("%s written under a refused operation", k)
					}
				}
			}
			// Doctor names the damage (relative to the project, so by
			// its last element) and, without repair, writes nothing
			// either.
			probs, err := s.Doctor(e.ctx, false)
			short := name[strings.LastIndexAny(name, "/\\")+1:]
			found := err != nil && strings.Contains(err.Error(), short)
			for _, p := range probs {
				found = found || strings.Contains(p.What, short)
			}
			if !found {
				t.Errorf("doctor does not name %s: %+v, %v", name, probs, err)
			}
			if after := e.p.Raw(t); !maps.Equal(before, after) {
				t.Errorf("doctor without repair wrote")
			}
			if part == Registry {
				checkRestore(t, e, s)
			}
		})
	}
}

// checkRestore: on a damaged registry, doctor --repair puts back the last
// good one (its newest readable backup), logs that it did, and every
// operation works again.
func checkRestore(t *testing.T, e *env, s *app.Service) {
	t.Helper()
	probs, err := s.Doctor(e.ctx, true)
	ok(t, "doctor --repair", err)
	for _, p := range probs {
		if !p.Fixed {
			t.Errorf("doctor --repair left %q", p.What)
		}
	}
	list, err := s.Tasks(e.ctx, app.ListRequest{})
	ok(t, "list after the repair", err)
	if got := strings.Join(ids(list), " "); got != "t1 t2" || list[0].ClaimedBy != "a" || list[0].Status != coord.Claimed {
		t.Fatalf("restored registry: %s (t1 %s by %q), want the last good one: t1 claimed by a, t2", got, list[0].Status, list[0].ClaimedBy)
	}
	e.claim(s, "b", "t2")
	restored := false
	_, err = s.LogRead(e.ctx, 0, func(line string) error {
		restored = restored || strings.Contains(line, "restored")
		return nil
	})
	ok(t, "log", err)
	if !restored {
		t.Errorf("the log does not say the registry was restored")
	}
}

// checkDoctor: a project used normally is healthy.
func checkDoctor(t *testing.T, e *env) {
	s := e.svc()
	probs, err := s.Doctor(e.ctx, false)
	if err != nil || len(probs) != 0 {
		t.Fatalf("doctor on a fresh project: %+v, %v", probs, err)
	}
	e.seed(s, &coord.Task{ID: "t1"}, &coord.Task{ID: "t2", Deps: []string{"t1"}})
	e.done(s, "a", "t1")
	e.claim(s, "a", "t2")
	_, err = s.LockPaths(e.ctx, "a", []string{"src"}, 0)
	ok(t, "lock", err)
	_, err = s.KVSet(e.ctx, "k", json.RawMessage(`1`), time.Hour, "a", coord.KVCond{})
	ok(t, "kv", err)
	_, err = s.AcquireLease(e.ctx, coord.LeaseRequest{Name: "l", Holder: "a", TTL: time.Hour})
	ok(t, "lease", err)
	_, err = s.QuotaAdd(e.ctx, "a", 1, 1)
	ok(t, "quota", err)
	_, err = s.Archive(e.ctx, time.Time{})
	ok(t, "archive", err)
	probs, err = s.Doctor(e.ctx, false)
	if err != nil || len(probs) != 0 {
		var what []string
		for _, p := range probs {
			what = append(what, p.What)
		}
		t.Fatalf("doctor after ordinary use: %q, %v", what, err)
	}
}

// checkConfig: the project's settings are changed one key at a time
// (Backend.SetConfig) on every engine: a new opening reads the change,
// every other stored key stays as it was, an unknown key or a bad value is
// refused with nothing written, an unset returns a key to its default,
// and writers changing different keys at once lose none of them.
func checkConfig(t *testing.T, e *env) {
	b := e.open()
	before, err := b.ConfigData(e.ctx)
	ok(t, "config data", err)
	cfg, err := b.SetConfig(e.ctx, "stale_after", json.RawMessage(`"7m"`))
	ok(t, "set stale_after", err)
	if cfg.StaleAfter != 7*time.Minute {
		t.Fatalf("SetConfig returned stale_after %v, want 7m", cfg.StaleAfter)
	}
	fresh := func() coord.Config {
		t.Helper()
		c, err := e.open().Config(e.ctx)
		ok(t, "config of a new opening", err)
		return c
	}
	if c := fresh(); c.StaleAfter != 7*time.Minute {
		t.Fatalf("a new opening reads stale_after %v, want 7m", c.StaleAfter)
	}
	after, err := b.ConfigData(e.ctx)
	ok(t, "config data", err)
	if !strings.Contains(string(after), `"stale_after": "7m"`) {
		t.Fatalf("stored settings:\n%s", after)
	}
	var was map[string]json.RawMessage
	json.Unmarshal(before, &was)
	var now map[string]json.RawMessage
	ok(t, "stored settings are JSON", json.Unmarshal(after, &now))
	for k, v := range was {
		if k != "stale_after" && string(now[k]) != string(v) {
			t.Errorf("key %s was %s, is %s after setting another", k, v, now[k])
		}
	}

	raw := e.p.Raw(t)
	_, err = b.SetConfig(e.ctx, "stale_aftr", json.RawMessage(`"1m"`))
	wantCode(t, "an unknown key", err, coord.CodeUsage, "stale_aftr", "stale_after")
	_, err = b.SetConfig(e.ctx, "on_stale", json.RawMessage(`"later"`))
	wantCode(t, "a bad value", err, coord.CodeUsage, "on_stale", "later")
	_, err = b.SetConfig(e.ctx, "beat_interval", json.RawMessage(`12`))
	wantCode(t, "a value of the wrong type", err, coord.CodeUsage, "beat_interval")
	if got := e.p.Raw(t); !reflect.DeepEqual(got, raw) {
		t.Fatalf("a refused change wrote something:\nbefore %v\nafter  %v", raw, got)
	}

	_, err = b.SetConfig(e.ctx, "stale_after", nil)
	ok(t, "unset", err)
	if c := fresh(); c.StaleAfter != coord.DefaultConfig().StaleAfter {
		t.Fatalf("after unset, stale_after %v, want the default", c.StaleAfter)
	}

	// Four writers, each through its own opening, set their own key ten
	// times at once: every key ends at its writer's last value.
	keys := []string{"lock_wait", "archive_after", "quota_daily_tokens", "quota_daily_requests"}
	var wg sync.WaitGroup
	errs := make(chan error, len(keys))
	for i, k := range keys {
		w := e.open()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 1; n <= 10; n++ {
				v := json.RawMessage(fmt.Sprintf("%d", n*100+i))
				if strings.HasSuffix(k, "_wait") || strings.HasSuffix(k, "_after") {
					v = json.RawMessage(fmt.Sprintf(`"%ds"`, n*100+i))
				}
				if _, err := w.SetConfig(e.ctx, k, v); err != nil {
					errs <- fmt.Errorf("%s: %w", k, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	c := fresh()
	if c.LockWait != 1000*time.Second || c.ArchiveAfter != 1001*time.Second || c.Quota.Tokens != 1002 || c.Quota.Requests != 1003 {
		t.Fatalf("after concurrent writers: lock_wait %v, archive_after %v, tokens %d, requests %d; want 1000s, 1001s, 1002, 1003",
			c.LockWait, c.ArchiveAfter, c.Quota.Tokens, c.Quota.Requests)
	}
}
