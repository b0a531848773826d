package coord

import (
	"strings"
	"testing"
)

func done(id, completed string, deps ...string) *Task {
	return &Task{ID: id, Status: Done, ClaimedBy: "a-" + id, Head: "abcd" + id, CompletedAt: completed, Deps: deps}
}

// TestLandQueue: landable tasks in completion order, a task after the
// landable tasks it depends on; landed, headless and (with the review
// gate) unapproved work left out; a named subset keeps the order.
func TestLandQueue(t *testing.T) {
	tx := newTxn(
		done("c", "2026-01-01T00:00:01Z", "e"),
		done("b", "2026-01-01T00:00:02Z"),
		&Task{ID: "nohead", Status: Done, CompletedAt: "2026-01-01T00:00:00Z"},
		&Task{ID: "landed", Status: Done, Head: "beef", LandedAt: "2026-01-01T00:00:00Z"},
		&Task{ID: "claimed", Status: Claimed, ClaimedBy: "x", Head: "beef"},
		done("e", "2026-01-01T00:00:03Z"),
		done("a", "2026-01-01T00:00:02Z"),
	)
	ids := func(q []*Task) string {
		var s []string
		for _, t := range q {
			s = append(s, t.ID)
		}
		return strings.Join(s, " ")
	}
	if got := ids(tx.LandQueue(false, nil)); got != "e c a b" {
		t.Errorf("queue %q, want %q", got, "e c a b")
	}
	if got := ids(tx.LandQueue(false, []string{"b", "c"})); got != "c b" {
		t.Errorf("named queue %q, want %q", got, "c b")
	}
	tx.Task("a").ReviewerID = "rev"
	if got := ids(tx.LandQueue(true, nil)); got != "a" {
		t.Errorf("gated queue %q, want %q", got, "a")
	}
	if w := tx.LandWaits(tx.Task("c")); w != "e" {
		t.Errorf("c waits for %q, want e", w)
	}
}

// TestLandingMarks: landing_at is set only on landable work at its
// head, cleared by the landing, a send-back and a new lander.
func TestLandingMarks(t *testing.T) {
	tx := newTxn(done("a", "2026-01-01T00:00:01Z"), done("b", "2026-01-01T00:00:02Z"))
	if tx.StartLanding("a", "other", false) {
		t.Fatal("marked at another head")
	}
	if !tx.StartLanding("a", "abcda", false) || tx.Task("a").LandingAt == "" {
		t.Fatal("not marked")
	}
	rows := tx.LandingQueue(false)
	if len(rows) != 2 || rows[0].State != LandChecking || rows[1].State != LandWaiting {
		t.Fatalf("queue %+v", rows)
	}
	if !tx.Landed("a", "abcda", "abcda", "main") || tx.Task("a").LandingAt != "" {
		t.Fatal("landing kept landing_at")
	}
	tx.StartLanding("b", "abcdb", false)
	if _, err := tx.SendBack("lander", "b", "conflicts in f.txt", 3); err != nil {
		t.Fatal(err)
	}
	if tx.Task("b").LandingAt != "" {
		t.Fatal("send-back kept landing_at")
	}
	rows = tx.LandingQueue(false)
	if len(rows) != 1 || rows[0].State != LandSentBack || rows[0].Why != "conflicts in f.txt" || rows[0].Owner != "a-b" {
		t.Fatalf("queue %+v", rows)
	}
	tx.Task("a").LandingAt = "2026-01-01T00:00:00Z"
	if n := tx.ClearLanding(); n != 1 {
		t.Fatalf("cleared %d", n)
	}
}

// TestCheckLandCheck: one line, bounded.
func TestCheckLandCheck(t *testing.T) {
	for _, c := range []struct {
		cmd string
		ok  bool
	}{{"", true}, {"go test ./...", true}, {"a\nb", false}, {"a\x00", false}, {strings.Repeat("x", MaxNote+1), false}} {
		if err := CheckLandCheck(c.cmd); (err == nil) != c.ok {
			t.Errorf("CheckLandCheck(%.20q) = %v", c.cmd, err)
		}
	}
}

// TestNotLandable: the one rule says why, and Landable is exactly its
// empty answer.
func TestNotLandable(t *testing.T) {
	for _, c := range []struct {
		task Task
		gate bool
		want string
	}{
		{Task{Status: Done, Head: "abc"}, false, ""},
		{Task{Status: Done, Head: "abc"}, true, "it is done but not approved (review_gate)"},
		{Task{Status: Done, Head: "abc", ReviewerID: "rita"}, true, ""},
		{Task{Status: Done}, false, "it was released with no commit of its own to land"},
		{Task{Status: Done, Head: "abc", LandedAt: "2026-12-06T00:00:00Z"}, false, "it has landed"},
		{Task{Status: Claimed, Head: "abc"}, false, "it is claimed, not done"},
	} {
		if got := c.task.NotLandable(c.gate); got != c.want {
			t.Errorf("%+v gate %v: %q, want %q", c.task, c.gate, got, c.want)
		}
		if got := c.task.Landable(c.gate); got != (c.want == "") {
			t.Errorf("%+v gate %v: Landable %v", c.task, c.gate, got)
		}
	}
}
