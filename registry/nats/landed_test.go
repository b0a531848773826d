package nats

import (
	"context"
	"strconv"
	"testing"
	"time"

	rotdtemplate "github.com/rotd/coordination"
	"github.com/rotd/coordination/registry/nats/hubtest"
)

// initOpen makes the project at url and opens it, closed when the test
// ends.
func initOpen(t *testing.T, url string) *Backend {
	t.Helper()
	ctx := context.Background()
	if _, _, err := Init(ctx, url, rotdtemplate.Coordination(), Options{}); err != nil {
		t.Fatal(err)
	}
	b, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// A commit whose acknowledgement was lost is resolved by reading the
// commit names back: landed (and at which revision), lost to another
// commit on the same base, or not there yet.
func TestLanded(t *testing.T) {
	b := initOpen(t, hubtest.Start(t)+"/landed")
	ctx := context.Background()
	write := func(name string, base uint64, ring string) uint64 {
		hdr := casHeader(base)
		hdr.Set(hdrTxn, name+":"+strconv.FormatUint(base, 10))
		if ring != "" {
			hdr.Set(hdrRecent, ring)
		}
		seq, err := b.w.publish(ctx, b.names.pre+"doc", []byte("x"), hdr)
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	s1 := write("A", 0, "")
	check := func(base uint64, id string, want outcome, wantSeq uint64) {
		t.Helper()
		got, seq, err := b.landed(ctx, &doc{key: "doc", seq: base}, id, time.Now())
		if err != nil || got != want || seq != wantSeq {
			t.Fatalf("landed(%d, %s) = %v %d %v, want %v %d", base, id, got, seq, err, want, wantSeq)
		}
	}
	check(0, "A", yes, s1)
	check(0, "B", lost, 0)
	check(s1, "B", notYet, 0)
	s2 := write("B", s1, "A:0")
	s3 := write("C", s2, "B:"+strconv.FormatUint(s1, 10)+" A:0")
	check(0, "A", yes, s1)
	check(s1, "B", yes, s2)
	check(s2, "C", yes, s3)
	check(s1, "X", lost, 0)
	check(s3, "X", notYet, 0)
	// Past the names a document carries, the outcome is unknown: an
	// error, never a guess.
	if _, _, err := b.landed(ctx, &doc{key: "doc", seq: 1}, "Q", time.Now()); err == nil {
		t.Fatal("an unknowable outcome was guessed")
	}
}

// After a lost answer, the read-back alone decides: landed, lost to
// another commit on the same base, or (still at the base, even when the
// last attempt was refused because the key had moved: a read behind the
// write) send again and read again.
func TestAfterReadBack(t *testing.T) {
	for o, want := range map[outcome]next{yes: done, lost: refused, notYet: again} {
		if got := afterReadBack(o); got != want {
			t.Errorf("afterReadBack(%v) = %v, want %v", o, got, want)
		}
	}
}
