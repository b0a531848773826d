package replay

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/rotd/coordination/coord"
)

// DurationRule says in words what Duration does.
const DurationRule = "20 min + 0.5 min per changed line, at most 8 h"

// Duration is how long an agent works on a task that changed lines
// lines: a fixed part (reading, building, testing, the commit) and a part
// that grows with the size of the change, capped (a vendored or
// generated change of thousands of lines is not a week of work).
func Duration(lines int) time.Duration {
	d := baseMinutes + float64(lines)*perLineMinutes
	if d > maxMinutes {
		d = maxMinutes
	}
	return time.Duration(d * float64(time.Minute))
}

const (
	baseMinutes    = 20.0
	perLineMinutes = 0.5
	maxMinutes     = 8 * 60.0
)

// A Work is one task of a replay: a commit of the history to redo.
type Work struct {
	ID     string
	Commit *Commit
	Dur    time.Duration
}

// Works makes the tasks of a replay from commits, in order, with ids
// t001, t002, ….
func Works(cs []Commit) []Work {
	out := make([]Work, len(cs))
	for i := range cs {
		out[i] = Work{ID: fmt.Sprintf("t%03d", i+1), Commit: &cs[i], Dur: Duration(cs[i].Lines())}
	}
	return out
}

// Options says how the simulated agents work.
type Options struct {
	Agents int
	// WriteClaims models claims taken at an agent's first write of a
	// file (claims.go): an agent writes its task's files one
	// by one over the task's duration, and a write to a file another
	// task in flight wrote is refused: the agent waits until that task
	// lands, then goes on.
	WriteClaims bool
	// ClaimsWarn, with WriteClaims, records the claims without enforcing
	// them (write_claims "warn"): no write is refused, and the writes
	// that meet another task's in flight are counted as conflicts.
	ClaimsWarn bool
	// Replan, when set, is called after every ReplanEvery landings
	// (releases) with the tasks landed so far, in landing order, and the
	// tasks not yet claimed; it returns new predictions for those and
	// for the tasks in flight (by index), as running the planner again
	// would.
	Replan      func(landed, unclaimed []int) (map[int]Predicted, error)
	ReplanEvery int
	// Predicted records the file lists as the tasks' predicted_files,
	// with Probs as their predicted_confidence (what coord plan records,
	// weighed as coord weighs them, with the default predict_floor)
	// instead of their declared files: the wired rule, measured.
	Predicted bool
	Probs     [][]float64
}

// Predicted is one task's predicted paths with their probabilities.
type Predicted struct {
	Files []string
	P     []float64
}

// A Result is what one replay measured.
type Result struct {
	Conflicts int           // pairs of tasks in flight at once whose changes meet
	Makespan  time.Duration // from the first claim to the last release
	Pairs     [][2]string   // the conflicting pairs (task ids)

	// With WriteClaims (claims.go): under exclusive claims Conflicts
	// counts the pairs whose writes to one file, both in flight, meet,
	// which cannot happen (0); under warn it counts them.
	Refused     int           // writes refused (each a wait)
	RefusedMeet int           // of them, writes whose change meets the holder's: a merge conflict turned into a wait
	Waited      time.Duration // time agents held a task waiting for a file, in all
	MaxWait     time.Duration // the longest single wait
	HandBacks   int           // tasks handed back because two waited on each other
	Lost        time.Duration // work lost with them
	StaleMeets  int           // writes to a file that landed, meeting, after the writer claimed its task
}

// Simulate lets opt.Agents agents drain the tasks through coord's own
// claims: each task is a coord.Task, unclaimed, of medium priority, whose
// Files are files[i] (the declared and predicted paths, nil for none);
// an idle agent claims with coord.Txn.Claim (the eligibility and priority
// rules of coord claim), works for the task's duration in simulated time,
// and releases it. Events at one instant are handled releases first, then
// claims by agent number, so a run is deterministic. Every pair of tasks
// in flight at once whose real changes meet counts as one conflict.
func Simulate(work []Work, files [][]string, opt Options) (Result, error) {
	if opt.Agents < 1 {
		return Result{}, fmt.Errorf("replay: %d agents", opt.Agents)
	}
	if files != nil && len(files) != len(work) {
		return Result{}, fmt.Errorf("replay: %d file lists for %d tasks", len(files), len(work))
	}
	epoch := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tx := &coord.Txn{Now: epoch, PredictFloor: coord.DefaultPredictFloor}
	byID := map[string]int{}
	for i, w := range work {
		t := &coord.Task{ID: w.ID, Title: w.Commit.Subject, Status: coord.Unclaimed}
		if files != nil {
			var probs []float64
			if opt.Probs != nil {
				probs = opt.Probs[i]
			}
			setFiles(t, files[i], probs, opt.Predicted)
		}
		tx.Add(t)
		byID[w.ID] = i
	}
	if opt.WriteClaims {
		return simulateClaims(work, tx, byID, epoch, opt)
	}
	type run struct {
		task  int
		agent int
		epoch int64
		end   time.Duration
	}
	agents := make([]coord.Agent, opt.Agents)
	busy := make([]bool, opt.Agents)
	for i := range agents {
		agents[i] = coord.Agent{ID: "a" + strconv.Itoa(i)}
	}
	var res Result
	var inflight []*run // claimed and worked on
	var now time.Duration
	done := 0
	var landed []int
	sinceReplan := 0
	startWork := func(r *run) {
		for _, o := range inflight {
			if o != r && Meet(work[r.task].Commit.Files, work[o.task].Commit.Files) {
				res.Conflicts++
				res.Pairs = append(res.Pairs, [2]string{work[o.task].ID, work[r.task].ID})
			}
		}
		r.end = now + work[r.task].Dur
	}
	for {
		// Idle agents claim, by agent number.
		tx.Now = epoch.Add(now)
		for a := range agents {
			if busy[a] {
				continue
			}
			t, err := tx.Claim(agents[a], coord.ClaimOptions{})
			tx.Events = nil
			if err != nil {
				return Result{}, err
			}
			if t == nil {
				break // nothing eligible now: no other agent finds more
			}
			r := &run{task: byID[t.ID], agent: a, epoch: t.Epoch}
			startWork(r)
			busy[a] = true
			inflight = append(inflight, r)
		}
		if len(inflight) == 0 {
			if done < len(work) {
				return Result{}, fmt.Errorf("replay: %d tasks left that no agent can claim", len(work)-done)
			}
			res.Makespan = now
			return res, nil
		}
		// The next event: the earliest end of a task being worked on.
		next := time.Duration(-1)
		for _, r := range inflight {
			if next < 0 || r.end < next {
				next = r.end
			}
		}
		now = next
		tx.Now = epoch.Add(now)
		kept := inflight[:0]
		for _, r := range inflight {
			if r.end == now {
				if _, err := tx.Release(agents[r.agent].ID, work[r.task].ID, r.epoch, "", false); err != nil {
					return Result{}, err
				}
				tx.Events = nil
				busy[r.agent] = false
				done++
				landed = append(landed, r.task)
				sinceReplan++
				continue
			}
			kept = append(kept, r)
		}
		inflight = kept
		if opt.Replan != nil && sinceReplan >= max(1, opt.ReplanEvery) && done < len(work) {
			sinceReplan = 0
			var unclaimed []int
			for i := range work {
				if tx.Task(work[i].ID).Status == coord.Unclaimed {
					unclaimed = append(unclaimed, i)
				}
			}
			preds, err := opt.Replan(slices.Clone(landed), unclaimed)
			if err != nil {
				return Result{}, err
			}
			for i, pr := range preds {
				t := tx.Task(work[i].ID)
				if t == nil || t.Status != coord.Unclaimed && t.Status != coord.Claimed {
					continue
				}
				setFiles(t, pr.Files, pr.P, opt.Predicted)
			}
		}
	}
}

// RealFiles is the oracle's declaration for a commit: every path it
// changed, and the old path of each rename, sorted.
func RealFiles(c *Commit) []string {
	var out []string
	for _, f := range c.Files {
		out = append(out, f.Path)
		if f.Status == "R" && f.From != "" && f.From != f.Path {
			out = append(out, f.From)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// setFiles gives t the paths as its declared files (each quoted: a path
// names one file) or, predicted, as its predicted_files with probs as
// their predicted_confidence.
func setFiles(t *coord.Task, paths []string, probs []float64, predicted bool) {
	t.Files, t.PredictedFiles, t.PredictedConfidence = nil, nil, nil
	if predicted {
		t.PredictedFiles = slices.Clone(paths)
		if len(probs) == len(paths) {
			t.PredictedConfidence = slices.Clone(probs)
		}
		return
	}
	for _, p := range paths {
		t.Files = append(t.Files, coord.QuoteGlob(p))
	}
}
