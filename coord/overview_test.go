package coord

import (
	"strings"
	"testing"
	"time"
)

func TestQueue(t *testing.T) {
	tx := newTxn(
		&Task{ID: "low", Priority: Low},
		&Task{ID: "dep"},
		&Task{ID: "needs-dep", Deps: []string{"dep"}, Priority: Urgent},
		&Task{ID: "g1", ConflictGroup: "g", Status: Claimed, ClaimedBy: "b", Epoch: 1},
		&Task{ID: "g2", ConflictGroup: "g"},
		&Task{ID: "pushed", AssignedTo: "c"},
		&Task{ID: "go", Capability: "go", Priority: High},
		&Task{ID: "done", Status: Done},
	)
	ready, waiting, why := tx.Queue()
	var ids []string
	for _, t := range ready {
		ids = append(ids, t.ID)
	}
	// Seen from no particular agent: a capability does not keep a task
	// waiting; the order is the claim order.
	if got, want := strings.Join(ids, " "), "go dep low"; got != want {
		t.Fatalf("ready %q, want %q", got, want)
	}
	want := map[string]string{
		"needs-dep": "dependency dep is not done",
		"g2":        "conflict group g is held by task g1",
		"pushed":    "assigned to c",
	}
	if len(waiting) != len(want) || len(why) != len(waiting) {
		t.Fatalf("waiting %d (why %d), want %d", len(waiting), len(why), len(want))
	}
	if waiting[0].ID != "needs-dep" {
		t.Fatalf("waiting starts with %s, want the urgent needs-dep", waiting[0].ID)
	}
	for i, w := range waiting {
		if why[i] != want[w.ID] {
			t.Errorf("%s waits because %q, want %q", w.ID, why[i], want[w.ID])
		}
	}
}

func TestThroughputOf(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) string { return FormatTime(now.Add(-d)) }
	tasks := []*Task{
		{ID: "a", Status: Done, ClaimedAt: at(90 * time.Minute), CompletedAt: at(30 * time.Minute)},   // 60m, last hour
		{ID: "b", Status: Review, ClaimedAt: at(50 * time.Minute), CompletedAt: at(40 * time.Minute)}, // 10m, last hour
		{ID: "c", Status: Done, ClaimedAt: at(3 * time.Hour), CompletedAt: at(150 * time.Minute)},     // 30m, 3h ago
		{ID: "old", Status: Done, ClaimedAt: at(30 * time.Hour), CompletedAt: at(25 * time.Hour)},     // outside
		{ID: "open", Status: Claimed, ClaimedAt: at(time.Hour)},
	}
	th := ThroughputOf(tasks, now, 24)
	// b waits in review: released, not finished (a reviewer may reject
	// it), so it is counted apart and not in the median
	if th.Done != 2 || len(th.PerHour) != 24 || th.PerHour[23] != 1 || th.PerHour[21] != 1 || th.Review != 1 {
		t.Fatalf("done %d, per hour %v, review %d", th.Done, th.PerHour, th.Review)
	}
	if th.MedianClaimToDone == nil || *th.MedianClaimToDone != 45*60 {
		t.Fatalf("median %v, want 2700 s", th.MedianClaimToDone)
	}
	if th := ThroughputOf(nil, now, 24); th.MedianClaimToDone != nil || th.Done != 0 {
		t.Fatalf("empty: %+v", th)
	}
}

func TestAlerts(t *testing.T) {
	age := int64(3600)
	agents := []AgentView{
		{Agent: "live", Alive: true, Tasks: []string{"1"}},
		{Agent: "gone", AgeS: &age, Tasks: []string{"2"}},
		{Agent: "idle-gone", AgeS: &age},
	}
	tasks := []*Task{{ID: "3", Status: Blocked, BlockedReason: "agent x went stale"}}
	got := Alerts(agents, tasks, 5)
	if len(got) != 2 || got[0].Kind != "stale_holder" || got[0].Agent != "gone" || got[1].Kind != "ownerless_blocked" || got[1].Task != "3" {
		t.Fatalf("alerts %+v", got)
	}
	if !strings.Contains(got[0].Text, "holds 2") {
		t.Fatalf("stale holder alert %q does not say what it holds", got[0].Text)
	}
	got = Alerts(agents[1:], nil, 5)
	if len(got) != 2 || got[1].Kind != "no_live_agent" {
		t.Fatalf("no live agent with 5 ready: %+v", got)
	}
}

func TestBlockedAt(t *testing.T) {
	tx := newTxn(&Task{ID: "t"})
	task, err := tx.Claim(Agent{ID: "a"}, ClaimOptions{TaskID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Block("a", "t", task.Epoch, "first"); err != nil {
		t.Fatal(err)
	}
	first := task.BlockedAt
	if first != FormatTime(tx.Now) {
		t.Fatalf("blocked_at %q, want %q", first, FormatTime(tx.Now))
	}
	tx.Now = tx.Now.Add(time.Hour)
	if _, err := tx.Block("a", "t", task.Epoch, "second"); err != nil {
		t.Fatal(err)
	}
	if task.BlockedAt != first {
		t.Fatalf("blocking again moved blocked_at to %q: the age is since it first blocked", task.BlockedAt)
	}
	if _, err := tx.Unblock("a", "t", task.Epoch); err != nil {
		t.Fatal(err)
	}
	if task.BlockedAt != "" {
		t.Fatalf("unblocked task keeps blocked_at %q", task.BlockedAt)
	}
}
