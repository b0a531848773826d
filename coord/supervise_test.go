package coord

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// snapshotTxn copies what an operation may change, to show that a
// refused one changed nothing.
func snapshotTxn(tx *Txn) ([]Task, []PathLock, int) {
	var ts []Task
	for _, t := range tx.Tasks {
		c := *t
		c.Dirty = false
		ts = append(ts, c)
	}
	return ts, append([]PathLock(nil), tx.PathLocks...), len(tx.Events)
}

func unchangedTxn(t *testing.T, what string, tx *Txn, ts []Task, locks []PathLock, events int) {
	t.Helper()
	now, nowLocks, nowEvents := snapshotTxn(tx)
	if !reflect.DeepEqual(now, ts) || !reflect.DeepEqual(nowLocks, locks) || nowEvents != events {
		t.Fatalf("%s: a refused operation changed the txn", what)
	}
}

func lastEvent(tx *Txn) Event { return tx.Events[len(tx.Events)-1] }

// TestRequeue: a claimed or blocked task goes back to unclaimed, its
// holder fenced (every later write of the holder is CodeLost, with or
// without its epoch), the path locks taken for it freed, the act logged
// under who asked with why; anything else is refused and changes nothing.
func TestRequeue(t *testing.T) {
	tx := newTxn(&Task{ID: "t1"}, &Task{ID: "t2"}, &Task{ID: "t3"}, &Task{ID: "rev"}, &Task{ID: "done", Status: Done}, &Task{ID: "free"})
	a := Agent{ID: "a"}
	t1, _ := tx.Claim(a, ClaimOptions{TaskID: "t1"})
	tx.Claim(a, ClaimOptions{TaskID: "t2"})
	tx.Progress("a", "t1", t1.Epoch, 40, "")
	tx.PathLocks = []PathLock{{Path: "src/one.go", Holder: "a", TaskID: "t1"}, {Path: "src/two.go", Holder: "a", TaskID: "t2"}, {Path: "src/b.go", Holder: "b", TaskID: "t1"}}
	epoch := t1.Epoch

	got, holder, err := tx.Requeue("pat", "t1", "stuck for an hour")
	if err != nil || got != t1 || holder != "a" {
		t.Fatalf("requeue: %v %v %q", got, err, holder)
	}
	if t1.Status != Unclaimed || t1.ClaimedBy != "" || t1.ClaimedAt != "" || t1.Progress != 0 || t1.Epoch != epoch || !t1.Dirty {
		t.Fatalf("after requeue: %+v", t1)
	}
	if ev := tx.Events[len(tx.Events)-2]; ev.Agent != "pat" || ev.Text != "requeued task t1 from a (epoch 1): stuck for an hour" {
		t.Fatalf("log: %+v", tx.Events)
	}
	if ev := lastEvent(tx); ev.Agent != "pat" || ev.Text != "unlocked file src/one.go (held by a)" {
		t.Fatalf("the path lock taken for the task: %+v", ev)
	}
	if len(tx.PathLocks) != 2 || tx.PathLocks[0].Path != "src/two.go" || tx.PathLocks[1].Holder != "b" {
		t.Fatalf("path locks after requeue: %+v", tx.PathLocks)
	}
	// The old holder is fenced, whether it gives its epoch or not.
	for name, op := range map[string]func() error{
		"release":       func() error { _, err := tx.Release("a", "t1", epoch, "", false); return err },
		"release bare":  func() error { _, err := tx.Release("a", "t1", NoEpoch, "", false); return err },
		"progress":      func() error { _, err := tx.Progress("a", "t1", epoch, 50, ""); return err },
		"block":         func() error { _, err := tx.Block("a", "t1", epoch, "x"); return err },
		"hand back":     func() error { _, err := tx.HandBack("a", "t1", epoch, "x", Requeue); return err },
		"unblock":       func() error { _, err := tx.Unblock("a", "t1", epoch); return err },
		"block no epoc": func() error { _, err := tx.Block("a", "t1", NoEpoch, "x"); return err },
	} {
		if err := op(); CodeOf(err) != CodeLost {
			t.Errorf("%s by the old holder after requeue: %v, want lost (6)", name, err)
		}
	}
	// Claimed again (by anyone, the old holder too): a new epoch, and the
	// old one stays fenced.
	again, _ := tx.Claim(a, ClaimOptions{TaskID: "t1"})
	if again.Epoch <= epoch {
		t.Fatalf("reclaimed at epoch %d, not above %d", again.Epoch, epoch)
	}
	if _, err := tx.Release("a", "t1", epoch, "", false); CodeOf(err) != CodeLost {
		t.Fatalf("the old epoch after a new claim: %v", err)
	}

	// A blocked task, held or ownerless, is requeued too.
	t3, _ := tx.Claim(Agent{ID: "c"}, ClaimOptions{TaskID: "t3"})
	tx.Block("c", "t3", t3.Epoch, "needs a key")
	if _, holder, err := tx.Requeue("pat", "t3", "the key will not come"); err != nil || holder != "c" || t3.Status != Unclaimed || t3.BlockedReason != "" || t3.BlockedAt != "" {
		t.Fatalf("requeue of a blocked task: %v %q %+v", err, holder, t3)
	}
	t3.Status, t3.BlockedReason = Blocked, "orphan"
	if _, holder, err := tx.Requeue("pat", "t3", "tidy"); err != nil || holder != "" || t3.Status != Unclaimed || lastEvent(tx).Text != "requeued task t3 (it had no owner): tidy" {
		t.Fatalf("requeue of an ownerless blocked task: %v %q %+v %v", err, holder, t3, lastEvent(tx))
	}

	// Refusals change nothing.
	rev, _ := tx.Claim(Agent{ID: "d"}, ClaimOptions{TaskID: "rev"})
	tx.Release("d", "rev", rev.Epoch, "", true)
	ts, locks, events := snapshotTxn(tx)
	for _, c := range []struct {
		id, by, reason string
		code           Code
		has            string
	}{
		{"rev", "pat", "x", CodeConflict, `task "rev" is review: only a claimed or blocked task is requeued; approve or reject it`},
		{"done", "pat", "x", CodeConflict, "is done"},
		{"free", "pat", "x", CodeConflict, "coord assign free --to AGENT"},
		{"ghost", "pat", "x", CodeConflict, `task "ghost" not found`},
		{"t2", "pat", " ", CodeUsage, "requeue needs a reason"},
		{"t2", "pat", strings.Repeat("x", MaxNote+1), CodeUsage, "more than 4096"},
		{"t2", CoordinatorID, "x", CodeUsage, "reserved"},
		{"t2", "no body", "x", CodeUsage, "invalid agent id"},
		{"../t2", "pat", "x", CodeUsage, "invalid task id"},
	} {
		_, _, err := tx.Requeue(c.by, c.id, c.reason)
		if CodeOf(err) != c.code || err == nil || !strings.Contains(err.Error(), c.has) {
			t.Errorf("requeue %s by %s: %v, want code %d naming %q", c.id, c.by, err, c.code, c.has)
		}
	}
	unchangedTxn(t, "requeue", tx, ts, locks, events)
}

func poolTxn(tasks ...*Task) *Txn {
	tx := newTxn(tasks...)
	tx.Pool = []PoolAgent{
		{ID: "b", Role: Implementer, Caps: []string{"go"}},
		{ID: "c", Role: Implementer},
		{ID: "r", Role: Reviewer},
		{ID: "p", Role: Planner},
	}
	return tx
}

// TestAssign: a push assignment by hand, pull mode or push: the task waits
// in the assignee's inbox (TakeAssignment claims it); a held task is taken
// from its holder first, with a reason; every refusal names why and
// changes nothing.
func TestAssign(t *testing.T) {
	tx := poolTxn(&Task{ID: "open", Capability: "go"}, &Task{ID: "held"}, &Task{ID: "rev"}, &Task{ID: "done", Status: Done},
		&Task{ID: "later", Deps: []string{"open"}}, &Task{ID: "g1", ConflictGroup: "g"}, &Task{ID: "g2", ConflictGroup: "g"},
		&Task{ID: "py", Capability: "python"})
	held, _ := tx.Claim(Agent{ID: "a"}, ClaimOptions{TaskID: "held"})
	heldEpoch := held.Epoch
	rev, _ := tx.Claim(Agent{ID: "r"}, ClaimOptions{TaskID: "rev"})
	tx.Release("r", "rev", rev.Epoch, "", true)
	tx.Claim(Agent{ID: "a"}, ClaimOptions{TaskID: "g1"})

	ts, locks, events := snapshotTxn(tx)
	for _, c := range []struct {
		id, to, reason string
		code           Code
		has            string
	}{
		{"open", "ghost", "", CodeConflict, "agent ghost is not registered"},
		{"open", "c", "", CodeConflict, "it needs capability go"},
		{"open", "r", "", CodeConflict, "r is a reviewer, not an implementer"},
		{"open", "p", "", CodeConflict, "p is a planner"},
		{"later", "c", "", CodeConflict, "dependency open is not done"},
		{"g2", "c", "", CodeConflict, "conflict group g is held by task g1"},
		{"done", "c", "", CodeConflict, "it is done"},
		{"held", "c", "", CodeUsage, `assign needs a reason: task "held" is claimed and goes back to the queue first`},
		{"rev", "c", "", CodeConflict, "a task in review goes to a reviewer"},
		{"rev", "r", "", CodeConflict, "r claimed it"},
		{"ghost", "c", "", CodeConflict, `task "ghost" not found`},
		{"open", CoordinatorID, "", CodeUsage, "reserved"},
		{"open", "b", strings.Repeat("x", MaxNote+1), CodeUsage, "more than 4096"},
	} {
		_, err := tx.Assign("pat", c.id, c.to, c.reason)
		if CodeOf(err) != c.code || err == nil || !strings.Contains(err.Error(), c.has) {
			t.Errorf("assign %s to %s: %v, want code %d naming %q", c.id, c.to, err, c.code, c.has)
		}
	}
	unchangedTxn(t, "assign", tx, ts, locks, events)

	res, err := tx.Assign("pat", "open", "b", "b knows the parser")
	if err != nil || res.Task.AssignedTo != "b" || res.Task.AssignedAt == "" || res.From != "" || res.Unchanged {
		t.Fatalf("assign open to b: %+v %v", res, err)
	}
	if ev := lastEvent(tx); ev.Agent != "pat" || ev.Text != "assigned task open to b: b knows the parser" {
		t.Fatalf("log: %+v", ev)
	}
	n := len(tx.Events)
	if res, err := tx.Assign("pat", "open", "b", ""); err != nil || !res.Unchanged || len(tx.Events) != n {
		t.Fatalf("the same assignment again: %+v %v (events %d→%d)", res, err, n, len(tx.Events))
	}
	// Nobody else may claim it now; b's inbox takes it.
	if _, err := tx.Claim(Agent{ID: "c", Caps: []string{"go"}}, ClaimOptions{TaskID: "open"}); CodeOf(err) != CodeConflict {
		t.Fatalf("another agent claimed an assigned task: %v", err)
	}
	if got, err := tx.TakeAssignment("b"); err != nil || got == nil || got.ID != "open" || got.ClaimedBy != "b" || got.AssignedTo != "" {
		t.Fatalf("b's inbox: %+v %v", got, err)
	}

	// A held task: taken from its holder (fenced), then assigned.
	res, err = tx.Assign("pat", "held", "c", "a is stuck")
	if err != nil || res.From != "a" || held.Status != Unclaimed || held.ClaimedBy != "" || held.AssignedTo != "c" {
		t.Fatalf("assign of a held task: %+v %v; task %+v", res, err, held)
	}
	if ev := tx.Events[len(tx.Events)-2]; ev.Text != "requeued task held from a (epoch 1): a is stuck" {
		t.Fatalf("log: %+v", tx.Events[len(tx.Events)-2:])
	}
	if ev := lastEvent(tx); ev.Text != "assigned task held to c: a is stuck" {
		t.Fatalf("log: %+v", ev)
	}
	if _, err := tx.Release("a", "held", heldEpoch, "", false); CodeOf(err) != CodeLost {
		t.Fatalf("the old holder after reassignment: %v", err)
	}
	// Moved from one inbox to another: the log says from where.
	if _, err := tx.Assign("pat", "held", "b", ""); err != nil || held.AssignedTo != "b" || lastEvent(tx).Text != "assigned task held to b (was assigned to c)" {
		t.Fatalf("reassign: %v %+v %v", err, held, lastEvent(tx))
	}
	// A task a holds to the agent itself: refused.
	if _, err := tx.Assign("pat", "g1", "a", "x"); CodeOf(err) != CodeConflict {
		t.Fatalf("assign to its own holder (not registered): %v", err)
	}
	tx.Pool = append(tx.Pool, PoolAgent{ID: "a", Role: Implementer})
	if _, err := tx.Assign("pat", "g1", "a", "x"); CodeOf(err) != CodeConflict || !strings.Contains(err.Error(), "a holds it already") {
		t.Fatalf("assign to its own holder: %v", err)
	}

	// A review goes to a reviewer that did not claim it.
	tx.Pool = append(tx.Pool, PoolAgent{ID: "r2", Role: Reviewer})
	if _, err := tx.Assign("pat", "rev", "r2", ""); err != nil || rev.AssignedTo != "r2" || rev.Status != Review || lastEvent(tx).Text != "assigned task rev to r2 for review" {
		t.Fatalf("review routed by hand: %v %+v %v", err, rev, lastEvent(tx))
	}
}

// TestUnblockFor: a supervisor returns a blocked task to the pool with a
// reason (unclaimed, its holder as owner, who takes it first; others only
// once that owner is away; the old holder fenced), or an ownerless one
// to the pool; the owner's own unblock needs none; anything not blocked
// is refused. An agent that does not hold the task is told how a
// supervisor unblocks it.
func TestUnblockFor(t *testing.T) {
	tx := newTxn(&Task{ID: "t1"}, &Task{ID: "t2"}, &Task{ID: "t3"})
	t1, _ := tx.Claim(Agent{ID: "a"}, ClaimOptions{TaskID: "t1"})
	t1.Branch, t1.ReviewNotes = "refs/heads/task/t1", "the check failed"
	e1 := t1.Epoch
	tx.Block("a", "t1", e1, "needs the API key")
	if _, err := tx.Unblock("b", "t1", NoEpoch); CodeOf(err) != CodeLost || !strings.Contains(err.Error(), "coord unblock t1 --reason TEXT") {
		t.Fatalf("unblock by another agent: %v", err)
	}
	if _, err := tx.UnblockFor("pat", "t1", ""); CodeOf(err) != CodeUsage || !strings.Contains(err.Error(), "unblocking a task a holds needs a reason") {
		t.Fatalf("supervisor unblock without a reason: %v", err)
	}
	got, err := tx.UnblockFor("pat", "t1", "key sent by mail")
	if err != nil || got.Status != Unclaimed || got.ClaimedBy != "" || got.Owner != "a" || got.HoldsLock() || got.BlockedReason != "" ||
		got.Branch != "refs/heads/task/t1" || got.ReviewNotes != "the check failed" {
		t.Fatalf("supervisor unblock: %+v %v", got, err)
	}
	if ev := lastEvent(tx); ev.Agent != "pat" || ev.Text != "unblocked task t1: back in the pool, a first: key sent by mail" {
		t.Fatalf("log: %+v", ev)
	}
	if _, err := tx.Release("a", "t1", e1, "", false); CodeOf(err) != CodeLost {
		t.Fatalf("the old holder is fenced: %v", err)
	}
	if c, err := tx.Claim(Agent{ID: "b"}, ClaimOptions{TaskID: "t1"}); CodeOf(err) != CodeConflict || c != nil || !strings.Contains(err.Error(), "returned to its owner a") {
		t.Fatalf("another agent while the owner is here: %+v %v", c, err)
	}
	if c, err := tx.Claim(Agent{ID: "a"}, ClaimOptions{}); err != nil || c == nil || c.ID != "t1" || c.Owner != "" || c.Epoch <= e1 ||
		c.ReviewNotes != "the check failed" || c.Branch != "refs/heads/task/t1" {
		t.Fatalf("the owner's claim takes it first: %+v %v", c, err)
	}
	tx.Block("a", "t1", NoEpoch, "again")
	tx.UnblockFor("pat", "t1", "go on")
	tx.OwnersAway = map[string]bool{"a": true}
	if c, err := tx.Claim(Agent{ID: "b"}, ClaimOptions{TaskID: "t1"}); err != nil || c.ClaimedBy != "b" || c.Branch != "refs/heads/task/t1" {
		t.Fatalf("another agent once the owner is away: %+v %v", c, err)
	}
	t2, _ := tx.Claim(Agent{ID: "a"}, ClaimOptions{TaskID: "t2"})
	tx.Block("a", "t2", t2.Epoch, "x")
	if got, err := tx.UnblockFor("a", "t2", ""); err != nil || got.Status != Unclaimed || got.Owner != "a" {
		t.Fatalf("the owner through UnblockFor: %+v %v", got, err)
	}
	tx.Task("t3").Status, tx.Task("t3").BlockedReason = Blocked, "swept"
	if got, err := tx.UnblockFor("pat", "t3", ""); err != nil || got.Status != Unclaimed || got.Owner != "" || lastEvent(tx).Text != "unblocked task t3" {
		t.Fatalf("an ownerless task: %+v %v", got, err)
	}
	tx.Task("t2").Status, tx.Task("t2").ClaimedBy, tx.Task("t2").Owner = Claimed, "a", ""
	tx.Task("t1").Status = Done
	ts, locks, events := snapshotTxn(tx)
	for id, has := range map[string]string{"t2": `task "t2" is claimed, not blocked`, "t1": "is done", "nope": "not found"} {
		if _, err := tx.UnblockFor("pat", id, "x"); CodeOf(err) != CodeConflict || !strings.Contains(err.Error(), has) {
			t.Errorf("unblock %s: %v", id, err)
		}
	}
	unchangedTxn(t, "unblock", tx, ts, locks, events)
}

func TestCheckSupervisor(t *testing.T) {
	if err := CheckSupervisor(nil, "anyone", "requeue task 1"); err != nil {
		t.Fatalf("no list: %v", err)
	}
	if err := CheckSupervisor([]string{"alice", "lead"}, "lead", "requeue task 1"); err != nil {
		t.Fatalf("a supervisor: %v", err)
	}
	err := CheckSupervisor([]string{"alice", "lead"}, "bob", "requeue task 1")
	if CodeOf(err) != CodeConflict || !errors.Is(err, ErrNotSupervisor) ||
		err.Error() != `bob may not requeue task 1: not one of the project's supervisors; config.json "supervisors" names alice, lead; ask one of them, or add bob with 'coord config set supervisors'` {
		t.Fatalf("not a supervisor: %v", err)
	}
	for _, bad := range [][]string{{}, {"a b"}, {CoordinatorID}} {
		if err := CheckSupervisors(bad); CodeOf(err) != CodeUsage {
			t.Errorf("CheckSupervisors(%q): %v", bad, err)
		}
	}
}

// The supervisor's log lines read back: a requeue is ROTD's
// task_released for its task, and NamesTask finds every line about a task
// (the task page's log) and none about another whose id it prefixes.
func TestSupervisorLogLines(t *testing.T) {
	tx := newTxn(&Task{ID: "4.2"})
	tx.Claim(Agent{ID: "a"}, ClaimOptions{TaskID: "4.2"})
	tx.Requeue("pat", "4.2", "stuck")
	le, ok := ParseLogLine(FormatLogLine(lastEvent(tx)))
	if !ok || le.EventType != "task_released" || le.TaskID == nil || *le.TaskID != "4.2" || le.AgentID != "pat" {
		t.Fatalf("requeue line: %+v", le)
	}
	for msg, want := range map[string]bool{
		"claimed task 4.2 (epoch 3)":             true,
		"requeued task 4.2 from a (epoch 3): x":  true,
		"assigned task 4.2 to b":                 true,
		"alert: task 4.2 waits in review":        true,
		"blocked task 4.2: waiting for task 4.3": true,
		"released task 4.2.":                     true,
		"released task 4.2":                      true,
		"claimed task 4.21 (epoch 4)":            false,
		"claimed task 4.2.1 (epoch 4)":           false,
		"claimed task 4.2-b (epoch 4)":           false,
		"seeded 4 tasks":                         false,
		"task 4.21 and task 4.2":                 true,
	} {
		if got := NamesTask(msg, "4.2"); got != want {
			t.Errorf("NamesTask(%q, 4.2) = %v, want %v", msg, got, want)
		}
	}
}
