package file

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/fsops"
)

// TestCounterMarks: leases.json or kv.json restored from an older copy
// never makes coord issue a lease epoch or a kv revision again: the
// .lock/ marks hold the highest issued, and each is raised before the
// document that hands a value out is written.
//
// Broken build this fails against: the counters taken from the documents
// alone (the next lease after the restore gets epoch 2 again).
func TestCounterMarks(t *testing.T) {
	s := freshStore(t, crashSeed)
	ctx := context.Background()
	l1, err := s.Leases().Acquire(ctx, coord.LeaseRequest{Name: "l1", Holder: "a", TTL: time.Hour})
	if err != nil || l1.Epoch != 1 {
		t.Fatalf("acquire: %+v, %v", l1, err)
	}
	if _, err := s.KV().Set(ctx, "k", json.RawMessage(`1`), time.Hour, "a", coord.KVCond{}); err != nil {
		t.Fatal(err)
	}
	oldLeases, oldKV := readTreeFile(t, s, LeasesFile), readTreeFile(t, s, KVFile)
	for i := 2; i <= 4; i++ {
		if l, err := s.Leases().Acquire(ctx, coord.LeaseRequest{Name: fmt.Sprint("l", i), Holder: "a", TTL: time.Hour}); err != nil || l.Epoch != int64(i) {
			t.Fatalf("acquire %d: %+v, %v", i, l, err)
		}
		if e, err := s.KV().Set(ctx, "k", json.RawMessage(`2`), time.Hour, "a", coord.KVCond{}); err != nil || e.Rev != int64(i) {
			t.Fatalf("set %d: %+v, %v", i, e, err)
		}
	}
	for name, want := range map[string]string{LeaseEpochFile: "4", KVRevFile: "4"} {
		if got := strings.TrimSpace(string(readTreeFile(t, s, name))); got != want {
			t.Fatalf("%s holds %q, want %s", name, got, want)
		}
	}
	writeTreeFile(t, s, LeasesFile, oldLeases)
	writeTreeFile(t, s, KVFile, oldKV)
	if l, err := s.Leases().Acquire(ctx, coord.LeaseRequest{Name: "l9", Holder: "b", TTL: time.Hour}); err != nil || l.Epoch != 5 {
		t.Fatalf("acquire after the restore: %+v, %v; want epoch 5", l, err)
	}
	if e, err := s.KV().Set(ctx, "k", json.RawMessage(`3`), time.Hour, "b", coord.KVCond{ExpectRev: 1}); err != nil || e.Rev != 5 {
		t.Fatalf("set after the restore: %+v, %v; want rev 5", e, err)
	}

	// The mark is renamed into place before the document that hands the
	// value out.
	var steps []string
	fsops.SetFaultHook(func(op fsops.Op, path string) error {
		steps = append(steps, fmt.Sprintf("%s %s", op, path))
		return nil
	})
	_, err = s.Leases().Acquire(ctx, coord.LeaseRequest{Name: "l10", Holder: "b", TTL: time.Hour})
	fsops.SetFaultHook(nil)
	all := strings.Join(steps, "\n")
	mark, doc := strings.Index(all, "rename "+LeaseEpochFile), strings.Index(all, "rename "+LeasesFile)
	if err != nil || mark < 0 || doc < 0 || mark > doc {
		t.Fatalf("steps of a grant (%v):\n%s\nwant the mark renamed before leases.json", err, all)
	}

	// A missing mark is rebuilt from the document at the next write.
	removeAll(t, s, LockDir, "lease_epoch")
	if l, err := s.Leases().Acquire(ctx, coord.LeaseRequest{Name: "l11", Holder: "b", TTL: time.Hour}); err != nil || l.Epoch != 7 {
		t.Fatalf("acquire without a mark: %+v, %v; want epoch 7", l, err)
	}
	if got := strings.TrimSpace(string(readTreeFile(t, s, LeaseEpochFile))); got != "7" {
		t.Fatalf("rebuilt mark %q, want 7", got)
	}
}

// TestCounterCeilingFiles: a hand edit that pushes a counter past the
// ceiling (the registry's, leases.json's, kv.json's or a mark's) never
// stops coord issuing: the value was never issued and counts for
// nothing; doctor names it, and --repair puts it back in range.
//
// Broken build this fails against: counters taken as they are read (the
// next claim, grant or write is refused, or wraps negative, and doctor
// says every invariant holds).
func TestCounterCeilingFiles(t *testing.T) {
	const huge = "9223372036854775807"
	s := freshStore(t, `{"version":1,"last_epoch":`+huge+`,"tasks":[{"id":"t1","status":"done","epoch":`+huge+`},{"id":"t2"},{"id":"t3"}]}`+"\n")
	ctx := context.Background()
	writeTreeFile(t, s, EpochFile, []byte(huge+"\n"))
	writeTreeFile(t, s, LeasesFile, []byte(`{"version":1,"last_epoch":`+huge+`,"leases":[]}`+"\n"))
	writeTreeFile(t, s, KVFile, []byte(`{"version":1,"last_rev":`+huge+`,"keys":[]}`+"\n"))
	writeTreeFile(t, s, KVRevFile, []byte("9007199254740993\n"))

	probs, err := s.Doctor(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	var what []string
	for _, p := range probs {
		what = append(what, p.What)
	}
	all := strings.Join(what, "\n")
	for _, want := range []string{
		RegistryFile + " last_epoch " + huge + " is above the counter ceiling 9007199254740992",
		"task t1's epoch " + huge + " is above the counter ceiling",
		"epoch mark " + EpochFile + " does not hold a number from 0 to 9007199254740992",
		LeasesFile + ": last_epoch " + huge + " is above the counter ceiling",
		KVFile + ": last_rev " + huge + " is above the counter ceiling",
		"mark " + KVRevFile + " does not hold a number",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("doctor does not say %q:\n%s", want, all)
		}
	}

	if e := claimAs(t, s, "a", "t2"); e != 1 {
		t.Fatalf("claim: epoch %d, want 1", e)
	}
	if l, err := s.Leases().Acquire(ctx, coord.LeaseRequest{Name: "l", Holder: "a", TTL: time.Hour}); err != nil || l.Epoch != 1 {
		t.Fatalf("acquire: %+v, %v; want epoch 1", l, err)
	}
	if e, err := s.KV().Set(ctx, "k", json.RawMessage(`1`), time.Hour, "a", coord.KVCond{}); err != nil || e.Rev != 1 {
		t.Fatalf("set: %+v, %v; want rev 1", e, err)
	}
	if !strings.Contains(string(readTreeFile(t, s, RegistryFile)), `"last_epoch":1,`) {
		t.Fatalf("a commit keeps last_epoch above the ceiling: %s", readTreeFile(t, s, RegistryFile))
	}

	if _, err := s.Doctor(ctx, true); err != nil {
		t.Fatal(err)
	}
	if probs, err := s.Doctor(ctx, false); err != nil || len(probs) != 0 {
		t.Fatalf("after the repair: %+v, %v", probs, err)
	}
	if e := claimAs(t, s, "b", "t3"); e != 3 {
		t.Fatalf("claim after the repair: epoch %d, want 3 (t1 was given 2)", e)
	}
	if !strings.Contains(strings.Join(allLogLines(t, s), "\n"), "repaired: task t1's epoch "+huge) {
		t.Fatalf("the repair was not logged: %q", allLogLines(t, s))
	}
}
