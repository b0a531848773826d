package nats_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend/backendtest"
	coordnats "github.com/rotd/coordination/registry/nats"
)

func TestLeases(t *testing.T) {
	h := startHub(t)
	b := open(t, newNamespace(t, h, "leases"), coordnats.Options{})
	ctx := context.Background()
	L := b.Leases()
	l1, err := L.Acquire(ctx, coord.LeaseRequest{Name: "deploy:prod", Holder: "a", TTL: time.Hour, Meta: map[string]string{"why": "x"}})
	if err != nil || l1.Holder != "a" || l1.Epoch <= 0 {
		t.Fatalf("acquire: %+v %v", l1, err)
	}
	if _, err := L.Acquire(ctx, coord.LeaseRequest{Name: "deploy:prod", Holder: "b", TTL: time.Hour}); coord.CodeOf(err) != coord.CodeConflict || !strings.Contains(err.Error(), "held by a") {
		t.Fatalf("second acquire: %v", err)
	}
	r, err := L.Renew(ctx, "deploy:prod", "a", l1.Epoch, 2*time.Hour)
	if err != nil || r.Epoch != l1.Epoch || r.GrantedAt != l1.GrantedAt || r.TTL != "2h0m0s" {
		t.Fatalf("renew: %+v %v", r, err)
	}
	if _, err := L.Renew(ctx, "deploy:prod", "a", l1.Epoch+1, 0); coord.CodeOf(err) != coord.CodeLost {
		t.Fatalf("renew at a wrong epoch: %v", err)
	}
	ls, err := L.List(ctx)
	if err != nil || len(ls) != 1 || ls[0].Epoch != l1.Epoch || ls[0].Meta["why"] != "x" || ls[0].ExpiresAt != r.ExpiresAt {
		t.Fatalf("list: %+v %v", ls, err)
	}
	if err := L.Release(ctx, "deploy:prod", "b", coord.NoEpoch); coord.CodeOf(err) != coord.CodeLost {
		t.Fatalf("release by another: %v", err)
	}
	if err := L.Release(ctx, "deploy:prod", "a", l1.Epoch); err != nil {
		t.Fatal(err)
	}
	l2, err := L.Acquire(ctx, coord.LeaseRequest{Name: "deploy:prod", Holder: "b", TTL: time.Second})
	if err != nil || l2.Epoch <= l1.Epoch {
		t.Fatalf("acquire after release: %+v %v (epoch must pass %d)", l2, err, l1.Epoch)
	}
	// The server drops it after its TTL; then anyone may take it, at a
	// later epoch.
	var l3 coord.Lease
	backendtest.Wait(t, "the lease to expire", func() bool {
		l3, err = L.Acquire(ctx, coord.LeaseRequest{Name: "deploy:prod", Holder: "c", TTL: time.Hour})
		return err == nil
	})
	if l3.Epoch <= l2.Epoch {
		t.Fatalf("epochs %d then %d", l2.Epoch, l3.Epoch)
	}
}

func TestKV(t *testing.T) {
	h := startHub(t)
	b := open(t, newNamespace(t, h, "kv"), coordnats.Options{})
	ctx := context.Background()
	K := b.KV()
	key := "questions/4.2 ✓"
	e1, err := K.Set(ctx, key, json.RawMessage(`{"q":1}`), time.Hour, "a", coord.KVCond{ExpectAbsent: true})
	if err != nil || e1.Rev <= 0 {
		t.Fatalf("set: %+v %v", e1, err)
	}
	if _, err := K.Set(ctx, key, json.RawMessage(`2`), time.Hour, "b", coord.KVCond{ExpectAbsent: true}); coord.CodeOf(err) != coord.CodeConflict {
		t.Fatalf("set absent over a key: %v", err)
	}
	if _, err := K.Set(ctx, key, json.RawMessage(`2`), time.Hour, "b", coord.KVCond{ExpectRev: e1.Rev + 100}); coord.CodeOf(err) != coord.CodeConflict {
		t.Fatalf("set at a wrong revision: %v", err)
	}
	e2, err := K.Set(ctx, key, json.RawMessage(`2`), time.Hour, "b", coord.KVCond{ExpectRev: e1.Rev})
	if err != nil || e2.Rev <= e1.Rev {
		t.Fatalf("set at its revision: %+v %v", e2, err)
	}
	got, ok, err := K.Get(ctx, key)
	if err != nil || !ok || got.Rev != e2.Rev || string(got.Value) != "2" || got.UpdatedBy != "b" {
		t.Fatalf("get: %+v %v %v", got, ok, err)
	}
	K.Set(ctx, "questions/other", json.RawMessage(`"x"`), time.Second, "a", coord.KVCond{})
	K.Set(ctx, "zzz", json.RawMessage(`"x"`), time.Hour, "a", coord.KVCond{})
	l, err := K.List(ctx, "questions/")
	if err != nil || len(l) != 2 || l[0].Key != key {
		t.Fatalf("list: %+v %v", l, err)
	}
	backendtest.Wait(t, "the key to expire", func() bool {
		_, ok, _ := K.Get(ctx, "questions/other")
		return !ok
	})
	if found, err := K.Delete(ctx, key); err != nil || !found {
		t.Fatalf("delete: %v %v", found, err)
	}
	if found, err := K.Delete(ctx, key); err != nil || found {
		t.Fatalf("delete again: %v %v", found, err)
	}
	if _, ok, _ := K.Get(ctx, key); ok {
		t.Fatal("deleted key still there")
	}
	e3, err := K.Set(ctx, key, json.RawMessage(`3`), time.Hour, "c", coord.KVCond{ExpectAbsent: true})
	if err != nil || e3.Rev <= e2.Rev {
		t.Fatalf("recreate: %+v %v", e3, err)
	}
}

func TestQuota(t *testing.T) {
	h := startHub(t)
	s := service(t, open(t, newNamespace(t, h, "quota"), coordnats.Options{}))
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if _, err := s.QuotaAdd(ctx, "a", 100, 1); err != nil {
			t.Fatal(err)
		}
	}
	q, err := s.QuotaShow(ctx)
	if err != nil || q.TokensUsed != 300 || q.AgentBreakdown["a"].Requests != 3 {
		t.Fatalf("quota: %+v %v", q, err)
	}
}

// The last n lines cost the same whatever the log's length; every line
// read back whole and in order; a follower sees what is appended after it
// started.
func TestLog(t *testing.T) {
	h := startHub(t)
	b := open(t, newNamespace(t, h, "log"), coordnats.Options{})
	ctx := context.Background()
	L := b.Log()
	now := time.Now().UTC()
	for i := 0; i < 50; i++ {
		evs := []coord.Event{{Time: now, Agent: "a", Text: fmt.Sprintf("line %d", 2*i)}, {Time: now, Agent: "a", Text: fmt.Sprintf("line %d", 2*i+1)}}
		if err := L.Append(ctx, evs...); err != nil {
			t.Fatal(err)
		}
	}
	read := func(n int) []string {
		var out []string
		if _, err := L.Read(ctx, n, func(l string) error { out = append(out, l); return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, n := range []int{1, 3, 10, 99, 100, 1000, 0} {
		got := read(n)
		want := n
		if n <= 0 || n > 100 {
			want = 100
		}
		if len(got) != want || !strings.HasSuffix(got[len(got)-1], "line 99") || !strings.HasSuffix(got[0], fmt.Sprintf("line %d", 100-want)) {
			t.Fatalf("read %d: %d lines, %q … %q", n, len(got), got[0], got[len(got)-1])
		}
	}
	f, err := L.Follow(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	L.Append(ctx, coord.Event{Time: now, Agent: "b", Text: "after"})
	var got []string
	backendtest.Wait(t, "the follower", func() bool {
		l, _ := f.Poll(ctx)
		got = append(got, l...)
		return len(got) > 0
	})
	if len(got) != 1 || !strings.HasSuffix(got[0], "after") {
		t.Fatalf("followed %q", got)
	}
}

// A watcher wakes on a claim in another connection, without polling.
func TestWatch(t *testing.T) {
	h := startHub(t)
	url := newNamespace(t, h, "watch")
	s := service(t, open(t, url, coordnats.Options{}))
	seed(t, s, "1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := open(t, url, coordnats.Options{}).Changes().Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: "a"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(60 * time.Second):
		t.Fatal("no notification")
	}
	cancel()
	for range ch { // closed when ctx ends
	}
}

// Two hosts whose wall clocks differ by twenty minutes judge liveness the
// same. As in production (coord always passes coord.SystemClock), each
// host's engine is on the system clock and its application reads the
// host's own (skewed) clock: liveness and claim instants are the
// server's. And the engine's test hook stays a test's: a client opened on
// an injected clock an hour behind shifts only its own view, and the note
// of that shift it leaves on its heartbeat is ignored by the hosts on the
// system clock, which judge the beat by the server's timestamp.
func TestClockSkew(t *testing.T) {
	h := startHub(t)
	url := newNamespace(t, h, "skew")
	host := func(skew time.Duration) *app.Service {
		b := open(t, url, coordnats.Options{Clock: coord.SystemClock})
		s, err := app.New(context.Background(), b, app.Options{Clock: func() time.Time { return time.Now().Add(skew) }})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ahead, behind := host(10*time.Minute), host(-10*time.Minute)
	ctx := context.Background()
	seed(t, ahead, "1", "2")
	if _, err := ahead.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: "fast"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := behind.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: "slow"}}); err != nil {
		t.Fatal(err)
	}
	lagging := service(t, open(t, url, coordnats.Options{Clock: func() time.Time { return time.Now().Add(-time.Hour) }}))
	if err := lagging.Beat(ctx, "lagging", nil); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*app.Service{ahead, behind} {
		ags, err := s.Agents(ctx, time.Minute)
		if err != nil || len(ags) != 3 {
			t.Fatalf("agents: %+v %v", ags, err)
		}
		for _, a := range ags {
			if !a.Alive || a.AgeS == nil || *a.AgeS > 30 {
				t.Errorf("%s judged on a client's clock: %+v", a.Agent, a)
			}
		}
		freed, err := s.Sweep(ctx, app.SweepRequest{Timeout: time.Minute, DryRun: true})
		if err != nil || len(freed) != 0 {
			t.Fatalf("sweep judged %+v %v", freed, err)
		}
	}
	// The claim's instant is the server's, not the client's.
	tasks, _ := behind.Tasks(ctx, app.ListRequest{})
	for _, tk := range tasks {
		at, _ := coord.ParseTime(tk.ClaimedAt)
		if d := time.Since(at); d > time.Minute || d < -time.Minute {
			t.Errorf("task %s claimed_at %s: not the server's time", tk.ID, tk.ClaimedAt)
		}
	}
}

// One holder of an exclusive lock at a time (the watcher's); released,
// it can be taken again. The second client runs on an injected clock an
// hour ahead: the lock, renewed by its holder in real time, is judged on
// the server's own clock, which an injected one does not move.
func TestExclusive(t *testing.T) {
	h := startHub(t)
	url := newNamespace(t, h, "excl")
	ctx := context.Background()
	a := open(t, url, coordnats.Options{})
	b := open(t, url, coordnats.Options{Clock: func() time.Time { return time.Now().Add(time.Hour) }})
	release, err := a.HoldExclusive(ctx, "watcher", []byte(`{"holder":"one"}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.HoldExclusive(ctx, "watcher", []byte(`{"holder":"two"}`)); coord.CodeOf(err) != coord.CodeConflict || !strings.Contains(err.Error(), "one") {
		t.Fatalf("second holder: %v", err)
	}
	release()
	release2, err := b.HoldExclusive(ctx, "watcher", []byte(`{"holder":"two"}`))
	if err != nil {
		t.Fatal(err)
	}
	release2()
}
