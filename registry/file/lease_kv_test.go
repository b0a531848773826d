package file

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
)

// Expiry is tested with an injected clock, not sleeps.
func TestLeaseExpiryAndFencing(t *testing.T) {
	s := freshStore(t, crashSeed)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	s.clock = func() time.Time { return now }
	ctx := context.Background()
	l, err := s.Leases().Acquire(ctx, coord.LeaseRequest{Name: "deploy", Holder: "a", TTL: time.Hour})
	if err != nil || l.Epoch != 1 {
		t.Fatalf("acquire: %+v %v", l, err)
	}
	if _, err := s.Leases().Acquire(ctx, coord.LeaseRequest{Name: "deploy", Holder: "b", TTL: time.Hour}); coord.CodeOf(err) != coord.CodeConflict {
		t.Fatalf("second acquire: %v, want conflict", err)
	}
	// one second before expiry it is in force; at expiry it is invisible at once
	now = now.Add(time.Hour - time.Second)
	if ls, _ := s.Leases().List(ctx); len(ls) != 1 {
		t.Fatalf("lease gone early: %v", ls)
	}
	now = now.Add(time.Second)
	if ls, _ := s.Leases().List(ctx); len(ls) != 0 {
		t.Fatalf("expired lease still visible: %v", ls)
	}
	// the old holder's renew and release are refused (exit 6) ...
	if _, err := s.Leases().Renew(ctx, "deploy", "a", 1, time.Hour); coord.CodeOf(err) != coord.CodeLost {
		t.Fatalf("renew of an expired lease: %v", err)
	}
	// ... and after someone else takes it, with a new epoch
	l2, err := s.Leases().Acquire(ctx, coord.LeaseRequest{Name: "deploy", Holder: "b", TTL: time.Hour, Meta: map[string]string{"platform": "codex"}})
	if err != nil || l2.Epoch != 2 {
		t.Fatalf("re-acquire: %+v %v", l2, err)
	}
	if err := s.Leases().Release(ctx, "deploy", "a", 1); coord.CodeOf(err) != coord.CodeLost {
		t.Fatalf("release by the old holder: %v", err)
	}
	if err := s.Leases().Release(ctx, "deploy", "b", 1); coord.CodeOf(err) != coord.CodeLost {
		t.Fatalf("release with a stale epoch: %v", err)
	}
	if r, err := s.Leases().Renew(ctx, "deploy", "b", 2, 2*time.Hour); err != nil || r.ExpiresAt != "2026-11-22T13:00:00Z" {
		t.Fatalf("renew: %+v %v", r, err)
	}
	// the sweep drops expired leases from the file
	now = now.Add(3 * time.Hour)
	if n, err := s.Leases().Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	for _, bad := range []string{"", "../x", "a/b", "a\x00", string(make([]byte, 200))} {
		if _, err := s.Leases().Acquire(ctx, coord.LeaseRequest{Name: bad, Holder: "a", TTL: time.Hour}); coord.CodeOf(err) != coord.CodeUsage {
			t.Errorf("lease name %q: %v", bad, err)
		}
	}
}

func TestKVTTLAndCAS(t *testing.T) {
	s := freshStore(t, crashSeed)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	s.clock = func() time.Time { return now }
	ctx := context.Background()
	v := coord.KVValue(`{"state":"open"}`)
	e1, err := s.KV().Set(ctx, "question:42", v, time.Minute, "a", coord.KVCond{ExpectAbsent: true})
	if err != nil || e1.Rev != 1 {
		t.Fatalf("cas absent: %+v %v", e1, err)
	}
	if _, err := s.KV().Set(ctx, "question:42", v, time.Minute, "b", coord.KVCond{ExpectAbsent: true}); coord.CodeOf(err) != coord.CodeConflict {
		t.Fatalf("second cas absent: %v", err)
	}
	txt := coord.KVValue("answered by b")
	if _, err := s.KV().Set(ctx, "question:42", txt, time.Minute, "b", coord.KVCond{ExpectRev: 7}); coord.CodeOf(err) != coord.CodeConflict {
		t.Fatalf("cas wrong rev: %v", err)
	}
	e2, err := s.KV().Set(ctx, "question:42", txt, time.Minute, "b", coord.KVCond{ExpectRev: 1})
	if err != nil || e2.Rev != 2 || e2.Text() != "answered by b" {
		t.Fatalf("cas rev 1: %+v %v", e2, err)
	}
	got, ok, _ := s.KV().Get(ctx, "question:42")
	if !ok || got.Text() != "answered by b" || string(got.Value) != `"answered by b"` {
		t.Fatalf("get: %+v", got)
	}
	now = now.Add(time.Minute)
	if _, ok, _ := s.KV().Get(ctx, "question:42"); ok {
		t.Fatal("expired key still visible")
	}
	if list, _ := s.KV().List(ctx, ""); len(list) != 0 {
		t.Fatalf("expired key listed: %v", list)
	}
	// an expired key counts as absent for cas
	if _, err := s.KV().Set(ctx, "question:42", v, time.Minute, "c", coord.KVCond{ExpectAbsent: true}); err != nil {
		t.Fatal(err)
	}
	// hostile keys and values
	for _, k := range []string{"", "a\x00b", "a\nb", string(make([]byte, 300))} {
		if _, err := s.KV().Set(ctx, k, v, time.Minute, "a", coord.KVCond{}); coord.CodeOf(err) != coord.CodeUsage {
			t.Errorf("key %q: %v", k, err)
		}
	}
	if _, err := s.KV().Set(ctx, "k", coord.KVValue(string(make([]byte, coord.MaxKVValue))), time.Minute, "a", coord.KVCond{}); coord.CodeOf(err) != coord.CodeUsage {
		t.Errorf("oversized value accepted: %v", err)
	}
	if _, err := s.KV().Set(ctx, "k", v, 0, "a", coord.KVCond{}); coord.CodeOf(err) != coord.CodeUsage {
		t.Errorf("a key without a TTL was accepted")
	}
	var raw json.RawMessage
	if raw = coord.KVValue("../../etc/passwd"); string(raw) != `"../../etc/passwd"` {
		t.Errorf("text value stored as %s", raw)
	}
}

// TestLeaseRenewKeepsItsTTL: a renewal without a TTL extends the lease by
// the duration it was granted for (not a default of 2h); one written
// before the TTL was recorded uses expires_at - granted_at.
func TestLeaseRenewKeepsItsTTL(t *testing.T) {
	s := freshStore(t, crashSeed)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	s.clock = func() time.Time { return now }
	ctx := context.Background()
	if _, err := s.Leases().Acquire(ctx, coord.LeaseRequest{Name: "deploy", Holder: "a", TTL: 10 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(5 * time.Minute)
	r, err := s.Leases().Renew(ctx, "deploy", "a", coord.NoEpoch, 0)
	if err != nil || r.ExpiresAt != "2026-11-22T10:15:00Z" || r.TTL != "10m0s" {
		t.Fatalf("renew without a TTL: %+v %v, want expiry 10:15 (10m from now)", r, err)
	}
	// a renewal with a TTL of its own makes that the lease's TTL
	if r, err = s.Leases().Renew(ctx, "deploy", "a", coord.NoEpoch, time.Minute); err != nil || r.ExpiresAt != "2026-11-22T10:06:00Z" {
		t.Fatalf("renew 1m: %+v %v", r, err)
	}
	if r, err = s.Leases().Renew(ctx, "deploy", "a", coord.NoEpoch, 0); err != nil || r.ExpiresAt != "2026-11-22T10:06:00Z" {
		t.Fatalf("renew after 1m: %+v %v", r, err)
	}
	old := coord.Lease{GrantedAt: "2026-11-22T10:00:00Z", ExpiresAt: "2026-11-22T10:30:00Z"}
	if d := old.GrantedTTL(); d != 30*time.Minute {
		t.Fatalf("a lease without ttl: GrantedTTL %v, want 30m", d)
	}
}

// quota.json: missing is empty; Update writes what fn made of it, and
// nothing when fn refuses; counters no addition can produce are refused
// on read (exit 2).
func TestQuotaStore(t *testing.T) {
	s := freshStore(t, crashSeed)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	ctx := context.Background()
	os.Remove(s.tree.Path(QuotaFile))
	if q, err := s.Quota().Load(ctx); err != nil || q.TokensUsed != 0 || q.AgentBreakdown == nil {
		t.Fatalf("missing quota.json: %+v, %v", q, err)
	}
	lim := coord.QuotaLimits{Tokens: 100}
	q, err := s.Quota().Update(ctx, func(q *coord.Quota) error { return q.Add("a", 60, 1, lim, now) })
	if err != nil || q.TokensUsed != 60 || q.AgentBreakdown["a"].Requests != 1 {
		t.Fatalf("add: %+v, %v", q, err)
	}
	before := readTreeFile(t, s, QuotaFile)
	if _, err := s.Quota().Update(ctx, func(q *coord.Quota) error { return q.Add("b", 50, 0, lim, now) }); coord.CodeOf(err) != coord.CodeConflict {
		t.Fatalf("past the limit: %v", err)
	}
	if after := readTreeFile(t, s, QuotaFile); string(after) != string(before) {
		t.Fatal("a refused addition was written")
	}
	if q, err := s.Quota().Load(ctx); err != nil || q.TokensUsed != 60 || q.DailyLimit == nil || *q.DailyLimit != 100 {
		t.Fatalf("load: %+v, %v", q, err)
	}
	writeTreeFile(t, s, QuotaFile, []byte(`{"tokens_used":-5,"requests":0,"last_reset":"2026-11-22T00:00:00Z","agent_breakdown":{}}`))
	if _, err := s.Quota().Load(ctx); coord.CodeOf(err) != coord.CodeIO || !strings.Contains(err.Error(), QuotaFile) {
		t.Fatalf("negative counters: %v, want exit 2 naming %s", err, QuotaFile)
	}
}
