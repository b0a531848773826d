package conformance

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
)

// checkCountersRestored: lease epochs and kv revisions are each issued
// once in a project's life, even after their stored state is restored
// from an older copy (a backup, version control: doctor's own hint for a
// damaged file): the next grant and the next write issue a value above
// every one issued before.
func checkCountersRestored(t *testing.T, e *env) {
	if e.p.Keep == nil {
		t.Skip("the engine has no stored state to restore")
	}
	s := e.svc()
	first, err := s.AcquireLease(e.ctx, coord.LeaseRequest{Name: "l1", Holder: "a", TTL: time.Hour})
	ok(t, "acquire", err)
	k1, err := s.KVSet(e.ctx, "k1", json.RawMessage(`1`), time.Hour, "a", coord.KVCond{})
	ok(t, "set", err)
	restoreLeases, restoreKV := e.p.Keep(t, Leases), e.p.Keep(t, KV)

	var issued, revs []int64
	for i := range 3 {
		name := "l" + strconv.Itoa(i+2)
		l, err := s.AcquireLease(e.ctx, coord.LeaseRequest{Name: name, Holder: "b", TTL: time.Hour})
		ok(t, "acquire "+name, err)
		ok(t, "release "+name, s.ReleaseLease(e.ctx, name, "b", l.Epoch))
		issued = append(issued, l.Epoch)
		k, err := s.KVSet(e.ctx, "k1", json.RawMessage(strconv.Itoa(i+2)), time.Hour, "b", coord.KVCond{})
		ok(t, "set k1", err)
		revs = append(revs, k.Rev)
		found, err := s.KVDelete(e.ctx, "k1")
		if err != nil || !found {
			t.Fatalf("delete k1: %v, %v", found, err)
		}
	}
	restoreLeases()
	restoreKV()

	// The restored state reads as the older copy did ...
	if got, _, err := s.KVGet(e.ctx, "k1"); err != nil || string(got.Value) != "1" {
		t.Fatalf("restored k1: %+v, %v", got, err)
	}
	// ... and what is issued next was never issued before.
	l, err := s.AcquireLease(e.ctx, coord.LeaseRequest{Name: "l9", Holder: "c", TTL: time.Hour})
	ok(t, "acquire after the restore", err)
	if hi := max(first.Epoch, issued[len(issued)-1]); l.Epoch <= hi {
		t.Errorf("lease epoch %d after the restore; epochs up to %d were issued before it (%d, %v)", l.Epoch, hi, first.Epoch, issued)
	}
	k, err := s.KVSet(e.ctx, "k9", json.RawMessage(`9`), time.Hour, "c", coord.KVCond{})
	ok(t, "set after the restore", err)
	if hi := max(k1.Rev, revs[len(revs)-1]); k.Rev <= hi {
		t.Errorf("kv revision %d after the restore; revisions up to %d were issued before it (%d, %v)", k.Rev, hi, k1.Rev, revs)
	}
	// A conditional write on the restored key sees a revision it never
	// saw before too.
	k, err = s.KVSet(e.ctx, "k1", json.RawMessage(`10`), time.Hour, "c", coord.KVCond{})
	ok(t, "set k1 after the restore", err)
	if k.Rev <= max(k1.Rev, revs[len(revs)-1]) {
		t.Errorf("k1 at revision %d after the restore, issued before", k.Rev)
	}
}

// checkEpochCeiling: a hand edit (or, before, a seed line) that puts an
// epoch above coord.MaxCounter into the registry never stops the claims:
// such a value was never issued and is not taken as the counter; doctor
// names it as damage, and --repair puts it back in range.
func checkEpochCeiling(t *testing.T, e *env) {
	if e.p.Edit == nil {
		t.Skip("the engine cannot edit its registry by hand")
	}
	s := e.svc()
	e.seed(s, &coord.Task{ID: "t1"}, &coord.Task{ID: "t2"}, &coord.Task{ID: "t3"})
	before := e.claim(s, "a", "t1")
	huge := []byte(strconv.FormatInt(1<<63-1, 10))
	e.p.Edit(t, func(doc []byte) []byte {
		// t2's epoch and the counter pushed to the end of int64.
		if !bytes.Contains(doc, []byte(`"last_epoch":`)) {
			t.Fatalf("the registry has no last_epoch: %s", doc)
		}
		return replaceNumber(replaceEpoch(t, doc, "t2", huge), []byte(`"last_epoch":`), huge)
	})
	s = e.svc() // reopened: nothing cached
	after := e.claim(s, "b", "t3")
	if after <= before || !coord.CounterOK(after) {
		t.Fatalf("claim after the edit: epoch %d (before it: %d)", after, before)
	}
	probs, err := s.Doctor(e.ctx, false)
	if err != nil || !mentions(probs, "above the counter ceiling") {
		t.Fatalf("doctor does not report the damage: %+v, %v", probs, err)
	}
	if _, err := s.Doctor(e.ctx, true); err != nil {
		t.Fatalf("doctor --repair: %v", err)
	}
	if probs, err := s.Doctor(e.ctx, false); err != nil || len(probs) != 0 {
		t.Fatalf("after the repair: %+v, %v", probs, err)
	}
	if t2 := e.task(s, "t2"); t2 == nil || !coord.CounterOK(t2.Epoch) {
		t.Fatalf("t2 after the repair: %+v", t2)
	}
	last := e.claim(s, "c", "t2")
	if last <= after {
		t.Fatalf("claim after the repair: epoch %d, issued %d before", last, after)
	}
}

func mentions(probs []coord.Problem, s string) bool {
	for _, p := range probs {
		if strings.Contains(p.What, s) {
			return true
		}
	}
	return false
}

// replaceEpoch sets the "epoch" member of task id (written on one line,
// as coord writes a task) to n.
func replaceEpoch(t *testing.T, doc []byte, id string, n []byte) []byte {
	t.Helper()
	i := bytes.Index(doc, []byte(`"id":"`+id+`"`))
	if i < 0 {
		t.Fatalf("no task %s in the registry", id)
	}
	end := bytes.IndexByte(doc[i:], '}')
	line := replaceNumber(doc[i:i+end], []byte(`"epoch":`), n)
	return append(append(append([]byte{}, doc[:i]...), line...), doc[i+end:]...)
}

// replaceNumber replaces the number after the first name in doc with n.
func replaceNumber(doc, name, n []byte) []byte {
	i := bytes.Index(doc, name)
	if i < 0 {
		return doc
	}
	j := i + len(name)
	for j < len(doc) && (doc[j] == ' ' || doc[j] >= '0' && doc[j] <= '9') {
		j++
	}
	return append(append(append([]byte{}, doc[:i+len(name)]...), n...), doc[j:]...)
}
