package app

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rotd/coordination/coord"
)

// Conflicts found while work is in flight (docs/GIT.md): each in-flight
// task's work is merged, without touching any worktree, with the target
// branch and with every other in-flight task's, in the caller's
// repository; the pairs that would conflict are recorded on the tasks
// (coord.Txn.RecordConflicts), each new one logged once.

// Merger is the caller's repository as a conflict scan needs it. The
// application never runs git itself: the front end passes one (cmd/coord
// wires package gitrepo with its merge cache).
type Merger interface {
	// BranchTips returns the commit each local branch points at, by
	// full ref name (refs/heads/…).
	BranchTips(ctx context.Context) (map[string]string, error)
	// Head returns the commit ref names (for a target that is not a
	// local branch); an error when it names none.
	Head(ctx context.Context, ref string) (string, error)
	// HasCommits reports which of ids the repository holds as commits.
	HasCommits(ctx context.Context, ids []string) (map[string]bool, error)
	// TrialMerges merges each pair of commit ids without checking
	// anything out or touching any worktree, one result per pair, with
	// the paths as the project names them.
	TrialMerges(ctx context.Context, pairs [][2]string) ([]TrialMerge, error)
}

// TrialMerge is the outcome of merging one pair of commits.
type TrialMerge struct {
	Conflict bool
	Files    []string
	Cached   bool  // answered by a cache: no merge ran
	Err      error // this pair could not be merged
}

// ConflictsResult is what a conflict scan found and recorded.
type ConflictsResult struct {
	// Pairs are every conflict recorded on the tasks in flight after
	// the scan, a pair once (coord.Txn.Conflicts): the ones this scan
	// found, and those found by callers whose repositories hold work
	// this one lacks.
	Pairs []coord.ConflictPair
	// New are the pairs this scan found first (each logged once).
	New []coord.ConflictPair
	// Skipped are the tasks in flight whose work this repository does
	// not hold (a branch of another machine), with why.
	Skipped []SkippedWork
	// Problems are the pairs git could not merge, one line each.
	Problems []string
	// Merged and Cached count the trial merges run and those a cache
	// answered.
	Merged, Cached int
	// Unchanged reports that nothing moved since the scanner's last
	// scan (no branch tip, no task in flight): nothing was merged or
	// recorded, and Pairs is not filled in.
	Unchanged bool
}

// SkippedWork is a task in flight whose work a scan could not merge.
type SkippedWork struct {
	Task string `json:"task"`
	Why  string `json:"why"`
}

// Conflicts scans the work in flight for conflicts in the caller's
// repository m and records what it finds.
func (s *Service) Conflicts(ctx context.Context, m Merger) (ConflictsResult, error) {
	s.FetchInFlight(ctx)
	res, _, err := s.scanConflicts(ctx, m, "")
	return res, err
}

// ConflictScanner scans again only when something moved: a long-running
// front end (watch, schedule) keeps one and calls Scan each round. The
// check of what moved costs one read of the registry and one git run
// (the branch tips); merges and the commit happen only when a tip or a
// task in flight changed since the last scan, and a pair already merged
// is answered by the Merger's cache.
type ConflictScanner struct {
	s    *Service
	m    Merger
	last string
	// fetched is when the scanner last fetched from the project's
	// remote (it fetches at most every RemoteFetchEvery).
	fetched time.Time
}

// ConflictScanner returns a scanner over the caller's repository m.
func (s *Service) ConflictScanner(m Merger) *ConflictScanner {
	return &ConflictScanner{s: s, m: m}
}

// Scan is Conflicts, or a result with Unchanged set when nothing moved
// since the last Scan that succeeded.
func (c *ConflictScanner) Scan(ctx context.Context) (ConflictsResult, error) {
	if r, _ := c.s.remote(); r != nil && time.Since(c.fetched) >= RemoteFetchEvery {
		c.fetched = time.Now()
		c.s.FetchInFlight(ctx)
	}
	res, sig, err := c.s.scanConflicts(ctx, c.m, c.last)
	if err == nil {
		c.last = sig
	}
	return res, err
}

// work is one task in flight as a scan sees it.
type work struct {
	id, key, commit string
}

// judgement is what a scan judges before it merges: the work in flight,
// each task's commit in the caller's repository.
type judgement struct {
	target, targetTip string
	snap              *coord.Txn
	ws                []work            // the work to merge
	judged            map[string]string // every task judged: id -> WorkKey
	skipped           []SkippedWork
	sig               string
}

// judge reads the registry and the branch tips and says which commit
// is each in-flight task's work.
func (s *Service) judge(ctx context.Context, m Merger) (*judgement, error) {
	j := &judgement{target: s.conf().Target, judged: map[string]string{}}
	if j.target == "" {
		j.target = coord.DefaultTarget
	}
	type task struct {
		id, key, branch, base, head string
		status                      coord.Status
	}
	var tasks []task
	err := s.tasks().View(ctx, func(tx *coord.Txn) error {
		for _, t := range tx.Tasks {
			if t.InFlight() {
				tasks = append(tasks, task{t.ID, coord.WorkKey(t), t.Branch, t.Base, t.Head, t.Status})
			}
		}
		j.snap = tx.Clone()
		for _, t := range j.snap.Tasks {
			t.Dirty = false
		}
		return nil
	})
	if err != nil {
		return nil, interrupted(ctx, err)
	}
	tips, err := m.BranchTips(ctx)
	if err != nil {
		return nil, interrupted(ctx, err)
	}
	var ok bool
	if j.targetTip, ok = tips[coord.BranchRef(j.target)]; !ok || s.conf().Remote != "" {
		if j.targetTip, err = m.Head(ctx, s.conf().TargetRef()); err != nil {
			return nil, coord.Errorf(coord.CodeConflict, "the target branch %q is not in this repository", j.target).
				WithHint("set it: coord config set target BRANCH")
		}
	}
	var heads []string
	for _, t := range tasks {
		if t.head != "" {
			heads = append(heads, t.head)
		}
	}
	has := map[string]bool{}
	if len(heads) > 0 {
		if has, err = m.HasCommits(ctx, heads); err != nil {
			return nil, interrupted(ctx, err)
		}
	}
	// Which commit is each task's work: the head it was released at
	// (done, in review), else its branch's tip (at work); the other when
	// the first is not in this repository.
	var sigOnly []work
	for _, t := range tasks {
		tip := tips[coord.BranchRef(t.branch)]
		head := ""
		if has[t.head] {
			head = t.head
		}
		commit := tip
		if commit == "" || t.status == coord.Done || t.status == coord.Review {
			commit = firstOf(head, tip)
		}
		if commit == "" {
			why := "it has no branch"
			switch {
			case t.branch != "":
				why = fmt.Sprintf("branch %s is not in this repository", coord.ShortBranch(t.branch))
			case t.head != "":
				why = fmt.Sprintf("its commit %.12s is not in this repository", t.head)
			}
			j.skipped = append(j.skipped, SkippedWork{Task: t.id, Why: why})
			continue
		}
		j.judged[t.id] = t.key
		// Work with no commit of its own (a branch still at its base, a
		// task working on the target itself) conflicts with nothing: a
		// merge of it would only show the target's own conflicts
		// under its name.
		if commit == j.targetTip || commit == t.base {
			sigOnly = append(sigOnly, work{id: t.id, key: t.key, commit: commit})
			continue
		}
		j.ws = append(j.ws, work{id: t.id, key: t.key, commit: commit})
	}
	j.sig = signature(j.targetTip, append(slices.Clone(j.ws), sigOnly...))
	return j, nil
}

func (s *Service) scanConflicts(ctx context.Context, m Merger, last string) (ConflictsResult, string, error) {
	var res ConflictsResult
	j, err := s.judge(ctx, m)
	if err != nil {
		return res, "", err
	}
	if last != "" && j.sig == last {
		res.Unchanged = true
		return res, j.sig, nil
	}
	// Something moved: work the target now reaches has landed (out of
	// flight, with its claims and conflicts).
	landed, err := s.Landed(ctx)
	if err != nil {
		return res, "", err
	}
	if len(landed) > 0 {
		if j, err = s.judge(ctx, m); err != nil {
			return res, "", err
		}
	}
	res.Skipped = j.skipped
	target, targetTip, ws, snap, judged, sig := j.target, j.targetTip, j.ws, j.snap, j.judged, j.sig

	// Every task's work with the target, and every two tasks' works.
	type side struct{ task, with string }
	var pairs [][2]string
	var sides []side
	for _, w := range ws {
		pairs = append(pairs, [2]string{targetTip, w.commit})
		sides = append(sides, side{w.id, target})
	}
	for i := range ws {
		for j := i + 1; j < len(ws); j++ {
			if ws[i].commit != ws[j].commit {
				pairs = append(pairs, [2]string{ws[i].commit, ws[j].commit})
				sides = append(sides, side{ws[i].id, ws[j].id})
			}
		}
	}
	var found []coord.ConflictPair
	if len(pairs) > 0 {
		merged, err := m.TrialMerges(ctx, pairs)
		if err != nil {
			return res, "", interrupted(ctx, err)
		}
		// A file that conflicts between a task's work and the target is
		// that conflict's: a pair of tasks is reported for the other
		// files only (a branch that took in the target's change would
		// otherwise conflict with every task that conflicts with the
		// target, under its own name).
		withTarget := map[string]map[string]bool{}
		for i, r := range merged {
			if sd := sides[i]; sd.with == target && r.Err == nil && r.Conflict {
				withTarget[sd.task] = map[string]bool{}
				for _, f := range r.Files {
					withTarget[sd.task][f] = true
				}
			}
		}
		for i, r := range merged {
			sd := sides[i]
			if r.Cached {
				res.Cached++
			} else {
				res.Merged++
			}
			if r.Err != nil {
				res.Problems = append(res.Problems, fmt.Sprintf("task %s with %s: %s", sd.task, sd.with, coord.OneLine(r.Err.Error())))
				// What was recorded for the pair stands.
				if c := recorded(snap, sd.task, sd.with); c != nil {
					found = append(found, coord.ConflictPair{Task: sd.task, With: sd.with, Files: c.Files})
				}
				continue
			}
			if !r.Conflict {
				continue
			}
			var files []string
			for _, f := range r.Files {
				if sd.with == target || !withTarget[sd.task][f] && !withTarget[sd.with][f] {
					files = append(files, f)
				}
			}
			if len(files) == 0 {
				continue
			}
			if len(files) > MaxConflictFiles {
				files = files[:MaxConflictFiles]
			}
			found = append(found, coord.ConflictPair{Task: sd.task, With: sd.with, Files: files})
		}
	}

	// Record only when it changes something: tried on the snapshot
	// first, so a scan that finds what is recorded takes no lock.
	snap.Now = s.clock()
	snap.RecordConflicts(judged, found, target, coord.CoordinatorID)
	if !anyDirty(snap) && len(snap.Events) == 0 {
		res.Pairs = nonNil(snap.Conflicts())
		return res, sig, nil
	}
	err = s.tasks().Update(ctx, func(tx *coord.Txn) error {
		res.New = tx.RecordConflicts(judged, found, target, coord.CoordinatorID)
		res.Pairs = tx.Conflicts()
		return nil
	})
	if err != nil {
		return ConflictsResult{}, "", interrupted(ctx, err)
	}
	res.Pairs, res.New = nonNil(res.Pairs), nonNil(res.New)
	return res, sig, nil
}

// MaxConflictFiles bounds the files recorded for one conflict (a merge
// of two vendored trees can name thousands).
const MaxConflictFiles = 100

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// signature is what a scan judged, as one string: the target's tip and
// each task's record and commit.
func signature(target string, ws []work) string {
	parts := []string{target}
	for _, w := range ws {
		parts = append(parts, w.id+"\x00"+w.key+"\x00"+w.commit)
	}
	sort.Strings(parts[1:])
	return strings.Join(parts, "\x01")
}

func recorded(tx *coord.Txn, id, with string) *coord.Conflict {
	t := tx.Task(id)
	if t == nil {
		return nil
	}
	for i := range t.Conflicts {
		if t.Conflicts[i].With == with {
			return &t.Conflicts[i]
		}
	}
	return nil
}

func anyDirty(tx *coord.Txn) bool {
	return slices.ContainsFunc(tx.Tasks, func(t *coord.Task) bool { return t.Dirty })
}

// TellConflicts returns the conflicts of agent's tasks in flight that it
// has not been told of, and marks them told, in one commit (none when
// there is nothing to tell: one read of the registry). The after-tool
// hooks put them into the agent's context.
func (s *Service) TellConflicts(ctx context.Context, agent string) ([]coord.Notice, error) {
	if err := coord.ValidActingAgent(agent); err != nil {
		return nil, err
	}
	some := false
	err := s.tasks().View(ctx, func(tx *coord.Txn) error {
		some = len(tx.Untold(agent)) > 0
		return nil
	})
	if err != nil || !some {
		return nil, interrupted(ctx, err)
	}
	var told []coord.Notice
	err = s.tasks().Update(ctx, func(tx *coord.Txn) error {
		told = tx.Tell(agent)
		return nil
	})
	return told, interrupted(ctx, err)
}
