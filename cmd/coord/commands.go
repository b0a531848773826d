package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/coord/app"
	"github.com/rotd/coord/fsops"
	"github.com/rotd/coord/registry/backend"
	"github.com/rotd/coord/registry/format"
	"github.com/rotd/coord/registry/rotd"
	"github.com/rotd/coord/registry/workspace"
)

func commands(e *env) []*cli.Command {
	epochFlag := newEpochFlag()
	capFlag := &cli.StringFlag{Name: "capability", Usage: "this agent's capabilities, comma-separated (env COORD_AGENT_CAPS or ROTD_AGENT_CAPS)"}
	skillFlag := &cli.StringFlag{Name: "skill-level", Usage: "skill filter: '<=intermediate', '>=entry', '=expert'"}
	return []*cli.Command{
		{Name: "init", Usage: "create the coordination tree (idempotent, never overwrites)", Action: e.cmdInit},
		{Name: "seed-tasks", Usage: "add tasks from JSON Lines (FILE or --stdin), task fields only; a line identical to a present task is skipped; one bad line rejects the batch", ArgsUsage: "[FILE]",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "stdin", Usage: "read the batch from standard input"},
				&cli.BoolFlag{Name: "validate", Usage: "only check the batch; write nothing"},
				&cli.BoolFlag{Name: "update", Usage: "a line may redefine a task not yet claimed (its planning fields change)"},
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
				limitFlag(),
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
		agentsCommand(e),
		{Name: "clean-stale", Usage: "free the locks of agents whose heartbeat is older than the timeout",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "timeout", Usage: "stale after (default: config stale_after, 15m)"},
				&cli.BoolFlag{Name: "dry-run", Usage: "only report"},
			}, Action: e.cmdCleanStale},
		{Name: "run", Usage: "claim (waiting while nothing is eligible), run CMD beating meanwhile, release on success, block on failure", ArgsUsage: "-- CMD [ARGS...]",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "task", Usage: "take this task or exit 3"},
				capFlag, skillFlag,
				&cli.BoolFlag{Name: "any", Usage: "first eligible in registry order"},
				&cli.BoolFlag{Name: "loop", Usage: "run CMD on one task after another until no work is left (a failed or lost task is logged and the loop goes on)"},
				&cli.StringFlag{Name: "timeout", Usage: "give up (exit 3) when no task becomes eligible for this long (default: wait)"},
				&cli.StringFlag{Name: "beat", Usage: "beat and check the claim this often (default: config beat_interval)"},
				&cli.StringFlag{Name: "grace", Usage: "after SIGTERM to a command whose claim was lost, SIGKILL after this (default 10s)"},
				&cli.StringFlag{Name: "summary", Usage: "release summary (default: git diff --shortstat)"},
				&cli.BoolFlag{Name: "inbox", Usage: "push scheduling: run CMD on each task pushed to this agent, in turn, until no work is left"},
				&cli.StringFlag{Name: "wait", Usage: "with --inbox: give up (exit 3) when nothing is pushed for this long (as --timeout)"},
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
		dashboardCommand(e),
		{Name: "completion", Usage: "print a shell completion script: coord completion bash|zsh", ArgsUsage: "bash|zsh", Action: e.cmdCompletion},
		leaseCommands(e, epochFlag),
		kvCommands(e),
		configCommand(e),
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
		return e.printRaw(taskJSON(t))
	}
	if human != "" {
		e.printf("%s\n", human)
	}
	return nil
}

// taskJSON is a task as it stands in the registry (unknown fields kept),
// on one line.
func taskJSON(t *coord.Task) []byte {
	b, err := format.TaskLine(t)
	if err != nil {
		return format.TaskJSON(t)
	}
	return b
}

func (e *env) printRaw(b []byte) error {
	_, err := fmt.Fprintf(e.stdout, "%s\n", b)
	return err
}

// printStatus prints a status object, {"status":"…"} (claim without a
// task: app.ClaimResult.Status).
func (e *env) printStatus(status string) error {
	b, err := json.Marshal(struct {
		Status string `json:"status"`
	}{status})
	if err != nil {
		return err
	}
	return e.printRaw(b)
}

// --- commands ------------------------------------------------------------

func (e *env) cmdInit(c *cli.Context) error {
	if c.NArg() > 0 {
		return strErr("init takes no arguments")
	}
	root, err := workspace.FindRoot(e.rootFlag, e.rootSet, e.cwd, false)
	if err != nil {
		return err
	}
	dir, created, err := backend.Init(e.ctx, backend.Options{URL: e.backendURL(), Root: root, AllowUnsafeFS: e.allowUnsafeFS})
	if err != nil {
		return err
	}
	exclude, excluded := e.keepOutOfGit(root)
	if e.json {
		out := map[string]any{"root": dir, "created": nonNil(created)}
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

// keepOutOfGit adds the tree (and .rotd/agent_id) to the repository's git
// exclude file, once (workspace.GitExcludes says why). Outside git it does
// nothing; a failure is a warning, since the tree itself is laid down.
func (e *env) keepOutOfGit(root string) (string, []string) {
	wait := 30 * time.Second
	if e.lockWaitSet {
		wait = e.lockWait
	}
	file, added, err := workspace.KeepOutOfGit(e.ctx, root, wait)
	if err != nil {
		fmt.Fprintf(e.stderr, "coord: warning: could not keep %s out of git: %v; add the line %s to %s by hand\n",
			workspace.RelDir, coord.OneLine(err.Error()), workspace.GitExcludes(".")[0], file)
	}
	return file, added
}

func (e *env) cmdSeed(c *cli.Context) error {
	var r io.Reader
	name := "stdin"
	switch {
	case c.Bool("stdin") && c.NArg() == 0, c.NArg() == 1 && c.Args().First() == "-":
		r = e.stdin
	case c.NArg() == 1 && !c.Bool("stdin"):
		name = c.Args().First()
		f, err := fsops.OpenFile(name, os.O_RDONLY, 0) // never waits on a FIFO
		var ke *fsops.KindError
		switch {
		case errors.As(err, &ke):
			return coord.Errorf(coord.CodeUsage, "seed file %v", err).WithHint("give seed-tasks a regular file, or pipe the tasks in with --stdin")
		case err != nil:
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
	case "rotd":
		batch, err = e.parseROTD(name, r)
	default:
		return strErr("--format %q is not coord or rotd", dialect)
	}
	if err != nil {
		return err
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	// A files pattern means the files it names: through a symlinked
	// folder, the target's (workspace.Paths.Pattern).
	m := e.paths()
	for _, sl := range batch {
		for i, f := range sl.Task.Files {
			sl.Task.Files[i] = m.Pattern(f)
		}
	}
	update := c.Bool("update")
	res, err := s.Seed(e.ctx, app.SeedRequest{Name: name, Batch: batch, Validate: c.Bool("validate"), Update: update, By: e.explicitAgent})
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(res)
	}
	plain := res.Updated == 0 && res.Unchanged == 0
	switch {
	case res.Validated && plain:
		e.printf("valid: %d tasks\n", res.Count)
	case res.Validated && update:
		e.printf("valid: %d to seed, %d to update, %d unchanged\n", res.Count, res.Updated, res.Unchanged)
	case res.Validated:
		e.printf("valid: %d to seed, %d unchanged\n", res.Count, res.Unchanged)
	case plain:
		e.printf("seeded %d tasks\n", res.Count)
	case update:
		e.printf("%d seeded, %d updated, %d unchanged\n", res.Count, res.Updated, res.Unchanged)
	default:
		e.printf("%d seeded, %d unchanged\n", res.Count, res.Unchanged)
	}
	return nil
}

// parseROTD reads ROTD planner tasks; a phase dependency resolves against
// the batch and the registry's tasks.
func (e *env) parseROTD(name string, r io.Reader) ([]coord.SeedLine, error) {
	s, err := e.open()
	if err != nil {
		return nil, err
	}
	tasks, err := s.Snapshot(e.ctx)
	if err != nil {
		return nil, err
	}
	phases := map[string][]string{}
	ids := map[string]bool{}
	for _, t := range tasks {
		ids[t.ID] = true
		p := rotd.TaskPhase(t)
		phases[p] = append(phases[p], t.ID)
	}
	return rotd.ParseTasks(name, r, func(p string) []string { return phases[p] }, func(id string) bool { return ids[id] }, e.clock())
}

func (e *env) cmdClaim(c *cli.Context) error {
	if c.NArg() > 0 {
		return strErr("claim takes no arguments (use --task ID)")
	}
	res, _, err := e.claimTask(c)
	if err != nil {
		return err
	}
	if res.Task == nil {
		return e.printStatus(res.Status())
	}
	return e.printTask(res.Task, true, "")
}

// claimTask claims by c's flags (--task, --any, --capability,
// --skill-level) through the Service (which beats and sweeps).
func (e *env) claimTask(c *cli.Context) (app.ClaimResult, coord.Agent, error) {
	if id := c.String("task"); c.IsSet("task") {
		if err := coord.ValidTaskID(id); err != nil {
			return app.ClaimResult{}, coord.Agent{}, err
		}
	}
	if _, err := coord.ParseSkillFilter(c.String("skill-level")); err != nil {
		return app.ClaimResult{}, coord.Agent{}, err
	}
	s, err := e.open()
	if err != nil {
		return app.ClaimResult{}, coord.Agent{}, err
	}
	a, err := e.caller(c)
	if err != nil {
		return app.ClaimResult{}, a, err
	}
	res, err := s.Claim(e.ctx, app.ClaimRequest{Agent: a, TaskID: c.String("task"), Any: c.Bool("any")})
	return res, a, err
}

// held is the task reference of a command on a task the caller holds.
func (e *env) held(c *cli.Context, id string) (*app.Service, app.TaskRef, error) {
	s, err := e.open()
	if err != nil {
		return nil, app.TaskRef{}, err
	}
	a, err := e.caller(c)
	return s, app.TaskRef{Agent: a, TaskID: id, Epoch: epochOf(c)}, err
}

func (e *env) cmdRelease(c *cli.Context) error {
	a, err := e.args(c, "TASK")
	if err != nil {
		return err
	}
	s, ref, err := e.held(c, a[0])
	if err != nil {
		return err
	}
	summary := c.String("summary")
	if !c.IsSet("summary") {
		summary = workspace.Summary(e.ctx, e.paths().WorkTop())
	}
	t, err := s.Release(e.ctx, ref, summary)
	if err != nil {
		return err
	}
	return e.printTask(t, false, fmt.Sprintf("released %s (%s)", t.ID, t.Status))
}

func (e *env) cmdBlock(c *cli.Context) error {
	a, err := e.args(c, "TASK")
	if err != nil {
		return err
	}
	s, ref, err := e.held(c, a[0])
	if err != nil {
		return err
	}
	t, err := s.Block(e.ctx, ref, c.String("reason"))
	if err != nil {
		return err
	}
	return e.printTask(t, false, "blocked "+t.ID)
}

func (e *env) cmdUnblock(c *cli.Context) error {
	a, err := e.args(c, "TASK")
	if err != nil {
		return err
	}
	s, ref, err := e.held(c, a[0])
	if err != nil {
		return err
	}
	t, err := s.Unblock(e.ctx, ref)
	if err != nil {
		return err
	}
	return e.printTask(t, false, fmt.Sprintf("unblocked %s (%s)", t.ID, t.Status))
}

func (e *env) cmdProgress(c *cli.Context) error {
	a, err := e.args(c, "TASK", "PERCENT")
	if err != nil {
		return err
	}
	pct, err := strconv.Atoi(strings.TrimSuffix(a[1], "%"))
	if err != nil {
		return strErr("PERCENT must be an integer 0..100, got %q", a[1])
	}
	s, ref, err := e.held(c, a[0])
	if err != nil {
		return err
	}
	t, err := s.Progress(e.ctx, ref, pct, c.String("note"))
	if err != nil {
		return err
	}
	return e.printTask(t, false, fmt.Sprintf("progress %s %d%%", t.ID, t.Progress))
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
		if err := workspace.CheckAgent("--reviewer", named); err != nil {
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
	req := app.ApproveRequest{Agent: caller, TaskID: a[0]}
	if human {
		req.Human = named
	}
	got, err := s.Approve(e.ctx, req)
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
	s, reviewer, err := e.openAs()
	if err != nil {
		return err
	}
	got, err := s.Reject(e.ctx, reviewer, a[0], c.String("reason"))
	if err != nil {
		return err
	}
	if got.Status == coord.Blocked { // max_rejections reached
		return e.printTask(got, false, "rejected "+got.ID+" and blocked it: "+got.BlockedReason)
	}
	return e.printTask(got, false, "rejected "+got.ID+" (back to "+got.ClaimedBy+")")
}

func (e *env) cmdLs(c *cli.Context) error {
	if c.NArg() > 0 {
		return strErr("ls takes no arguments")
	}
	var statuses []coord.Status
	for _, st := range coord.ParseCaps(c.String("status")) {
		if !coord.Status(st).Valid() {
			return strErr("--status %q is not one of unclaimed, claimed, blocked, review, done", st)
		}
		statuses = append(statuses, coord.Status(st))
	}
	limit, err := limitOf(c)
	if err != nil {
		return err
	}
	if e.json && !c.IsSet("limit") {
		// --json is every task unless --limit is given: the contract's
		// array, which programs read whole (and backend copy compares).
		limit = 0
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	all, err := s.Tasks(e.ctx, app.ListRequest{Statuses: statuses, All: c.Bool("all")})
	if err != nil {
		return err
	}
	list, more := app.Limit(all, limit)
	w := bufio.NewWriterSize(e.stdout, 64<<10)
	defer w.Flush()
	if e.json {
		if more > 0 {
			fmt.Fprintf(e.stderr, "coord: ls: %s more tasks not printed (--limit %d; 0 prints every one)\n", grouped(more), limit)
		}
		w.WriteByte('[')
		for i, t := range list {
			if i > 0 {
				w.WriteByte(',')
			}
			w.Write(taskJSON(t))
		}
		w.WriteString("]\n")
		return nil
	}
	// The ASSIGNED column (push scheduling: who a task waits for, or who
	// reviews it) shows when some task is assigned.
	assigned := false
	for _, t := range list {
		assigned = assigned || t.AssignedTo != ""
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if assigned {
		fmt.Fprintln(tw, "ID\tSTATUS\tPRIORITY\tOWNER\tASSIGNED\tEPOCH\tPROGRESS\tTITLE")
	} else {
		fmt.Fprintln(tw, "ID\tSTATUS\tPRIORITY\tOWNER\tEPOCH\tPROGRESS\tTITLE")
	}
	for _, t := range list {
		owner := t.ClaimedBy
		if owner == "" {
			owner = "-"
		}
		if assigned {
			to := t.AssignedTo
			switch {
			case to == "":
				to = "-"
			case t.ReviewStartedAt != "":
				to += " (reviewing)"
			}
			owner += "\t" + to
		}
		p := t.Priority
		if p == "" {
			p = coord.Medium
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d%%\t%s\n", t.ID, t.Status, p, owner, t.Epoch, t.Progress, coord.Cell(t.Title, textWidth))
	}
	if more > 0 {
		fmt.Fprintf(tw, "… %s more tasks (%s in all); --limit 0 shows every one\n", grouped(more), grouped(len(all)))
	}
	return tw.Flush()
}

func (e *env) cmdMsg(c *cli.Context) error {
	text := strings.Join(c.Args().Slice(), " ")
	if coord.MessageText(text) == "" {
		return strErr("msg needs TEXT")
	}
	s, agent, err := e.openAs()
	if err != nil {
		return err
	}
	return s.Msg(e.ctx, agent, text)
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
	// The last n lines are read from the end of the log; all of them
	// (-n 0) are streamed: neither holds the whole log in memory.
	history := func() error {
		skipped, err := s.LogRead(e.ctx, n, write)
		w.Flush()
		if err != nil {
			return err
		}
		if skipped > 0 && !e.json {
			fmt.Fprintf(e.stderr, "coord: skipped %d torn or foreign log lines\n", skipped)
		}
		return nil
	}
	if !c.Bool("follow") {
		return history()
	}
	// The follower is positioned before the history is read, so nothing
	// falls between.
	return s.LogFollow(e.ctx, func() error {
		if err := history(); err != nil {
			return err
		}
		markWaiting()
		return nil
	}, func(lines []string) error {
		for _, l := range lines {
			write(l)
		}
		return w.Flush()
	})
}

func (e *env) cmdBeat(c *cli.Context) error {
	if c.NArg() > 0 {
		return strErr("beat takes no arguments")
	}
	var every time.Duration
	if c.IsSet("every") {
		d, err := coord.ParseInterval("--every", c.String("every"))
		if err != nil {
			return err
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
	s, agent, err := e.openAs()
	if err != nil {
		return err
	}
	if err := s.Beat(e.ctx, agent, nil); err != nil {
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
			if err := s.Beat(e.ctx, agent, nil); err != nil {
				return err
			}
		}
	}
}

func (e *env) staleTimeout(c *cli.Context) (time.Duration, error) {
	if !c.IsSet("timeout") {
		return e.cfg.StaleAfter, nil
	}
	return coord.ParsePositive("--timeout", c.String("timeout"))
}

func (e *env) cmdAgents(c *cli.Context) error {
	if c.NArg() > 0 {
		return parentAction(c) // help, or an unknown subcommand
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	timeout, err := e.staleTimeout(c)
	if err != nil {
		return err
	}
	rows, err := s.Agents(e.ctx, timeout)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(rows)
	}
	// Registered agents (push scheduling) add their role, inbox depth and
	// where they work; the columns show when the pool is not empty.
	pool := false
	for _, r := range rows {
		pool = pool || r.Role != ""
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	head := "AGENT\tLAST BEAT\tAGE\tSTATE\tTASKS"
	if pool {
		head += "\tROLE\tINBOX\tWORKTREE"
	}
	fmt.Fprintln(tw, head)
	for _, r := range rows {
		lb, age := "-", "-"
		if r.LastBeat != nil {
			lb, age = *r.LastBeat, (time.Duration(*r.AgeS) * time.Second).String()
		}
		state := "stale"
		if r.Alive {
			state = "alive"
		}
		tasks := coord.Clip(strings.Join(append(append([]string(nil), r.Tasks...), r.Reviewing...), ","), textWidth)
		if tasks == "" {
			tasks = "-"
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s", r.Agent, lb, age, state, tasks)
		if pool {
			line += "\t" + poolCells(r)
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// cmdCleanStale is one full maintenance step (app.Service.Maintain, as
// watch runs it): the stale sweep, expired path locks, leases and keys,
// log rotation and archiving. Once it has begun, a signal lets it finish
// (the sweep commits first; the housekeeping after it completes).
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
	if err := e.ctx.Err(); err != nil {
		return interrupted(e.ctx)
	}
	dryRun := c.Bool("dry-run")
	res, merr := s.Maintain(context.WithoutCancel(e.ctx), app.MaintainRequest{Timeout: timeout, DryRun: dryRun, Full: true})
	if e.json {
		if err := e.printJSON(res); err != nil {
			return err
		}
		return merr
	}
	if len(res.Archived) > 0 {
		e.printf("archived %d done tasks (archive_after %s)\n", len(res.Archived), e.cfg.ArchiveAfter)
	}
	verb := "freed"
	if dryRun {
		verb = "would free"
	}
	for _, f := range res.Freed {
		e.printf("%s %s (agent %s, idle %s) -> %s\n", verb, f.TaskID, f.Agent, f.Idle.Round(time.Second), f.Status)
	}
	if len(res.Freed) == 0 {
		e.printf("no stale locks\n")
	}
	return merr
}

func (e *env) cmdArchive(c *cli.Context) error {
	if c.NArg() > 0 {
		return strErr("archive takes no arguments")
	}
	var cutoff time.Time
	if v := c.String("older-than"); v != "" {
		d, err := coord.ParseDuration(v)
		if err != nil {
			return strErr("--older-than %q is not a duration like 24h", v)
		}
		cutoff = e.clock().Add(-d)
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	moved, err := s.Archive(e.ctx, cutoff)
	if err != nil {
		return err
	}
	if e.json {
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
