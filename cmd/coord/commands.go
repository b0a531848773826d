package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/urfave/cli/v2"

	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/coord/app"
	"github.com/rotd/coord/registry/backend"
	"github.com/rotd/coord/registry/file"
	"github.com/rotd/coord/registry/format"
	"github.com/rotd/coord/registry/rotd"
)

func commands(e *env) []*cli.Command {
	epochFlag := newEpochFlag()
	capFlag := &cli.StringFlag{Name: "capability", Usage: "this agent's capabilities, comma-separated (env COORD_AGENT_CAPS or ROTD_AGENT_CAPS)"}
	skillFlag := &cli.StringFlag{Name: "skill-level", Usage: "skill filter: '<=intermediate', '>=entry', '=expert'"}
	return []*cli.Command{
		{Name: "init", Usage: "create the coordination tree (idempotent, never overwrites)", Action: e.cmdInit},
		{Name: "seed-tasks", Usage: "add tasks from JSON Lines (FILE or --stdin); one bad line rejects the batch", ArgsUsage: "[FILE]",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "stdin", Usage: "read the batch from standard input"},
				&cli.BoolFlag{Name: "validate", Usage: "only check the batch; write nothing"},
				&cli.StringFlag{Name: "format", Usage: "coord (default) or rotd (ROTD planner tasks.jsonl; see README)"},
			}, Action: e.cmdSeed},
		{Name: "claim", Usage: "atomically claim one task and print it as JSON",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "task", Usage: "claim this task or exit 3"},
				capFlag, skillFlag,
				&cli.BoolFlag{Name: "any", Usage: "first eligible task in registry order instead of by priority"},
			}, Action: e.cmdClaim},
		{Name: "release", Usage: "finish a task you hold (done, or review with the review gate)", ArgsUsage: "TASK",
			Flags:  []cli.Flag{&cli.StringFlag{Name: "summary", Usage: "one-line summary for the log (default: git diff --shortstat)"}, epochFlag},
			Action: e.cmdRelease},
		{Name: "block", Usage: "mark a task you hold blocked", ArgsUsage: "TASK",
			Flags:  []cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why (required)"}, epochFlag},
			Action: e.cmdBlock},
		{Name: "unblock", Usage: "return a blocked task to its previous state", ArgsUsage: "TASK",
			Flags: []cli.Flag{epochFlag}, Action: e.cmdUnblock},
		{Name: "progress", Usage: "record progress (0-100) on a task you hold", ArgsUsage: "TASK PERCENT",
			Flags:  []cli.Flag{&cli.StringFlag{Name: "note", Usage: "a note for the log"}, epochFlag},
			Action: e.cmdProgress},
		{Name: "approve", Usage: "review gate: turn a task in review into done, with this agent as its reviewer", ArgsUsage: "TASK",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "reviewer", Usage: "with --human: the human who approved (recorded as the reviewer)"},
				&cli.BoolFlag{Name: "human", Usage: "the approval is a human's decision, relayed by this agent (needs --reviewer NAME)"},
			}, Action: e.cmdApprove},
		{Name: "reject", Usage: "review gate: hand a task in review back to its owner", ArgsUsage: "TASK",
			Flags: []cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why (required)"}}, Action: e.cmdReject},
		{Name: "ls", Usage: "registry snapshot",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "status", Usage: "only tasks in this status (comma-separated)"},
				&cli.BoolFlag{Name: "all", Usage: "include archived tasks (after the active ones)"},
			}, Action: e.cmdLs},
		{Name: "msg", Usage: "append a message line to the log", ArgsUsage: "TEXT…", Action: e.cmdMsg},
		{Name: "log", Usage: "print or follow the log across rotations",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing new lines"},
				&cli.IntFlag{Name: "lines", Aliases: []string{"n"}, Value: 20, Usage: "print the last N lines (0: all)"},
			}, Action: e.cmdLog},
		{Name: "beat", Usage: "touch this agent's heartbeat",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "every", Usage: "keep beating at this interval until stopped or the agent's process is gone"},
				&cli.StringFlag{Name: "pid", Usage: "with --every: the agent's process; beating stops when it is gone (default: the parent process)"},
			},
			Action: e.cmdBeat},
		{Name: "agents", Usage: "agents with last beat, alive or stale, tasks held",
			Flags: []cli.Flag{&cli.StringFlag{Name: "timeout", Usage: "stale after (default: config stale_after)"}}, Action: e.cmdAgents},
		{Name: "clean-stale", Usage: "free the locks of agents whose heartbeat is older than the timeout",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "timeout", Usage: "stale after (default: config stale_after, 15m)"},
				&cli.BoolFlag{Name: "dry-run", Usage: "only report"},
			}, Action: e.cmdCleanStale},
		{Name: "run", Usage: "claim, run CMD beating meanwhile, release on success, block on failure", ArgsUsage: "-- CMD [ARGS...]",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "task", Usage: "take this task or exit 3"},
				capFlag, skillFlag,
				&cli.BoolFlag{Name: "any", Usage: "first eligible in registry order"},
				&cli.StringFlag{Name: "beat", Usage: "beat and check the claim this often (default: config beat_interval)"},
				&cli.StringFlag{Name: "grace", Usage: "after SIGTERM to a command whose claim was lost, SIGKILL after this (default 10s)"},
				&cli.StringFlag{Name: "summary", Usage: "release summary (default: git diff --shortstat)"},
			}, Action: e.cmdRun},
		{Name: "wait", Usage: "block until a task is eligible for this agent, or --task changes state (exit 3 on --timeout)",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "task", Usage: "wait for this task to change state"},
				&cli.StringFlag{Name: "timeout", Usage: "give up after this long (exit 3)"},
				capFlag, skillFlag,
			}, Action: e.cmdWait},
		{Name: "watch", Usage: "long-running sweeper: frees stale locks as they expire, rotates the log, archives",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "timeout", Usage: "stale after (default: config stale_after)"},
				&cli.StringFlag{Name: "interval", Usage: "full rescan at least this often (default: timeout/3, at most 1m)"},
				&cli.BoolFlag{Name: "poll", Usage: "do not use file-system notification"},
			}, Action: e.cmdWatch},
		{Name: "top", Usage: "live view: agents, tasks by status, locks, recent log (redrawn on change)",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "timeout", Usage: "stale after (default: config stale_after)"},
				&cli.BoolFlag{Name: "once", Usage: "print one frame and exit"},
			}, Action: e.cmdTop},
		{Name: "completion", Usage: "print a shell completion script: coord completion bash|zsh", ArgsUsage: "bash|zsh", Action: e.cmdCompletion},
		leaseCommands(e, epochFlag),
		kvCommands(e),
		{Name: "prime", Usage: "print how an agent uses coord (short)", Action: e.cmdPrime},
		{Name: "archive", Usage: "move done tasks out of the active registry into archive/<YYYY-MM>.jsonl",
			Flags:  []cli.Flag{&cli.StringFlag{Name: "older-than", Usage: "only tasks completed longer ago than this (Go duration; bare number = seconds)"}},
			Action: e.cmdArchive},
		{Name: "doctor", Usage: "check every invariant; --repair fixes what it can",
			Flags: []cli.Flag{&cli.BoolFlag{Name: "repair", Usage: "fix and log each fix"}}, Action: e.cmdDoctor},
	}
}

// --- helpers -------------------------------------------------------------

// args checks that exactly the named positional arguments were given and
// validates each named TASK before anything is touched.
func (e *env) args(c *cli.Context, names ...string) ([]string, error) {
	a := c.Args().Slice()
	if len(a) != len(names) {
		return nil, strErr("%s needs %s (got %d arguments)", c.Command.Name, strings.Join(names, " "), len(a))
	}
	for i, n := range names {
		if n == "TASK" {
			if err := coord.ValidTaskID(a[i]); err != nil {
				return nil, err
			}
		}
	}
	return a, nil
}

// printTask prints a task as JSON (with --json, or always when force).
func (e *env) printTask(t *coord.Task, force bool, human string) error {
	if e.json || force {
		return e.printRaw(format.TaskJSON(t))
	}
	if human != "" {
		e.printf("%s\n", human)
	}
	return nil
}

func (e *env) printRaw(b []byte) error {
	if len(b) > 0 && (strings.IndexByte(string(b), '\n') >= 0) {
		v := jsontext.Value(append([]byte(nil), b...))
		if err := v.Compact(); err == nil {
			b = v
		}
	}
	_, err := fmt.Fprintf(e.stdout, "%s\n", b)
	return err
}

// agentInfo builds the heartbeat content for this agent's current state.
func (e *env) agentInfo(c *cli.Context, held []*coord.Task) *coord.BeatInfo {
	in := &coord.BeatInfo{Status: coord.AgentIdle, Capabilities: e.caps(c)}
	if len(held) > 0 {
		id := held[0].ID
		in.CurrentTask = &id
		in.Status = coord.AgentWorking
		if held[0].Status == coord.Blocked {
			in.Status = coord.AgentBlocked
		}
	}
	return in
}

// caps is this agent's capabilities: --capability, else COORD_AGENT_CAPS,
// else ROTD_AGENT_CAPS (ROTD's spelling, contract §1).
func (e *env) caps(c *cli.Context) []string {
	if c.IsSet("capability") {
		return coord.ParseCaps(c.String("capability"))
	}
	for _, name := range []string{"COORD_AGENT_CAPS", "ROTD_AGENT_CAPS"} {
		if v, ok := os.LookupEnv(name); ok {
			return coord.ParseCaps(v)
		}
	}
	return nil
}

// --- commands ------------------------------------------------------------

func (e *env) cmdInit(c *cli.Context) error {
	if c.NArg() > 0 {
		return strErr("init takes no arguments")
	}
	root, err := findRoot(e.rootFlag, e.rootSet, e.cwd, false)
	if err != nil {
		return err
	}
	dir, created, err := backend.Init(e.ctx, backend.Options{Root: root, AllowUnsafeFS: e.allowUnsafeFS})
	if err != nil {
		return err
	}
	exclude, excluded := e.keepOutOfGit(root)
	if e.json {
		if created == nil {
			created = []string{}
		}
		out := map[string]any{"root": dir, "created": created}
		if exclude != "" {
			out["git_exclude"], out["excluded"] = exclude, nonNil(excluded)
		}
		return e.printJSON(out)
	}
	if len(created) == 0 {
		e.printf("coordination tree already at %s\n", dir)
	} else {
		e.printf("initialized %s (%d entries)\n", dir, len(created))
	}
	if len(excluded) > 0 {
		e.printf("kept out of git in %s: %s\n", exclude, strings.Join(excluded, " "))
	}
	return nil
}

func (e *env) cmdSeed(c *cli.Context) error {
	var r io.Reader
	name := "stdin"
	switch {
	case c.Bool("stdin") && c.NArg() == 0, c.NArg() == 1 && c.Args().First() == "-":
		r = e.stdin
	case c.NArg() == 1 && !c.Bool("stdin"):
		name = c.Args().First()
		f, err := os.Open(name)
		if err != nil {
			return coord.Errorf(coord.CodeUsage, "cannot read seed file %s: %v", name, errors.Unwrap(err)).WithHint("check the path")
		}
		defer f.Close()
		r = f
	default:
		return strErr("seed-tasks needs FILE or --stdin")
	}
	var batch []coord.SeedLine
	var err error
	switch dialect := c.String("format"); dialect {
	case "", "coord":
		batch, err = format.ParseSeed(name, r)
		if err != nil {
			return err
		}
	case "rotd":
		s, err := e.open()
		if err != nil {
			return err
		}
		phases := map[string][]string{}
		ids := map[string]bool{}
		if err := s.Tasks().View(e.ctx, func(tx *coord.Txn) error {
			for _, t := range tx.Tasks {
				ids[t.ID] = true
				p := rotd.TaskPhase(t)
				phases[p] = append(phases[p], t.ID)
			}
			return nil
		}); err != nil {
			return err
		}
		batch, err = rotd.ParseTasks(name, r, func(p string) []string { return phases[p] }, func(id string) bool { return ids[id] }, e.clock())
		if err != nil {
			return err
		}
	default:
		return strErr("--format %q is not coord or rotd", dialect)
	}
	if len(batch) == 0 {
		return coord.Errorf(coord.CodeUsage, "%s: no tasks in the batch", name)
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	validate := c.Bool("validate")
	check := func(tx *coord.Txn) error {
		if err := tx.CheckSeed(batch); err != nil {
			if ce, ok := err.(*coord.Error); ok {
				ce.Msg = name + ": " + ce.Msg
				return ce
			}
			return err
		}
		if validate {
			return nil
		}
		agent := e.explicitAgent
		if agent == "" {
			agent = coord.CoordinatorID
		}
		for _, sl := range batch {
			if sl.Task.Priority == "" {
				sl.Task.Priority = coord.Medium
			}
			tx.Add(sl.Task)
		}
		tx.Log(agent, "seeded %d tasks", len(batch))
		return nil
	}
	if validate {
		err = s.Tasks().View(e.ctx, check)
	} else {
		err = s.Tasks().Update(e.ctx, check)
	}
	if err != nil {
		return err
	}
	ids := make([]string, len(batch))
	for i, sl := range batch {
		ids[i] = sl.Task.ID
	}
	if e.json {
		return e.printJSON(map[string]any{"validated": validate, "count": len(batch), "ids": ids})
	}
	if validate {
		e.printf("valid: %d tasks\n", len(batch))
	} else {
		e.printf("seeded %d tasks\n", len(batch))
	}
	return nil
}

func (e *env) cmdClaim(c *cli.Context) error {
	if c.NArg() > 0 {
		return strErr("claim takes no arguments (use --task ID)")
	}
	got, _, _, err := e.claimTask(c)
	if err != nil {
		return err
	}
	if got == nil {
		return e.printRaw([]byte(`{"status":"no_eligible_task"}`))
	}
	return e.printTask(got, true, "")
}

// claimTask claims by c's flags (--task, --any, --capability,
// --skill-level) and beats; it returns nil when nothing is eligible, and
// then drained tells whether no work is left at all. Unless config.json
// says "sweep_on_claim": false, the claim first frees stale locks in the
// same commit (sweepIn, as app.Service.Claim), so a dead agent's task does not
// wait for a watcher.
func (e *env) claimTask(c *cli.Context) (got *coord.Task, agent string, drained bool, err error) {
	if id := c.String("task"); c.IsSet("task") {
		if err := coord.ValidTaskID(id); err != nil {
			return nil, "", false, err
		}
	}
	skill, err := coord.ParseSkillFilter(c.String("skill-level"))
	if err != nil {
		return nil, "", false, err
	}
	s, agent, err := e.openAs()
	if err != nil {
		return nil, "", false, err
	}
	a := coord.Agent{ID: agent, Caps: e.caps(c), Skill: skill}
	// Beat first, so that a sweep racing this claim sees a live agent.
	if err := e.beats().Beat(e.ctx, agent, nil); err != nil {
		return nil, "", false, err
	}
	err = s.Tasks().Update(e.ctx, func(tx *coord.Txn) error {
		if err := e.sweepIn(tx); err != nil {
			return err
		}
		t, err := tx.Claim(a, coord.ClaimOptions{TaskID: c.String("task"), Any: c.Bool("any")})
		got, drained = t, t == nil && err == nil && tx.Drained()
		return err
	})
	if err != nil {
		return nil, agent, false, err
	}
	if got == nil {
		return nil, agent, drained, nil
	}
	e.beats().Beat(e.ctx, agent, e.agentInfo(c, []*coord.Task{got}))
	return got, agent, false, nil
}

// sweepIn frees, inside the caller's transaction, the locks whose agents
// went stale (sweep_on_claim), by the domain's rules, as
// app.Service.Claim does; their path locks go in the same commit.
func (e *env) sweepIn(tx *coord.Txn) error {
	holders := tx.LockHolders()
	if !e.cfg.SweepOnClaim || len(holders) == 0 {
		return nil
	}
	seen, now, err := e.beats().LastSeen(e.ctx, holders)
	if err != nil {
		return err
	}
	for _, st := range tx.JudgeStale(seen, now, e.cfg.StaleAfter, e.cfg.OnStale) {
		tx.FreeStale(st.Ref(), e.cfg.OnStale)
	}
	return nil
}

// heldOp runs an operation on a task this agent holds and refreshes its
// heartbeat content afterwards.
func (e *env) heldOp(c *cli.Context, op func(tx *coord.Txn, agent string) (*coord.Task, error), human func(*coord.Task) string) error {
	s, agent, err := e.openAs()
	if err != nil {
		return err
	}
	var got *coord.Task
	var held []*coord.Task
	err = s.Tasks().Update(e.ctx, func(tx *coord.Txn) error {
		t, err := op(tx, agent)
		got = t
		held = tx.HeldBy(agent)
		return err
	})
	if err != nil {
		return err
	}
	e.beats().Beat(e.ctx, agent, e.agentInfo(c, held))
	return e.printTask(got, false, human(got))
}

func (e *env) cmdRelease(c *cli.Context) error {
	a, err := e.args(c, "TASK")
	if err != nil {
		return err
	}
	if _, err := e.open(); err != nil {
		return err
	}
	summary := c.String("summary")
	if !c.IsSet("summary") {
		summary = gitSummary(e.ctx, e.repoMap().WorkTop())
	}
	// Path locks go with the task, in the same commit (coord.Txn.Release).
	return e.heldOp(c, func(tx *coord.Txn, agent string) (*coord.Task, error) {
		return tx.Release(agent, a[0], epochOf(c), summary, e.cfg.ReviewGate)
	}, func(t *coord.Task) string { return fmt.Sprintf("released %s (%s)", t.ID, t.Status) })
}

// gitSummary is a one-line `git diff --shortstat` of the work tree at
// top (the caller's own worktree: pathMap.WorkTop), or "" outside git (or
// if git is missing or slow).
func gitSummary(ctx context.Context, top string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "-C", top, "diff", "--shortstat", "HEAD").Output()
	if err != nil {
		return ""
	}
	s := strings.TrimSpace(string(out))
	if s == "" {
		return "no changes"
	}
	return s
}

func (e *env) cmdBlock(c *cli.Context) error {
	a, err := e.args(c, "TASK")
	if err != nil {
		return err
	}
	if trimmed(c.String("reason")) == "" {
		return strErr("block needs --reason TEXT")
	}
	return e.heldOp(c, func(tx *coord.Txn, agent string) (*coord.Task, error) {
		return tx.Block(agent, a[0], epochOf(c), c.String("reason"))
	}, func(t *coord.Task) string { return "blocked " + t.ID })
}

func (e *env) cmdUnblock(c *cli.Context) error {
	a, err := e.args(c, "TASK")
	if err != nil {
		return err
	}
	return e.heldOp(c, func(tx *coord.Txn, agent string) (*coord.Task, error) {
		return tx.Unblock(agent, a[0], epochOf(c))
	}, func(t *coord.Task) string { return fmt.Sprintf("unblocked %s (%s)", t.ID, t.Status) })
}

func (e *env) cmdProgress(c *cli.Context) error {
	a, err := e.args(c, "TASK", "PERCENT")
	if err != nil {
		return err
	}
	pct, err := strconv.Atoi(strings.TrimSuffix(a[1], "%"))
	if err != nil || pct < 0 || pct > 100 {
		return strErr("PERCENT must be an integer 0..100, got %q", a[1])
	}
	return e.heldOp(c, func(tx *coord.Txn, agent string) (*coord.Task, error) {
		return tx.Progress(agent, a[0], epochOf(c), pct, c.String("note"))
	}, func(t *coord.Task) string { return fmt.Sprintf("progress %s %d%%", t.ID, t.Progress) })
}

// cmdApprove approves as the caller, who is recorded as the reviewer.
// Naming someone else with --reviewer is only for a human's decision,
// said so with --human and recorded as such in the task and the log.
func (e *env) cmdApprove(c *cli.Context) error {
	a, err := e.args(c, "TASK")
	if err != nil {
		return err
	}
	human, named := c.Bool("human"), c.String("reviewer")
	if c.IsSet("reviewer") {
		if err := checkAgent("--reviewer", named); err != nil {
			return err
		}
	}
	if human && named == "" {
		return strErr("approve --human needs --reviewer NAME: the human who approved the work")
	}
	s, caller, err := e.openAs()
	if err != nil {
		return err
	}
	if named != "" && named != caller && !human {
		return strErr("approve --reviewer %s: an agent approves as itself (%s); a reviewer named for someone else is only recorded with --human, for a human's decision", named, caller)
	}
	var got *coord.Task
	err = s.Tasks().Update(e.ctx, func(tx *coord.Txn) error {
		if human {
			got, err = tx.ApproveForHuman(caller, named, a[0])
		} else {
			got, err = tx.Approve(caller, a[0])
		}
		return err
	})
	if err != nil {
		return err
	}
	if human {
		return e.printTask(got, false, "approved "+got.ID+" for human reviewer "+named)
	}
	return e.printTask(got, false, "approved "+got.ID)
}

func (e *env) cmdReject(c *cli.Context) error {
	a, err := e.args(c, "TASK")
	if err != nil {
		return err
	}
	if trimmed(c.String("reason")) == "" {
		return strErr("reject needs --reason TEXT")
	}
	s, reviewer, err := e.openAs()
	if err != nil {
		return err
	}
	var got *coord.Task
	err = s.Tasks().Update(e.ctx, func(tx *coord.Txn) error {
		got, err = tx.Reject(reviewer, a[0], c.String("reason"))
		return err
	})
	if err != nil {
		return err
	}
	return e.printTask(got, false, "rejected "+got.ID+" (back to "+got.ClaimedBy+")")
}

func (e *env) cmdLs(c *cli.Context) error {
	if c.NArg() > 0 {
		return strErr("ls takes no arguments")
	}
	want := map[coord.Status]bool{}
	for _, st := range coord.ParseCaps(c.String("status")) {
		if !coord.Status(st).Valid() {
			return strErr("--status %q is not one of unclaimed, claimed, blocked, review, done", st)
		}
		want[coord.Status(st)] = true
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	return s.Tasks().View(e.ctx, func(tx *coord.Txn) error {
		var list []*coord.Task
		for _, t := range tx.Tasks {
			if len(want) == 0 || want[t.Status] {
				list = append(list, t)
			}
		}
		if c.Bool("all") && (len(want) == 0 || want[coord.Done]) {
			arch, err := s.Tasks().ArchivedTasks(e.ctx)
			if err != nil {
				return err
			}
			for _, t := range arch {
				if tx.Task(t.ID) == nil { // a crash mid-archive: the registry wins
					list = append(list, t)
				}
			}
		}
		w := bufio.NewWriterSize(e.stdout, 64<<10)
		defer w.Flush()
		if e.json {
			w.WriteByte('[')
			for i, t := range list {
				if i > 0 {
					w.WriteByte(',')
				}
				raw := format.TaskJSON(t)
				if strings.IndexByte(string(raw), '\n') >= 0 {
					v := jsontext.Value(append([]byte(nil), raw...))
					v.Compact()
					raw = v
				}
				w.Write(raw)
			}
			w.WriteString("]\n")
			return nil
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATUS\tPRIORITY\tOWNER\tEPOCH\tPROGRESS\tTITLE")
		for _, t := range list {
			owner := t.ClaimedBy
			if owner == "" {
				owner = "-"
			}
			p := t.Priority
			if p == "" {
				p = coord.Medium
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d%%\t%s\n", t.ID, t.Status, p, owner, t.Epoch, t.Progress, coord.Cell(t.Title, textWidth))
		}
		return tw.Flush()
	})
}

func (e *env) cmdMsg(c *cli.Context) error {
	text := coord.MessageText(strings.Join(c.Args().Slice(), " "))
	if text == "" {
		return strErr("msg needs TEXT")
	}
	s, agent, err := e.openAs()
	if err != nil {
		return err
	}
	return s.Log().Append(e.ctx, coord.Event{Time: e.clock(), Agent: agent, Text: text})
}

func (e *env) cmdLog(c *cli.Context) error {
	if c.NArg() > 0 {
		return strErr("log takes no arguments")
	}
	n := c.Int("lines")
	if n < 0 {
		return strErr("-n must be 0 or more")
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	w := bufio.NewWriter(e.stdout)
	write := func(l string) error {
		if e.json {
			ent, _ := coord.ParseLogLine(l)
			b, _ := json.Marshal(ent)
			w.Write(b)
		} else {
			w.WriteString(l)
		}
		return w.WriteByte('\n')
	}
	print := func(lines []string) {
		for _, l := range lines {
			write(l)
		}
		w.Flush()
	}
	var fl coord.LogFollower
	if c.Bool("follow") { // open before reading history so nothing falls between
		if fl, err = s.Log().Follow(e.ctx); err != nil {
			return err
		}
		defer fl.Close()
	}
	// The last n lines are read from the end of the log; all of them
	// (-n 0) are streamed: neither holds the whole log in memory.
	skipped, err := s.Log().Read(e.ctx, n, write)
	w.Flush()
	if err != nil {
		return err
	}
	if skipped > 0 && !e.json {
		fmt.Fprintf(e.stderr, "coord: skipped %d torn or foreign log lines\n", skipped)
	}
	if fl == nil {
		return nil
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	markWaiting()
	for {
		select {
		case <-e.ctx.Done():
			return interrupted(e.ctx)
		case <-tick.C:
		}
		lines, err := fl.Poll(e.ctx)
		if err != nil {
			return err
		}
		print(lines)
	}
}

func (e *env) cmdBeat(c *cli.Context) error {
	if c.NArg() > 0 {
		return strErr("beat takes no arguments")
	}
	var every time.Duration
	if c.IsSet("every") {
		d, err := parseDuration(c.String("every"))
		if err != nil || d <= 0 {
			return strErr("--every must be a positive duration")
		}
		every = d
	}
	var agentProc *process
	if c.IsSet("pid") {
		if every == 0 {
			return strErr("--pid only goes with --every (a single beat does not watch a process)")
		}
		pid, err := strconv.Atoi(c.String("pid"))
		if err != nil || pid <= 0 {
			return strErr("--pid %q is not a process id (a positive integer)", c.String("pid"))
		}
		if agentProc = watchProcess(pid); agentProc == nil {
			return strErr("--pid %d: no such process; pass the pid of the running agent", pid)
		}
	} else if every > 0 {
		agentProc = watchParent()
		if agentProc.pid == 1 {
			fmt.Fprintf(e.stderr, "coord: beat: warning: the parent process is init (pid 1), which never goes away; pass --pid with the agent's pid so beating stops when the agent does\n")
		}
	}
	if _, err := e.open(); err != nil {
		return err
	}
	agent, err := e.who()
	if err != nil {
		return err
	}
	beats := e.beats()
	beat := func() error {
		if err := beats.Beat(e.ctx, agent, nil); err != nil {
			return file.IOError(err, "")
		}
		return nil
	}
	if err := beat(); err != nil {
		return err
	}
	if every == 0 {
		return nil
	}
	markWaiting()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-e.ctx.Done():
			return interrupted(e.ctx)
		case <-t.C:
			// The agent's process first: a loop must not keep a dead
			// agent's locks alive.
			if !agentProc.alive() {
				fmt.Fprintf(e.stderr, "coord: beat: %s is gone; stopped beating for %s\n", agentProc, agent)
				return nil
			}
			if err := beat(); err != nil {
				return err
			}
		}
	}
}

func (e *env) staleTimeout(c *cli.Context) (time.Duration, error) {
	if !c.IsSet("timeout") {
		return e.cfg.StaleAfter, nil
	}
	d, err := parseDuration(c.String("timeout"))
	if err != nil || d <= 0 {
		return 0, strErr("--timeout must be a positive duration")
	}
	return d, nil
}

func (e *env) cmdAgents(c *cli.Context) error {
	if _, err := e.open(); err != nil {
		return err
	}
	timeout, err := e.staleTimeout(c)
	if err != nil {
		return err
	}
	rows, err := e.svc.Agents(e.ctx, timeout)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(rows)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tLAST BEAT\tAGE\tSTATE\tTASKS")
	for _, r := range rows {
		lb, age := "-", "-"
		if r.LastBeat != nil {
			lb, age = *r.LastBeat, (time.Duration(*r.AgeS) * time.Second).String()
		}
		state := "stale"
		if r.Alive {
			state = "alive"
		}
		tasks := coord.Clip(strings.Join(r.Tasks, ","), textWidth)
		if tasks == "" {
			tasks = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Agent, lb, age, state, tasks)
	}
	return tw.Flush()
}

func (e *env) cmdCleanStale(c *cli.Context) error {
	if c.NArg() > 0 {
		return strErr("clean-stale takes no arguments")
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	timeout, err := e.staleTimeout(c)
	if err != nil {
		return err
	}
	dryRun := c.Bool("dry-run")
	freed, err := e.svc.Sweep(e.ctx, app.SweepRequest{Timeout: timeout, DryRun: dryRun})
	if err != nil {
		return err
	}
	ctx := context.WithoutCancel(e.ctx) // the sweep committed: finish the housekeeping
	if !dryRun {
		// A freed agent's path locks went with its task; expired ones go now.
		if err := e.dropExpiredPathLocks(ctx, s); err != nil {
			return err
		}
	}
	if !dryRun {
		// expired leases and keys are already invisible; drop them from disk
		s.Leases().Sweep(ctx)
		s.KV().Sweep(ctx)
	}
	var archived []string
	if !dryRun && e.cfg.ArchiveAfter > 0 {
		if archived, err = e.svc.Archive(ctx, e.clock().Add(-e.cfg.ArchiveAfter)); err != nil {
			return err
		}
	}
	if e.json {
		out := map[string]any{"dry_run": dryRun, "freed": freed}
		if archived != nil {
			out["archived"] = archived
		}
		return e.printJSON(out)
	}
	if len(archived) > 0 {
		e.printf("archived %d done tasks (archive_after %s)\n", len(archived), e.cfg.ArchiveAfter)
	}
	verb := "freed"
	if dryRun {
		verb = "would free"
	}
	for _, f := range freed {
		e.printf("%s %s (agent %s, idle %s) -> %s\n", verb, f.TaskID, f.Agent, f.Idle.Round(time.Second), f.Status)
	}
	if len(freed) == 0 {
		e.printf("no stale locks\n")
	}
	return nil
}

func (e *env) cmdArchive(c *cli.Context) error {
	if c.NArg() > 0 {
		return strErr("archive takes no arguments")
	}
	var cutoff time.Time
	if v := c.String("older-than"); v != "" {
		d, err := parseDuration(v)
		if err != nil || d < 0 {
			return strErr("--older-than %q is not a duration like 24h", v)
		}
		cutoff = e.clock().Add(-d)
	}
	if _, err := e.open(); err != nil {
		return err
	}
	moved, err := e.svc.Archive(e.ctx, cutoff)
	if err != nil {
		return err
	}
	if e.json {
		if moved == nil {
			moved = []string{}
		}
		return e.printJSON(map[string]any{"archived": moved})
	}
	e.printf("archived %d done tasks\n", len(moved))
	return nil
}

func (e *env) cmdDoctor(c *cli.Context) error {
	s, err := e.openForDoctor()
	if err != nil {
		return err
	}
	probs, err := s.Doctor(e.ctx, c.Bool("repair"))
	if err != nil {
		return err
	}
	remaining := 0
	for _, p := range probs {
		if !p.Fixed {
			remaining++
		}
	}
	if e.json {
		if probs == nil {
			probs = []coord.Problem{}
		}
		if err := e.printJSON(map[string]any{"ok": remaining == 0, "problems": probs}); err != nil {
			return err
		}
	} else {
		for _, p := range probs {
			mark := "problem"
			if p.Fixed {
				mark = "fixed"
			}
			e.printf("%s: %s\n", mark, coord.OneLine(p.What))
		}
		if remaining == 0 {
			e.printf("ok: every invariant holds\n")
		}
	}
	if remaining > 0 {
		hint := "run 'coord doctor --repair'"
		if c.Bool("repair") {
			hint = "each remaining problem says how to fix it by hand"
		}
		return coord.Errorf(coord.CodeConflict, "doctor: %d problem(s) remain", remaining).WithHint("%s", hint)
	}
	return nil
}

// dropExpiredPathLocks removes path locks whose TTL ran out (readers
// already ignore them), taking the registry lock only when there is one.
func (e *env) dropExpiredPathLocks(ctx context.Context, s coord.Backend) error {
	expired := false
	if err := s.Tasks().View(ctx, func(tx *coord.Txn) error {
		for _, l := range tx.PathLocks {
			expired = expired || l.Expired(tx.Now)
		}
		return nil
	}); err != nil || !expired {
		return err
	}
	return s.Tasks().Update(ctx, func(tx *coord.Txn) error {
		tx.DropExpiredPathLocks()
		return nil
	})
}
