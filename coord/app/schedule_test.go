package app_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend/backendtest"
)

// The push-scheduling operations over a real engine (the file tree): the
// pool, rounds committed once, the inbox, claim and wait in push mode.

type pushProject struct {
	root string
	now  atomic.Int64 // the engines' clock, unix seconds
}

func (p *pushProject) clock() time.Time { return time.Unix(p.now.Load(), 0).UTC() }

func (p *pushProject) advance(d time.Duration) { p.now.Add(int64(d / time.Second)) }

// newPushProject lays down a tree with config.json and the given tasks.
func newPushProject(t *testing.T, config string, tasks ...*coord.Task) *pushProject {
	t.Helper()
	p := &pushProject{}
	p.now.Store(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC).Unix())
	p.root = backendtest.NewProject(t, backendtest.Options{Config: config, Clock: p.clock, Tasks: tasks}).Root
	return p
}

// service opens the pushProject anew: each one is a separate engine, as a
// separate process would have.
func (p *pushProject) service(t *testing.T) *app.Service {
	t.Helper()
	return backendtest.NewProject(t, backendtest.Options{Root: p.root, Clock: p.clock}).Service
}

func register(t *testing.T, s *app.Service, id, role string, caps ...string) app.AgentRecord {
	t.Helper()
	rec, err := s.Register(context.Background(), app.RegisterRequest{Agent: id, Role: role, Caps: caps, Worktree: "/src/" + id, Branch: "wt-" + id})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func task(t *testing.T, s *app.Service, id string) *coord.Task {
	t.Helper()
	list, err := s.Tasks(context.Background(), app.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range list {
		if x.ID == id {
			return x
		}
	}
	t.Fatalf("no task %s", id)
	return nil
}

func logLines(t *testing.T, s *app.Service) []string {
	t.Helper()
	var lines []string
	if _, err := s.Backend().Log().Read(context.Background(), 0, func(l string) error {
		lines = append(lines, l)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return lines
}

func TestRegisterAndAgents(t *testing.T) {
	p := newPushProject(t, "")
	s := p.service(t)
	ctx := context.Background()
	rec := register(t, s, "a", "reviewer", "go", "ts")
	if rec.ID != "a" || rec.Role != "reviewer" || strings.Join(rec.Capabilities, ",") != "go,ts" || *rec.Worktree != "/src/a" ||
		*rec.Branch != "wt-a" || rec.RegisteredAt != "2026-11-22T10:00:00Z" || rec.SkillLevel != nil {
		t.Fatalf("record %+v", rec)
	}
	p.advance(time.Minute)
	rec, err := s.Register(ctx, app.RegisterRequest{Agent: "a", Skill: "expert"})
	if err != nil || rec.Role != "implementer" || rec.RegisteredAt != "2026-11-22T10:00:00Z" || *rec.SkillLevel != "<=expert" || rec.Worktree != nil {
		t.Fatalf("registering again: %+v, %v", rec, err)
	}
	for _, bad := range []app.RegisterRequest{{Agent: "a", Role: "boss"}, {Agent: "a", Skill: "guru"}, {Agent: "../a"}, {Agent: "a", Caps: []string{""}}} {
		if _, err := s.Register(ctx, bad); coord.CodeOf(err) != coord.CodeUsage {
			t.Errorf("register %+v: %v, want usage", bad, err)
		}
	}
	views, err := s.Agents(ctx, 0)
	if err != nil || len(views) != 1 || views[0].Role != "implementer" || !views[0].Alive || views[0].SkillLevel != "<=expert" {
		t.Fatalf("agents %+v, %v", views, err)
	}
	if lines := logLines(t, s); !strings.Contains(strings.Join(lines, "\n"), "a ▶ registered (role reviewer; capabilities go,ts; worktree /src/a; branch wt-a)") {
		t.Fatalf("log %q", lines)
	}
}

// A round assigns in one commit; the inbox claims the oldest assignment
// as claim does (epoch, lock, heartbeat); a second round changes nothing.
func TestScheduleAndInbox(t *testing.T) {
	p := newPushProject(t, "", &coord.Task{ID: "t1", ConflictGroup: "g"}, &coord.Task{ID: "t2", ConflictGroup: "g"}, &coord.Task{ID: "t3"})
	s := p.service(t)
	ctx := context.Background()
	register(t, s, "a", "")
	register(t, s, "b", "")
	if res, err := s.Inbox(ctx, app.InboxRequest{Agent: "a"}); err != nil || res.Status != "empty" {
		t.Fatalf("inbox before any round: %+v, %v", res, err)
	}
	if _, err := s.Inbox(ctx, app.InboxRequest{Agent: "stranger"}); coord.CodeOf(err) != coord.CodeConflict {
		t.Fatalf("unregistered inbox: %v", err)
	}
	before := len(logLines(t, s))
	res, err := s.Schedule(ctx, app.ScheduleRequest{})
	if err != nil || len(res.Assigned) != 2 || res.Assigned[0] != (coord.Assignment{Task: "t1", Agent: "a"}) || res.Assigned[1] != (coord.Assignment{Task: "t3", Agent: "b"}) {
		t.Fatalf("round: %+v, %v", res, err)
	}
	if lines := logLines(t, s)[before:]; len(lines) != 2 || !strings.Contains(lines[0], "coordinator ▶ assigned task t1 to a (conflict group g)") {
		t.Fatalf("round logged %q", lines)
	}
	if res, err := s.Schedule(ctx, app.ScheduleRequest{}); err != nil || res.Changed() || len(res.Freed) != 0 {
		t.Fatalf("second round changed %+v, %v", res, err)
	}
	if got := task(t, s, "t1"); got.AssignedTo != "a" || got.AssignedAt != "2026-11-22T10:00:00Z" {
		t.Fatalf("t1 %+v", got)
	}
	// b may not claim a's assignment, by name or otherwise.
	if _, err := s.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: "b"}, TaskID: "t1"}); coord.CodeOf(err) != coord.CodeConflict || !strings.Contains(err.Error(), "assigned to a") {
		t.Fatalf("claiming a's assignment: %v", err)
	}
	got, err := s.Inbox(ctx, app.InboxRequest{Agent: "a"})
	if err != nil || got.Status != "taken" || got.Task.ID != "t1" || got.Task.ClaimedBy != "a" || got.Task.Epoch != 1 || got.Task.AssignedTo != "" {
		t.Fatalf("inbox: %+v %+v, %v", got, got.Task, err)
	}
	if _, err := os.Stat(filepath.Join(p.root, coord.TreeDir, "agent_locks", "t1.a.lock")); err != nil {
		t.Fatalf("the inbox's claim has no lock file: %v", err)
	}
	views, _ := s.Agents(ctx, 0)
	for _, v := range views {
		if v.Agent == "a" && (v.Status != coord.AgentWorking || strings.Join(v.Tasks, ",") != "t1" || len(v.Inbox) != 0) {
			t.Fatalf("a after its take: %+v", v)
		}
		if v.Agent == "b" && strings.Join(v.Inbox, ",") != "t3" {
			t.Fatalf("b's inbox: %+v", v)
		}
	}
}

// With "scheduling": "push", claim without a task takes from the inbox,
// and wait wakes when something is assigned.
func TestPushModeClaimAndWait(t *testing.T) {
	p := newPushProject(t, `{"scheduling":"push"}`, &coord.Task{ID: "t1"}, &coord.Task{ID: "t2", Priority: coord.Urgent})
	s := p.service(t)
	ctx := context.Background()
	register(t, s, "a", "")
	if got, err := s.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: "a"}}); err != nil || got.Task != nil || got.Drained {
		t.Fatalf("claim with an empty inbox: %+v, %v; want nothing (t1 and t2 are unassigned)", got, err)
	}
	if _, err := s.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: "stranger"}}); coord.CodeOf(err) != coord.CodeConflict {
		t.Fatalf("an unregistered agent's claim in push mode: %v", err)
	}
	woke := make(chan app.WaitResult, 1)
	errs := make(chan error, 1)
	go func() {
		r, err := p.service(t).Wait(ctx, app.WaitRequest{Agent: coord.Agent{ID: "a"}, Timeout: time.Minute})
		woke <- r
		errs <- err
	}()
	if _, err := s.Schedule(ctx, app.ScheduleRequest{}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-woke:
		if err := <-errs; err != nil || r.Status != "eligible" || r.Task != "t2" {
			t.Fatalf("wait: %+v, %v", r, err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("wait did not wake on the assignment")
	}
	got, err := s.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: "a"}})
	if err != nil || got.Task == nil || got.Task.ID != "t2" || got.Task.Status != coord.Claimed {
		t.Fatalf("push claim: %+v, %v", got, err)
	}
	// Claiming an unassigned task by name is still allowed.
	if got, err := s.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: "a"}, TaskID: "t1"}); err != nil || got.Task.ID != "t1" {
		t.Fatalf("claim --task of an unassigned task: %+v, %v", got, err)
	}
}

// inbox --wait blocks until an assignment, beating meanwhile, and times
// out with CodeConflict.
func TestInboxWait(t *testing.T) {
	p := newPushProject(t, "", &coord.Task{ID: "t1"}, &coord.Task{ID: "t2", Status: coord.Blocked, BlockedReason: "keeps the pushProject from draining"})
	s := p.service(t)
	ctx := context.Background()
	register(t, s, "a", "")
	register(t, s, "idle", "planner")
	if _, err := s.Inbox(ctx, app.InboxRequest{Agent: "idle", Wait: true, Timeout: 50 * time.Millisecond}); coord.CodeOf(err) != coord.CodeConflict || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("wait timeout: %v", err)
	}
	type result struct {
		r   app.InboxResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := p.service(t).Inbox(ctx, app.InboxRequest{Agent: "a", Wait: true, Timeout: time.Minute})
		done <- result{r, err}
	}()
	if _, err := s.Schedule(ctx, app.ScheduleRequest{}); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done:
		if res.err != nil || res.r.Status != "taken" || res.r.Task.ID != "t1" || res.r.Task.Status != coord.Claimed {
			t.Fatalf("inbox --wait: %+v, %v", res.r, res.err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("inbox --wait did not wake")
	}
}

// An agent whose heartbeat goes stale leaves the pool: its unstarted
// assignment goes to another agent in the same round, and its claim is
// freed as the sweep frees it (on_stale).
func TestStaleAgentLeavesThePool(t *testing.T) {
	p := newPushProject(t, `{"stale_after":"60s"}`, &coord.Task{ID: "t1"}, &coord.Task{ID: "t2"}, &coord.Task{ID: "t3"})
	s := p.service(t)
	ctx := context.Background()
	register(t, s, "dead", "")
	if _, err := s.Schedule(ctx, app.ScheduleRequest{}); err != nil {
		t.Fatal(err)
	}
	if r, err := s.Inbox(ctx, app.InboxRequest{Agent: "dead"}); err != nil || r.Task.ID != "t1" {
		t.Fatalf("take: %+v, %v", r, err)
	}
	if res, err := s.Schedule(ctx, app.ScheduleRequest{}); err != nil || len(res.Assigned) != 1 || res.Assigned[0].Task != "t2" {
		t.Fatalf("second round: %+v, %v", res, err)
	}
	p.advance(2 * time.Minute) // dead stops beating
	register(t, s, "alive", "")
	res, err := s.Schedule(ctx, app.ScheduleRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Left, ",") != "dead" || len(res.Freed) != 1 || res.Freed[0].TaskID != "t1" ||
		len(res.Returned) != 1 || res.Returned[0].Task != "t2" || len(res.Assigned) != 1 || res.Assigned[0] != (coord.Assignment{Task: "t1", Agent: "alive"}) {
		t.Fatalf("round after dead went silent: %+v", res)
	}
	if got := task(t, s, "t2"); got.AssignedTo != "" {
		t.Fatalf("t2 still assigned: %+v", got)
	}
	if _, err := s.Inbox(ctx, app.InboxRequest{Agent: "dead"}); coord.CodeOf(err) != coord.CodeConflict {
		t.Fatalf("dead's inbox: %v, want not registered", err)
	}
}

func TestDeregister(t *testing.T) {
	p := newPushProject(t, "", &coord.Task{ID: "t1"}, &coord.Task{ID: "t2"})
	s := p.service(t)
	ctx := context.Background()
	register(t, s, "a", "")
	if _, err := s.Schedule(ctx, app.ScheduleRequest{Depth: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Inbox(ctx, app.InboxRequest{Agent: "a"}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Deregister(ctx, "a")
	if err != nil || strings.Join(res.Returned, ",") != "t2" || strings.Join(res.Held, ",") != "t1" {
		t.Fatalf("deregister: %+v, %v", res, err)
	}
	if _, err := s.Deregister(ctx, "a"); coord.CodeOf(err) != coord.CodeConflict {
		t.Fatalf("second deregister: %v", err)
	}
	if got := task(t, s, "t1"); got.ClaimedBy != "a" || got.Status != coord.Claimed {
		t.Fatalf("deregister dropped a's claim: %+v", got)
	}
}

// With the review gate, a released task is routed to a reviewer that did
// not claim it; the reviewer's inbox takes it; approve ends it.
func TestReviewRouting(t *testing.T) {
	p := newPushProject(t, `{"review_gate":true}`, &coord.Task{ID: "t1"})
	s := p.service(t)
	ctx := context.Background()
	register(t, s, "dev", "")
	register(t, s, "rev", "reviewer")
	s.Schedule(ctx, app.ScheduleRequest{})
	got, err := s.Inbox(ctx, app.InboxRequest{Agent: "dev"})
	if err != nil || got.Task == nil {
		t.Fatalf("dev's take: %+v, %v", got, err)
	}
	if _, err := s.Release(ctx, app.TaskRef{Agent: coord.Agent{ID: "dev"}, TaskID: "t1", Epoch: got.Task.Epoch}, "done"); err != nil {
		t.Fatal(err)
	}
	res, err := s.Schedule(ctx, app.ScheduleRequest{})
	if err != nil || len(res.Routed) != 1 || res.Routed[0] != (coord.Assignment{Task: "t1", Agent: "rev"}) {
		t.Fatalf("routing: %+v, %v", res, err)
	}
	r, err := s.Inbox(ctx, app.InboxRequest{Agent: "rev"})
	if err != nil || r.Status != "taken" || r.Task.Status != coord.Review || r.Task.ReviewStartedAt == "" {
		t.Fatalf("review take: %+v, %v", r, err)
	}
	views, _ := s.Agents(ctx, 0)
	for _, v := range views {
		if v.Agent == "rev" && strings.Join(v.Reviewing, ",") != "t1" {
			t.Fatalf("rev: %+v", v)
		}
	}
	done, err := s.Approve(ctx, app.ApproveRequest{Agent: "rev", TaskID: "t1"})
	if err != nil || done.Status != coord.Done || done.AssignedTo != "" || done.ReviewerID != "rev" {
		t.Fatalf("approve: %+v, %v", done, err)
	}
}

// Two schedulers running at once (separate engines, as two processes
// would have) never assign a task twice: each round re-reads, under
// exclusion, what the other committed.
func TestTwoSchedulers(t *testing.T) {
	var tasks []*coord.Task
	for i := range 40 {
		tasks = append(tasks, &coord.Task{ID: fmt.Sprintf("t%02d", i), ConflictGroup: fmt.Sprintf("g%d", i%5)})
	}
	p := newPushProject(t, "", tasks...)
	s := p.service(t)
	ctx := context.Background()
	for i := range 6 {
		register(t, s, fmt.Sprintf("a%d", i), "")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range 2 {
		sched := p.service(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sched.RunScheduler(ctx, app.ScheduleRequest{Depth: 2}, 0, func(app.ScheduleResult, error) {})
		}()
	}
	// The agents take and finish work until everything is done.
	deadline := time.Now().Add(60 * time.Second)
	for {
		list, _ := s.Tasks(ctx, app.ListRequest{Statuses: []coord.Status{coord.Unclaimed}})
		if len(list) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not done after 60 s: %d tasks left", len(list))
		}
		for i := range 6 {
			a := fmt.Sprintf("a%d", i)
			r, err := s.Inbox(ctx, app.InboxRequest{Agent: a})
			if err != nil {
				t.Fatal(err)
			}
			if r.Task != nil {
				if _, err := s.Release(ctx, app.TaskRef{Agent: coord.Agent{ID: a}, TaskID: r.Task.ID, Epoch: r.Task.Epoch}, ""); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	cancel()
	wg.Wait()
	// From the log: a task is assigned again only after its assignment
	// was consumed (claimed) or returned.
	out := map[string]bool{}
	n := 0
	for _, l := range logLines(t, s) {
		_, msg, _ := strings.Cut(l, " ▶ ")
		var id, who string
		switch {
		case strings.HasPrefix(msg, "assigned task "):
			fmt.Sscanf(msg, "assigned task %s to %s", &id, &who)
			if out[id] {
				t.Fatalf("task %s assigned twice: %s", id, l)
			}
			out[id] = true
			n++
		case strings.HasPrefix(msg, "claimed task "), strings.HasPrefix(msg, "returned task "):
			fmt.Sscanf(strings.SplitN(msg, " task ", 2)[1], "%s", &id)
			out[id] = false
		}
	}
	if n != 40 {
		t.Fatalf("%d assignments logged, want 40 (one per task)", n)
	}
}

// TestReviewAlertInState: a task in review that no registered reviewer
// may take is in the application's state as a "no_reviewer" alert (what
// the dashboard shows), and in every scheduling round's result; the
// round that first finds it commits its mark, so the log has it once.
func TestReviewAlertInState(t *testing.T) {
	ctx := context.Background()
	p := newPushProject(t, `{"scheduling":"push","review_gate":true}`, &coord.Task{ID: "4.2", Capability: "go"})
	s := p.service(t)
	register(t, s, "alice", "implementer", "go")
	register(t, s, "sam", "reviewer", "ts")
	if _, err := s.Schedule(ctx, app.ScheduleRequest{}); err != nil {
		t.Fatal(err)
	}
	in, err := s.Inbox(ctx, app.InboxRequest{Agent: "alice"})
	if err != nil || in.Task == nil {
		t.Fatalf("inbox: %+v, %v", in, err)
	}
	if _, err := s.Release(ctx, app.TaskRef{Agent: coord.Agent{ID: "alice"}, TaskID: "4.2", Epoch: coord.NoEpoch}, "done"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		res, err := p.service(t).Schedule(ctx, app.ScheduleRequest{})
		if err != nil || len(res.Unreviewable) != 1 || res.Unreviewable[0].Task != "4.2" || res.Unreviewable[0].New != (i == 0) {
			t.Fatalf("round %d: %+v, %v", i, res.Unreviewable, err)
		}
	}
	st, err := p.service(t).State(ctx, app.StateRequest{LogLines: 50})
	if err != nil {
		t.Fatal(err)
	}
	var found []coord.Alert
	for _, a := range st.Alerts {
		if a.Kind == "no_reviewer" {
			found = append(found, a)
		}
	}
	if len(found) != 1 || found[0].Task != "4.2" || !strings.Contains(found[0].Text, "sam needs capability go") {
		t.Fatalf("state alerts: %+v", st.Alerts)
	}
	n := 0
	for _, l := range st.Log {
		if strings.Contains(l, "task 4.2 waits in review") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the alert was logged %d times, want once:\n%s", n, strings.Join(st.Log, "\n"))
	}
}

// TestRejectUsesMaxRejections: the service blocks at the configured
// max_rejections (here 1: at the first rejection).
func TestRejectUsesMaxRejections(t *testing.T) {
	ctx := context.Background()
	p := newPushProject(t, `{"review_gate":true,"max_rejections":1}`, &coord.Task{ID: "t"})
	s := p.service(t)
	dev := coord.Agent{ID: "dev"}
	if _, err := s.Claim(ctx, app.ClaimRequest{Agent: dev, TaskID: "t"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Release(ctx, app.TaskRef{Agent: dev, TaskID: "t", Epoch: coord.NoEpoch}, ""); err != nil {
		t.Fatal(err)
	}
	got, err := s.Reject(ctx, "rev", "t", "wrong file")
	if err != nil || got.Status != coord.Blocked || got.BlockedReason != "rejected 1 times: wrong file" || got.ClaimedBy != "dev" {
		t.Fatalf("reject: %+v, %v", got, err)
	}
}
