package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rotd/coordination/coord"
)

// Many machines, one target. With config "remote" every machine works
// in its own clone; the backend (a hub) carries the claims and the
// remote carries the commits. The target is the remote's branch, read
// through its remote-tracking ref (coord.Config.TargetRef) after a
// fetch: a task's branch starts from the remote target's tip (fetched
// first), a release pushes the task's branch before it records the
// head, conflicts and the lander fetch the branches they judge, and the
// lander moves the remote's target by compare-and-swap (Lander.MoveTarget
// of a Lander that is also a Remote). A remote that does not answer
// costs a warning where a reader can go on with what it fetched last,
// refuses a release (nothing recorded that the remote lacks), and stops
// a lander with one line: a watching lander waits, tries again with a
// growing pause, and goes on by itself once the remote answers.

// ErrRemoteUnreachable is what a Remote's errors wrap when the remote
// did not answer (down, unknown, a network or credentials failure).
var ErrRemoteUnreachable = errors.New("the remote did not answer")

// Remote is the caller's repository's link to the project's remote: a
// Repo (or a Lander) that has one implements it.
type Remote interface {
	// Fetch brings target and branches (full ref names) from remote
	// into their remote-tracking refs, a branch the remote lacks left
	// out, and returns the remote's target tip.
	Fetch(ctx context.Context, remote, target string, branches []string) (string, error)
	// Push sets branch on remote to commit.
	Push(ctx context.Context, remote, branch, commit string) error
}

// remote is the caller's link to the project's remote and its name
// (nil without one).
func (s *Service) remote() (Remote, string) {
	name := s.conf().Remote
	if name == "" || s.repo == nil {
		return nil, ""
	}
	r, ok := s.repo.(Remote)
	if !ok {
		return nil, ""
	}
	return r, name
}

// fetch brings the target and branches from the project's remote, when
// it has one; a remote that does not answer costs a warning (what was
// fetched last is read), and reports false.
func (s *Service) fetch(ctx context.Context, branches ...string) bool {
	r, name := s.remote()
	if r == nil {
		return true
	}
	if _, err := r.Fetch(ctx, name, s.conf().Target, branches); err != nil {
		if ctx.Err() == nil {
			s.warnf(fmt.Errorf("%w (what was fetched from it last is used)", err))
		}
		return false
	}
	return true
}

// pushWork pushes head, task id's work, to the task's branch on the
// project's remote (nothing without one). A push that fails is an error:
// a release records no head the remote does not hold.
func (s *Service) pushWork(ctx context.Context, id, head string) error {
	r, name := s.remote()
	if r == nil || head == "" {
		return nil
	}
	var branch string
	err := s.tasks().View(ctx, func(tx *coord.Txn) error {
		if t := tx.Task(id); t != nil {
			branch = coord.PushBranch(s.conf().TaskBranch, t)
		}
		return nil
	})
	if err != nil || branch == "" {
		return interrupted(ctx, err)
	}
	if err := r.Push(ctx, name, branch, head); err != nil {
		if ctx.Err() != nil {
			return interrupted(ctx, err)
		}
		var ce *coord.Error
		if errors.As(err, &ce) {
			return coord.Wrap(ce.Code, err, "release: task %s's branch %s was not pushed to %s, so nothing was recorded", id, coord.ShortBranch(branch), name)
		}
		return coord.Wrap(coord.CodeIO, err, "release: task %s's branch %s was not pushed to %s, so nothing was recorded", id, coord.ShortBranch(branch), name).
			WithHint("try 'git push %s %s' to see why, then release again", name, coord.ShortBranch(branch))
	}
	return nil
}

// remoteStart is where a task's branch that this clone lacks starts:
// the remote's branch when the remote has it (work that comes back to
// another machine), else start.
func (s *Service) remoteStart(ctx context.Context, branch, start string) string {
	r, name := s.remote()
	if r == nil {
		return start
	}
	if _, err := s.repo.Head(ctx, branch); err == nil {
		return start // this clone has it: checked out as it stands
	}
	s.fetch(ctx, branch)
	if tip, err := s.repo.Head(ctx, coord.RemoteRef(name, branch)); err == nil {
		return tip
	}
	return start
}

// targetTip is the target's tip a new task branch starts from: with a
// remote, the remote's, fetched first.
func (s *Service) targetTip(ctx context.Context) (string, error) {
	s.fetch(ctx)
	return s.repo.Head(ctx, s.conf().TargetRef())
}

// FetchInFlight brings the target and the branches of the tasks in
// flight from the project's remote (nothing without one): what watch
// does before it judges conflicts and landings. It reports whether the
// remote answered.
func (s *Service) FetchInFlight(ctx context.Context) bool {
	if r, _ := s.remote(); r == nil {
		return true
	}
	return s.fetch(ctx, s.inFlightBranches(ctx, false)...)
}

// inFlightBranches are the branches (full names) of the tasks in
// flight whose work was released at least once (pushed: the remote has
// them); landable, only those the lander would take.
func (s *Service) inFlightBranches(ctx context.Context, landable bool) []string {
	var out []string
	s.tasks().View(ctx, func(tx *coord.Txn) error {
		out = out[:0]
		for _, t := range tx.Tasks {
			switch {
			case t.Head == "":
				continue
			case landable && !t.Landable(s.conf().ReviewGate):
				continue
			case !landable && !t.InFlight():
				continue
			}
			out = append(out, coord.PushBranch(s.conf().TaskBranch, t))
		}
		return nil
	})
	return out
}

// fetchQueue brings the target and the branches of the landable tasks
// from the remote when the lander has one: their heads are then in this
// clone, whichever machine released them.
func (ln *lander) fetchQueue(ctx context.Context) error {
	r, ok := ln.l.(Remote)
	name := ln.s.conf().Remote
	if !ok || name == "" {
		return nil
	}
	_, err := r.Fetch(ctx, name, ln.s.conf().Target, ln.s.inFlightBranches(ctx, true))
	return err
}

// remoteDown is a watching lander's answer to a remote that did not
// answer: it says so once (one line naming the remote and the fix),
// waits a pause that grows with each failed pass (up to half a minute)
// and returns nil to pass again; the ctx's error when it ends meanwhile.
// Nothing is lost: the tasks stay landable and the target as it was.
func (ln *lander) remoteDown(ctx context.Context, err error) error {
	if ln.downSince.IsZero() {
		ln.downSince = time.Now()
		ln.pause = time.Second
		if ln.req.OnRemote != nil {
			ln.req.OnRemote(err, false)
		} else {
			ln.s.warnf(fmt.Errorf("landing stopped: %w", err))
		}
	} else {
		ln.pause = min(2*ln.pause, 30*time.Second)
	}
	ln.seen = nil // look at the whole queue again once it answers
	select {
	case <-time.After(ln.pause):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// remoteUp tells, once after remoteDown, that the remote answers again.
func (ln *lander) remoteUp() {
	if ln.downSince.IsZero() {
		return
	}
	ln.downSince, ln.pause = time.Time{}, 0
	if ln.req.OnRemote != nil {
		ln.req.OnRemote(nil, true)
	}
}

// RemoteFetchEvery is how often a long-running scan (watch's conflict
// scanner) fetches from the project's remote.
const RemoteFetchEvery = 5 * time.Second

// targetToMerge is what an owner merges into a branch sent back: the
// target, or with a remote its remote-tracking branch (origin/main).
func (s *Service) targetToMerge() string {
	if r := s.conf().Remote; r != "" {
		return r + "/" + s.conf().Target
	}
	return s.conf().Target
}

// fetchAbsent fetches again, at most every RemoteFetchEvery, while the
// lander waits for heads its clone lacks.
func (ln *lander) fetchAbsent(ctx context.Context) {
	if len(ln.absent) == 0 || time.Since(ln.fetchedAbsent) < RemoteFetchEvery {
		return
	}
	ln.fetchedAbsent = time.Now()
	ln.fetchQueue(ctx)
}
