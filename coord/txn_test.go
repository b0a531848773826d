package coord

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func newTxn(tasks ...*Task) *Txn {
	tx := &Txn{Tasks: tasks, Now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	for _, t := range tasks {
		if t.Status == "" {
			t.Status = Unclaimed
		}
	}
	tx.Index()
	return tx
}

func claimID(t *testing.T, tx *Txn, a Agent, opt ClaimOptions) string {
	t.Helper()
	task, err := tx.Claim(a, opt)
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	if task == nil {
		return ""
	}
	return task.ID
}

func TestClaimOrder(t *testing.T) {
	tx := newTxn(&Task{ID: "low", Priority: Low}, &Task{ID: "m1"}, &Task{ID: "u", Priority: Urgent}, &Task{ID: "m2", Priority: Medium}, &Task{ID: "h", Priority: High})
	var got []string
	for i := 0; i < 6; i++ {
		got = append(got, claimID(t, tx, Agent{ID: "a"}, ClaimOptions{}))
	}
	if want := "u h m1 m2 low "; strings.Join(got, " ") != want {
		t.Fatalf("claim order %q, want %q", strings.Join(got, " "), want)
	}
	if tx.LastEpoch != 5 || tx.Task("low").Epoch != 5 || tx.Task("u").Epoch != 1 {
		t.Fatalf("epochs: last %d, low %d, u %d", tx.LastEpoch, tx.Task("low").Epoch, tx.Task("u").Epoch)
	}
	tx = newTxn(&Task{ID: "low", Priority: Low}, &Task{ID: "u", Priority: Urgent})
	if id := claimID(t, tx, Agent{ID: "a"}, ClaimOptions{Any: true}); id != "low" {
		t.Fatalf("--any took %q, want the first in registry order", id)
	}
}

func TestEligibility(t *testing.T) {
	tx := newTxn(
		&Task{ID: "dep", Status: Done},
		&Task{ID: "open-dep"},
		&Task{ID: "needs-open", Deps: []string{"open-dep"}},
		&Task{ID: "needs-map"},
		&Task{ID: "needs-ghost", Deps: []string{"ghost"}},
		&Task{ID: "go", Capability: "go"},
		&Task{ID: "expert", SkillLevel: Expert},
		&Task{ID: "g1", ConflictGroup: "g", Status: Claimed, ClaimedBy: "b", Epoch: 1},
		&Task{ID: "g2", ConflictGroup: "g"},
		&Task{ID: "f1", Files: []string{"src/**"}, Status: Blocked, ClaimedBy: "b", Epoch: 2, BlockedReason: "x"},
		&Task{ID: "f2", Files: []string{"src/a/*.go"}},
		&Task{ID: "f3", Files: []string{"docs/*.md"}},
	)
	tx.DepMap = map[string][]string{"needs-map": {"open-dep", "dep"}}
	skill, err := ParseSkillFilter("<=intermediate")
	if err != nil {
		t.Fatal(err)
	}
	a := Agent{ID: "a", Skill: skill}
	want := map[string]string{
		"dep":         "status is done",
		"open-dep":    "",
		"needs-open":  "dependency open-dep is not done",
		"needs-map":   "dependency open-dep is not done",
		"needs-ghost": "dependency ghost is not done",
		"go":          "needs capability go",
		"expert":      "skill level expert",
		"g2":          "conflict group g is held by task g1",
		"f2":          "files overlap those of task f1",
		"f3":          "",
	}
	for id, w := range want {
		got := tx.Ineligible(tx.Task(id), a)
		if (w == "") != (got == "") || !strings.HasPrefix(got, w) {
			t.Errorf("%s: ineligible %q, want %q", id, got, w)
		}
	}
	if got := tx.Ineligible(tx.Task("go"), Agent{ID: "a", Caps: []string{"ts", "go"}}); got != "" {
		t.Errorf("agent with capability go refused: %s", got)
	}
	if _, err := tx.Claim(a, ClaimOptions{TaskID: "g2"}); CodeOf(err) != CodeConflict {
		t.Errorf("claim --task of an ineligible task: %v, want conflict", err)
	}
	if _, err := tx.Claim(a, ClaimOptions{TaskID: "nope"}); CodeOf(err) != CodeConflict {
		t.Errorf("claim --task of an unknown task: %v, want conflict", err)
	}
	if _, err := tx.Claim(Agent{ID: "a.b"}, ClaimOptions{}); CodeOf(err) != CodeUsage {
		t.Errorf("claim by an invalid agent id: %v, want usage", err)
	}
}

func TestFencing(t *testing.T) {
	tx := newTxn(&Task{ID: "t", Progress: 0})
	task, _ := tx.Claim(Agent{ID: "a"}, ClaimOptions{})
	first := task.Epoch
	if _, err := tx.Progress("a", "t", first, 30, ""); err != nil {
		t.Fatal(err)
	}
	// a goes stale; the sweep requeues, b claims.
	if !tx.FreeStale(LockRef{TaskID: "t", Agent: "a", Epoch: first}, Requeue) {
		t.Fatal("FreeStale refused a matching lock")
	}
	if tx.FreeStale(LockRef{TaskID: "t", Agent: "a", Epoch: first}, Requeue) {
		t.Fatal("FreeStale freed twice")
	}
	task, _ = tx.Claim(Agent{ID: "b"}, ClaimOptions{})
	if task.Epoch <= first {
		t.Fatalf("new epoch %d not above %d", task.Epoch, first)
	}
	for name, op := range map[string]func() error{
		"release":  func() error { _, err := tx.Release("a", "t", first, "", false); return err },
		"progress": func() error { _, err := tx.Progress("a", "t", first, 50, ""); return err },
		"block":    func() error { _, err := tx.Block("a", "t", first, "r"); return err },
		"stale epoch by the new holder": func() error {
			_, err := tx.Release("b", "t", first, "", false)
			return err
		},
	} {
		if err := op(); CodeOf(err) != CodeLost {
			t.Errorf("%s by the old holder: %v, want lost (6)", name, err)
		}
	}
	// A stale sweep does not clear the new holder's lock either.
	if tx.FreeStale(LockRef{TaskID: "t", Agent: "b", Epoch: first}, Requeue) {
		t.Fatal("FreeStale freed a lock with another epoch")
	}
	if _, err := tx.Release("b", "t", task.Epoch, "ok", true); err != nil {
		t.Fatal(err)
	}
	if task.Status != Review {
		t.Fatalf("review gate: status %s", task.Status)
	}
	if _, err := tx.Approve("b", "t"); CodeOf(err) != CodeConflict {
		t.Fatalf("self-approval: %v, want conflict", err)
	}
	if _, err := tx.Approve("c", "t"); err != nil || task.Status != Done || task.ReviewerID != "c" {
		t.Fatalf("approve: %v, status %s reviewer %q", err, task.Status, task.ReviewerID)
	}
}

func TestStalePolicyBlockIfProgress(t *testing.T) {
	tx := newTxn(&Task{ID: "p"}, &Task{ID: "z"})
	p, _ := tx.Claim(Agent{ID: "a"}, ClaimOptions{TaskID: "p"})
	z, _ := tx.Claim(Agent{ID: "a"}, ClaimOptions{TaskID: "z"})
	if _, err := tx.Progress("a", "p", -1, 40, ""); err != nil {
		t.Fatal(err)
	}
	tx.FreeStale(LockRef{TaskID: "p", Agent: "a", Epoch: p.Epoch}, BlockIfProgress)
	tx.FreeStale(LockRef{TaskID: "z", Agent: "a", Epoch: z.Epoch}, BlockIfProgress)
	if p.Status != Blocked || p.ClaimedBy != "" || !strings.Contains(p.BlockedReason, "40%") {
		t.Fatalf("task with progress: %s by %q (%q)", p.Status, p.ClaimedBy, p.BlockedReason)
	}
	if z.Status != Unclaimed || z.ClaimedBy != "" {
		t.Fatalf("task without progress: %s by %q", z.Status, z.ClaimedBy)
	}
	if p.HoldsLock() {
		t.Fatal("an ownerless blocked task must not need a lock")
	}
	if _, err := tx.Unblock("c", "p", -1); err != nil || p.Status != Unclaimed {
		t.Fatalf("unblock of an ownerless blocked task: %v, %s", err, p.Status)
	}
}

func TestIDs(t *testing.T) {
	for _, id := range []string{"4.2", "a", "A-b_c.d", strings.Repeat("x", 64)} {
		if err := ValidTaskID(id); err != nil {
			t.Errorf("task id %q refused: %v", id, err)
		}
	}
	nfc, nfd := "caf\u00e9", "cafe\u0301" // look alike, differ in bytes: both refused (ASCII only)
	for _, id := range []string{"", ".", "..", ".a", "-a", "../../etc", "../../etc/passwd", "a/b", "a\\b", "a b", "a\x00", "a\n",
		strings.Repeat("x", 65), strings.Repeat("x", 256), "é", nfc, nfd} {
		if err := ValidTaskID(id); CodeOf(err) != CodeUsage {
			t.Errorf("task id %q: %v, want usage error", id, err)
		}
	}
	for _, id := range []string{"a.b", ".", "..", "a.lock", ""} {
		if err := ValidAgentID(id); CodeOf(err) != CodeUsage {
			t.Errorf("agent id %q accepted (no dots, so <task>.<agent>.lock splits at its last dot)", id)
		}
	}
	if err := ValidAgentID("agent-12345-frontend"); err != nil {
		t.Error(err)
	}
}

func TestFindCycle(t *testing.T) {
	c := FindCycle(map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
	if len(c) < 3 {
		t.Fatalf("cycle not found: %v", c)
	}
	if FindCycle(map[string][]string{"a": {"b"}, "b": {"c"}, "d": {"a", "c"}}) != nil {
		t.Fatal("cycle reported in a DAG")
	}
}

// TestCoordinatorIsNobody: the sweeper's log name cannot act as an agent:
// claim, hold, release, unblock, approve and reject refuse it (any case)
// with exit 1, and nothing changes.
func TestCoordinatorIsNobody(t *testing.T) {
	for _, id := range []string{CoordinatorID, "Coordinator", "COORDINATOR"} {
		if err := ValidActingAgent(id); CodeOf(err) != CodeUsage || !strings.Contains(err.Error(), "reserved") {
			t.Errorf("ValidActingAgent(%q) = %v, want a usage error", id, err)
		}
		if err := ValidAgentID(id); err != nil {
			t.Errorf("ValidAgentID(%q) = %v: ids read back from files stay valid", id, err)
		}
	}
	if err := ValidActingAgent("coordinator-2"); err != nil {
		t.Errorf("coordinator-2: %v", err)
	}
	tx := newTxn(&Task{ID: "t"}, &Task{ID: "r", Status: Review, ClaimedBy: "a"})
	ops := map[string]func() error{
		"claim":    func() error { _, err := tx.Claim(Agent{ID: CoordinatorID}, ClaimOptions{}); return err },
		"release":  func() error { _, err := tx.Release(CoordinatorID, "t", NoEpoch, "", false); return err },
		"unblock":  func() error { _, err := tx.Unblock(CoordinatorID, "t", NoEpoch); return err },
		"approve":  func() error { _, err := tx.Approve(CoordinatorID, "r"); return err },
		"human":    func() error { _, err := tx.ApproveForHuman("b", CoordinatorID, "r", ""); return err },
		"relay":    func() error { _, err := tx.ApproveForHuman(CoordinatorID, "alice", "r", ""); return err },
		"reject":   func() error { _, err := tx.Reject(CoordinatorID, "r", "no", DefaultMaxRejections); return err },
		"progress": func() error { _, err := tx.Progress(CoordinatorID, "t", NoEpoch, 5, ""); return err },
	}
	for name, op := range ops {
		if err := op(); CodeOf(err) != CodeUsage {
			t.Errorf("%s as coordinator: %v, want usage (1)", name, err)
		}
	}
	if tx.Task("t").Status != Unclaimed || tx.Task("r").Status != Review || len(tx.Events) != 0 {
		t.Fatalf("a refused operation changed the txn: %+v %+v %v", tx.Task("t"), tx.Task("r"), tx.Events)
	}
}

// TestApproveForHuman: a human's decision relayed by an agent records the
// human as reviewer, of kind human, and says so in the log; the claimer
// can relay it but the human cannot be the claimer; a new claim clears it.
func TestApproveForHuman(t *testing.T) {
	tx := newTxn(&Task{ID: "t"})
	task, _ := tx.Claim(Agent{ID: "a"}, ClaimOptions{})
	tx.Release("a", "t", task.Epoch, "", true)
	if _, err := tx.ApproveForHuman("b", "a", "t", ""); CodeOf(err) != CodeConflict {
		t.Fatalf("the claimer as the human: %v, want conflict", err)
	}
	if _, err := tx.ApproveForHuman("a", "alice", "t", ""); err != nil {
		t.Fatal(err)
	}
	if task.Status != Done || task.ReviewerID != "alice" || task.ReviewerKind != "human" {
		t.Fatalf("after a human approval: %s reviewer %q kind %q", task.Status, task.ReviewerID, task.ReviewerKind)
	}
	if ev := tx.Events[len(tx.Events)-1]; ev.Agent != "a" || ev.Text != "approved task t for human reviewer alice" {
		t.Fatalf("log: %+v", ev)
	}
	task.Status = Unclaimed
	tx.Claim(Agent{ID: "c"}, ClaimOptions{})
	if task.ReviewerID != "" || task.ReviewerKind != "" {
		t.Fatalf("a new claim kept the old review: %q %q", task.ReviewerID, task.ReviewerKind)
	}
}

// TestSelfApprovalTeachesNothing: the refusal of a self-approval names
// the rule, not a flag that gets round it.
func TestSelfApprovalTeachesNothing(t *testing.T) {
	tx := newTxn(&Task{ID: "t"})
	task, _ := tx.Claim(Agent{ID: "a"}, ClaimOptions{})
	tx.Release("a", "t", task.Epoch, "", true)
	_, err := tx.Approve("a", "t")
	if CodeOf(err) != CodeConflict {
		t.Fatalf("self-approval: %v", err)
	}
	for _, w := range []string{"--reviewer", "--agent", "--human", "another agent must approve"} {
		if strings.Contains(err.Error(), w) {
			t.Errorf("self-approval refusal %q mentions %q", err, w)
		}
	}
}

// TestNotHeldSaysWhy: releasing a task twice says it is done, not "not
// held by agent-d (… held by agent-d)"; another holder is named as such.
func TestNotHeldSaysWhy(t *testing.T) {
	tx := newTxn(&Task{ID: "t"}, &Task{ID: "u"})
	task, _ := tx.Claim(Agent{ID: "agent-d"}, ClaimOptions{TaskID: "t"})
	tx.Claim(Agent{ID: "agent-e"}, ClaimOptions{TaskID: "u"})
	if _, err := tx.Release("agent-d", "t", task.Epoch, "", false); err != nil {
		t.Fatal(err)
	}
	_, err := tx.Release("agent-d", "t", task.Epoch, "", false)
	if CodeOf(err) != CodeLost || !strings.Contains(err.Error(), `task "t" is done: nobody holds it (last held by agent-d)`) ||
		strings.Contains(err.Error(), "not held by agent-d") {
		t.Fatalf("second release: %v", err)
	}
	_, err = tx.Release("agent-d", "u", NoEpoch, "", false)
	if CodeOf(err) != CodeLost || !strings.Contains(err.Error(), `task "u" is held by agent-e, not by agent-d`) {
		t.Fatalf("release of another's task: %v", err)
	}
	if _, err := tx.Release("agent-e", "u", -2, "", false); CodeOf(err) != CodeUsage {
		t.Fatalf("a negative epoch other than NoEpoch: %v, want usage", err)
	}
}

// TestRefusalsNameTheHolder: a refusal caused by another agent's hold
// carries that agent in Holder (what the MCP server reports as "holder"),
// and a guard hit under a path lock names the task it was taken for.
func TestRefusalsNameTheHolder(t *testing.T) {
	holderOf := func(err error) string {
		t.Helper()
		e, ok := err.(*Error)
		if !ok {
			t.Fatalf("got %v (%T), want a *coord.Error", err, err)
		}
		return e.Holder
	}
	tx := newTxn(&Task{ID: "t", Files: []string{"src/*.go"}}, &Task{ID: "u"})
	claimID(t, tx, Agent{ID: "b"}, ClaimOptions{TaskID: "t"})
	if err := tx.LockPaths("b", []string{"docs"}, 0); err != nil {
		t.Fatal(err)
	}
	_, err := tx.Claim(Agent{ID: "a"}, ClaimOptions{TaskID: "t"})
	if h := holderOf(err); h != "b" || CodeOf(err) != CodeConflict {
		t.Errorf("claim of b's task: holder %q code %d, want b 3", h, CodeOf(err))
	}
	_, err = tx.Release("a", "t", NoEpoch, "", false)
	if h := holderOf(err); h != "b" || CodeOf(err) != CodeLost {
		t.Errorf("release of b's task: holder %q code %d, want b 6", h, CodeOf(err))
	}
	if h := holderOf(tx.LockPaths("a", []string{"docs/x.md"}, 0)); h != "b" {
		t.Errorf("lock under b's lock: holder %q", h)
	}
	if h := holderOf(tx.LockPaths("a", []string{"src/a.go"}, 0)); h != "b" {
		t.Errorf("lock inside b's task files: holder %q", h)
	}
	_, err = tx.UnlockPaths("a", []string{"docs"})
	if h := holderOf(err); h != "b" {
		t.Errorf("unlock of b's lock: holder %q", h)
	}
	hits := tx.Guard("a", []string{"docs/x.md", "src/a.go"})
	if len(hits) != 2 || hits[0].LockTask != "t" || hits[0].Lock != "docs" || hits[1].TaskID != "t" {
		t.Errorf("guard hits %+v", hits)
	}
	var d LeaseSet
	now := tx.Now
	if _, _, err := d.Grant(LeaseRequest{Name: "n", Holder: "b", TTL: time.Hour}, now); err != nil {
		t.Fatal(err)
	}
	_, _, err = d.Grant(LeaseRequest{Name: "n", Holder: "a", TTL: time.Hour}, now)
	if h := holderOf(err); h != "b" {
		t.Errorf("lease conflict: holder %q", h)
	}
	if h := holderOf(HeldBy(&d.Leases[0], "n", "a", NoEpoch, now)); h != "b" {
		t.Errorf("lease lost: holder %q", h)
	}
}

// TestRejectReachesTheOwner: a rejection hands the task back to its
// owner with the reason as review notes; the owner's next claim (without
// a named task) gets it back first, as it stands; the rejection that
// reaches max blocks it instead, with the count and the last reason,
// keeping its owner; the count and the notes outlive a new claim (only a
// landing clears them).
func TestRejectReachesTheOwner(t *testing.T) {
	tx := newTxn(&Task{ID: "w"}, &Task{ID: "other"})
	dev := Agent{ID: "dev"}
	submit := func() {
		t.Helper()
		if _, err := tx.Release("dev", "w", NoEpoch, "", true); err != nil {
			t.Fatal(err)
		}
	}
	if claimID(t, tx, dev, ClaimOptions{TaskID: "w"}) != "w" {
		t.Fatal("claim")
	}
	epoch := tx.Task("w").Epoch
	for i := 1; i <= 2; i++ {
		submit()
		got, err := tx.Reject("rev", "w", fmt.Sprintf("try %d:\nmore tests", i), 3)
		if err != nil || got.Status != Claimed || got.ClaimedBy != "dev" || got.ReviewNotes != fmt.Sprintf("try %d: more tests", i) || got.Rejections != i {
			t.Fatalf("rejection %d: %+v, %v", i, got, err)
		}
		// the owner's claim gives it back first, as it stands; a named
		// claim does not
		if c, err := tx.Claim(dev, ClaimOptions{}); err != nil || c != got || c.Epoch != epoch || c.ReviewNotes == "" {
			t.Fatalf("claim after rejection %d: %+v, %v; want w back at epoch %d", i, c, err, epoch)
		}
		if c, err := tx.Claim(Agent{ID: "else"}, ClaimOptions{Any: true}); err != nil || c == nil || c.ID != "other" {
			t.Fatalf("another agent's claim: %+v, %v", c, err)
		}
		tx.Task("other").Status, tx.Task("other").ClaimedBy = Unclaimed, ""
	}
	submit()
	n := len(tx.Events)
	got, err := tx.Reject("rev", "w", "try 3", 3)
	if err != nil || got.Status != Blocked || got.ClaimedBy != "dev" || !got.HoldsLock() || got.BlockedReason != "rejected 3 times: try 3" ||
		got.BlockedAt == "" || got.ReviewNotes != "try 3" || got.Rejections != 3 {
		t.Fatalf("third rejection: %+v, %v; want blocked, owner kept", got, err)
	}
	if ev := tx.Events[n:]; len(ev) != 2 || ev[0].Text != "rejected task w: try 3" || ev[1].Agent != CoordinatorID || ev[1].Text != "blocked task w: rejected 3 times: try 3" {
		t.Fatalf("log: %+v", ev)
	}
	if c, err := tx.Claim(dev, ClaimOptions{TaskID: "other"}); err != nil || c.ID != "other" {
		t.Fatalf("a blocked task is not handed back by claim: %+v, %v", c, err)
	}
	// unblocked by its owner, back in the pool for it; the count stands:
	// the next rejection blocks
	if got, err := tx.Unblock("dev", "w", NoEpoch); err != nil || got.Status != Unclaimed || got.Owner != "dev" {
		t.Fatal(got, err)
	}
	tx.Task("other").Status, tx.Task("other").ClaimedBy = Done, ""
	if c, err := tx.Claim(dev, ClaimOptions{}); err != nil || c == nil || c.ID != "w" {
		t.Fatalf("the owner takes its unblocked task back: %+v, %v", c, err)
	}
	submit()
	if got, _ := tx.Reject("rev", "w", "again", 3); got.Status != Blocked || got.BlockedReason != "rejected 4 times: again" {
		t.Fatalf("fourth rejection: %+v", got)
	}
	// another agent's claim keeps what the work was told
	got.Status, got.ClaimedBy = Unclaimed, ""
	if c, err := tx.Claim(Agent{ID: "dev2"}, ClaimOptions{TaskID: "w"}); err != nil || c.ReviewNotes != "again" || c.Rejections != 4 || c.BlockedReason != "" {
		t.Fatalf("new claim: %+v, %v", c, err)
	}
	// max < 1: no limit; a long reason keeps the blocked reason within 4 KiB
	tx = newTxn(&Task{ID: "x", Status: Review, ClaimedBy: "dev", Rejections: 50})
	if got, _ := tx.Reject("rev", "x", "no", 0); got.Status != Claimed || got.Rejections != 51 {
		t.Fatalf("no limit: %+v", got)
	}
	tx.Task("x").Status = Review
	long := strings.Repeat("é", 2048) // 4096 bytes
	if got, _ := tx.Reject("rev", "x", long, 1); got.Status != Blocked || len(got.BlockedReason) > 4096 || !utf8.ValidString(got.BlockedReason) ||
		!strings.HasPrefix(got.BlockedReason, "rejected 52 times: éé") || !strings.HasSuffix(got.BlockedReason, "…") {
		t.Fatalf("long reason: %d bytes, valid %v", len(got.BlockedReason), utf8.ValidString(got.BlockedReason))
	}
}

// TestOwnerLeaves: an owner that hands a task back and one that goes
// stale leave it alike (one transition, ownerLeaves): where StaleOutcome
// sends it, ownerless, the reason of a block naming why the owner left.
func TestOwnerLeaves(t *testing.T) {
	type state struct {
		status   Status
		progress int
		reason   string
	}
	rows := []struct {
		name   string
		from   state
		policy StalePolicy
		want   state // reason: "WHY" stands for the door's own why
	}{
		{"requeue, no progress", state{Claimed, 0, ""}, Requeue, state{Unclaimed, 0, ""}},
		{"requeue, progress", state{Claimed, 40, ""}, Requeue, state{Unclaimed, 0, ""}},
		{"block-if-progress, no progress", state{Claimed, 0, ""}, BlockIfProgress, state{Unclaimed, 0, ""}},
		{"block-if-progress, progress", state{Claimed, 40, ""}, BlockIfProgress, state{Blocked, 40, "WHY at 40% progress"}},
		{"already blocked, requeue", state{Blocked, 40, "waiting on x"}, Requeue, state{Blocked, 40, "waiting on x"}},
		{"already blocked, block-if-progress", state{Blocked, 0, "waiting on x"}, BlockIfProgress, state{Blocked, 0, "waiting on x"}},
	}
	doors := map[string]struct {
		why   string
		leave func(tx *Txn, task *Task, policy StalePolicy)
	}{
		"hand back": {"session ended", func(tx *Txn, task *Task, policy StalePolicy) {
			if _, err := tx.HandBack("a", task.ID, task.Epoch, "session ended", policy); err != nil {
				t.Fatal(err)
			}
		}},
		"stale sweep": {"agent a went stale", func(tx *Txn, task *Task, policy StalePolicy) {
			if !tx.FreeStale(LockRef{TaskID: task.ID, Agent: "a", Epoch: task.Epoch}, policy) {
				t.Fatal("FreeStale refused a matching lock")
			}
		}},
	}
	for _, r := range rows {
		for door, d := range doors {
			tx := newTxn(&Task{ID: "t"})
			task, err := tx.Claim(Agent{ID: "a"}, ClaimOptions{TaskID: "t"})
			if err != nil {
				t.Fatal(err)
			}
			task.Status, task.Progress, task.BlockedReason = r.from.status, r.from.progress, r.from.reason
			d.leave(tx, task, r.policy)
			want := r.want
			want.reason = strings.ReplaceAll(want.reason, "WHY", d.why)
			if got := (state{task.Status, task.Progress, task.BlockedReason}); got != want || task.ClaimedBy != "" || task.ClaimedAt != "" || task.HoldsLock() {
				t.Errorf("%s, %s: %+v held by %q, want %+v and no owner", r.name, door, got, task.ClaimedBy, want)
			}
		}
	}
}

func TestSendBackReachesTheOwner(t *testing.T) {
	tx := newTxn(&Task{ID: "w"}, &Task{ID: "x"})
	dev := Agent{ID: "dev"}
	if claimID(t, tx, dev, ClaimOptions{TaskID: "w"}) != "w" {
		t.Fatal("claim")
	}
	// not finished: nothing to send back
	if _, err := tx.SendBack("lander", "w", "conflict", 3); err == nil {
		t.Fatal("a claimed task was sent back")
	}
	if _, err := tx.Release("dev", "w", NoEpoch, "", false); err != nil {
		t.Fatal(err)
	}
	w := tx.Task("w")
	w.Branch, w.Head, w.TouchedFiles = "coord/dev", "abc1234", []string{"a.go"}
	if _, err := tx.SendBack("lander", "w", "", 3); err == nil {
		t.Fatal("a send back without a reason")
	}
	n := len(tx.Events)
	got, err := tx.SendBack("lander", "w", "conflict in\na.go", 3)
	if err != nil || got.Status != Claimed || got.ClaimedBy != "dev" || got.ReviewNotes != "conflict in a.go" || got.Rejections != 1 ||
		got.Head != "" || got.CompletedAt != "" || !got.HoldsLock() || got.Branch != "coord/dev" || len(got.TouchedFiles) != 1 || !got.InFlight() {
		t.Fatalf("send back: %+v, %v", got, err)
	}
	if ev := tx.Events[n:]; len(ev) != 1 || ev[0].Agent != "lander" || ev[0].Text != "sent task w back to dev: conflict in a.go" {
		t.Fatalf("log: %+v", ev)
	}
	// landed work stays landed; the count blocks as a rejection does
	tx.Task("x").Status, tx.Task("x").ClaimedBy, tx.Task("x").LandedAt = Done, "dev", "2026-11-22T10:00:00Z"
	if _, err := tx.SendBack("lander", "x", "why", 3); err == nil {
		t.Fatal("landed work was sent back")
	}
	for i := 2; i <= 3; i++ {
		if _, err := tx.Release("dev", "w", NoEpoch, "", false); err != nil {
			t.Fatal(err)
		}
		got, err = tx.SendBack("lander", "w", "check failed", 3)
	}
	if err != nil || got.Status != Blocked || got.BlockedReason != "rejected 3 times: check failed" || got.ClaimedBy != "dev" {
		t.Fatalf("third send back: %+v, %v", got, err)
	}
}
