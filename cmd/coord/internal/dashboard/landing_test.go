package dashboard_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rotd/coordination/cmd/coord/internal/dashboard"
	"github.com/rotd/coordination/coord"
)

// TestLandingShown: the landing panel shows what the lander checks,
// what waits to land and what went back to its owner with why, and
// /api/state.json carries the same queue.
func TestLandingShown(t *testing.T) {
	f := newFixture(t, dashboard.Options{},
		&coord.Task{ID: "a", Title: "first"}, &coord.Task{ID: "b", Title: "second"},
		&coord.Task{ID: "c", Title: "third"}, &coord.Task{ID: "d", Title: "landed"})
	err := f.s.Backend().Tasks().Update(f.ctx, func(tx *coord.Txn) error {
		set := func(id string, fn func(*coord.Task)) {
			tk := tx.Task(id)
			tk.Epoch, tk.ClaimedAt, tk.Dirty = 1, "2026-01-01T00:00:00Z", true
			fn(tk)
		}
		set("a", func(tk *coord.Task) {
			tk.Status, tk.ClaimedBy, tk.Head, tk.CompletedAt, tk.LandingAt = coord.Done, "alice", "aaaa1111", "2026-01-01T00:00:10Z", "2026-01-01T00:01:00Z"
		})
		set("b", func(tk *coord.Task) {
			tk.Status, tk.ClaimedBy, tk.Head, tk.CompletedAt = coord.Done, "bob", "bbbb2222", "2026-01-01T00:00:30Z"
		})
		set("c", func(tk *coord.Task) {
			tk.Status, tk.ClaimedBy, tk.ReviewNotes, tk.Rejections = coord.Claimed, "carol", "landing on main conflicts in f.txt", 1
		})
		set("d", func(tk *coord.Task) {
			tk.Status, tk.ClaimedBy, tk.Head, tk.CompletedAt = coord.Done, "dave", "dddd4444", "2026-01-01T00:00:05Z"
			tk.LandedAt, tk.LandedCommit = "2026-01-01T00:02:00Z", "dddd4444"
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	frames := openEvents(t, ctx, f.srv)
	waitFrame(t, frames, "the landing panel", func(p map[string]string) bool {
		l := p["p-landing"]
		checking, waiting, back := strings.Index(l, "checking</span>"), strings.Index(l, "waiting</span>"), strings.Index(l, "sent back</span>")
		return checking >= 0 && waiting > checking && back > waiting &&
			strings.Contains(l, `<span class="tid">a</span></a> (alice)`) && strings.Contains(l, `<span class="tid">b</span></a> (bob)`) &&
			strings.Contains(l, "landing on main conflicts in f.txt") && !strings.Contains(l, `<span class="tid">d</span>`)
	})
	_, body := f.get("GET", "/api/state.json")
	var st struct {
		Landing []coord.LandingRow `json:"landing"`
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range st.Landing {
		got = append(got, r.Task+":"+r.State)
	}
	if strings.Join(got, " ") != "a:checking b:waiting c:sent_back" {
		t.Errorf("state.json landing %v", got)
	}
}
