package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/rotd/coordination/coord"
)

// One task, one branch. A task's work lives on its own branch
// (config task_branch, task/<id> by default). Taking a task (claim, run,
// inbox, the work a loop takes up again) in a linked worktree checks that
// branch out there: created from the target's tip for new work, the
// existing branch for work that comes back. A worktree with uncommitted
// changes is never switched: the take is refused and nothing is claimed.
// The main worktree (a person's checkout) is never switched; there a
// task records the branch its claimer stands on, as before.
//
// The caller's checkout is read before the commit that takes the task
// (placeEarly), the branch decided inside it (decide: no process runs
// under the registry's exclusion) and checked out after it (enter).

// Place is where the caller's worktree stands (Repo.Place).
type Place struct {
	Top    string // its top directory
	Linked bool   // a linked worktree, not the repository's main one
	Branch string // the branch checked out, full ref name ("" detached)
	Head   string // the commit checked out ("" on an unborn branch)
}

// placeReading is the caller's checkout as a take needs it, read in the
// background while the take loads the registry.
type placeReading struct {
	done chan struct{}
	s    *Service

	p Place
	// switching: takes here check the task's branch out (a linked
	// worktree with commits, a target to start from, task_branch on).
	switching bool
	dirty     []string // what the worktree holds that no commit does
	tip       string   // the target's tip (switching)
	base      string   // HEAD's merge base with the target (not switching)

	// what decide chose, for enter
	want, start string
}

// placeEarly starts reading where the caller stands (nil without a
// repository); decide waits for it.
func (s *Service) placeEarly(ctx context.Context) *placeReading {
	if s.repo == nil {
		return nil
	}
	r := &placeReading{done: make(chan struct{}), s: s}
	go func() {
		defer close(r.done)
		p, err := s.repo.Place(ctx)
		if err != nil {
			return // not a checkout coord can read: nothing recorded
		}
		r.p = p
		cfg := s.conf()
		if p.Head == "" {
			return // no commit yet: nothing to branch from
		}
		if p.Linked && cfg.TaskBranch != coord.TaskBranchOff {
			tip, err := s.targetTip(ctx)
			if err != nil {
				return // no target to start task branches from: nothing switched
			}
			dirty, err := s.repo.Dirty(ctx, p.Top)
			if err != nil {
				return
			}
			r.switching, r.tip, r.dirty = true, tip, dirty
			return
		}
		base, err := s.repo.MergeBase(ctx, "HEAD", cfg.TargetRef())
		if err == nil && coord.ValidCommit(base) {
			r.base = base
		}
	}()
	return r
}

// wait waits for the reading (a nil reading is no repository).
func (r *placeReading) wait() {
	if r != nil {
		<-r.done
	}
}

// decide records on t, inside the commit that takes it, where its work
// lives: switching, its own branch (the one it has, for work that comes
// back; else a new one named by task_branch) and the base it starts from;
// otherwise the caller's branch and base, for a fresh claim. It refuses
// (CodeConflict, naming the files) a take that would switch a worktree
// holding uncommitted changes. It is safe to run again (a commit that is
// retried).
func (r *placeReading) decide(t *coord.Task) error {
	if r == nil || t == nil {
		return nil
	}
	<-r.done
	r.want, r.start = "", ""
	target := coord.BranchRef(r.s.conf().Target)
	if !r.switching {
		if t.Status != coord.Claimed || t.Branch != "" || t.Base != "" {
			return nil // work taken up as it stands keeps what it has
		}
		if r.p.Branch != "" && r.p.Branch != target && coord.ValidBranch(r.p.Branch) == nil {
			t.Branch = r.p.Branch
		}
		t.Base = r.base
		t.Dirty = true
		return nil
	}
	branch := coord.BranchRef(t.Branch)
	if branch == "" || branch == target || coord.ValidBranch(branch) != nil {
		branch = coord.TaskBranch(r.s.conf().TaskBranch, t.ID)
	}
	if branch != r.p.Branch && len(r.dirty) > 0 {
		return coord.Errorf(coord.CodeConflict, "%s holds uncommitted changes (%s): task %s's branch %s is not checked out over them",
			r.p.Top, listSome(r.dirty), t.ID, coord.ShortBranch(branch)).
			WithHint("commit them on the branch they belong to, or stash them (git stash -u), then take the task again")
	}
	if t.Branch != branch {
		t.Branch, t.Dirty = branch, true
	}
	if t.Base == "" {
		t.Base, t.Dirty = r.tip, true
	}
	r.want, r.start = branch, r.tip
	return nil
}

// enter checks out in the caller's worktree the branch decide chose for
// t (nothing when it is checked out already, or nothing was chosen). A
// branch that another linked worktree holds checked out without changes
// is taken from it (that worktree is left on a detached HEAD: nothing in
// it is lost); one held with changes, or in the main worktree, is an
// error. undo, when set, gives back what the take claimed: the work is
// not here to be done.
func (s *Service) enter(ctx context.Context, r *placeReading, t *coord.Task, undo func(why string)) error {
	if r == nil || t == nil || r.want == "" || r.want == r.p.Branch {
		return nil
	}
	r.start = s.remoteStart(ctx, r.want, r.start)
	err := s.repo.SwitchTo(ctx, r.want, r.start)
	if err != nil {
		if freed, ferr := s.freeBranch(ctx, r); ferr != nil {
			err = ferr
		} else if freed {
			err = s.repo.SwitchTo(ctx, r.want, r.start)
		}
	}
	if err == nil {
		r.p.Branch = r.want
		return nil
	}
	why := fmt.Sprintf("its branch %s could not be checked out in %s: %s", coord.ShortBranch(r.want), r.p.Top, coord.OneLine(err.Error()))
	if undo != nil {
		undo(why)
	}
	return coord.Errorf(coord.CodeConflict, "task %s: %s", t.ID, why).
		WithHint("free the branch (or clean this worktree), then take the task again")
}

// freeBranch takes r.want from another linked worktree that has it
// checked out without uncommitted changes (detaching that worktree),
// and reports whether it did; a worktree with changes, or the main one,
// keeps it (an error saying so).
func (s *Service) freeBranch(ctx context.Context, r *placeReading) (bool, error) {
	list, err := s.repo.Worktrees(ctx)
	if err != nil {
		return false, nil
	}
	for i, w := range list {
		if coord.BranchRef(w.Branch) != r.want || w.Path == r.p.Top {
			continue
		}
		if i == 0 {
			return false, fmt.Errorf("the main worktree %s has it checked out", w.Path)
		}
		dirty, err := s.repo.Dirty(ctx, w.Path)
		if err != nil {
			return false, err
		}
		if len(dirty) > 0 {
			return false, fmt.Errorf("the worktree %s has it checked out with uncommitted changes (%s)", w.Path, listSome(dirty))
		}
		if err := s.repo.Detach(ctx, w.Path); err != nil {
			return false, err
		}
		s.warnf(fmt.Errorf("took branch %s from the worktree %s (left there on a detached HEAD, nothing lost)", coord.ShortBranch(r.want), w.Path))
		return true, nil
	}
	return false, nil
}

// takeBranch is where a task's work is read at a release: its branch's
// full name ("HEAD" for a task that records none: the caller's
// checkout).
func takeBranch(t *coord.Task) string {
	if b := coord.BranchRef(t.Branch); b != "" {
		return b
	}
	return "HEAD"
}

// summary is the release's default log text: the task's commits since
// base and what they changed, and the uncommitted changes of the
// caller's worktree when it stands on the released branch ("" when git
// cannot say).
func (s *Service) summary(ctx context.Context, base, head string, here bool) string {
	var parts []string
	if base != "" && head != "" {
		stat, n, err := s.repo.Shortstat(ctx, base, head)
		if err == nil {
			c := fmt.Sprintf("%d commits", n)
			if n == 1 {
				c = "1 commit"
			}
			if stat != "" {
				c += ": " + stat
			}
			parts = append(parts, c)
		}
	} else {
		parts = append(parts, "no commits")
	}
	if here {
		if stat, err := s.repo.UncommittedStat(ctx); err == nil && stat != "" {
			parts = append(parts, "uncommitted: "+stat)
		}
	}
	return strings.Join(parts, "; ")
}
