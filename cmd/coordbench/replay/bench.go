package replay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/rotd/coordination/coord/plan"
	"github.com/rotd/coordination/internal/gitrepo"
)

// Histories are the four histories of the data set (make bench-plan's
// PLAN_DATA; not in this repository: docs/BENCHMARKS.md says where).
var Histories = []string{"fzf", "ripgrep", "flask", "litestream"}

// BenchOptions say what Bench replays.
type BenchOptions struct {
	Dir       string   // where the histories are (NAME.jsonl.gz)
	Histories []string // default: Histories
	Agents    []int    // default: 4 and 8
	Tasks     int      // the newest commits replayed as tasks; default 200
	// Skip leaves out the newest Skip×Tasks commits first (0: replay the
	// newest Tasks): earlier windows of the same history, for tuning on
	// other data than the figures are reported on.
	Skip   int
	Params plan.Params
	// ReplanEvery > 0 also measures planning again after every that many
	// landings (the landed commits join the history, the unclaimed tasks
	// are predicted again).
	ReplanEvery int
	// Direct feeds the earlier commits to the predictor as data instead
	// of building a git repository from them and reading it back with
	// package gitrepo (faster; the predictions differ only where git
	// normalises a message or a path).
	Direct bool
	// Temp is where repositories are built (default os.TempDir()).
	Temp string
	// Contents, when set, looks up the identifiers the tasks name in
	// file contents (as app.Contents does for coord plan; the data
	// set has no contents): each plan asks it about plan.Named of its
	// batch and gives the model what it finds. Its time counts in the
	// plan's.
	Contents func(ctx context.Context, names []string) (map[string][]string, error)
	// Why, when set, receives for each number of agents the re-planned
	// run with the predictions each task had when it was claimed (by
	// task index), to say what its conflicts came from (Blame,
	// TaskBlame).
	Why func(agents int, work []Work, r Result, atClaim []Predicted)
}

// Figures are one history's replay for one number of agents.
type Figures struct {
	History  string
	Agents   int
	Commits  int // commits of history before the tasks
	Tasks    int
	FCFS     Result
	Oracle   Result
	Naive    Result
	Once     Result // planned once, when the tasks were seeded
	Replan   Result // planned again every ReplanEvery landings
	Recall   float64
	Prec     float64
	PlanTime time.Duration // planning the batch (reading git, building the model, predicting)
	// ReplanMax is the slowest re-plan (landing commits not included).
	ReplanMax time.Duration
	Replans   int
}

// Bench replays each history for each number of agents.
func Bench(ctx context.Context, opt BenchOptions) ([]Figures, error) {
	if len(opt.Histories) == 0 {
		opt.Histories = Histories
	}
	if len(opt.Agents) == 0 {
		opt.Agents = []int{4, 8}
	}
	if opt.Tasks == 0 {
		opt.Tasks = 200
	}
	var out []Figures
	for _, h := range opt.Histories {
		fs, err := benchOne(ctx, opt, h)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", h, err)
		}
		out = append(out, fs...)
	}
	return out, nil
}

func benchOne(ctx context.Context, opt BenchOptions, h string) ([]Figures, error) {
	cs, err := LoadFile(filepath.Join(opt.Dir, h+".jsonl.gz"))
	if err != nil {
		return nil, err
	}
	return BenchCommits(ctx, opt, h, cs)
}

// BenchCommits replays one history, named h, given as commits (oldest
// first; the newest opt.Tasks become the tasks) for each of opt.Agents
// (which must be set, as must opt.Tasks).
func BenchCommits(ctx context.Context, opt BenchOptions, h string, cs []Commit) ([]Figures, error) {
	var err error
	end := len(cs) - opt.Skip*opt.Tasks
	if end-opt.Tasks < 10 {
		return nil, fmt.Errorf("%d commits: too few for %d tasks after skipping %d windows", len(cs), opt.Tasks, opt.Skip)
	}
	hist, tasks := cs[:end-opt.Tasks], cs[end-opt.Tasks:end]
	work := Works(tasks)
	oracle := make([][]string, len(work))
	for i := range work {
		oracle[i] = RealFiles(work[i].Commit)
	}
	naive := Naive(hist, Tree(hist), work)

	var base *Repo
	if !opt.Direct {
		tmp, err := os.MkdirTemp(opt.Temp, "coord-replay-"+h+"-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		if base, err = NewRepo(ctx, tmp); err != nil {
			return nil, err
		}
		if err := base.Append(ctx, hist); err != nil {
			return nil, err
		}
	}
	newPlanner := func(fork string) (*planner, error) {
		p := &planner{params: opt.Params, work: work, tasks: PlanTasks(work), contents: opt.Contents}
		if opt.Direct {
			p.history = PlanCommits(hist)
			p.tree = Tree(hist)
			p.commits = append([]Commit(nil), hist...)
			return p, nil
		}
		r := base
		if fork != "" {
			var err error
			if r, err = base.Fork(ctx, fork); err != nil {
				return nil, err
			}
		}
		p.repo = r
		p.index = &plan.Index{}
		return p, nil
	}

	// The plan when the tasks are seeded.
	p0, err := newPlanner("")
	if err != nil {
		return nil, err
	}
	all := make([]int, len(work))
	for i := range all {
		all[i] = i
	}
	t0 := time.Now()
	once, err := p0.plan(ctx, all)
	if err != nil {
		return nil, err
	}
	planTime := time.Since(t0)
	onceFiles := make([][]string, len(work))
	onceProbs := make([][]float64, len(work))
	for i, pr := range once {
		onceFiles[i], onceProbs[i] = pr.Files, pr.P
	}
	rec, prec := Accuracy(work, onceFiles)

	var out []Figures
	for _, n := range opt.Agents {
		f := Figures{History: h, Agents: n, Commits: len(hist), Tasks: len(work), Recall: rec, Prec: prec, PlanTime: planTime}
		runs := []struct {
			files     [][]string
			probs     [][]float64
			res       *Result
			predicted bool
		}{{nil, nil, &f.FCFS, false}, {oracle, nil, &f.Oracle, false}, {naive, nil, &f.Naive, false}, {onceFiles, onceProbs, &f.Once, true}}
		for _, r := range runs {
			if *r.res, err = Simulate(work, r.files, Options{Agents: n, Predicted: r.predicted, Probs: r.probs}); err != nil {
				return nil, err
			}
		}
		if opt.ReplanEvery > 0 {
			p, err := newPlanner("replay-" + strconv.Itoa(n))
			if err != nil {
				return nil, err
			}
			// The fork starts from the base's state: its index is the
			// one built for the first plan, so re-plans read only the
			// landed commits.
			if p0.index != nil {
				*p.index = *p0.index
				p.index.Commits = append([]plan.Commit(nil), p0.index.Commits...)
			}
			// The predictions each task had when it was claimed: the
			// newest made while it was unclaimed.
			atClaim := make([]Predicted, len(work))
			for i := range work {
				atClaim[i] = Predicted{Files: onceFiles[i], P: onceProbs[i]}
			}
			sim := Options{Agents: n, ReplanEvery: opt.ReplanEvery, Predicted: true, Probs: onceProbs, Replan: func(landed, unclaimed []int) (map[int]Predicted, error) {
				if err := p.land(ctx, landed); err != nil {
					return nil, err
				}
				t := time.Now()
				fs, err := p.plan(ctx, unclaimed, inFlight(len(work), landed, unclaimed)...)
				if d := time.Since(t); d > f.ReplanMax {
					f.ReplanMax = d
				}
				f.Replans++
				for _, i := range unclaimed {
					if pr, ok := fs[i]; ok {
						atClaim[i] = pr
					}
				}
				return fs, err
			}}
			if f.Replan, err = Simulate(work, onceFiles, sim); err != nil {
				return nil, err
			}
			if opt.Why != nil {
				opt.Why(n, work, f.Replan, atClaim)
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// A planner runs the predictor as coord plan would: on a git repository
// (an index refreshed from it, its tree) or, Direct, on the commits as
// data.
type planner struct {
	params   plan.Params
	work     []Work
	tasks    []plan.Task
	landed   int // how many landed tasks were added to the history
	contents func(ctx context.Context, names []string) (map[string][]string, error)

	// git
	repo  *Repo
	index *plan.Index

	// direct
	history []plan.Commit
	commits []Commit // for the tree
	tree    []string
}

// land adds the tasks landed since the last call to the history.
func (p *planner) land(ctx context.Context, landed []int) error {
	var cs []Commit
	for _, i := range landed[p.landed:] {
		cs = append(cs, *p.work[i].Commit)
	}
	p.landed = len(landed)
	if p.repo != nil {
		return p.repo.Append(ctx, cs)
	}
	for i := range cs {
		p.history = append(p.history, cs[i].ForPlan())
	}
	p.commits = append(p.commits, cs...)
	p.tree = Tree(p.commits)
	return nil
}

// inFlight are the tasks of n neither landed nor unclaimed: planned
// again beside the unclaimed ones, as coord plan plans them.
func inFlight(n int, landed, unclaimed []int) []int {
	gone := make([]bool, n)
	for _, i := range landed {
		gone[i] = true
	}
	for _, i := range unclaimed {
		gone[i] = true
	}
	var out []int
	for i := range n {
		if !gone[i] {
			out = append(out, i)
		}
	}
	return out
}

// plan predicts the files of the given tasks (by index into the work),
// with their probabilities, as one batch, with the tasks in flight
// (with) planned beside them as coord plan does.
func (p *planner) plan(ctx context.Context, which []int, with ...int) (map[int]Predicted, error) {
	in := plan.Input{Commits: p.history, Tree: p.tree}
	if p.repo != nil {
		head, _, err := gitrepo.Refresh(ctx, p.repo.Dir, p.index)
		if err != nil {
			return nil, err
		}
		tree, err := gitrepo.Tree(ctx, p.repo.Dir, head)
		if err != nil {
			return nil, err
		}
		in = plan.Input{Commits: p.index.Commits, Tree: tree}
	}
	batch := make([]plan.Task, 0, len(which)+len(with))
	for _, i := range append(append([]int(nil), which...), with...) {
		batch = append(batch, p.tasks[i])
	}
	if p.contents != nil && p.params.WIdent > 0 {
		idents, err := p.contents(ctx, plan.Named(batch, plan.MaxNamed))
		if err != nil {
			return nil, err
		}
		in.Idents = idents
	}
	m := plan.NewModel(in, p.params)
	out := map[int]Predicted{}
	ids := append(append([]int(nil), which...), with...)
	for k, pr := range m.Plan(batch) {
		out[ids[k]] = Predicted{Files: pr.Files(), P: pr.Probs()}
	}
	return out, nil
}
