package app

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/plan"
)

// Planning: for each task not yet claimed, the paths it will likely
// touch, each with its probability, predicted by package coord/plan from
// the repository's history (History, which the front end wires: the
// project root's repository, wherever the command runs) and from this
// project's finished tasks with what they really touched, and, when the
// History also implements Contents, from the files of the tree that hold
// the identifiers the tasks name, recorded on the tasks as
// predicted_files and predicted_confidence (coord.Txn.RecordPredictions),
// which eligibility and the scheduler then weigh (coord/predict.go). The
// history is read outside the registry's exclusion; only the recording
// commits.

// History is the caller's repository's history as the planner learns
// from it. The application never runs git itself: the front end passes
// one (Options.History; cmd/coord wires package gitrepo with its index
// kept beside the repository).
type History interface {
	// Load returns the history up to HEAD and the paths of HEAD's tree,
	// reading only what a kept index lacks. An error matching
	// ErrNoHistory says there is no repository (or no commit) to learn
	// from.
	Load(ctx context.Context) (HistoryData, error)
}

// Contents is what a History may also offer: a look into the files of
// the tree. Plan asks it about the identifiers the tasks' texts name
// (plan.Named) and gives the model what it finds (plan.Input.Idents),
// so a task naming parseWidth is predicted to touch the file that
// defines it even when no commit message mentions it.
type Contents interface {
	// Holders returns, for each path of the tree (as the project names
	// it) whose content holds some of names as whole words, those
	// names. It is bounded in time and size by the implementation.
	Holders(ctx context.Context, names []string) (map[string][]string, error)
}

// ErrNoHistory marks a project outside any git repository with commits:
// plan predicts nothing then, and says so.
var ErrNoHistory = errors.New("no git history")

// HistoryData is a repository's history as Load returns it.
type HistoryData struct {
	// Head is the commit the history ends at.
	Head string
	// Commits are oldest first (at most the index's bound, the newest).
	Commits []plan.Commit
	// Tree is the paths of Head's tree, as the project names them.
	Tree []string
	// Read counts the commits read from the repository by this Load
	// (the rest came from the index).
	Read int
	// Warning says what went wrong with the index (unreadable, so
	// rebuilt; not saved), "" when nothing did.
	Warning string
}

// PlanRequest says what Plan plans.
type PlanRequest struct {
	// Tasks are the tasks to plan; none means every unclaimed task.
	Tasks []string
	// Include adds tasks (whatever their state) to the default set when
	// Tasks is empty: a task explained is planned with its batch, as
	// the batch's bounds on hot files apply to it.
	Include []string
	// Params are the model's parameters; nil means plan.DefaultParams.
	Params *plan.Params
}

// PlanResult is what Plan predicted and recorded.
type PlanResult struct {
	// NoHistory says there was no repository to learn from: nothing was
	// predicted or recorded.
	NoHistory bool
	// Predictions are one per planned task, in registry order, each
	// path with its score, probability and the reasons it was chosen.
	Predictions []plan.Prediction
	// Decisions are, for each planned task still unclaimed, its
	// predictions weighed against the work in flight once recorded
	// (coord.Txn.Weigh), by task id.
	Decisions map[string]coord.Weighed
	// Recorded counts the tasks whose predicted_files changed.
	Recorded int
	// Head, Commits and Read describe the history learned from: the
	// commit it ends at, how many commits it holds, how many of them
	// were read from the repository this time.
	Head          string
	Commits, Read int
	// Finished counts the project's finished tasks learned from.
	Finished int
	// Named counts the identifiers the tasks name that were looked up
	// in the tree's files (History implementing Contents), Holding the
	// files found holding some of them.
	Named, Holding int
	// Warning is the history's, "" when none.
	Warning string
	// Took is how long the planning took.
	Took time.Duration
}

// Plan predicts the paths each task will touch and records them as its
// predicted_files. Without a history (Options.History nil, or a
// project in no git repository) it predicts nothing (NoHistory). A named
// task that does not exist is CodeConflict, as claim says it.
func (s *Service) Plan(ctx context.Context, req PlanRequest) (PlanResult, error) {
	start := time.Now()
	var res PlanResult
	for _, id := range append(slices.Clone(req.Tasks), req.Include...) {
		if err := coord.ValidTaskID(id); err != nil {
			return res, err
		}
	}
	var tasks, beside []plan.Task
	var finished []plan.Finished
	err := s.tasks().View(ctx, func(tx *coord.Txn) error {
		for _, id := range append(slices.Clone(req.Tasks), req.Include...) {
			if tx.Task(id) == nil {
				return coord.Errorf(coord.CodeConflict, "task %q not found", id).WithHint("run 'coord ls' to see the task ids")
			}
		}
		for _, t := range tx.Tasks {
			if t.Status == coord.Done && len(t.TouchedFiles) > 0 {
				finished = append(finished, plan.Finished{Title: t.Title, Description: t.Description, Touched: t.TouchedFiles})
			}
			pt := plan.Task{ID: t.ID, Title: t.Title, Description: t.Description, Files: slices.Clone(t.Files)}
			switch {
			case planned(req, t):
				tasks = append(tasks, pt)
			case t.Status == coord.Claimed || t.Status == coord.Blocked:
				// In flight: planned beside the batch (a task that
				// says nearly the same shares its best file) and
				// recorded again, so that the weighing compares
				// predictions made from the same history (a file
				// renamed since is named as the others name it).
				beside = append(beside, pt)
			}
		}
		return nil
	})
	if err != nil {
		return res, interrupted(ctx, err)
	}
	if s.history == nil {
		res.NoHistory = true
		return res, nil
	}
	h, err := s.history.Load(ctx)
	if errors.Is(err, ErrNoHistory) {
		res.NoHistory = true
		return res, nil
	}
	if err != nil {
		return res, interrupted(ctx, err)
	}
	res.Head, res.Commits, res.Read, res.Warning, res.Finished = h.Head, len(h.Commits), h.Read, h.Warning, len(finished)
	if len(tasks) == 0 {
		res.Took = time.Since(start)
		return res, nil
	}
	p := plan.DefaultParams
	if req.Params != nil {
		p = *req.Params
	}
	in := plan.Input{Commits: h.Commits, Tree: h.Tree, Finished: finished}
	if c, ok := s.history.(Contents); ok && p.WIdent > 0 {
		if names := plan.Named(tasks, plan.MaxNamed); len(names) > 0 {
			idents, err := c.Holders(ctx, names)
			if err != nil {
				if ctx.Err() != nil {
					return res, interrupted(ctx, err)
				}
				// Contents are one signal among several: plan without.
				res.Warning = joinWarning(res.Warning, "identifiers not looked up in the files: "+err.Error())
			}
			in.Idents, res.Named, res.Holding = idents, len(names), len(idents)
		}
	}
	m := plan.NewModel(in, p)
	all := m.Plan(append(tasks, beside...))
	res.Predictions = all[:len(tasks)]
	recs := make([]coord.Prediction, len(all))
	for i, pr := range all {
		recs[i] = coord.Prediction{Task: pr.Task, Paths: pr.Files(), Confidence: pr.Probs()}
	}
	err = s.tasks().Update(ctx, func(tx *coord.Txn) error {
		res.Recorded = tx.RecordPredictions(recs)
		var open []*coord.Task
		for _, pr := range res.Predictions {
			if t := tx.Task(pr.Task); t != nil && t.Status == coord.Unclaimed {
				open = append(open, t)
			}
		}
		res.Decisions = map[string]coord.Weighed{}
		for i, w := range tx.Weigh(open, "") {
			res.Decisions[open[i].ID] = w
		}
		return nil
	})
	res.Took = time.Since(start)
	return res, interrupted(ctx, err)
}

// ReplanAfter is how many tasks must have landed since the last plan
// before Replan plans again: the cadence the replayed histories are
// measured with (make bench-plan).
const ReplanAfter = 5

// Replan plans the unclaimed tasks again once ReplanAfter tasks have
// landed since they were last planned (landed_at newer than every
// unclaimed task's predicted_at and than this Service's last replan):
// what landed is history the predictions did not know, and the batch's
// bound on a hot file's probabilities follows the tasks left (package
// plan). Cheap otherwise: one read of the registry, no git. It
// reports whether it planned. watch calls it as it sees tasks land.
func (s *Service) Replan(ctx context.Context) (bool, PlanResult, error) {
	if s.history == nil {
		return false, PlanResult{}, nil
	}
	var need bool
	err := s.tasks().View(ctx, func(tx *coord.Txn) error {
		need = needsReplan(tx.Tasks, s.replan.last())
		return nil
	})
	if err != nil || !need {
		return false, PlanResult{}, interrupted(ctx, err)
	}
	mark := coord.FormatTime(s.clock())
	res, err := s.Plan(ctx, PlanRequest{})
	if err != nil {
		return false, res, err
	}
	s.replan.set(mark)
	return true, res, nil
}

// needsReplan says whether ReplanAfter tasks landed after the newest
// plan of the unclaimed tasks (and after since, the last replan), while
// unclaimed tasks remain.
func needsReplan(tasks []*coord.Task, since string) bool {
	planned, open := since, false
	for _, t := range tasks {
		if t.Status == coord.Unclaimed {
			open = true
			if t.PredictedAt > planned {
				planned = t.PredictedAt
			}
		}
	}
	landed := 0
	for _, t := range tasks {
		if t.LandedAt != "" && strings.Compare(t.LandedAt, planned) > 0 {
			landed++
		}
	}
	return open && landed >= ReplanAfter
}

// replanMark is when the Service last replanned (RFC 3339 UTC).
type replanMark struct {
	mu sync.Mutex
	at string
}

func (m *replanMark) last() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.at
}

func (m *replanMark) set(at string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.at = at
}

// planned says whether req plans t.
func planned(req PlanRequest, t *coord.Task) bool {
	if len(req.Tasks) > 0 {
		return slices.Contains(req.Tasks, t.ID)
	}
	return t.Status == coord.Unclaimed || slices.Contains(req.Include, t.ID)
}

func joinWarning(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
