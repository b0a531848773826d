package app

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rotd/coordination/coord"
)

// Worktrees for agents (docs/GIT.md): `coord worktree add` gives an
// agent a linked worktree on a branch of its own, started from the
// target, and records it as the agent's worktree and branch in the pool
// (the orchestrator's map of agent, worktree, branch and task); `remove`
// never throws away work that exists only there unless told to.

// WorktreeRequest asks for an agent's worktree.
type WorktreeRequest struct {
	Agent  string // the agent it is for
	Path   string // absolute; "": a sibling of the main worktree, <repo>-<agent>
	Branch string // "": coord/<agent>
	Host   string // the machine (recorded with the agent)
}

// WorktreeInfo is an agent's worktree as worktree add and list print it.
type WorktreeInfo struct {
	Agent  string `json:"agent"`
	Path   string `json:"path"`
	Branch string `json:"branch"`
	Base   string `json:"base,omitempty"` // the target's commit it started from (add)
	Head   string `json:"head,omitempty"` // the commit checked out (list)
}

// needRepo refuses a git-aware operation outside a repository.
func (s *Service) needRepo(what string) error {
	if s.repo == nil {
		return coord.Errorf(coord.CodeUsage, "%s needs a git repository, and this is not in one", what).
			WithHint("run it inside the project's git checkout")
	}
	return nil
}

// AddWorktree makes a linked worktree for an agent on a new branch from
// the target (git worktree add -b BRANCH PATH TARGET) and records it as
// the agent's worktree and branch in the pool, registering the agent as
// an implementer if it is not in the pool. A branch or path that exists,
// or an agent id a live agent holds from another worktree, refuses
// (CodeConflict) and leaves nothing behind.
func (s *Service) AddWorktree(ctx context.Context, r WorktreeRequest) (WorktreeInfo, error) {
	if err := coord.ValidAgentID(r.Agent); err != nil {
		return WorktreeInfo{}, err
	}
	if err := s.needRepo("worktree add"); err != nil {
		return WorktreeInfo{}, err
	}
	if r.Branch == "" {
		r.Branch = coord.WorktreeBranch(r.Agent)
	}
	if err := coord.CheckBranchName(r.Branch); err != nil {
		return WorktreeInfo{}, err
	}
	if r.Path != "" && !filepath.IsAbs(r.Path) {
		return WorktreeInfo{}, coord.Errorf(coord.CodeUsage, "worktree path %q is not absolute", r.Path)
	}
	list, err := s.repo.Worktrees(ctx)
	if err != nil {
		return WorktreeInfo{}, coord.Wrap(coord.CodeIO, err, "worktree add: cannot list the worktrees")
	}
	if r.Path == "" {
		if len(list) == 0 {
			return WorktreeInfo{}, coord.Errorf(coord.CodeIO, "worktree add: git lists no worktree")
		}
		main := list[0].Path
		r.Path = filepath.Join(filepath.Dir(main), filepath.Base(main)+"-"+r.Agent)
	}
	if err := coord.CheckPathText("worktree path", r.Path); err != nil {
		return WorktreeInfo{}, err
	}
	if common, err := s.repo.CommonDir(ctx); err == nil {
		if rel, err := filepath.Rel(common, r.Path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return WorktreeInfo{}, coord.Errorf(coord.CodeUsage, "worktree add: %s is inside the repository's git directory %s (coord's lander keeps its temporary checkouts there)", r.Path, common).
				WithHint("choose a path outside it, or leave --path out")
		}
	}
	base, err := s.repo.Head(ctx, s.conf().TargetRef())
	if err != nil {
		return WorktreeInfo{}, coord.Errorf(coord.CodeConflict, "worktree add: the target branch %q is not in this repository", s.conf().Target).
			WithHint("create it, or name the branch work lands on: coord config set target BRANCH")
	}
	if err := s.repo.AddWorktree(ctx, r.Path, r.Branch, base); err != nil {
		return WorktreeInfo{}, coord.Errorf(coord.CodeConflict, "worktree add: %v", err).
			WithHint("choose another --path or --branch, or remove the old worktree ('coord worktree remove %s')", r.Agent)
	}
	// Record the path as git names it, the form list and remove compare.
	path := r.Path
	if after, err := s.repo.Worktrees(ctx); err == nil {
		for _, w := range after {
			if w.Branch == r.Branch {
				path = w.Path
			}
		}
	}
	err = s.tasks().Update(ctx, func(tx *coord.Txn) error {
		var live map[string]bool
		if tx.Member(r.Agent) != nil {
			seen, now, err := s.b.Beats().LastSeen(ctx, []string{r.Agent})
			if err != nil {
				return err
			}
			live = tx.PoolLive(seen, now, s.conf().StaleAfter)
		}
		if _, err := tx.SetWorktree(r.Agent, r.Host, path, r.Branch, live); err != nil {
			return err
		}
		tx.Log(r.Agent, "worktree %s on branch %s from %s (%s)", path, r.Branch, s.conf().Target, shortID(base))
		return nil
	})
	if err != nil {
		// Nothing of the refused request stays behind: the worktree and
		// the branch it made go again.
		s.warnf(s.repo.RemoveWorktree(context.WithoutCancel(ctx), path, true))
		s.warnf(s.repo.DeleteBranch(context.WithoutCancel(ctx), r.Branch, true))
		return WorktreeInfo{}, interrupted(ctx, err)
	}
	return WorktreeInfo{Agent: r.Agent, Path: path, Branch: r.Branch, Base: base}, nil
}

func shortID(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// ListWorktrees lists the repository's linked worktrees (the main one
// aside) with the agent whose pool record names each ("" for none).
func (s *Service) ListWorktrees(ctx context.Context) ([]WorktreeInfo, error) {
	if err := s.needRepo("worktree list"); err != nil {
		return nil, err
	}
	list, err := s.repo.Worktrees(ctx)
	if err != nil {
		return nil, coord.Wrap(coord.CodeIO, err, "worktree list: cannot list the worktrees")
	}
	byPath := map[string]string{}
	err = s.tasks().View(ctx, func(tx *coord.Txn) error {
		for _, p := range tx.Pool {
			if p.Worktree != "" {
				byPath[p.Worktree] = p.ID
			}
		}
		return nil
	})
	if err != nil {
		return nil, interrupted(ctx, err)
	}
	var out []WorktreeInfo
	for i, w := range list {
		if i == 0 {
			continue // the main worktree
		}
		out = append(out, WorktreeInfo{Agent: byPath[w.Path], Path: w.Path, Branch: w.Branch, Head: w.Head})
	}
	return nonNil(out), nil
}

// RemoveRequest removes an agent's worktree.
type RemoveRequest struct {
	Agent string
	Force bool // remove it with whatever it holds that no commit on the target does
}

// RemoveResult is what worktree remove did.
type RemoveResult struct {
	Agent         string `json:"agent"`
	Path          string `json:"path"`
	Branch        string `json:"branch"`
	BranchDeleted bool   `json:"branch_deleted"`
	// Kept says why the branch was kept ("": deleted, or none).
	Kept string `json:"kept,omitempty"`
	// Rescued is the branch made to keep commits no branch held (a
	// detached HEAD, a rebase under way), removed with --force.
	Rescued string `json:"rescued,omitempty"`
}

// liveHolder is a task agent holds claimed while it is alive (its beat
// within stale_after), "" when there is none.
func (s *Service) liveHolder(ctx context.Context, agent string) (string, error) {
	held := ""
	err := s.tasks().View(ctx, func(tx *coord.Txn) error {
		for _, t := range tx.HeldBy(agent) {
			if t.Status == coord.Claimed {
				held = t.ID
				return nil
			}
		}
		return nil
	})
	if err != nil || held == "" {
		return "", interrupted(ctx, err)
	}
	seen, now, err := s.b.Beats().LastSeen(ctx, []string{agent})
	if err != nil {
		return "", interrupted(ctx, err)
	}
	if at, ok := seen[agent]; !ok || now.Sub(at) > s.conf().StaleAfter {
		return "", nil
	}
	return held, nil
}

// maxListed bounds the files and commits a refusal names.
const maxListed = 5

// RemoveWorktree removes an agent's worktree: the one its pool record
// names, else the linked worktree on its branch (coord/<agent>). Unless
// Force, it refuses (CodeConflict, naming what would be lost) while the
// worktree has uncommitted changes (untracked files included) or its
// branch has commits the target lacks. It removes the worktree's
// directory (git worktree remove), deletes the branch only when the
// target holds all of it, and clears the agent's pool record of it.
func (s *Service) RemoveWorktree(ctx context.Context, r RemoveRequest) (RemoveResult, error) {
	if err := coord.ValidAgentID(r.Agent); err != nil {
		return RemoveResult{}, err
	}
	if err := s.needRepo("worktree remove"); err != nil {
		return RemoveResult{}, err
	}
	list, err := s.repo.Worktrees(ctx)
	if err != nil {
		return RemoveResult{}, coord.Wrap(coord.CodeIO, err, "worktree remove: cannot list the worktrees")
	}
	recorded := ""
	err = s.tasks().View(ctx, func(tx *coord.Txn) error {
		if p := tx.Member(r.Agent); p != nil {
			recorded = p.Worktree
		}
		return nil
	})
	if err != nil {
		return RemoveResult{}, interrupted(ctx, err)
	}
	var w *Worktree
	for i := range list {
		if i > 0 && (list[i].Path == recorded && recorded != "" || w == nil && list[i].Branch == coord.WorktreeBranch(r.Agent)) {
			w = &list[i]
		}
	}
	if w == nil {
		if recorded != "" && len(list) > 0 && recorded == list[0].Path {
			return RemoveResult{}, coord.Errorf(coord.CodeConflict, "worktree remove: agent %s works in the main worktree %s, which is never removed", r.Agent, recorded)
		}
		return RemoveResult{}, coord.Errorf(coord.CodeConflict, "worktree remove: agent %s has no linked worktree", r.Agent).
			WithHint("'coord worktree list' shows them")
	}
	res := RemoveResult{Agent: r.Agent, Path: w.Path, Branch: w.Branch}
	// An agent at work there keeps its worktree, --force or not: its
	// claimed task's work lives in it.
	if held, err := s.liveHolder(ctx, r.Agent); err != nil {
		return res, err
	} else if held != "" {
		return res, coord.Errorf(coord.CodeConflict, "worktree remove: agent %s is alive and holds task %s, whose work is in %s", r.Agent, held, w.Path).
			WithHint("let it finish, or take the task from it first: coord requeue %s --reason R", held)
	}
	// Commits only the worktree's HEAD holds (a detached HEAD, a rebase
	// under way) are lost with it unless a branch keeps them.
	only, err := s.repo.OnlyHere(ctx, w.Path, 0)
	if err != nil {
		return res, coord.Wrap(coord.CodeIO, err, "worktree remove: cannot read the commits of %s", w.Path)
	}
	op, err := s.repo.InProgress(ctx, w.Path)
	if err != nil {
		return res, coord.Wrap(coord.CodeIO, err, "worktree remove: cannot read the state of %s", w.Path)
	}
	var unmerged []string
	if w.Branch != "" {
		s.fetch(ctx) // with a remote, work pushed there and not landed is not on the target
		if unmerged, err = s.repo.Unmerged(ctx, coord.BranchRef(w.Branch), s.conf().TargetRef(), 0); err != nil {
			return res, coord.Wrap(coord.CodeIO, err, "worktree remove: cannot compare %s with %s", w.Branch, s.conf().Target)
		}
	}
	if !r.Force {
		dirty, err := s.repo.Dirty(ctx, w.Path)
		if err != nil {
			return res, coord.Wrap(coord.CodeIO, err, "worktree remove: cannot read the state of %s", w.Path)
		}
		var lost []string
		if len(dirty) > 0 {
			lost = append(lost, fmt.Sprintf("uncommitted changes (%s)", listSome(dirty)))
		}
		if len(unmerged) > 0 {
			lost = append(lost, fmt.Sprintf("%d commit(s) not on %s (%s)", len(unmerged), s.conf().Target, listSome(unmerged)))
		}
		if len(only) > 0 {
			lost = append(lost, fmt.Sprintf("%d commit(s) no branch holds (%s)", len(only), listSome(only)))
		}
		if op != "" {
			lost = append(lost, op+" under way")
		}
		if len(lost) > 0 {
			return res, coord.Errorf(coord.CodeConflict, "worktree remove: %s holds work that exists only there: %s", w.Path, strings.Join(lost, "; ")).
				WithHint("commit it and land it on %s first, or remove anyway with --force (uncommitted changes are lost; the branch and its commits are kept)", s.conf().Target)
		}
	}
	if len(only) > 0 {
		// Forced: the commits no branch holds get one, never lost.
		rescue := fmt.Sprintf("coord/rescue/%s-%s", r.Agent, strings.Fields(only[0])[0])
		head := ""
		for _, x := range list {
			if x.Path == w.Path {
				head = x.Head
			}
		}
		if err := s.repo.CreateBranch(ctx, rescue, head); err != nil {
			return res, coord.Wrap(coord.CodeIO, err, "worktree remove: cannot keep the commits of %s on a branch", w.Path)
		}
		res.Rescued = rescue
	}
	if err := s.repo.RemoveWorktree(ctx, w.Path, r.Force); err != nil {
		return res, coord.Errorf(coord.CodeConflict, "worktree remove: %v", err)
	}
	switch {
	case w.Branch == "":
	case len(unmerged) > 0:
		res.Kept = fmt.Sprintf("%d commit(s) not on %s", len(unmerged), s.conf().Target)
	default:
		if err := s.repo.DeleteBranch(ctx, w.Branch, true); err != nil {
			res.Kept = err.Error()
		} else {
			res.BranchDeleted = true
		}
	}
	// The agent's home branch (worktree add's), left behind when a task's
	// branch was checked out over it, goes too when the target holds it.
	if home := coord.WorktreeBranch(r.Agent); home != w.Branch {
		if _, err := s.repo.Head(ctx, coord.BranchRef(home)); err == nil {
			if left, err := s.repo.Unmerged(ctx, coord.BranchRef(home), coord.BranchRef(s.conf().Target), 1); err == nil && len(left) == 0 {
				s.warnf(s.repo.DeleteBranch(ctx, home, true))
			}
		}
	}
	err = s.tasks().Update(ctx, func(tx *coord.Txn) error {
		tx.ForgetWorktree(r.Agent, w.Path)
		what := "branch " + w.Branch + " deleted"
		if !res.BranchDeleted {
			what = "branch " + w.Branch + " kept"
			if res.Kept != "" {
				what += ": " + res.Kept
			}
		}
		tx.Log(r.Agent, "removed worktree %s (%s)", w.Path, what)
		return nil
	})
	return res, interrupted(ctx, err)
}

// listSome names the first few of items and how many more there are.
func listSome(items []string) string {
	if len(items) <= maxListed {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:maxListed], ", ") + fmt.Sprintf(" and %d more", len(items)-maxListed)
}
