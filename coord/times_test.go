package coord

import (
	"testing"
	"time"
)

// Times from files in the future (a claim's claimed_at, a registration's
// registered_at, for an agent without a heartbeat) never pin a claim or a
// pool member: up to the timeout ahead they count as now, as a heartbeat
// from the future does; further ahead (a hand edit) they are no sign of
// life at all. Every judge (the sweep, NextDue, Liveness, PoolLive) reads
// them alike.
//
// Broken build this fails against: a future instant clamped to now at
// every judgment (claimed_at 2999 kept the lock fresh for ever).
func TestFutureTimesFromFiles(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	timeout := 15 * time.Minute
	claim := func(id, at string) *Task {
		return &Task{ID: id, Status: Claimed, ClaimedBy: "agent-" + id, ClaimedAt: at, Epoch: 1}
	}
	tx := newTxn(
		claim("past", "2026-11-22T09:00:00Z"),   // silent an hour: stale
		claim("recent", "2026-11-22T09:55:00Z"), // 5 minutes: fresh
		claim("skewed", "2026-11-22T10:05:00Z"), // 5 minutes ahead: counts as now
		claim("edited", "2999-01-01T00:00:00Z"), // far ahead: no sign
		claim("garbage", "soon"),                // unreadable: no sign
	)
	stale := map[string]bool{}
	for _, s := range tx.JudgeStale(nil, now, timeout, Requeue) {
		stale[s.TaskID] = true
	}
	for id, want := range map[string]bool{"past": true, "recent": false, "skewed": false, "edited": true, "garbage": true} {
		if stale[id] != want {
			t.Errorf("task %s judged stale %v, want %v", id, stale[id], want)
		}
	}
	if due, ok := tx.NextDue(nil, now, timeout); !ok || due.After(now) {
		t.Errorf("next due %v, %v: a lock is stale now", due, ok)
	}
	alive := map[string]bool{}
	for _, r := range tx.Liveness(nil, now, timeout) {
		alive[r.Agent] = r.Alive
	}
	if !alive["agent-skewed"] || alive["agent-edited"] {
		t.Errorf("liveness %v: skewed alive, edited not", alive)
	}

	tx.Pool = []PoolAgent{member("soon", Implementer), member("edited", Implementer)}
	tx.Pool[0].RegisteredAt = "2026-11-22T10:10:00Z"
	tx.Pool[1].RegisteredAt = "2999-01-01T00:00:00Z"
	live := tx.PoolLive(nil, now, timeout)
	if !live["soon"] || live["edited"] {
		t.Errorf("pool live %v: a registration 10 minutes ahead counts as now, one from 2999 as none", live)
	}
}
