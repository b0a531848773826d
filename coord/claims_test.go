package coord

import (
	"slices"
	"strings"
	"testing"
)

// twoAgents: a holds task ta, b holds task tb; both claimed.
func twoAgents(t *testing.T, more ...*Task) *Txn {
	t.Helper()
	tx := newTxn(append([]*Task{{ID: "ta"}, {ID: "tb"}}, more...)...)
	claimID(t, tx, Agent{ID: "a"}, ClaimOptions{TaskID: "ta"})
	claimID(t, tx, Agent{ID: "b"}, ClaimOptions{TaskID: "tb"})
	return tx
}

func TestWriteClaim(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		tx := twoAgents(t)
		p, err := tx.WriteClaim("a", Working{}, []string{"go.mod", "README.md"})
		if err != nil || p.Task == nil || p.Task.ID != "ta" || !slices.Equal(p.New, []string{"go.mod", "README.md"}) {
			t.Fatalf("plan %+v, %v", p, err)
		}
		if got := tx.Task("ta").TouchedFiles; !slices.Equal(got, []string{"README.md", "go.mod"}) {
			t.Fatalf("touched %v", got)
		}
		if !strings.Contains(tx.Events[len(tx.Events)-1].Text, "claimed go.mod, README.md for task ta") {
			t.Fatalf("log %+v", tx.Events)
		}
	})
	t.Run("AlreadyHeldIsNoChange", func(t *testing.T) {
		tx := twoAgents(t)
		tx.WriteClaim("a", Working{}, []string{"go.mod"})
		tx.Task("ta").Dirty, tx.Events = false, nil
		if p := tx.PlanWriteClaim("a", Working{}, []string{"go.mod"}); len(p.New) != 0 || len(p.Hits) != 0 {
			t.Fatalf("plan of a path held %+v", p)
		}
		if p, err := tx.WriteClaim("a", Working{}, []string{"go.mod"}); err != nil || len(p.New) != 0 || tx.Task("ta").Dirty || len(tx.Events) != 0 {
			t.Fatalf("a second write changed the registry: %+v %v", p, err)
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		tx := twoAgents(t)
		tx.WriteClaim("a", Working{}, []string{"go.mod"})
		before := slices.Clone(tx.Task("tb").TouchedFiles)
		p, err := tx.WriteClaim("b", Working{}, []string{"main.go", "go.mod"})
		if CodeOf(err) != CodeConflict || !strings.Contains(err.Error(), "go.mod (write-claimed by task ta (a, claimed))") {
			t.Fatalf("second writer: %v", err)
		}
		if e := err.(*Error); e.Holder != "a" {
			t.Fatalf("holder %q", e.Holder)
		}
		if len(p.Refused()) != 1 || p.Refused()[0].TaskID != "ta" || p.Refused()[0].Claimed != "go.mod" {
			t.Fatalf("hits %+v", p.Hits)
		}
		if !slices.Equal(tx.Task("tb").TouchedFiles, before) {
			t.Fatalf("all or nothing: main.go claimed anyway (%v)", tx.Task("tb").TouchedFiles)
		}
	})
	t.Run("SameAgentOtherTask", func(t *testing.T) {
		// a's finished work (done, not landed) does not refuse a's next task.
		tx := twoAgents(t, &Task{ID: "tc"})
		tx.WriteClaim("a", Working{}, []string{"go.mod"})
		ta := tx.Task("ta")
		ta.Status, ta.Head = Done, "abcd"
		claimID(t, tx, Agent{ID: "a"}, ClaimOptions{TaskID: "tc"})
		if _, err := tx.WriteClaim("a", Working{}, []string{"go.mod"}); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.WriteClaim("b", Working{}, []string{"go.mod"}); CodeOf(err) != CodeConflict {
			t.Fatalf("b meets both of a's tasks: %v", err)
		}
	})
	t.Run("HeldUntilLanded", func(t *testing.T) {
		tx := twoAgents(t)
		tx.WriteClaim("a", Working{}, []string{"go.mod"})
		if _, err := tx.Release("a", "ta", NoEpoch, "", false); err != nil {
			t.Fatal(err)
		}
		ta := tx.Task("ta")
		// Released outside git (no head): nothing can land, nothing held.
		if _, err := tx.WriteClaim("b", Working{}, []string{"go.mod"}); err != nil {
			t.Fatalf("released without a head: %v", err)
		}
		tx = twoAgents(t)
		tx.WriteClaim("a", Working{}, []string{"go.mod"})
		tx.Release("a", "ta", NoEpoch, "", false)
		ta = tx.Task("ta")
		ta.Head = "abcd1234"
		_, err := tx.WriteClaim("b", Working{}, []string{"go.mod"})
		if CodeOf(err) != CodeConflict || !strings.Contains(err.Error(), "(a, done, not yet landed)") {
			t.Fatalf("done, not landed: %v", err)
		}
		if tx.Landed("ta", "ffff", "beef", "main") {
			t.Fatal("landed with another head")
		}
		if !tx.Landed("ta", "abcd1234", "beef", "main") || ta.LandedCommit != "beef" || ta.LandedAt == "" {
			t.Fatalf("not landed: %+v", ta)
		}
		if tx.Landed("ta", "abcd1234", "beef", "main") {
			t.Fatal("landed twice")
		}
		if _, err := tx.WriteClaim("b", Working{}, []string{"go.mod"}); err != nil {
			t.Fatalf("landed work still claims: %v", err)
		}
	})
	t.Run("FreedByHandBack", func(t *testing.T) {
		tx := twoAgents(t)
		tx.WriteClaim("a", Working{}, []string{"go.mod"})
		if _, err := tx.HandBack("a", "ta", NoEpoch, "session ended", Requeue); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.WriteClaim("b", Working{}, []string{"go.mod"}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("FreedBySweep", func(t *testing.T) {
		tx := twoAgents(t)
		tx.WriteClaim("a", Working{}, []string{"go.mod"})
		tx.FreeStale(LockRef{TaskID: "ta", Agent: "a", Epoch: tx.Task("ta").Epoch}, Requeue)
		if tx.Task("ta").TouchedFiles != nil {
			t.Fatal("the sweep kept the claims")
		}
		if _, err := tx.WriteClaim("b", Working{}, []string{"go.mod"}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("Warn", func(t *testing.T) {
		tx := twoAgents(t)
		tx.WriteClaims = WarnClaims
		tx.WriteClaim("a", Working{}, []string{"go.mod"})
		p, err := tx.WriteClaim("b", Working{}, []string{"go.mod"})
		if err != nil || len(p.Hits) != 1 || !p.Hits[0].Warn || !slices.Equal(tx.Task("tb").TouchedFiles, []string{"go.mod"}) {
			t.Fatalf("warn: %+v, %v", p, err)
		}
	})
	t.Run("Off", func(t *testing.T) {
		tx := twoAgents(t)
		tx.Task("ta").TouchedFiles = []string{"go.mod"} // recorded at a release, say
		tx.WriteClaims = ClaimsOff
		p, err := tx.WriteClaim("b", Working{}, []string{"go.mod"})
		if err != nil || len(p.Hits) != 0 || p.Task != nil || tx.Task("tb").TouchedFiles != nil {
			t.Fatalf("off: %+v, %v", p, err)
		}
	})
	t.Run("Untasked", func(t *testing.T) {
		for mode, want := range map[UntaskedMode]string{"": "refuse", UntaskedGuard: "refuse", UntaskedWarn: "warn", UntaskedOff: "nothing"} {
			tx := twoAgents(t)
			tx.WriteClaim("a", Working{}, []string{"go.mod"})
			tx.WriteClaimsUntasked = mode
			p, err := tx.WriteClaim("human", Working{}, []string{"go.mod"})
			got := "nothing"
			switch {
			case err != nil && CodeOf(err) == CodeConflict:
				got = "refuse"
			case len(p.Hits) == 1 && p.Hits[0].Warn:
				got = "warn"
			}
			if got != want || p.Task != nil {
				t.Errorf("write_claims_untasked %q: %s (%+v, %v), want %s", mode, got, p, err, want)
			}
		}
	})
	t.Run("LocksAndFilesStillRefuse", func(t *testing.T) {
		tx := twoAgents(t)
		tx.Task("tb").Files = []string{"src/*.go"}
		tx.LockPaths("b", []string{"docs"}, 0)
		tx.WriteClaims = ClaimsOff
		_, err := tx.WriteClaim("a", Working{}, []string{"src/a.go", "docs/x.md"})
		if CodeOf(err) != CodeConflict || len(tx.Task("ta").TouchedFiles) != 0 {
			t.Fatalf("locks and files with claims off: %v", err)
		}
	})
}

func TestWriteClaimsMeetLocksGuardAndEligibility(t *testing.T) {
	tx := twoAgents(t, &Task{ID: "next", Files: []string{"go.*"}}, &Task{ID: "other", Files: []string{"src/"}})
	tx.WriteClaim("a", Working{}, []string{"go.mod"})
	// lock-file: a path another in-flight task wrote, or covering one.
	for _, p := range []string{"go.mod", "go.*", "."} {
		c, _ := CleanRepoPath(p)
		if p == "." {
			c = "**"
		}
		err := tx.LockPaths("b", []string{c}, 0)
		if CodeOf(err) != CodeConflict || !strings.Contains(err.Error(), "write-claimed by task ta (a, claimed)") {
			t.Errorf("lock %s: %v", c, err)
		}
	}
	if err := tx.LockPaths("a", []string{"go.mod"}, 0); err != nil {
		t.Errorf("the claim's own agent may lock it: %v", err)
	}
	tx.UnlockPaths("a", []string{"go.mod"})
	// guard: a staged path another in-flight task wrote.
	hits := tx.Guard("b", []string{"go.mod", "main.go"})
	if len(hits) != 1 || hits[0].TaskID != "ta" || hits[0].Holder != "a" || hits[0].Warn {
		t.Fatalf("guard %+v", hits)
	}
	// Eligibility: a task whose files meet the claim waits, saying why.
	_, not, why := tx.Ready(Agent{ID: "c"})
	found := false
	for i, n := range not {
		if n.ID == "next" {
			found = why[i] == "file go.mod is write-claimed by task ta (a)"
			if !found {
				t.Errorf("why: %q", why[i])
			}
		}
	}
	if !found {
		t.Fatal("next is eligible")
	}
	if got := tx.Best(Agent{ID: "c"}, false); got == nil || got.ID != "other" {
		t.Fatalf("best %v", got)
	}
	// The claim's own agent may take it (its finished work is on its branch).
	if why := tx.Ineligible(tx.Task("next"), Agent{ID: "a"}); why != "" {
		t.Fatalf("a's own claim keeps a waiting: %s", why)
	}
	// Warn and off: reported by guard (warn) but never keep a task waiting.
	for _, m := range []ClaimMode{WarnClaims, ClaimsOff} {
		tx.WriteClaims = m
		if why := tx.Ineligible(tx.Task("next"), Agent{ID: "c"}); why != "" {
			t.Errorf("%s: %s", m, why)
		}
		if err := tx.LockPaths("b", []string{"go.mod"}, 0); err != nil {
			t.Errorf("%s: lock refused: %v", m, err)
		}
		tx.UnlockPaths("b", []string{"go.mod"})
	}
}

func TestScheduleRespectsWriteClaims(t *testing.T) {
	tx := twoAgents(t, &Task{ID: "next", Files: []string{"go.mod"}})
	tx.WriteClaim("a", Working{}, []string{"go.mod"})
	for _, id := range []string{"a", "b"} {
		tx.Pool = append(tx.Pool, PoolAgent{ID: id, Role: Implementer})
	}
	tx.Pool = append(tx.Pool, PoolAgent{ID: "c", Role: Implementer})
	live := map[string]bool{"a": true, "b": true, "c": true}
	r := tx.Schedule(live, 1)
	if len(r.Assigned) != 1 || r.Assigned[0].Agent != "a" {
		t.Fatalf("assigned %+v, want next to a (its own claim)", r.Assigned)
	}
}

// Paths under .rotd/ (coord's tree, ROTD's shared artifacts) are never
// claimed, at a write or from a commit.
func TestRotdNeverClaimed(t *testing.T) {
	tx := twoAgents(t)
	p, err := tx.WriteClaim("a", Working{}, []string{".rotd/session_state.json", "x.go"})
	if err != nil || !slices.Equal(p.New, []string{"x.go"}) {
		t.Fatalf("plan %+v, %v", p, err)
	}
	tx.Task("ta").RecordWork("abcd", []string{".rotd/tasks.jsonl", "y.go"})
	if got := tx.Task("ta").TouchedFiles; !slices.Equal(got, []string{"x.go", "y.go"}) {
		t.Fatalf("touched %v", got)
	}
	if _, err := tx.WriteClaim("b", Working{}, []string{".rotd/session_state.json"}); err != nil {
		t.Fatal(err)
	}
}

// A supervisor's requeue takes the task from its holder with its write
// claims.
func TestRequeueFreesClaims(t *testing.T) {
	tx := twoAgents(t)
	tx.WriteClaim("a", Working{}, []string{"go.mod"})
	if _, _, err := tx.Requeue("lead", "ta", "stuck"); err != nil {
		t.Fatal(err)
	}
	if tx.Task("ta").TouchedFiles != nil {
		t.Fatal("requeued with its claims")
	}
	if _, err := tx.WriteClaim("b", Working{}, []string{"go.mod"}); err != nil {
		t.Fatal(err)
	}
}
