package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// DefaultTools are the tools every session gets (docs/AGENTS.md); AllTools
// adds the rest with coord mcp --tools all.
var (
	DefaultTools = []string{"status", "ready", "claim", "release", "progress", "block", "wait", "files", "log"}
	MoreTools    = []string{"tasks", "review", "act", "agents", "kv", "lease", "doctor"}
)

// The tools' inputs. Each field's jsonschema tag is its description in
// tools/list: every byte there is read by every agent on every session,
// so they stay short, and obvious fields have none.
type (
	noInput struct{}
	readyIn struct {
		Explain bool `json:"explain,omitempty" jsonschema:"also list tasks you cannot claim, with why"`
		Limit   *int `json:"limit,omitempty" jsonschema:"rows per list (default 50; 0: all)"`
	}
	claimIn struct {
		Task string `json:"task,omitempty" jsonschema:"claim this task or fail"`
		Any  bool   `json:"any,omitempty" jsonschema:"first eligible in registry order, not by priority"`
	}
	releaseIn struct {
		Task    string `json:"task,omitempty" jsonschema:"default: the task you work on"`
		Summary string `json:"summary,omitempty" jsonschema:"one line for the log (default: its commits)"`
		Epoch   int64  `json:"epoch,omitempty" jsonschema:"default: the epoch you claimed it at"`
	}
	progressIn struct {
		Task    string `json:"task,omitempty"`
		Percent int    `json:"percent" jsonschema:"0-100"`
		Note    string `json:"note,omitempty"`
		Epoch   int64  `json:"epoch,omitempty"`
	}
	blockIn struct {
		Task   string `json:"task,omitempty"`
		Reason string `json:"reason"`
		Epoch  int64  `json:"epoch,omitempty"`
	}
	waitIn struct {
		Task    string `json:"task,omitempty" jsonschema:"wait for this task to change state instead"`
		Timeout string `json:"timeout,omitempty" jsonschema:"such as 90s or 5m (default 2m, at most 10m)"`
	}
	filesIn struct {
		Lock   []string `json:"lock,omitempty" jsonschema:"paths to lock, all or nothing"`
		Unlock []string `json:"unlock,omitempty" jsonschema:"paths to unlock"`
		TTL    string   `json:"ttl,omitempty" jsonschema:"lock expiry such as 30m (default: until released)"`
		Write  []string `json:"write,omitempty" jsonschema:"paths you are about to write: claimed for your task, all or nothing"`
	}
	logIn struct {
		Lines *int   `json:"lines,omitempty" jsonschema:"how many of the last (default 20; 0: all, at most 1000)"`
		Msg   string `json:"msg,omitempty" jsonschema:"append this message first"`
	}
	tasksIn struct {
		Status string `json:"status,omitempty" jsonschema:"only these statuses, comma-separated"`
		All    bool   `json:"all,omitempty" jsonschema:"archived tasks too"`
	}
	reviewIn struct {
		Task   string `json:"task"`
		Action string `json:"action" jsonschema:"approve or reject"`
		Reason string `json:"reason,omitempty" jsonschema:"why, to reject"`
	}
	actIn struct {
		Task   string `json:"task"`
		Action string `json:"action" jsonschema:"unblock, cancel or requeue"`
		Reason string `json:"reason,omitempty" jsonschema:"why (required but to unblock your own)"`
	}
	agentsIn struct {
		Timeout string `json:"timeout,omitempty" jsonschema:"stale after (default: stale_after)"`
	}
	kvIn struct {
		Op           string `json:"op" jsonschema:"get, set, del or ls"`
		Key          string `json:"key,omitempty" jsonschema:"the key, or for ls a prefix"`
		Value        any    `json:"value,omitempty" jsonschema:"for set: any JSON value"`
		TTL          string `json:"ttl,omitempty" jsonschema:"for set: lifetime such as 10m"`
		ExpectRev    int64  `json:"expect_rev,omitempty" jsonschema:"set only at this revision"`
		ExpectAbsent bool   `json:"expect_absent,omitempty" jsonschema:"set only if absent"`
	}
	leaseIn struct {
		Op    string `json:"op" jsonschema:"acquire, renew, release or list"`
		Name  string `json:"name,omitempty"`
		TTL   string `json:"ttl,omitempty" jsonschema:"default: lease_ttl, 2h (renew: its own TTL)"`
		Epoch int64  `json:"epoch,omitempty"`
	}
	doctorIn struct {
		Repair bool `json:"repair,omitempty"`
	}
)

// addTools registers the default tools and, with All, the rest, in the
// order tools/list gives them.
func (s *server) addTools() {
	add(s, "status", "Who you are, the tasks and path locks you hold, the conflicts found for your work (merge the target or coordinate), and task counts by status.", s.status)
	add(s, "ready", "Tasks you could claim now, best first.", s.ready)
	add(s, "claim", "Claim the best eligible task, or the named one. Returns the task with its epoch, or status no_eligible_task (wait), or drained (all done: stop).", s.claim)
	add(s, "release", "Finish a task you hold: done, or review with the review gate. Frees its path locks.", s.release)
	add(s, "progress", "Record progress on a task you hold.", s.progress)
	add(s, "block", "Mark a task you hold blocked, with the reason.", s.block)
	add(s, "wait", "Wait until a task is eligible for you, or the named task changes state. Status drained: no work is left, stop.", s.wait)
	add(s, "files", "Lock or unlock repository paths, or claim for your task paths you are about to write (all or nothing). With none, list locks and write claims.", s.files)
	add(s, "log", "The last lines of the coordination log.", s.log)
	if !s.opt.All {
		return
	}
	add(s, "tasks", "Every task in the registry.", s.tasks)
	add(s, "review", "Approve a task in review, or reject it back to its owner with a reason.", s.review)
	add(s, "act", "A supervisor's act: unblock a blocked task (back to the pool, its owner first), cancel a task (out of the work), or requeue one.", s.act)
	add(s, "agents", "Agents with their last beat, alive or stale, and tasks held.", s.agents)
	add(s, "kv", "A small key-value space with TTLs for messages between agents.", s.kv)
	add(s, "lease", "Named auto-expiring locks with fencing epochs.", s.lease)
	add(s, "doctor", "Check every invariant of the registry; repair fixes what it can.", s.doctor)
}

// add registers one tool whose handler returns its structured result.
// Its input schema is inferred from In (schema.go); arguments that do not
// fit it are a usage refusal before the handler runs. A handler's error
// becomes a refusal. Every call that succeeds beats for the agent:
// calling a tool is a sign of life, and a refused call leaves no trace
// (docs/CHOICES.md).
func add[In any](s *server, name, desc string, h func(context.Context, *call, In) (any, error)) {
	sch := schemaOf[In]()
	s.tools = append(s.tools, &tool{Name: name, Description: desc, InputSchema: sch,
		run: func(ctx context.Context, c *call, args json.RawMessage) (any, error) {
			var in In
			if err := sch.decode(args, &in); err != nil {
				return nil, err // a usage refusal: not the tool's error
			}
			out, err := h(ctx, c, in)
			if err != nil {
				return nil, fail(err)
			}
			if err := s.opt.Service.Beat(ctx, s.opt.Agent.ID, nil); err != nil && ctx.Err() == nil {
				s.warnf("beat for %s: %v", s.opt.Agent.ID, err)
			}
			return out, nil
		}})
}

// task is a task's registry encoding, compact, as the CLI prints it.
func (s *server) task(t *coord.Task) json.RawMessage {
	return compact(s.opt.TaskJSON(t))
}

func compact(b []byte) json.RawMessage {
	if bytes.IndexByte(b, '\n') < 0 {
		return b
	}
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}

func (s *server) tasksJSON(ts []*coord.Task) []json.RawMessage {
	out := make([]json.RawMessage, len(ts))
	for i, t := range ts {
		out[i] = s.task(t)
	}
	return out
}

// duration parses an optional duration input (name for the message).
func duration(name, v string, def time.Duration) (time.Duration, error) {
	if v == "" {
		return def, nil
	}
	return coord.ParsePositive(name, v)
}

func (s *server) ref(task string, epoch int64) (app.TaskRef, error) {
	if task == "" {
		// The task coord run gives the session, else the one it works on.
		task = os.Getenv(coord.EnvTask)
	}
	if task == "" {
		id, err := s.opt.Service.WorkingOn(context.Background(), s.opt.Agent.ID, "name")
		if err != nil {
			return app.TaskRef{}, err
		}
		task = id
	}
	if err := coord.ValidTaskID(task); err != nil {
		return app.TaskRef{}, err
	}
	// A task this session could no longer keep alive is no longer its own.
	if err := s.keep.Check(task); err != nil {
		return app.TaskRef{}, err
	}
	e, err := s.epochFor(task, epoch)
	return app.TaskRef{Agent: s.opt.Agent, TaskID: task, Epoch: e}, err
}

// --- default tools ------------------------------------------------------

// StatusOut is the status tool's result (and `coord status --json`).
type StatusOut struct {
	Agent   string            `json:"agent"`
	Holding []json.RawMessage `json:"holding"`
	Locks   []coord.PathLock  `json:"locks"`
	Counts  map[string]int    `json:"counts"`
	Drained bool              `json:"drained"`
	// Conflicts are the conflicts found for the agent's work in flight
	// (coord conflicts, watch, schedule), from its side:
	// {"task": its task, "with": the target branch or another task,
	// "files": […]}.
	Conflicts []coord.ConflictPair `json:"conflicts"`
}

// StatusJSON is the status view as the status tool and `coord status
// --json` print it.
func StatusJSON(v app.StatusView, taskJSON func(*coord.Task) []byte) StatusOut {
	out := StatusOut{Agent: v.Agent, Locks: v.Locks, Counts: map[string]int{}, Drained: v.Drained, Holding: []json.RawMessage{}, Conflicts: v.Conflicts}
	if out.Conflicts == nil {
		out.Conflicts = []coord.ConflictPair{}
	}
	for _, t := range v.Holding {
		out.Holding = append(out.Holding, compact(taskJSON(t)))
	}
	for st, n := range v.Counts {
		out.Counts[string(st)] = n
	}
	return out
}

func (s *server) status(ctx context.Context, _ *call, _ noInput) (any, error) {
	v, err := s.opt.Service.Status(ctx, s.opt.Agent.ID)
	if err != nil {
		return nil, err
	}
	return StatusJSON(v, s.opt.TaskJSON), nil
}

// ReadyJSON is the ready view as the ready tool and `coord ready --json`
// print it: {"ready": […]} and, with explain, "not_ready": […], each cut
// to its first limit rows (0: every row); a list that was cut is followed
// by how many rows it left out ("ready_more", "not_ready_more"), absent
// when none was.
func ReadyJSON(ready, not []app.ReadyRow, explain bool, limit int) map[string]any {
	rows, more := app.Limit(ready, limit)
	out := map[string]any{"ready": rows}
	if more > 0 {
		out["ready_more"] = more
	}
	if explain {
		rows, more := app.Limit(not, limit)
		out["not_ready"] = rows
		if more > 0 {
			out["not_ready_more"] = more
		}
	}
	return out
}

func (s *server) ready(ctx context.Context, _ *call, in readyIn) (any, error) {
	limit := app.ListLimit
	if in.Limit != nil {
		if err := app.CheckLimit("limit", *in.Limit); err != nil {
			return nil, err
		}
		limit = *in.Limit
	}
	ready, not, err := s.opt.Service.Ready(ctx, s.opt.Agent)
	if err != nil {
		return nil, err
	}
	return ReadyJSON(ready, not, in.Explain, limit), nil
}

// claimStatus is the claim tool's answer without a task, as `coord claim`
// prints it.
type claimStatus struct {
	Status string `json:"status"`
}

func (s *server) claim(ctx context.Context, _ *call, in claimIn) (any, error) {
	if in.Task != "" {
		if err := coord.ValidTaskID(in.Task); err != nil {
			return nil, err
		}
	}
	res, err := s.opt.Service.Claim(ctx, app.ClaimRequest{Agent: s.opt.Agent, TaskID: in.Task, Any: in.Any})
	if err != nil {
		return nil, err
	}
	t := res.Task
	if t == nil {
		return claimStatus{res.Status()}, nil
	}
	s.remember(t.ID, t.Epoch)
	s.keep.Hold(app.TaskRef{Agent: s.opt.Agent, TaskID: t.ID, Epoch: t.Epoch}, res.Since)
	return s.task(t), nil
}

func (s *server) release(ctx context.Context, _ *call, in releaseIn) (any, error) {
	r, err := s.ref(in.Task, in.Epoch)
	if err != nil {
		return nil, err
	}
	if s.opt.BeforeRelease != nil {
		s.opt.BeforeRelease(ctx)
	}
	t, err := s.opt.Service.Release(ctx, r, in.Summary)
	if err != nil {
		return nil, err
	}
	s.forget(t.ID)
	s.keep.Drop(t.ID)
	return s.task(t), nil
}

func (s *server) progress(ctx context.Context, _ *call, in progressIn) (any, error) {
	r, err := s.ref(in.Task, in.Epoch)
	if err != nil {
		return nil, err
	}
	t, err := s.opt.Service.Progress(ctx, r, in.Percent, in.Note)
	if err != nil {
		return nil, err
	}
	return s.task(t), nil
}

func (s *server) block(ctx context.Context, _ *call, in blockIn) (any, error) {
	r, err := s.ref(in.Task, in.Epoch)
	if err != nil {
		return nil, err
	}
	t, err := s.opt.Service.Block(ctx, r, in.Reason)
	if err != nil {
		return nil, err
	}
	return s.task(t), nil
}

// wait blocks in app.Service.Wait for at most the caller's timeout
// (clamped to MaxWait), sending a progress notification every
// ProgressEvery when the caller gave a progress token, so that clients
// which time out a silent call keep waiting.
func (s *server) wait(ctx context.Context, req *call, in waitIn) (any, error) {
	timeout, err := duration("timeout", in.Timeout, s.opt.DefaultWait)
	if err != nil {
		return nil, err
	}
	if timeout > s.opt.MaxWait {
		timeout = s.opt.MaxWait
	}
	if in.Task != "" {
		if err := coord.ValidTaskID(in.Task); err != nil {
			return nil, err
		}
	}
	if req.progressToken != nil {
		stop := s.notifyProgress(ctx, req, timeout, in.Task)
		defer stop()
	}
	res, err := s.opt.Service.Wait(ctx, app.WaitRequest{Agent: s.opt.Agent, TaskID: in.Task, Timeout: timeout})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// notifyProgress sends progress (seconds waited out of the timeout) until
// stopped; it returns once the sender has stopped.
func (s *server) notifyProgress(ctx context.Context, req *call, timeout time.Duration, task string) func() {
	what := "waiting for an eligible task"
	if task != "" {
		what = "waiting for task " + task + " to change state"
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		t := time.NewTicker(s.opt.ProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := req.notifyProgress(time.Since(start).Round(time.Second).Seconds(), timeout.Seconds(), what); err != nil && ctx.Err() == nil {
					s.warnf("wait: progress notification: %v", err)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

func (s *server) files(ctx context.Context, _ *call, in filesIn) (any, error) {
	n := 0
	for _, l := range [][]string{in.Lock, in.Unlock, in.Write} {
		if len(l) > 0 {
			n++
		}
	}
	switch {
	case n > 1:
		return nil, coord.Errorf(coord.CodeUsage, "files: lock, unlock or write, one of them in one call")
	case in.TTL != "" && len(in.Lock) == 0:
		return nil, coord.Errorf(coord.CodeUsage, "files: ttl goes with lock")
	case len(in.Write) > 0:
		paths, err := s.repoPaths(in.Write)
		if err != nil {
			return nil, err
		}
		plan, err := s.opt.Service.WriteClaim(ctx, s.opt.Agent.ID, paths)
		if err != nil {
			return nil, err
		}
		out := map[string]any{"task": nil, "claimed": []string{}, "warnings": []string{}}
		if plan.Task != nil {
			out["task"] = plan.Task.ID
		}
		if len(plan.New) > 0 {
			out["claimed"] = plan.New
		}
		var warn []string
		for _, h := range plan.Hits {
			warn = append(warn, h.String())
		}
		if len(warn) > 0 {
			out["warnings"] = warn
		}
		return out, nil
	case len(in.Lock) > 0:
		ttl, err := duration("ttl", in.TTL, 0)
		if err != nil {
			return nil, err
		}
		paths, err := s.repoPaths(in.Lock)
		if err != nil {
			return nil, err
		}
		locked, err := s.opt.Service.LockPaths(ctx, s.opt.Agent.ID, paths, ttl)
		if err != nil {
			return nil, err
		}
		return map[string]any{"locked": locked, "holder": s.opt.Agent.ID}, nil
	case len(in.Unlock) > 0:
		paths, err := s.repoPaths(in.Unlock)
		if err != nil {
			return nil, err
		}
		gone, err := s.opt.Service.UnlockPaths(ctx, s.opt.Agent.ID, paths)
		if err != nil {
			return nil, err
		}
		return map[string]any{"unlocked": gone}, nil
	}
	locks, err := s.opt.Service.PathLocks(ctx)
	if err != nil {
		return nil, err
	}
	claims, err := s.opt.Service.WriteClaims(ctx)
	if err != nil {
		return nil, err
	}
	return map[string]any{"locks": locks, "claims": claims}, nil
}

// repoPaths maps the caller's paths (relative to the session's working
// directory, or absolute in any worktree) to repository paths.
func (s *server) repoPaths(ps []string) ([]string, error) {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		rp, err := s.opt.Paths.RepoPath(p)
		if err != nil {
			return nil, err
		}
		out = append(out, rp)
	}
	return out, nil
}

func (s *server) log(ctx context.Context, _ *call, in logIn) (any, error) {
	n := app.DefaultLogLines
	if in.Lines != nil {
		n = *in.Lines
	}
	switch {
	case n < 0:
		return nil, coord.Errorf(coord.CodeUsage, "lines must be 0 or more")
	case n == 0 || n > app.MaxToolLogLines:
		n = app.MaxToolLogLines // a tool result is read by a model: keep it bounded
	}
	if in.Msg != "" {
		if err := s.opt.Service.Msg(ctx, s.opt.Agent.ID, in.Msg); err != nil {
			return nil, err
		}
	}
	lines := []coord.LogEntry{}
	_, err := s.opt.Service.LogRead(ctx, n, func(l string) error {
		if e, ok := coord.ParseLogLine(l); ok {
			lines = append(lines, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"log": lines}, nil
}

// --- the rest (--tools all) ----------------------------------------------

func (s *server) tasks(ctx context.Context, _ *call, in tasksIn) (any, error) {
	var sts []coord.Status
	for _, st := range coord.ParseCaps(in.Status) {
		sts = append(sts, coord.Status(st))
	}
	ts, err := s.opt.Service.Tasks(ctx, app.ListRequest{Statuses: sts, All: in.All})
	if err != nil {
		return nil, err
	}
	return map[string]any{"tasks": s.tasksJSON(ts)}, nil
}

func (s *server) review(ctx context.Context, _ *call, in reviewIn) (any, error) {
	if err := coord.ValidTaskID(in.Task); err != nil {
		return nil, err
	}
	var t *coord.Task
	var err error
	switch in.Action {
	case "approve":
		t, err = s.opt.Service.Approve(ctx, app.ApproveRequest{Agent: s.opt.Agent.ID, TaskID: in.Task})
	case "reject":
		t, err = s.opt.Service.Reject(ctx, s.opt.Agent.ID, in.Task, in.Reason)
	default:
		return nil, coord.Errorf(coord.CodeUsage, "review: action must be approve or reject, not %q", in.Action)
	}
	if err != nil {
		return nil, err
	}
	return s.task(t), nil
}

func (s *server) act(ctx context.Context, _ *call, in actIn) (any, error) {
	a := app.Act{By: s.opt.Agent.ID, TaskID: in.Task, Reason: in.Reason}
	v := s.opt.Service.Supervisor()
	var res app.ActResult
	var err error
	switch in.Action {
	case "unblock":
		res, err = v.Unblock(ctx, a)
	case "cancel":
		res, err = v.Cancel(ctx, a)
	case "requeue":
		res, err = v.Requeue(ctx, a)
	default:
		return nil, coord.Errorf(coord.CodeUsage, "act: action must be unblock, cancel or requeue, not %q", coord.Clip(in.Action, 40))
	}
	if err != nil {
		return nil, err
	}
	return s.task(res.Task), nil
}

func (s *server) agents(ctx context.Context, _ *call, in agentsIn) (any, error) {
	timeout, err := duration("timeout", in.Timeout, 0)
	if err != nil {
		return nil, err
	}
	rows, err := s.opt.Service.Agents(ctx, timeout)
	if err != nil {
		return nil, err
	}
	return map[string]any{"agents": rows}, nil
}

func (s *server) kv(ctx context.Context, _ *call, in kvIn) (any, error) {
	svc := s.opt.Service
	switch in.Op {
	case "get":
		e, ok, err := svc.KVGet(ctx, in.Key)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, coord.NoKey(in.Key)
		}
		return e, nil
	case "set":
		ttl, err := duration("ttl", in.TTL, 0) // none: the application refuses it
		if err != nil {
			return nil, err
		}
		if in.Value == nil {
			return nil, coord.Errorf(coord.CodeUsage, "kv set needs a value")
		}
		val, err := json.Marshal(in.Value)
		if err != nil {
			return nil, coord.Errorf(coord.CodeUsage, "kv set: value: %v", err)
		}
		return svc.KVSet(ctx, in.Key, val, ttl, s.opt.Agent.ID, coord.KVCond{ExpectRev: in.ExpectRev, ExpectAbsent: in.ExpectAbsent})
	case "del":
		found, err := svc.KVDelete(ctx, in.Key)
		if err != nil {
			return nil, err
		}
		return map[string]any{"key": in.Key, "deleted": found}, nil
	case "ls":
		l, err := svc.KVList(ctx, in.Key)
		if err != nil {
			return nil, err
		}
		return map[string]any{"keys": l}, nil
	}
	return nil, coord.Errorf(coord.CodeUsage, "kv: op must be get, set, del or ls, not %q", in.Op)
}

func (s *server) lease(ctx context.Context, _ *call, in leaseIn) (any, error) {
	svc := s.opt.Service
	epoch := coord.NoEpoch
	if err := coord.CheckEpoch(in.Epoch); err != nil {
		return nil, err
	} else if in.Epoch > 0 {
		epoch = in.Epoch
	}
	switch in.Op {
	case "acquire":
		ttl, err := duration("ttl", in.TTL, 0) // none: the application's default
		if err != nil {
			return nil, err
		}
		return svc.AcquireLease(ctx, coord.LeaseRequest{Name: in.Name, Holder: s.opt.Agent.ID, TTL: ttl})
	case "renew":
		ttl, err := duration("ttl", in.TTL, 0)
		if err != nil {
			return nil, err
		}
		return svc.RenewLease(ctx, in.Name, s.opt.Agent.ID, epoch, ttl)
	case "release":
		if err := svc.ReleaseLease(ctx, in.Name, s.opt.Agent.ID, epoch); err != nil {
			return nil, err
		}
		return map[string]any{"released": in.Name}, nil
	case "list":
		ls, err := svc.Leases(ctx)
		if err != nil {
			return nil, err
		}
		return map[string]any{"leases": ls}, nil
	}
	return nil, coord.Errorf(coord.CodeUsage, "lease: op must be acquire, renew, release or list, not %q", in.Op)
}

func (s *server) doctor(ctx context.Context, _ *call, in doctorIn) (any, error) {
	probs, err := s.opt.Service.Doctor(ctx, in.Repair)
	if err != nil {
		return nil, err
	}
	ok := true
	for _, p := range probs {
		ok = ok && !p.Remains()
	}
	return map[string]any{"ok": ok, "problems": probs}, nil
}
