package conformance

import (
	"slices"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// staleAfter is the timeout the clocked checks judge by; moving the clock
// by past (more than it) makes a silent agent stale.
const (
	staleAfter = 10 * time.Minute
	past       = staleAfter + time.Minute
)

// checkFencing: a holder that went stale is swept, another agent
// reclaims, and everything the first holder does with its old epoch fails
// with CodeLost (exit 6), while the new holder's epoch works.
func checkFencing(t *testing.T, e *env) {
	s := e.svc()
	e.seed(s, &coord.Task{ID: "t1"})
	old := e.claim(s, "a", "t1")
	e.clock.Advance(past)
	freed, err := s.Sweep(e.ctx, app.SweepRequest{Timeout: staleAfter})
	ok(t, "sweep", err)
	if len(freed) != 1 || freed[0].TaskID != "t1" || freed[0].Agent != "a" || freed[0].Epoch != old {
		t.Fatalf("sweep freed %+v, want t1 of a at epoch %d", freed, old)
	}
	fresh := e.claim(s, "b", "t1")
	if fresh <= old {
		t.Fatalf("reclaimed at epoch %d, not after %d", fresh, old)
	}
	if coord.CodeLost != 6 {
		t.Fatalf("CodeLost is %d, the contract says 6", coord.CodeLost)
	}
	stale := app.TaskRef{Agent: coord.Agent{ID: "a"}, TaskID: "t1", Epoch: old}
	_, err = s.Release(e.ctx, stale, "late")
	wantCode(t, "release at the old epoch", err, coord.CodeLost, "t1")
	_, err = s.Progress(e.ctx, stale, 70, "late")
	wantCode(t, "progress at the old epoch", err, coord.CodeLost, "t1")
	_, err = s.Block(e.ctx, stale, "late")
	wantCode(t, "block at the old epoch", err, coord.CodeLost, "t1")
	_, err = s.HandBack(e.ctx, stale, "late")
	wantCode(t, "hand back at the old epoch", err, coord.CodeLost, "t1")
	stale.Epoch = coord.NoEpoch
	_, err = s.Release(e.ctx, stale, "late")
	wantCode(t, "release without an epoch by the old holder", err, coord.CodeLost, "t1")
	// The new holder's epoch wins, and a stale holder's attempts changed
	// nothing.
	if task := e.task(s, "t1"); task.Status != coord.Claimed || task.ClaimedBy != "b" || task.Epoch != fresh || task.Progress != 0 {
		t.Fatalf("t1 after the old holder's attempts: %+v", task)
	}
	_, err = s.Progress(e.ctx, app.TaskRef{Agent: coord.Agent{ID: "b"}, TaskID: "t1", Epoch: fresh}, 40, "")
	ok(t, "progress by the new holder", err)
	_, err = s.Release(e.ctx, app.TaskRef{Agent: coord.Agent{ID: "b"}, TaskID: "t1", Epoch: fresh}, "")
	ok(t, "release by the new holder", err)

	// The same agent swept and back: its new epoch works, its old one is
	// fenced all the same.
	e.seed(s, &coord.Task{ID: "t3"})
	old = e.claim(s, "a", "t3")
	e.clock.Advance(past)
	_, err = s.Sweep(e.ctx, app.SweepRequest{Timeout: staleAfter})
	ok(t, "sweep", err)
	fresh = e.claim(s, "a", "t3")
	again := app.TaskRef{Agent: coord.Agent{ID: "a"}, TaskID: "t3", Epoch: old}
	_, err = s.Progress(e.ctx, again, 10, "")
	wantCode(t, "progress at the epoch before the sweep", err, coord.CodeLost, "t3")
	_, err = s.Release(e.ctx, again, "")
	wantCode(t, "release at the epoch before the sweep", err, coord.CodeLost, "t3")
	again.Epoch = fresh
	_, err = s.Release(e.ctx, again, "")
	ok(t, "release at the new epoch", err)

	// A claim frees a stale lock itself (sweep_on_claim) and fences the
	// same way.
	e.seed(s, &coord.Task{ID: "t2"})
	old = e.claim(s, "a", "t2")
	e.clock.Advance(s.Config().StaleAfter + time.Minute)
	fresh = e.claim(s, "b", "t2")
	_, err = s.Release(e.ctx, app.TaskRef{Agent: coord.Agent{ID: "a"}, TaskID: "t2", Epoch: old}, "")
	wantCode(t, "release after a claim swept it", err, coord.CodeLost, "t2")
	if fresh <= old {
		t.Fatalf("t2 reclaimed at epoch %d, not after %d", fresh, old)
	}
}

// checkSweepRecheck: the sweep judges without exclusion and re-checks
// under it; an agent that beats in between keeps its task, and a lock
// reclaimed in between (a new epoch) is not the one judged.
func checkSweepRecheck(t *testing.T, e *env) {
	d := decorate(e.open())
	s := e.service(d)
	e.seed(s, &coord.Task{ID: "t1"}, &coord.Task{ID: "t2"}, &coord.Task{ID: "t3"})
	e.claim(s, "slow", "t1")
	e.claim(s, "dead", "t2")
	e.clock.Advance(past)

	// "slow" beats between the judgement and the commit; "dead" does not.
	d.onNextUpdate(func() { ok(t, "beat in the window", s.Beat(e.ctx, "slow", nil)) })
	freed, err := s.Sweep(e.ctx, app.SweepRequest{Timeout: staleAfter})
	ok(t, "sweep", err)
	if len(freed) != 1 || freed[0].TaskID != "t2" {
		t.Fatalf("sweep freed %+v, want only t2 (slow beat before the commit)", freed)
	}
	if task := e.task(s, "t1"); task.Status != coord.Claimed || task.ClaimedBy != "slow" {
		t.Fatalf("the revived agent's task: %+v", task)
	}

	// t3 is held by "a"; between judgement and commit someone else's
	// sweep frees it and "a" claims it again (a new epoch), and its
	// heartbeat is old by the re-check: the new lock is not the one
	// judged, so it stays.
	old := e.claim(s, "a", "t3")
	e.clock.Advance(past)
	ok(t, "beat", s.Beat(e.ctx, "slow", nil))
	var fresh int64
	d.onNextUpdate(func() {
		ok(t, "update in the window", d.Backend.Tasks().Update(e.ctx, func(tx *coord.Txn) error {
			tx.FreeStale(coord.LockRef{TaskID: "t3", Agent: "a", Epoch: old}, coord.Requeue)
			n, err := tx.Claim(coord.Agent{ID: "a"}, coord.ClaimOptions{TaskID: "t3"})
			if err == nil {
				fresh = n.Epoch
			}
			return err
		}))
	})
	freed, err = s.Sweep(e.ctx, app.SweepRequest{Timeout: staleAfter})
	ok(t, "sweep", err)
	if len(freed) != 0 {
		t.Fatalf("sweep freed %+v, a lock reclaimed after its judgement", freed)
	}
	if task := e.task(s, "t3"); task.Status != coord.Claimed || task.ClaimedBy != "a" || task.Epoch != fresh || fresh <= old {
		t.Fatalf("the reclaimed task: %+v (epochs %d then %d)", task, old, fresh)
	}
}

// checkSweepDryRun: the dry run reports exactly what the sweep then does,
// under both stale policies, and changes nothing.
func checkSweepDryRun(t *testing.T, e *env) {
	for _, policy := range []coord.StalePolicy{coord.Requeue, coord.BlockIfProgress} {
		t.Run(string(policy), func(t *testing.T) {
			e := newEnv(t, e.h)
			d := decorate(e.open())
			d.cfg = func(c *coord.Config) { c.OnStale = policy }
			s := e.service(d)
			e.seed(s, &coord.Task{ID: "busy"}, &coord.Task{ID: "idle"}, &coord.Task{ID: "stuck"}, &coord.Task{ID: "live"})
			for _, id := range []string{"busy", "idle", "stuck"} {
				e.claim(s, "dead-"+id, id)
			}
			ref := func(id string) app.TaskRef {
				task := e.task(s, id)
				return app.TaskRef{Agent: coord.Agent{ID: task.ClaimedBy}, TaskID: id, Epoch: task.Epoch}
			}
			_, err := s.Progress(e.ctx, ref("busy"), 30, "")
			ok(t, "progress", err)
			_, err = s.Block(e.ctx, ref("stuck"), "waiting")
			ok(t, "block", err)
			e.clock.Advance(past)
			e.claim(s, "alive", "live")

			before, err := s.Tasks(e.ctx, app.ListRequest{})
			ok(t, "list", err)
			dry, err := s.Sweep(e.ctx, app.SweepRequest{Timeout: staleAfter, DryRun: true})
			ok(t, "dry run", err)
			after, err := s.Tasks(e.ctx, app.ListRequest{})
			ok(t, "list", err)
			for i := range before {
				if b, a := before[i], after[i]; b.Status != a.Status || b.ClaimedBy != a.ClaimedBy {
					t.Errorf("the dry run changed %s: %s by %q -> %s by %q", b.ID, b.Status, b.ClaimedBy, a.Status, a.ClaimedBy)
				}
			}
			want := map[string]coord.Status{"busy": coord.Unclaimed, "idle": coord.Unclaimed, "stuck": coord.Blocked}
			if policy == coord.BlockIfProgress {
				want["busy"] = coord.Blocked
			}
			outcome := func(list []coord.Stale) map[string]coord.Status {
				m := map[string]coord.Status{}
				for _, st := range list {
					m[st.TaskID] = st.Status
				}
				return m
			}
			if got := outcome(dry); !equalMaps(got, want) {
				t.Errorf("dry run reports %v, want %v", got, want)
			}
			freed, err := s.Sweep(e.ctx, app.SweepRequest{Timeout: staleAfter})
			ok(t, "sweep", err)
			if got := outcome(freed); !equalMaps(got, want) {
				t.Errorf("sweep did %v, its dry run said %v", got, outcome(dry))
			}
			for id, st := range want {
				if task := e.task(s, id); task.Status != st || task.ClaimedBy != "" {
					t.Errorf("%s after the sweep: %s by %q, want %s by nobody", id, task.Status, task.ClaimedBy, st)
				}
			}
			if task := e.task(s, "live"); task.ClaimedBy != "alive" {
				t.Errorf("the live agent's task: %+v", task)
			}
		})
	}
}

func equalMaps[K, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// checkLiveness: the one liveness view (Agents) shows every agent with a
// heartbeat and every holder without one, alive exactly while the sweep
// would leave it be.
func checkLiveness(t *testing.T, e *env) {
	s := e.svc()
	e.seed(s, &coord.Task{ID: "t1"}, &coord.Task{ID: "t2"})
	e.claim(s, "holder", "t1")
	ok(t, "beat", s.Beat(e.ctx, "idle", nil))
	// A holder that never beat (a claim made by another tool): alive by its
	// claim's time.
	ok(t, "raw claim", s.Backend().Tasks().Update(e.ctx, func(tx *coord.Txn) error {
		_, err := tx.Claim(coord.Agent{ID: "mute"}, coord.ClaimOptions{TaskID: "t2"})
		return err
	}))
	view := func() map[string]coord.AgentView {
		list, err := s.Agents(e.ctx, staleAfter)
		ok(t, "agents", err)
		m := map[string]coord.AgentView{}
		for _, a := range list {
			m[a.Agent] = a
		}
		return m
	}
	v := view()
	for _, a := range []string{"holder", "idle", "mute"} {
		if !v[a].Alive {
			t.Errorf("%s is not alive at first: %+v", a, v)
		}
	}
	if len(v) != 3 || !slices.Equal(v["holder"].Tasks, []string{"t1"}) || !slices.Equal(v["mute"].Tasks, []string{"t2"}) ||
		len(v["idle"].Tasks) != 0 || v["mute"].LastBeat != nil {
		t.Errorf("view: %+v", v)
	}

	e.clock.Advance(past)
	ok(t, "beat", s.Beat(e.ctx, "holder", nil))
	v = view()
	if !v["holder"].Alive || v["idle"].Alive || v["mute"].Alive {
		t.Errorf("after %s with only holder beating: %+v", past, v)
	}
	// The sweep agrees with the view: it frees exactly the holders the
	// view calls dead.
	freed, err := s.Sweep(e.ctx, app.SweepRequest{Timeout: staleAfter, DryRun: true})
	ok(t, "dry run", err)
	if len(freed) != 1 || freed[0].Agent != "mute" {
		t.Errorf("the sweep would free %+v; the view says only mute is dead", freed)
	}
	// SeenAll (what a claim's sweep reads before its commit) is LastSeen
	// for every agent with a heartbeat: the same agents at the same
	// instants, but for the clamp of a beat stamped a moment ahead of the
	// reader's now (NATS: the server's clock as a client estimates it),
	// which one reading may write back as its now and the next read.
	beats := s.Backend().Beats()
	all, _, err := beats.SeenAll(e.ctx)
	ok(t, "SeenAll", err)
	named, _, err := beats.LastSeen(e.ctx, []string{"holder", "idle", "mute"})
	ok(t, "LastSeen", err)
	same := len(all) == 2 && len(named) == 2
	for a, at := range named {
		if d := all[a].Sub(at).Abs(); d > 5*time.Second {
			same = false
		}
	}
	if !same {
		t.Errorf("SeenAll %v, LastSeen of holder, idle and mute %v: want the same two", all, named)
	}
}

// checkBeatInCommit: an agent that claims (or registers, or takes from
// its inbox) beats inside the commit, before it is written, so a sweep
// racing it never judges the new claim by the heartbeat the agent had
// before; and a refused claim or registration does not beat at all
// (docs/CHOICES.md: a refused command leaves no trace). A sweep runs in the
// window just before each beat: with the beat after the commit, it frees
// the fresh claim of an agent whose old heartbeat is stale.
func checkBeatInCommit(t *testing.T, e *env) {
	d := decorate(e.open())
	s := e.service(d)
	other := e.open()
	sweeper := e.service(other)
	e.seed(s, &coord.Task{ID: "t1"}, &coord.Task{ID: "t2"}, &coord.Task{ID: "t3"})
	for _, a := range []string{"a", "p"} {
		ok(t, "beat", s.Beat(e.ctx, a, nil))
	}
	_, err := s.Register(e.ctx, app.RegisterRequest{Agent: "p", Host: "h1", Worktree: "/src/p"})
	ok(t, "register", err)
	e.clock.Advance(past) // every heartbeat is stale now
	seen := func(agent string) time.Time {
		t.Helper()
		at, _, err := other.Beats().LastSeen(e.ctx, []string{agent})
		ok(t, "last seen", err)
		return at[agent]
	}
	before := seen("a")

	// Refused: a task that is not there, one another agent holds, an id a
	// live agent registered elsewhere. None beats.
	var swept []coord.Stale
	d.onBeat(func(agent string) {
		freed, err := sweeper.Sweep(e.ctx, app.SweepRequest{Timeout: staleAfter})
		ok(t, "sweep in the window", err)
		swept = append(swept, freed...)
	})
	_, err = s.Claim(e.ctx, app.ClaimRequest{Agent: coord.Agent{ID: "a"}, TaskID: "typo"})
	wantCode(t, "claim of a task that is not there", err, coord.CodeConflict, "typo")
	e.claim(sweeper, "holder", "t3")
	_, err = s.Claim(e.ctx, app.ClaimRequest{Agent: coord.Agent{ID: "a"}, TaskID: "t3"})
	wantCode(t, "claim of a held task", err, coord.CodeConflict, "holder")
	moved := func(agent string, was time.Time) bool { return seen(agent).After(was.Add(time.Second)) }
	if moved("a", before) {
		t.Fatalf("a refused claim beat: last seen %v, was %v", seen("a"), before)
	}
	// p beat past's length ago: alive under the configured stale_after.
	if c := s.Config(); c.StaleAfter <= past {
		t.Fatalf("stale_after %v: p would not be alive", c.StaleAfter)
	}
	pBefore := seen("p")
	_, err = s.Register(e.ctx, app.RegisterRequest{Agent: "p", Host: "h2", Worktree: "/src/p"})
	wantCode(t, "register from another host", err, coord.CodeConflict, coord.IDInUse, "h1", "/src/p")
	if moved("p", pBefore) {
		t.Fatalf("a refused register beat: last seen %v, was %v", seen("p"), pBefore)
	}

	// Accepted: the claim beats inside its commit, so the sweep in the
	// window before the beat cannot see the claim with a stale heartbeat.
	e.clock.Advance(time.Second)
	epoch := e.claim(s, "a", "t1")
	if len(swept) != 0 {
		t.Fatalf("a sweep racing the claim freed %+v: it judged the new claim by the old heartbeat", swept)
	}
	if task := e.task(s, "t1"); task.Status != coord.Claimed || task.ClaimedBy != "a" || task.Epoch != epoch {
		t.Fatalf("the claimed task: %+v", task)
	}
	if !moved("a", before) {
		t.Fatalf("the claim did not beat: last seen %v, was %v", seen("a"), before)
	}
}
