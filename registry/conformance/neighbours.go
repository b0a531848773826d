package conformance

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// checkLeases: a lease is exclusive while in force, renewed and released
// only by its holder at its epoch (CodeLost otherwise), invisible once its
// TTL passes, granted again with a greater epoch, and dropped by the full
// maintenance step.
func checkLeases(t *testing.T, e *env) {
	s := e.svc()
	a, err := s.AcquireLease(e.ctx, coord.LeaseRequest{Name: "deploy", Holder: "a", TTL: time.Minute})
	ok(t, "acquire", err)
	_, err = s.AcquireLease(e.ctx, coord.LeaseRequest{Name: "deploy", Holder: "b", TTL: time.Minute})
	wantCode(t, "a second holder", err, coord.CodeConflict, "deploy", "a")
	_, err = s.RenewLease(e.ctx, "deploy", "b", coord.NoEpoch, time.Minute)
	wantCode(t, "renewal by another", err, coord.CodeLost, "deploy")
	_, err = s.RenewLease(e.ctx, "deploy", "a", a.Epoch+1, time.Minute)
	wantCode(t, "renewal at another epoch", err, coord.CodeLost, "deploy")

	// Renewed before expiry, it outlives its first TTL.
	e.clock.Advance(50 * time.Second)
	r, err := s.RenewLease(e.ctx, "deploy", "a", a.Epoch, 0)
	ok(t, "renew", err)
	if r.Epoch != a.Epoch || !r.Expires().After(a.Expires()) {
		t.Errorf("renewed %+v from %+v", r, a)
	}
	e.clock.Advance(50 * time.Second)
	if ls, err := s.Leases(e.ctx); err != nil || len(ls) != 1 || ls[0].Holder != "a" {
		t.Fatalf("after renewal, past the first TTL: %+v, %v", ls, err)
	}

	// Expired: gone for every reader, the old holder is fenced, a new
	// grant has a greater epoch.
	e.clock.Advance(time.Minute)
	if ls, err := s.Leases(e.ctx); err != nil || len(ls) != 0 {
		t.Fatalf("an expired lease is listed: %+v, %v", ls, err)
	}
	_, err = s.RenewLease(e.ctx, "deploy", "a", a.Epoch, time.Minute)
	wantCode(t, "renewal after expiry", err, coord.CodeLost, "deploy")
	b, err := s.AcquireLease(e.ctx, coord.LeaseRequest{Name: "deploy", Holder: "b", TTL: time.Minute})
	ok(t, "acquire after expiry", err)
	if b.Epoch <= a.Epoch {
		t.Errorf("new grant at epoch %d, not after %d", b.Epoch, a.Epoch)
	}
	err = s.ReleaseLease(e.ctx, "deploy", "a", a.Epoch)
	wantCode(t, "release by the old holder", err, coord.CodeLost, "deploy")
	ok(t, "release", s.ReleaseLease(e.ctx, "deploy", "b", b.Epoch))
	if ls, err := s.Leases(e.ctx); err != nil || len(ls) != 0 {
		t.Fatalf("a released lease is listed: %+v, %v", ls, err)
	}

	// A dry run grants nothing; maintenance drops what expired.
	_, err = s.AcquireLease(e.ctx, coord.LeaseRequest{Name: "probe", Holder: "c", TTL: time.Minute, DryRun: true})
	ok(t, "dry run", err)
	_, err = s.AcquireLease(e.ctx, coord.LeaseRequest{Name: "probe", Holder: "d", TTL: time.Minute})
	ok(t, "acquire after a dry run", err)
	e.clock.Advance(2 * time.Minute)
	// (How many it drops is the engine's business: a server may expire
	// them itself.)
	res, err := s.Maintain(e.ctx, app.MaintainRequest{Full: true})
	if err != nil || len(res.Problems) > 0 {
		t.Fatalf("maintain: %v %v", res.Problems, err)
	}
	if ls, err := s.Leases(e.ctx); err != nil || len(ls) != 0 {
		t.Fatalf("after maintenance: %+v, %v", ls, err)
	}
	_, err = s.AcquireLease(e.ctx, coord.LeaseRequest{Name: "probe", Holder: "c", TTL: time.Minute})
	ok(t, "acquire after maintenance", err)
}

// checkKV: keys expire with their TTL, and conditional writes succeed
// only when their condition holds (CodeConflict otherwise, nothing
// written); revisions grow.
func checkKV(t *testing.T, e *env) {
	s := e.svc()
	val := func(v string) json.RawMessage { b, _ := json.Marshal(v); return b }
	k1, err := s.KVSet(e.ctx, "task/1/status", val("running"), time.Minute, "a", coord.KVCond{ExpectAbsent: true})
	ok(t, "create", err)
	_, err = s.KVSet(e.ctx, "task/1/status", val("other"), time.Minute, "b", coord.KVCond{ExpectAbsent: true})
	wantCode(t, "create over a key in force", err, coord.CodeConflict, "task/1/status")
	k2, err := s.KVSet(e.ctx, "task/1/status", val("done"), time.Minute, "a", coord.KVCond{ExpectRev: k1.Rev})
	ok(t, "write at the current revision", err)
	if k2.Rev <= k1.Rev {
		t.Errorf("revision %d after %d", k2.Rev, k1.Rev)
	}
	_, err = s.KVSet(e.ctx, "task/1/status", val("lost"), time.Minute, "b", coord.KVCond{ExpectRev: k1.Rev})
	wantCode(t, "write at an old revision", err, coord.CodeConflict, "task/1/status")
	if got, found, err := s.KVGet(e.ctx, "task/1/status"); err != nil || !found || got.Text() != "done" || got.Rev != k2.Rev {
		t.Fatalf("get: %+v %v %v", got, found, err)
	}
	_, err = s.KVSet(e.ctx, "task/2/status", val("x"), 3*time.Minute, "a", coord.KVCond{})
	ok(t, "set", err)
	_, err = s.KVSet(e.ctx, "other", val("y"), 3*time.Minute, "a", coord.KVCond{})
	ok(t, "set", err)
	if list, err := s.KVList(e.ctx, "task/"); err != nil || len(list) != 2 || list[0].Key != "task/1/status" {
		t.Fatalf("list task/: %+v %v", list, err)
	}

	// Past its TTL a key is gone for every reader; creating it again
	// succeeds; maintenance drops it from storage.
	e.clock.Advance(2 * time.Minute)
	if _, found, err := s.KVGet(e.ctx, "task/1/status"); err != nil || found {
		t.Fatalf("an expired key is found (%v)", err)
	}
	if list, err := s.KVList(e.ctx, "task/"); err != nil || len(list) != 1 || list[0].Key != "task/2/status" {
		t.Fatalf("list after expiry: %+v %v", list, err)
	}
	_, err = s.KVSet(e.ctx, "task/1/status", val("again"), time.Minute, "b", coord.KVCond{ExpectRev: k2.Rev})
	wantCode(t, "write at the revision of an expired key", err, coord.CodeConflict, "task/1/status")
	e.clock.Advance(2 * time.Minute)
	res, err := s.Maintain(e.ctx, app.MaintainRequest{Full: true})
	if err != nil || len(res.Problems) > 0 {
		t.Fatalf("maintain: %v %v", res.Problems, err)
	}
	if list, err := s.KVList(e.ctx, ""); err != nil || len(list) != 0 {
		t.Fatalf("after maintenance: %+v %v", list, err)
	}
	k3, err := s.KVSet(e.ctx, "task/1/status", val("again"), time.Minute, "b", coord.KVCond{ExpectAbsent: true})
	ok(t, "create after expiry", err)
	if k3.Rev <= k2.Rev {
		t.Errorf("revision %d after %d", k3.Rev, k2.Rev)
	}
	if found, err := s.KVDelete(e.ctx, "task/1/status"); err != nil || !found {
		t.Fatalf("delete: %v %v", found, err)
	}
	if found, err := s.KVDelete(e.ctx, "task/1/status"); err != nil || found {
		t.Fatalf("delete again: %v %v", found, err)
	}
}

// checkQuota: limits refuse an addition whole, counters never wrap, and a
// new UTC day starts from zero.
func checkQuota(t *testing.T, e *env) {
	d := decorate(e.open())
	d.cfg = func(c *coord.Config) { c.Quota = coord.QuotaLimits{Tokens: 1000, Requests: 3} }
	s := e.service(d)
	_, err := s.QuotaAdd(e.ctx, "a", 600, 1)
	ok(t, "add", err)
	_, err = s.QuotaAdd(e.ctx, "b", 500, 1)
	wantCode(t, "past the token limit", err, coord.CodeConflict, "1000")
	_, err = s.QuotaAdd(e.ctx, "b", 400, 1)
	ok(t, "add up to the limit", err)
	_, err = s.QuotaAdd(e.ctx, "b", 0, 2)
	wantCode(t, "past the request limit", err, coord.CodeConflict, "3")
	q, err := s.QuotaShow(e.ctx)
	ok(t, "show", err)
	if q.TokensUsed != 1000 || q.Requests != 2 || q.AgentBreakdown["a"].Tokens != 600 || q.AgentBreakdown["b"].Tokens != 400 {
		t.Fatalf("counters after refusals: %+v", q)
	}

	// Without limits: a sum past 2^63-1 refuses instead of wrapping.
	d.cfg = nil
	s = e.service(d)
	_, err = s.QuotaAdd(e.ctx, "a", math.MaxInt64-1000, 0)
	ok(t, "add to the brim", err)
	_, err = s.QuotaAdd(e.ctx, "b", 1, 0)
	wantCode(t, "an addition that would wrap", err, coord.CodeConflict, "overflow")
	q, err = s.QuotaShow(e.ctx)
	ok(t, "show", err)
	if q.TokensUsed != math.MaxInt64 || q.TokensUsed < 0 {
		t.Fatalf("tokens %d, want 2^63-1", q.TokensUsed)
	}

	// The next UTC day starts at zero; the old day's totals are kept.
	day := e.clock.Now().UTC().Format("2006-01-02")
	e.clock.Advance(24 * time.Hour)
	q, err = s.QuotaShow(e.ctx)
	ok(t, "show", err)
	if q.TokensUsed != 0 || q.Requests != 0 {
		t.Fatalf("a new day: %+v", q)
	}
	_, err = s.QuotaAdd(e.ctx, "a", 5, 1)
	ok(t, "add on a new day", err)
	q, err = s.QuotaShow(e.ctx)
	ok(t, "show", err)
	if q.TokensUsed != 5 || q.History[day].Tokens != math.MaxInt64 {
		t.Fatalf("after a day: %d tokens, history %+v", q.TokensUsed, q.History)
	}
}
