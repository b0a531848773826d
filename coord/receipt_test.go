package coord

import (
	"strings"
	"testing"
)

func receipt(tree string, exit int) Receipt {
	return NewReceipt(tree, "go test ./...", exit, 1.5, "ok\n", "2026-11-22T10:00:00Z")
}

// TestAddReceipt: the holder records receipts, the newest MaxReceipts
// kept in order; anyone else, or an old epoch, is refused as lost.
func TestAddReceipt(t *testing.T) {
	tx := newTxn(&Task{ID: "t", Status: Claimed, ClaimedBy: "a", Epoch: 2})
	for i := 0; i < MaxReceipts+2; i++ {
		if _, err := tx.AddReceipt("a", "t", 2, receipt("abcd000"+string(rune('0'+i)), i%2)); err != nil {
			t.Fatal(err)
		}
	}
	got := tx.Task("t").Receipts
	if len(got) != MaxReceipts || got[0].Tree != "abcd0002" || got[MaxReceipts-1].Tree != "abcd0006" {
		t.Fatalf("kept %+v", got)
	}
	for _, c := range []struct {
		agent string
		epoch int64
		code  Code
	}{{"b", NoEpoch, CodeLost}, {"a", 1, CodeLost}} {
		if _, err := tx.AddReceipt(c.agent, "t", c.epoch, receipt("abcd", 0)); CodeOf(err) != c.code {
			t.Errorf("%s at %d: %v, want code %d", c.agent, c.epoch, err, c.code)
		}
	}
	if _, err := tx.AddReceipt("a", "t", 2, Receipt{Tree: "HEAD", Cmd: "x", At: "2026-11-22T10:00:00Z"}); CodeOf(err) != CodeUsage {
		t.Errorf("bad tree: %v", err)
	}
}

// TestNewReceiptBounds: the tail keeps its last MaxNote bytes, at a rune
// boundary; the command line is cut too.
func TestNewReceiptBounds(t *testing.T) {
	long := strings.Repeat("é", MaxNote) // 2 bytes a rune
	r := NewReceipt("abcd", long, 0, 0.0004, "x"+long, "2026-11-22T10:00:00Z")
	if len(r.Tail) > MaxNote || len(r.Cmd) > MaxNote || !strings.HasSuffix(r.Tail, "éé") || strings.HasPrefix(r.Tail, "\xa9") {
		t.Fatalf("tail %d bytes, cmd %d bytes, tail starts %q", len(r.Tail), len(r.Cmd), r.Tail[:2])
	}
	if err := r.check(); err != nil {
		t.Fatal(err)
	}
}

// TestCheckVerified: release under require_verified needs the newest
// receipt to have passed on exactly the tree released; each refusal
// names its mismatch.
func TestCheckVerified(t *testing.T) {
	cases := []struct {
		name     string
		receipts []Receipt
		tree     string
		want     string // "" : accepted
	}{
		{"no receipt", nil, "abcd1111", "has no receipt"},
		{"newest failed", []Receipt{receipt("abcd1111", 0), receipt("abcd1111", 1)}, "abcd1111", "the newest receipt failed"},
		{"older tree", []Receipt{receipt("abcd1111", 0)}, "abcd2222", "the newest receipt is for tree abcd111, releasing tree abcd222"},
		{"an older pass does not count", []Receipt{receipt("abcd2222", 0), receipt("abcd1111", 0)}, "abcd2222", "is for tree abcd111"},
		{"verified", []Receipt{receipt("abcd1111", 1), receipt("abcd1111", 0)}, "abcd1111", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tx := newTxn(&Task{ID: "t", Status: Claimed, ClaimedBy: "a", Epoch: 1, Receipts: c.receipts})
			err := tx.CheckVerified("a", "t", 1, c.tree, "")
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if CodeOf(err) != CodeConflict || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%v, want a conflict containing %q", err, c.want)
			}
		})
	}
	tx := newTxn(&Task{ID: "t", Status: Claimed, ClaimedBy: "b", Epoch: 1})
	if err := tx.CheckVerified("a", "t", NoEpoch, "abcd", ""); CodeOf(err) != CodeLost {
		t.Fatalf("not the holder: %v, want lost", err)
	}
}

// TestReviewPinAndVoid: approve pins the head; the rule voids a review
// whose branch was rewritten, or moved on while its owner holds no other
// task on that branch.
func TestReviewPinAndVoid(t *testing.T) {
	work := func() *Task {
		return &Task{ID: "w", Status: Claimed, ClaimedBy: "a", Epoch: 1, Branch: "coord/a"}
	}
	tx := newTxn(work())
	if _, err := tx.Release("a", "w", 1, "", true); err != nil {
		t.Fatal(err)
	}
	w := tx.Task("w")
	w.Head = "aaaa1111"
	if pin := w.ReviewPin(); pin != "aaaa1111" {
		t.Fatalf("in review: pin %q", pin)
	}
	if _, err := tx.Approve("r", "w"); err != nil {
		t.Fatal(err)
	}
	if w.ReviewedCommit != "aaaa1111" || w.ReviewPin() != "aaaa1111" {
		t.Fatalf("approved: reviewed_commit %q, pin %q", w.ReviewedCommit, w.ReviewPin())
	}
	if note := tx.ReviewVoid(w, "aaaa1111", true); note != "" {
		t.Fatalf("branch unmoved: %q", note)
	}
	if note := tx.ReviewVoid(w, "bbbb2222", true); note != "review void: coord/a moved from aaaa111 to bbbb222 after the review" {
		t.Fatalf("moved: %q", note)
	}
	if note := tx.ReviewVoid(w, "bbbb2222", false); !strings.Contains(note, "coord/a was rewritten from aaaa111 to bbbb222") {
		t.Fatalf("rewritten: %q", note)
	}
	// The owner's next task on the same branch: its commits, not a change
	// to the reviewed work; a rewrite voids all the same.
	tx.Add(&Task{ID: "next", Status: Claimed, ClaimedBy: "a", Epoch: 2, Branch: "coord/a"})
	if note := tx.ReviewVoid(w, "bbbb2222", true); note != "" {
		t.Fatalf("owner works on: %q", note)
	}
	if note := tx.ReviewVoid(w, "bbbb2222", false); note == "" {
		t.Fatal("rewritten while the owner works on: not void")
	}
	// Sent back: the pin goes, and a task with no review has none.
	if _, err := tx.SendBack(CoordinatorID, "w", "review void", 3); err != nil {
		t.Fatal(err)
	}
	if w.ReviewedCommit != "" || w.ReviewPin() != "" {
		t.Fatalf("sent back: reviewed_commit %q, pin %q", w.ReviewedCommit, w.ReviewPin())
	}
	done := &Task{ID: "d", Status: Done, ClaimedBy: "a", Branch: "coord/a", Head: "cccc"}
	landed := &Task{ID: "l", Status: Done, ClaimedBy: "a", Branch: "coord/a", Head: "cccc", ReviewerID: "r", LandedAt: "2026-11-22T10:00:00Z"}
	if done.ReviewPin() != "" || landed.ReviewPin() != "" {
		t.Fatal("unreviewed or landed work has a pin")
	}
}
