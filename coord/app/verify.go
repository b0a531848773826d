package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rotd/coordination/coord"
)

// Proof of checks and reviews pinned to a commit (docs/GIT.md). A check
// runs in the caller's worktree, run by the front end (coord verify);
// the application says which task it is for and on which tree it runs
// (StartVerify), and records how it ended (RecordReceipt). With
// require_verified, Release refuses unless the task's newest receipt
// passed on the tree being released (coord.Txn.CheckVerified): one rule
// for every front end. VoidMovedReviews sends back the reviewed work
// whose branch moved after the review.

// Verification is a check about to run: the task it is for, held by the
// caller at Ref.Epoch, and the tree of the caller's worktree it runs on.
type Verification struct {
	Ref  TaskRef
	Task *coord.Task
	Tree string
}

// StartVerify prepares a check by agent on taskID ("" : the one task the
// caller holds claimed): the task must be held by the caller (CodeLost
// otherwise), and the caller must stand in a git worktree of the project
// (CodeConflict otherwise: a receipt names a tree). The tree is computed
// now, before the check runs: a receipt says the check passed on what it
// started from, and a file changed while it ran makes the tree released
// differ from it.
func (s *Service) StartVerify(ctx context.Context, agent coord.Agent, taskID string) (Verification, error) {
	if err := coord.ValidActingAgent(agent.ID); err != nil {
		return Verification{}, err
	}
	if taskID != "" {
		if err := coord.ValidTaskID(taskID); err != nil {
			return Verification{}, err
		}
	}
	if taskID == "" {
		id, err := s.WorkingOn(ctx, agent.ID, "verify")
		if err != nil {
			return Verification{}, err
		}
		taskID = id
	}
	var v Verification
	err := s.tasks().View(ctx, func(tx *coord.Txn) error {
		id := taskID
		t, err := tx.Verifiable(agent.ID, id)
		if err != nil {
			return err
		}
		v = Verification{Ref: TaskRef{Agent: agent, TaskID: id, Epoch: t.Epoch}, Task: t}
		return nil
	})
	if err != nil {
		return Verification{}, interrupted(ctx, err)
	}
	if v.Tree, err = s.worktreeTree(ctx, "verify"); err != nil {
		return Verification{}, err
	}
	return v, nil
}

// worktreeTree is the tree of the caller's worktree (Repo.WorktreeTree),
// for what (verify, release): CodeConflict outside git, CodeIO when git
// fails.
func (s *Service) worktreeTree(ctx context.Context, what string) (string, error) {
	if s.repo == nil {
		return "", coord.Errorf(coord.CodeConflict, "%s: not in a git worktree of the project: a receipt is for a git tree", what).
			WithHint("run it in the task's worktree (coord worktree add AGENT makes one)")
	}
	tree, err := s.repo.WorktreeTree(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return "", interrupted(ctx, err)
		}
		var ce *coord.Error
		if errors.As(err, &ce) {
			return "", err
		}
		return "", coord.Wrap(coord.CodeIO, err, "%s: cannot compute the worktree's tree", what)
	}
	if !coord.ValidCommit(tree) {
		return "", coord.Errorf(coord.CodeIO, "%s: git gave %q for the worktree's tree", what, tree)
	}
	return tree, nil
}

// RecordReceipt records how the check v ended: its command line, exit
// status, how long it took and the end of its output (cut to
// coord.MaxNote). The task must still be held at the epoch the check
// started under (CodeLost otherwise: the receipt is not recorded).
func (s *Service) RecordReceipt(ctx context.Context, v Verification, cmd string, exit int, took time.Duration, tail string) (*coord.Task, error) {
	r := coord.NewReceipt(v.Tree, cmd, exit, took.Seconds(), tail, coord.FormatTime(s.clock()))
	return s.held(ctx, v.Ref, "", "", func(tx *coord.Txn) (*coord.Task, error) {
		return tx.AddReceipt(v.Ref.Agent.ID, v.Ref.TaskID, v.Ref.Epoch, r)
	})
}

// WorkingOn is the task agent works on when a command names none (what
// verify — and release, progress, block — act on): the one task it holds
// claimed, or, holding several, the one whose branch the caller's
// worktree has checked out. (Inside coord run the front end names
// COORD_TASK.) what names the command in a refusal.
func (s *Service) WorkingOn(ctx context.Context, agent, what string) (string, error) {
	if err := coord.ValidActingAgent(agent); err != nil {
		return "", err
	}
	var claimed []*coord.Task
	err := s.tasks().View(ctx, func(tx *coord.Txn) error {
		for _, t := range tx.HeldBy(agent) {
			if t.Status == coord.Claimed {
				claimed = append(claimed, t)
			}
		}
		return nil
	})
	if err != nil {
		return "", interrupted(ctx, err)
	}
	switch len(claimed) {
	case 0:
		return "", coord.Errorf(coord.CodeConflict, "%s holds no claimed task to %s", agent, what).
			WithHint("claim a task first, or name one you hold")
	case 1:
		return claimed[0].ID, nil
	}
	var ids []string
	for _, t := range claimed {
		ids = append(ids, t.ID)
	}
	if s.repo != nil {
		if here, err := s.repo.Place(ctx); err == nil && here.Branch != "" {
			for _, t := range claimed {
				if coord.BranchRef(t.Branch) == here.Branch {
					return t.ID, nil
				}
			}
		}
	}
	return "", coord.Errorf(coord.CodeUsage, "%s holds %d claimed tasks (%s), none of them on the branch checked out here: name the one to %s", agent, len(claimed), strings.Join(ids, ", "), what).
		WithHint("give its id (coord %s --task ID, or as the argument), or set COORD_TASK", what)
}

// ReleasedBy returns task id as it stands when agent released it at
// epoch (done or in review, its release agent's own), else nil: what a
// command coord run ran may have done itself.
func (s *Service) ReleasedBy(ctx context.Context, agent, id string, epoch int64) *coord.Task {
	var got *coord.Task
	s.tasks().View(ctx, func(tx *coord.Txn) error {
		if t := tx.Task(id); t != nil && t.ClaimedBy == agent && t.Epoch == epoch && (t.Status == coord.Done || t.Status == coord.Review) {
			got = t
		}
		return nil
	})
	return got
}

// Verified reports whether task id, held by agent, has a receipt that
// lets it be released now under require_verified (the newest receipt
// passed on the tree of the commit being released).
func (s *Service) Verified(ctx context.Context, agent coord.Agent, id string) (bool, error) {
	tree, here, err := s.releasedTrees(ctx, id)
	if err != nil {
		return false, err
	}
	ok := false
	err = s.tasks().View(ctx, func(tx *coord.Txn) error {
		ok = tx.CheckVerified(agent.ID, id, coord.NoEpoch, tree, here) == nil
		return nil
	})
	return ok, interrupted(ctx, err)
}

// LeftUncommitted lists what the caller's worktree holds that no commit
// does, when the caller stands in a linked worktree on task id's branch
// (none otherwise): work a release would not carry.
func (s *Service) LeftUncommitted(ctx context.Context, id string) ([]string, error) {
	if s.repo == nil {
		return nil, nil
	}
	here, err := s.repo.Place(ctx)
	if err != nil || !here.Linked || here.Branch == "" {
		return nil, nil
	}
	branch := ""
	err = s.tasks().View(ctx, func(tx *coord.Txn) error {
		if t := tx.Task(id); t != nil {
			branch = coord.BranchRef(t.Branch)
		}
		return nil
	})
	if err != nil || branch != here.Branch {
		return nil, interrupted(ctx, err)
	}
	dirty, err := s.repo.Dirty(ctx, here.Top)
	if err != nil {
		return nil, nil
	}
	return dirty, nil
}

// releasedTrees are, when require_verified asks for them ("", "" when
// not), the tree a release of task id hands over (the tree of the tip
// of the task's branch: what lands) and the tree of the caller's
// worktree as it stands (uncommitted changes included), for saying so
// when a receipt is for the latter.
func (s *Service) releasedTrees(ctx context.Context, id string) (released, here string, err error) {
	if !s.conf().RequireVerified {
		return "", "", nil
	}
	here, err = s.worktreeTree(ctx, "release (require_verified)")
	if err != nil {
		return "", "", err
	}
	ref := "HEAD"
	err = s.tasks().View(ctx, func(tx *coord.Txn) error {
		if t := tx.Task(id); t != nil {
			ref = takeBranch(t)
		}
		return nil
	})
	if err != nil {
		return "", "", interrupted(ctx, err)
	}
	tip, err := s.repo.Head(ctx, ref)
	if err != nil && ref != "HEAD" {
		tip, err = s.repo.Head(ctx, "HEAD")
	}
	if err != nil {
		return here, here, nil // no commit at all: the worktree is what there is
	}
	released, err = s.repo.TreeOf(ctx, tip)
	if err != nil {
		return "", "", coord.Wrap(coord.CodeIO, err, "release (require_verified): cannot read the tree of %s", shortID(tip))
	}
	return released, here, nil
}

// VoidMovedReviews finds the reviewed work whose branch moved after the
// review (coord.Task.ReviewPin: a task in review, at the head it was
// released at; an approved one not landed, at its reviewed_commit) and
// sends each back to its owner as claimed (coord.Txn.SendBack, counted
// as a rejection), with a note saying so, when coord.Txn.ReviewVoid
// says the review is void: the branch was rewritten past the pin, or has
// commits after it while its owner holds no other task on that branch.
// A reviewed commit the target already holds (reachable from it, or its
// changes merged by a squash or rebase) has landed and is left to
// Landed. It costs one read of the registry and one git rev-parse per
// branch with a review; branches this repository does not have are
// skipped. It returns the tasks sent back (none without a repository).
// watch and schedule call it each round; a lander calls it before it
// lands.
func (s *Service) VoidMovedReviews(ctx context.Context) ([]*coord.Task, error) {
	if s.repo == nil {
		return []*coord.Task{}, nil
	}
	type review struct{ id, branch, pin string }
	var reviews []review
	err := s.tasks().View(ctx, func(tx *coord.Txn) error {
		for _, t := range tx.Tasks {
			if pin := t.ReviewPin(); pin != "" {
				reviews = append(reviews, review{t.ID, t.Branch, pin})
			}
		}
		return nil
	})
	if err != nil || len(reviews) == 0 {
		return []*coord.Task{}, interrupted(ctx, err)
	}
	type move struct {
		review
		tip      string
		onBranch bool
	}
	var moves []move
	tips := map[string]string{}
	target := ""
	for _, r := range reviews {
		tip, ok := tips[r.branch]
		if !ok {
			tip, _ = s.repo.Head(ctx, coord.BranchRef(r.branch)) // "" : not in this repository
			tips[r.branch] = tip
		}
		if tip == "" || tip == r.pin {
			continue
		}
		onBranch, err := s.repo.IsAncestor(ctx, r.pin, tip)
		if err != nil {
			continue // the pinned commit is not here: nothing to judge it by
		}
		if target == "" {
			if target, err = s.repo.Head(ctx, s.conf().TargetRef()); err != nil {
				target = "-"
			}
		}
		if target != "-" {
			if landed, err := holds(ctx, s.repo, target, r.pin); err == nil && landed {
				continue
			}
		}
		moves = append(moves, move{r, tip, onBranch})
	}
	if len(moves) == 0 {
		return []*coord.Task{}, nil
	}
	var sent []*coord.Task
	err = s.tasks().Update(ctx, func(tx *coord.Txn) error {
		sent = sent[:0]
		for _, m := range moves {
			t := tx.Task(m.id)
			if t == nil || t.Branch != m.branch || t.ReviewPin() != m.pin {
				continue // decided or changed meanwhile
			}
			note := tx.ReviewVoid(t, m.tip, m.onBranch)
			if note == "" {
				continue
			}
			got, err := tx.SendBack(coord.CoordinatorID, m.id, note, s.conf().MaxRejections)
			if err != nil {
				return fmt.Errorf("void review of task %s: %w", m.id, err)
			}
			sent = append(sent, got)
		}
		return nil
	})
	if err != nil {
		return []*coord.Task{}, interrupted(ctx, err)
	}
	return nonNil(sent), nil
}
