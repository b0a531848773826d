package app

import (
	"context"
	"fmt"
	"sync"

	"github.com/rotd/coordination/coord"
)

// Where a task's work lives and when it has landed (docs/GIT.md). The
// caller's repository (Options.Repo) is asked before a commit, never
// inside one: git's answers are facts about the caller's checkout, and
// the registry's exclusion is not held while a process runs. Everything
// here is best effort: a repository that cannot answer costs a warning,
// never a claim, a release or a write.

// released is what a release records of a task's work: head, the tip
// of its branch when that has commits of its own against the target;
// changed, the paths those commits changed; summary, the log's text
// when the caller gave none.
type released struct {
	head    string
	changed []string
	summary string
}

// workDone reads what a release of task id by agent records of its work:
// the tip of the task's branch (for a task that records none, the
// caller's HEAD), wherever the caller stands, and, when wantSummary, a
// summary of its commits since its base and of the caller's uncommitted
// changes on it. A release from a linked worktree that stands on another
// branch (or a detached HEAD) holding commits the task's branch lacks is
// refused (CodeConflict, naming the command that moves them over): those
// commits would never land. Outside git it records nothing.
func (s *Service) workDone(ctx context.Context, id string, wantSummary bool) (released, error) {
	var out released
	if s.repo == nil {
		return out, nil
	}
	var t coord.Task
	err := s.tasks().View(ctx, func(tx *coord.Txn) error {
		if cur := tx.Task(id); cur != nil {
			t = *cur
		}
		return nil
	})
	if err != nil || t.ID == "" {
		return out, nil // the release itself will say what is wrong
	}
	target := s.conf().TargetRef()
	ref := takeBranch(&t)
	here, _ := s.repo.Place(ctx)
	head, err := s.repo.Head(ctx, ref)
	if err != nil && ref != "HEAD" {
		if ref == coord.TaskBranch(s.conf().TaskBranch, t.ID) {
			s.warnf(fmt.Errorf("task %s's branch %s is not in this repository: no work recorded to land", t.ID, coord.ShortBranch(ref)))
			return out, nil
		}
		ref = "HEAD" // a branch the claimer stood on, gone, or in another clone
		head, err = s.repo.Head(ctx, ref)
	}
	if err != nil || !coord.ValidCommit(head) {
		return out, nil // no commit at all: nothing to land
	}
	if err := s.strayCommits(ctx, &t, here, head, target); err != nil {
		return out, err
	}
	base, err := s.repo.MergeBase(ctx, head, target)
	if err != nil {
		base = "" // no target here: nothing to measure the work by
	}
	onIt := here.Branch != "" && (here.Branch == coord.BranchRef(t.Branch) || ref == "HEAD")
	if wantSummary {
		if base == head || base == "" {
			out.summary = s.summary(ctx, "", "", onIt)
		} else {
			out.summary = s.summary(ctx, base, head, onIt)
		}
	}
	if base == head || base == "" {
		// Nothing of its own to land (or nothing shared with the target
		// to measure it by): no head, nothing held after the release.
		return out, nil
	}
	changed, err := s.repo.ChangedPaths(ctx, base, head)
	if err != nil {
		s.warnf(fmt.Errorf("cannot list the paths the work changed: %w", err))
		return out, nil
	}
	for _, p := range changed {
		if c, err := coord.CleanRepoPath(p); err == nil && c == p {
			out.changed = append(out.changed, p)
		}
	}
	out.head = head
	return out, nil
}

// strayCommits refuses the release of t from a linked worktree that
// stands elsewhere than t's branch (at head) with commits neither that
// branch nor the target holds: work that would never land.
func (s *Service) strayCommits(ctx context.Context, t *coord.Task, here Place, head, target string) error {
	branch := coord.BranchRef(t.Branch)
	if !here.Linked || branch == "" || here.Branch == branch || here.Head == "" || here.Head == head {
		return nil
	}
	if ok, err := s.repo.IsAncestor(ctx, here.Head, head); err != nil || ok {
		return nil
	}
	if tip, err := s.repo.Head(ctx, target); err == nil {
		if ok, err := holds(ctx, s.repo, tip, here.Head); err != nil || ok {
			return nil
		}
	}
	where, from := "a detached HEAD ("+shortID(here.Head)+")", shortID(here.Head)
	if here.Branch != "" {
		where, from = coord.ShortBranch(here.Branch), coord.ShortBranch(here.Branch)
	}
	return coord.Errorf(coord.CodeConflict, "release: %s stands on %s, not on task %s's branch %s, with commits that branch lacks: they would not land",
		here.Top, where, t.ID, coord.ShortBranch(branch)).
		WithHint("git switch %s && git merge %s, then release again", coord.ShortBranch(branch), from)
}

// finished are the done tasks whose work is not known to have landed
// (in flight, with a head), by id.
func finished(tx *coord.Txn) map[string]string {
	var heads map[string]string
	for _, t := range tx.Tasks {
		if t.Status == coord.Done && t.InFlight() {
			if heads == nil {
				heads = map[string]string{}
			}
			heads[t.ID] = t.Head
		}
	}
	return heads
}

// doneClaims are the finished tasks (done, with a head) among the write
// claims hits name: the ones whose work may have landed since, by id.
func doneClaims(tx *coord.Txn, hits []coord.GuardHit) map[string]string {
	var out map[string]string
	for _, h := range hits {
		if h.Claimed == "" || h.Status != coord.Done {
			continue
		}
		if t := tx.Task(h.TaskID); t != nil && t.Head != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[t.ID] = t.Head
		}
	}
	return out
}

// landedAmong asks the caller's repository which of the heads (task id
// to head) the target holds, and the target's tip: a head reachable from
// the target, or whose changes the target already holds (a squash or
// rebase merge: merging it would change nothing). A head the repository
// does not have (work from another machine) has not landed as far as
// this caller can tell. Heads found not landed are remembered until the
// target moves, so a caller that asks every round (watch) runs git for
// the target's tip alone while nothing lands.
func (s *Service) landedAmong(ctx context.Context, heads map[string]string) (landed map[string]string, tip string) {
	if s.repo == nil || len(heads) == 0 {
		return nil, ""
	}
	tip, err := s.repo.Head(ctx, s.conf().TargetRef())
	if err != nil {
		return nil, ""
	}
	s.notLanded.Lock()
	defer s.notLanded.Unlock()
	if s.notLanded.tip != tip {
		s.notLanded.tip, s.notLanded.heads = tip, map[string]bool{}
	}
	for id, head := range heads {
		if s.notLanded.heads[head] {
			continue
		}
		if ok, err := holds(ctx, s.repo, tip, head); err != nil || !ok {
			s.notLanded.heads[head] = true
			continue
		}
		if landed == nil {
			landed = map[string]string{}
		}
		landed[id] = head
	}
	return landed, tip
}

// ancestry is what holds asks of a repository (Repo and Lander have it).
type ancestry interface {
	IsAncestor(ctx context.Context, a, b string) (bool, error)
	Contains(ctx context.Context, into, commit string) (bool, error)
}

// holds is the one rule for "the target already has this work": commit
// is reachable from tip, or tip already holds all it changed (a squash
// or rebase merge: merging it would change nothing). Write claims
// (landedAmong), review voids and the lander all judge landing by it.
func holds(ctx context.Context, r ancestry, tip, commit string) (bool, error) {
	ok, err := r.IsAncestor(ctx, commit, tip)
	if err == nil && !ok {
		ok, err = r.Contains(ctx, tip, commit)
	}
	return ok, err
}

// notLanded remembers the heads found not landed on the target at tip.
type notLanded struct {
	sync.Mutex
	tip   string
	heads map[string]bool
}

// recordLanded records, inside a commit, the landings found before it.
func (s *Service) recordLanded(tx *coord.Txn, landed map[string]string, tip string) {
	for id, head := range landed {
		tx.Landed(id, head, tip, s.conf().Target)
	}
}

// Landed checks the finished tasks whose work is not known to have
// landed (done, with a head) against the caller's repository, and
// records in one commit those whose head the target now reaches: their
// write claims are free. It returns their ids (none without a
// repository). watch, schedule and conflicts call it as they pass; the
// edit hooks, lock-file and guard call it for the claims they meet.
func (s *Service) Landed(ctx context.Context) ([]string, error) {
	if s.repo == nil {
		return []string{}, nil
	}
	var heads map[string]string
	err := s.tasks().View(ctx, func(tx *coord.Txn) error {
		heads = finished(tx)
		return nil
	})
	if err != nil {
		return nil, interrupted(ctx, err)
	}
	landed, tip := s.landedAmong(ctx, heads)
	if len(landed) == 0 {
		return []string{}, nil
	}
	var ids []string
	err = s.tasks().Update(ctx, func(tx *coord.Txn) error {
		ids = ids[:0]
		for id, head := range landed {
			if tx.Landed(id, head, tip, s.conf().Target) {
				ids = append(ids, id)
			}
		}
		return nil
	})
	return nonNil(ids), interrupted(ctx, err)
}

// WriteClaim is the edit hooks' check before agent writes paths
// (repository paths): the paths are claimed for the task agent holds, all
// or nothing, or the write is refused (CodeConflict) when another agent
// holds one of them (coord.Txn.WriteClaim); the plan's hits name every
// holder met, and those with Warn set did not refuse. A write to paths
// the task already claimed, or by an agent holding no task, commits
// nothing: one read of the registry. A refusal by finished work is
// checked against the caller's repository first: work that has landed
// since frees its claims (recorded), and the write is judged again.
func (s *Service) WriteClaim(ctx context.Context, agent string, paths []string) (coord.WriteClaimPlan, error) {
	return s.WriteClaimFor(ctx, agent, coord.Working{}, paths)
}

// WriteClaimFor is WriteClaim for the task on says the write is for
// (COORD_TASK inside coord run, else the task whose branch the writer's
// worktree has checked out).
func (s *Service) WriteClaimFor(ctx context.Context, agent string, on coord.Working, paths []string) (coord.WriteClaimPlan, error) {
	if err := coord.ValidActingAgent(agent); err != nil {
		return coord.WriteClaimPlan{}, err
	}
	paths, err := cleanPaths(paths)
	if err != nil {
		return coord.WriteClaimPlan{}, err
	}
	var plan coord.WriteClaimPlan
	var done map[string]string
	err = s.tasks().View(ctx, func(tx *coord.Txn) error {
		plan = tx.PlanWriteClaim(agent, on, paths)
		done = doneClaims(tx, plan.Refused())
		return nil
	})
	if err != nil {
		return coord.WriteClaimPlan{}, interrupted(ctx, err)
	}
	if plan.Lost != "" {
		return plan, coord.Errorf(coord.CodeLost, "write refused: %s", plan.Lost).WithHint("stop working on it; take other work (coord run, coord claim)")
	} // (the same refusal as coord.Txn.Fenced, from the plan's reading)
	refused := plan.Refused()
	landed, tip := s.landedAmong(ctx, done)
	if len(refused) == 0 && len(plan.New) == 0 {
		return plan, nil // the fast path: nothing to claim, nobody met
	}
	if len(refused) > 0 && len(landed) == 0 {
		return plan, coord.RefuseWrite(refused)
	}
	var refusal error
	err = s.tasks().Update(ctx, func(tx *coord.Txn) error {
		s.recordLanded(tx, landed, tip)
		// A refused write changes nothing: the landings found are
		// committed all the same, and the refusal returned after.
		plan, refusal = tx.WriteClaim(agent, on, paths)
		return nil
	})
	if err != nil {
		return plan, interrupted(ctx, err)
	}
	return plan, refusal
}

// WriteClaims lists the write claims in force (coord.Txn.WriteClaimsInForce).
func (s *Service) WriteClaims(ctx context.Context) ([]coord.WriteClaimRow, error) {
	var out []coord.WriteClaimRow
	err := s.tasks().View(ctx, func(tx *coord.Txn) error {
		out = tx.WriteClaimsInForce()
		return nil
	})
	return nonNil(out), interrupted(ctx, err)
}
