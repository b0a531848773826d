package nats_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	gonats "github.com/nats-io/nats.go"

	"github.com/rotd/coordination/coord"
	coordnats "github.com/rotd/coordination/registry/nats"
)

// TestBaseCeiling: lease epochs and kv revisions are the stream's
// sequence plus the namespace's base; a base a hand edit pushed past
// half the counter ceiling would issue values past it. Nothing is issued
// from it (exit 2 naming the key), doctor names it, and a copy whose
// counters would need such a base is refused before anything is written.
//
// Broken build this fails against: the base taken as it is read (the
// grant answers epoch 9223372036854775807+seq, wrapped negative, and
// doctor says every invariant holds).
func TestBaseCeiling(t *testing.T) {
	h := startHub(t)
	url := newNamespace(t, h, "base")
	nc, err := gonats.Connect(h.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := nc.JetStream()
	kv, err := js.KeyValue("coord_base")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put("meta", []byte(`{"version":1,"base":9223372036854775000}`)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s := service(t, open(t, url, coordnats.Options{}))
	_, err = s.AcquireLease(ctx, coord.LeaseRequest{Name: "l", Holder: "a", TTL: time.Hour})
	wantOneLine(t, err, coord.CodeIO, url+" key meta: base 9223372036854775000 is outside 0..4503599627370496")
	_, err = s.KVSet(ctx, "k", json.RawMessage(`1`), time.Hour, "a", coord.KVCond{})
	wantOneLine(t, err, coord.CodeIO, "key meta: base 9223372036854775000")
	probs, err := s.Doctor(ctx, false)
	if err != nil || !hasProblem(probs, "key meta: base 9223372036854775000 is outside 0..4503599627370496") {
		t.Fatalf("doctor: %+v, %v", probs, err)
	}

	// A copy from a tree whose counters a hand edit pushed: values above
	// the ceiling raise nothing; values that would leave no room are
	// refused, nothing written.
	dstB := open(t, newNamespace(t, h, "dst"), coordnats.Options{})
	snap := &coord.Snapshot{Registry: []byte(`{"version":1,"tasks":[]}`), LeaseEpoch: 9223372036854775807, KVRev: 12}
	if err := dstB.Import(ctx, snap); err != nil {
		t.Fatalf("import with a lease counter above the ceiling: %v", err)
	}
	l, err := service(t, dstB).AcquireLease(ctx, coord.LeaseRequest{Name: "l", Holder: "a", TTL: time.Hour})
	if err != nil || l.Epoch <= 12 || !coord.CounterOK(l.Epoch) {
		t.Fatalf("acquire after the import: %+v, %v", l, err)
	}
	far := open(t, newNamespace(t, h, "far"), coordnats.Options{})
	snap.LeaseEpoch = coord.MaxCounter - 10
	err = far.Import(ctx, snap)
	wantOneLine(t, err, coord.CodeUsage, "up to "+strconv.FormatInt(coord.MaxCounter-10, 10))
}

func hasProblem(probs []coord.Problem, s string) bool {
	for _, p := range probs {
		if strings.Contains(p.What, s) {
			return true
		}
	}
	return false
}
