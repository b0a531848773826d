package coord

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// A value above the counter ceiling was never issued: it raises no
// counter, and the next value is issued from the in-range ones; a counter
// at the ceiling itself refuses (CodeIO), never wraps.
func TestCounterCeiling(t *testing.T) {
	for _, c := range []struct {
		n       int64
		ok      bool
		counted int64
	}{{0, true, 0}, {7, true, 7}, {MaxCounter, true, MaxCounter}, {MaxCounter + 1, false, 0}, {math.MaxInt64, false, 0}, {-1, false, 0}} {
		if CounterOK(c.n) != c.ok || Counted(c.n) != c.counted {
			t.Errorf("%d: CounterOK %v, Counted %d", c.n, CounterOK(c.n), Counted(c.n))
		}
	}
	if n, err := NextCounter("epoch", 41); n != 42 || err != nil {
		t.Errorf("NextCounter(41) = %d, %v", n, err)
	}
	if _, err := NextCounter("epoch", MaxCounter); CodeOf(err) != CodeIO || !strings.Contains(err.Error(), "ceiling") {
		t.Errorf("NextCounter at the ceiling: %v", err)
	}
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

	// Task epochs: a task's epoch (a seed line's, a hand edit's) above the
	// ceiling does not stop the claims.
	tx := newTxn(&Task{ID: "a", Epoch: 5}, &Task{ID: "b", Epoch: math.MaxInt64}, &Task{ID: "c"})
	if tx.LastEpoch != 5 {
		t.Fatalf("counter %d, want 5 (the value above the ceiling never issued)", tx.LastEpoch)
	}
	got, err := tx.Claim(Agent{ID: "x"}, ClaimOptions{TaskID: "c"})
	if err != nil || got.Epoch != 6 {
		t.Fatalf("claim: %+v, %v; want epoch 6", got, err)
	}
	tx = newTxn(&Task{ID: "c"})
	tx.LastEpoch = MaxCounter
	if _, err := tx.Claim(Agent{ID: "x"}, ClaimOptions{TaskID: "c"}); CodeOf(err) != CodeIO || tx.Task("c").Status != Unclaimed {
		t.Fatalf("claim at the ceiling: %v, %+v", err, tx.Task("c"))
	}

	// Lease epochs: the floor counts every lease and ignores values
	// above the ceiling; Mend puts them back in range.
	ls := &LeaseSet{LastEpoch: math.MaxInt64, Leases: []Lease{
		{Name: "a", Holder: "x", Epoch: 9, ExpiresAt: FormatTime(now.Add(time.Hour))},
		{Name: "b", Holder: "x", Epoch: MaxCounter + 5, ExpiresAt: FormatTime(now.Add(time.Hour))},
	}}
	l, _, err := ls.Grant(LeaseRequest{Name: "c", Holder: "y", TTL: time.Hour}, now)
	if err != nil || l.Epoch != 10 || ls.LastEpoch != 10 {
		t.Fatalf("grant: %+v, %v (counter %d); want epoch 10", l, err, ls.LastEpoch)
	}
	ls.LastEpoch = 3 // a hand edit below a lease in force
	if l, _, err := ls.Grant(LeaseRequest{Name: "d", Holder: "y", TTL: time.Hour}, now); err != nil || l.Epoch != 11 {
		t.Fatalf("grant over a lowered counter: %+v, %v; want epoch 11", l, err)
	}
	ls.LastEpoch = math.MaxInt64
	what := ls.Mend()
	if len(what) != 2 || ls.LastEpoch != 12 || ls.Leases[1].Epoch != 12 || !strings.Contains(strings.Join(what, ";"), "above the counter ceiling") {
		t.Fatalf("mend: %q, %+v", what, ls)
	}
	if what := ls.Mend(); len(what) != 0 {
		t.Fatalf("mend of a sound set: %q", what)
	}
	ls.Raise(40)
	if ls.LastEpoch != 40 {
		t.Fatalf("raised to the mark: %d", ls.LastEpoch)
	}

	// KV revisions alike.
	kv := &KVSpace{LastRev: math.MaxInt64, Keys: []KVEntry{
		{Key: "a", Value: json.RawMessage(`1`), Rev: 4, ExpiresAt: FormatTime(now.Add(time.Hour))},
		{Key: "b", Value: json.RawMessage(`1`), Rev: math.MaxInt64, ExpiresAt: FormatTime(now.Add(time.Hour))},
	}}
	e, _, err := kv.Set("c", json.RawMessage(`2`), time.Hour, "x", KVCond{}, now)
	if err != nil || e.Rev != 5 {
		t.Fatalf("set: %+v, %v; want rev 5", e, err)
	}
	if found, _ := kv.Delete("a", now); !found || kv.LastRev != 6 {
		t.Fatalf("delete: counter %d, want 6", kv.LastRev)
	}
	kv.LastRev = MaxCounter
	if _, _, err := kv.Set("d", json.RawMessage(`2`), time.Hour, "x", KVCond{}, now); CodeOf(err) != CodeIO {
		t.Fatalf("set at the ceiling: %v", err)
	}
	// (Without its mark, a space whose counter was edited knows only the
	// revisions it records: the engine raises it to its mark first.)
	kv.LastRev = math.MaxInt64
	if what := kv.Mend(); len(what) != 2 || kv.LastRev != 6 || kv.Keys[0].Key != "b" || kv.Keys[0].Rev != 6 {
		t.Fatalf("mend: %q, %+v", what, kv)
	}
}
