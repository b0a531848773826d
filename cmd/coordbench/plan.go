package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"

	"github.com/rotd/coordination/cmd/coordbench/replay"
	"github.com/rotd/coordination/coord/plan"
	"github.com/rotd/coordination/internal/gitrepo"
)

// planFlags are the options of -plan.
type planFlags struct {
	dir      string // the histories
	replan   int
	direct   bool
	skip     int
	params   string // JSON overriding plan.DefaultParams
	ablate   bool
	only     string
	agents   string
	parallel bool
	self     bool   // also replay the repository coordbench runs in
	contents bool   // and look identifiers up in its files
	repos    string // more git repositories to replay: NAME=DIR,…

	cpuprofile string // write a CPU profile of the run here
	why        bool   // print the files behind the re-planned runs' conflicts
}

// runPlan replays the histories as work and prints the
// figures. It reports a skip, not an error, when the data is absent (a
// user's clone has none).
func runPlan(pf planFlags) error {
	if pf.cpuprofile != "" {
		f, err := os.Create(pf.cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	p := plan.DefaultParams
	if pf.params != "" {
		dec := json.NewDecoder(strings.NewReader(pf.params))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return fmt.Errorf("-plan-params: %v", err)
		}
	}
	opt := replay.BenchOptions{Dir: pf.dir, ReplanEvery: pf.replan, Direct: pf.direct, Skip: pf.skip, Params: p}
	if pf.why {
		opt.Why = printBlame
	}
	if pf.only != "" {
		opt.Histories = strings.Split(pf.only, ",")
	}
	if pf.agents != "" {
		for _, a := range strings.Split(pf.agents, ",") {
			var n int
			if _, err := fmt.Sscan(a, &n); err != nil || n < 1 {
				return fmt.Errorf("-plan-agents: %q is not a number of agents", a)
			}
			opt.Agents = append(opt.Agents, n)
		}
	}
	if len(opt.Histories) == 0 {
		opt.Histories = replay.Histories
	}
	if len(opt.Agents) == 0 {
		opt.Agents = []int{4, 8}
	}
	ctx := context.Background()
	mode := "a git repository built from the earlier commits (git fast-import), read back with package gitrepo"
	if pf.direct {
		mode = "the earlier commits fed to the predictor directly"
	}
	if _, err := os.Stat(pf.dir); err != nil {
		fmt.Printf("plan replay skipped: no histories at %s (the data set is not part of this repository; give its directory to -plan, or PLAN_DATA to make bench-plan)\n", pf.dir)
	} else {
		if pf.ablate {
			return ablate(ctx, opt)
		}
		fmt.Printf("## Planning: real histories replayed as work\n\nHistories from %s; the predictor runs on %s. Durations: %s.\n",
			abs(pf.dir), mode, replay.DurationRule)
		fs, err := replay.Bench(ctx, opt)
		if err != nil {
			return err
		}
		replay.Print(os.Stdout, fs, pf.replan)
	}
	if pf.repos != "" && !pf.ablate {
		if err := runRepos(ctx, opt, mode, pf.replan, pf.repos); err != nil {
			return err
		}
	}
	if !pf.self || pf.ablate {
		return nil
	}
	return runOwn(ctx, opt, mode, pf.replan, pf.contents)
}

// runRepos replays the histories of other git repositories (a clone, or
// a bare copy of a public repository kept outside this one), read at
// run time as this repository's own is (replay.Own: the newest 200
// commits that changed files as tasks, with their diffs), each named
// NAME in "NAME=DIR,…"; a directory that is not there is skipped with
// one line. Nothing they hold is written anywhere.
func runRepos(ctx context.Context, opt replay.BenchOptions, mode string, replan int, spec string) error {
	var all []replay.Figures
	for _, item := range strings.Split(spec, ",") {
		name, dir, ok := strings.Cut(item, "=")
		if !ok || name == "" || dir == "" {
			return fmt.Errorf("-plan-repos: %q is not NAME=DIR", item)
		}
		if _, err := os.Stat(dir); err != nil {
			fmt.Printf("\n%s replay skipped: %v\n", name, err)
			continue
		}
		cs, err := replay.Own(ctx, dir, ownTasks)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if len(cs) < ownTasks+ownMinHistory {
			fmt.Printf("\n%s replay skipped: %d commits that changed files, fewer than %d\n", name, len(cs), ownTasks+ownMinHistory)
			continue
		}
		o := opt
		o.Tasks, o.Skip = ownTasks, 0
		fmt.Printf("\n## Planning: %s (%s, read with package gitrepo at run time) replayed as work\n\nThe newest %d of its %d commits that changed files as tasks; the predictor runs on %s. Durations: %s.\n",
			name, dir, ownTasks, len(cs), mode, replay.DurationRule)
		fs, err := replay.BenchCommits(ctx, o, name, cs)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		replay.Print(os.Stdout, fs, replan)
		all = append(all, fs...)
	}
	if len(all) > 1 && replan > 0 {
		fmt.Printf("\nover these repositories: re-planned every %d landings: %s\n", replan, replay.Summarise(all, func(f *replay.Figures) replay.Result { return f.Replan }))
	}
	return nil
}

// ownTasks and ownMinHistory: this repository's newest ownTasks commits
// are replayed as tasks, as for the data set's histories, when at least
// ownMinHistory commits precede them; a shorter history gives half its
// commits.
const (
	ownTasks      = 200
	ownMinHistory = 100
)

// runOwn replays the history of the git repository coordbench runs in
// (read with package gitrepo, its newest commits' diffs with
// gitrepo.Diffs) as the data set's are replayed. Outside a repository it
// says so in one line.
func runOwn(ctx context.Context, opt replay.BenchOptions, mode string, replan int, contents bool) error {
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	cs, err := replay.Own(ctx, dir, ownTasks)
	if errors.Is(err, gitrepo.ErrNoRepo) {
		fmt.Printf("own-history replay skipped: %s is not in a git repository with commits\n", dir)
		return nil
	}
	if err != nil {
		return fmt.Errorf("own history: %w", err)
	}
	opt.Tasks = ownTasks
	note := fmt.Sprintf("the newest %d", ownTasks)
	if len(cs) < ownTasks+ownMinHistory {
		opt.Tasks = len(cs) / 2
		note = fmt.Sprintf("only %d (the history holds %d commits that changed files, fewer than %d)", opt.Tasks, len(cs), ownTasks+ownMinHistory)
	}
	if opt.Tasks < 10 {
		fmt.Printf("own-history replay skipped: %s holds %d commits that changed files, too few to replay\n", dir, len(cs))
		return nil
	}
	opt.Skip = 0
	with := "no file contents (as for the data set)"
	if contents {
		// The files as they were before the first task, where coord
		// plan would have looked the tasks' identifiers up.
		base := cs[len(cs)-opt.Tasks-1].Sha
		tmp, err := os.MkdirTemp("", "coord-replay-own-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		if err := replay.Checkout(ctx, dir, base, filepath.Join(tmp, "files")); err != nil {
			return fmt.Errorf("own history: %w", err)
		}
		src := &gitrepo.Source{Dir: filepath.Join(tmp, "files")}
		opt.Contents = src.Holders
		with = fmt.Sprintf("the identifiers the tasks name looked up in the files as they were before the first task (%.10s; for every plan)", base)
	}
	fmt.Printf("\n## Planning: this repository's own history replayed as work\n\nThe history of %s (read with package gitrepo; merges and empty commits left out), %s of its commits as tasks; the predictor runs on %s, with %s. Durations: %s.\n",
		dir, note, mode, with, replay.DurationRule)
	fs, err := replay.BenchCommits(ctx, opt, "this repository", cs)
	if err != nil {
		return fmt.Errorf("own history: %w", err)
	}
	replay.Print(os.Stdout, fs, replan)
	return nil
}

// ablate measures the model with each signal switched off in turn.
func ablate(ctx context.Context, opt replay.BenchOptions) error {
	base := opt.Params
	variants := []struct {
		name string
		set  func(*plan.Params)
	}{
		{"all signals", func(*plan.Params) {}},
		{"no similar messages (text)", func(p *plan.Params) { p.WText = 0 }},
		{"no prefix (scope)", func(p *plan.Params) { p.WScope = 0 }},
		{"no named paths", func(p *plan.Params) { p.WName = 0 }},
		{"no co-change", func(p *plan.Params) { p.WCo = 0 }},
		{"no recency (half-life off)", func(p *plan.Params) { p.HalfLife = 1e12 }},
		{"no pairing of near-identical tasks", func(p *plan.Params) { p.PairSim = 0 }},
		{"no hot files judged by kind (HotShare)", func(p *plan.Params) { p.HotShare = 0 }},
		{"no bound on a file's probabilities in a batch (Cap)", func(p *plan.Params) { p.Cap = 0 }},
	}
	fmt.Printf("## Ablation (each signal off in turn; %d histories, agents %v; mean ratio over the runs, worst run in brackets)\n\n", len(opt.Histories), opt.Agents)
	fmt.Printf("| model | once: conflicts | once: makespan | re-plan: conflicts | re-plan: makespan | recall | precision |\n|---|---|---|---|---|---|---|\n")
	for _, v := range variants {
		o := opt
		o.Params = base
		v.set(&o.Params)
		fs, err := replay.Bench(ctx, o)
		if err != nil {
			return err
		}
		once := replay.Summarise(fs, func(f *replay.Figures) replay.Result { return f.Once })
		re := replay.Summarise(fs, func(f *replay.Figures) replay.Result { return f.Replan })
		var rec, prec float64
		for _, f := range fs {
			rec += f.Recall
			prec += f.Prec
		}
		n := float64(len(fs))
		rs := "-"
		rm := "-"
		if opt.ReplanEvery > 0 {
			rs = fmt.Sprintf("%.2fx (worst %.2fx)", re.Conflicts, re.WorstConflicts)
			rm = fmt.Sprintf("%.2fx (worst %.2fx)", re.Makespan, re.WorstMakespan)
		}
		fmt.Printf("| %s | %.2fx (worst %.2fx) | %.2fx (worst %.2fx) | %s | %s | %.0f%% | %.0f%% |\n", v.name,
			once.Conflicts, once.WorstConflicts, once.Makespan, once.WorstMakespan, rs, rm, 100*rec/n, 100*prec/n)
	}
	return nil
}

// printBlame prints the files behind a re-planned run's conflicts
// (-plan-why), the most pairs first.
func printBlame(agents int, work []replay.Work, r replay.Result, atClaim []replay.Predicted) {
	bs := replay.Blame(work, r.Pairs, atClaim)
	fmt.Printf("\nre-planned, %d agents: the files the conflicting pairs met in (predicted at the claim for both tasks / one / neither; mean probability; tasks of the replay that changed it, of them in its second half)\n\n", agents)
	fmt.Printf("| file | pairs | of them one adds, deletes or renames it | both | one | neither | mean P | tasks (late) |\n|---|---|---|---|---|---|---|---|\n")
	var t replay.Blamed
	for i, b := range bs {
		if i < 15 {
			fmt.Printf("| %s | %d | %d | %d | %d | %d | %.2f | %d (%d) |\n", b.Path, b.Pairs, b.Whole, b.Both, b.One, b.Neither, b.MeanP, b.Touched, b.TouchedLate)
		}
		t.Pairs += b.Pairs
		t.Whole += b.Whole
		t.Both += b.Both
		t.One += b.One
		t.Neither += b.Neither
	}
	fmt.Printf("| all %d files | %d | %d | %d | %d | %d | | |\n", len(bs), t.Pairs, t.Whole, t.Both, t.One, t.Neither)
	fmt.Printf("\nthe tasks in most conflicting pairs (pairs, task, subject, files it changed):\n\n")
	for i, l := range replay.TaskBlame(work, r.Pairs) {
		if i == 10 {
			break
		}
		fmt.Println("    " + l)
	}
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// runClaims replays the histories in dir as work under write claims
// (docs/GIT.md) and prints the figures; like runPlan it reports a skip when
// the data is absent. -plan-only and -plan-agents choose histories and
// numbers of agents.
func runClaims(dir string, pf planFlags) error {
	if _, err := os.Stat(dir); err != nil {
		fmt.Printf("write-claims replay skipped: no histories at %s (the data set is not part of this repository; give its directory to -replay-claims, or PLAN_DATA to make bench-claims)\n", dir)
		return nil
	}
	opt := replay.BenchOptions{Dir: dir}
	if pf.only != "" {
		opt.Histories = strings.Split(pf.only, ",")
	}
	for _, a := range strings.Split(pf.agents, ",") {
		if a == "" {
			continue
		}
		var n int
		if _, err := fmt.Sscan(a, &n); err != nil || n < 1 {
			return fmt.Errorf("-plan-agents: %q is not a number of agents", a)
		}
		opt.Agents = append(opt.Agents, n)
	}
	fmt.Printf("## Write claims: real histories replayed as work\n\nHistories from %s, the newest 200 commits of each as tasks, first come, first served (no files declared). "+
		"Durations: %s; an agent writes its task's files one by one over that time. Conflicts: pairs of tasks in flight at once whose changes meet (FCFS), "+
		"or whose writes to one file meet while both are in flight (claims). A refused edit waits until the holder lands.\n\n", abs(dir), replay.DurationRule)
	fs, err := replay.BenchClaims(opt)
	if err != nil {
		return err
	}
	replay.PrintClaims(os.Stdout, fs)
	return nil
}
