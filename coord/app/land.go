package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/internal/check"
)

// Landing (docs/GIT.md): finished work merged onto the target branch,
// one task at a time, by one lander at a time (the coord-land lease).
// For each landable task (coord.Txn.LandQueue: dependencies first, then
// by completion): work the target already holds is recorded landed (the
// recovery of a lander stopped between moving the target and recording
// it: never landed twice); else the task's head is merged with the
// target in the object database; a conflict sends the task back to its
// owner naming the files; a clean merge makes the candidate (the head
// itself when the target's tip is on its first-parent chain: a
// fast-forward; else a merge commit "coord: land task ID: TITLE" with
// the target as first parent, so that the target's first-parent history
// is its landings, also when a branch merged the target in); the check
// runs on it in a temporary worktree, a failure sends the task back
// with the check's last lines, and a pass moves the target from
// the tip merged to the candidate in one compare-and-swap. A target that
// moved meanwhile is merged again (and checked again), never
// overwritten. Only after the target moved is the landing recorded, in
// one registry commit that frees the task's write claims.

// Lander is the caller's repository as the lander needs it. The
// application never runs git or the check itself: the front end passes
// one (cmd/coord wires package gitrepo).
type Lander interface {
	// Head is the commit ref names.
	Head(ctx context.Context, ref string) (string, error)
	// IsAncestor reports whether a is an ancestor of b (or b itself).
	IsAncestor(ctx context.Context, a, b string) (bool, error)
	// OnFirstParents reports whether tip is on head's first-parent
	// chain: a fast-forward to head keeps the target's first-parent
	// history a list of landings.
	OnFirstParents(ctx context.Context, tip, head string) (bool, error)
	// Contains reports whether into already holds everything commit
	// changed (merging it would change nothing).
	Contains(ctx context.Context, into, commit string) (bool, error)
	// Merge merges head into target without touching any worktree: the
	// merged tree, or the conflicted files (project paths).
	Merge(ctx context.Context, target, head string) (LandMerge, error)
	// CommitMerge makes a commit of tree with parents and msg, touching
	// no worktree and no ref.
	CommitMerge(ctx context.Context, tree string, parents []string, msg string) (string, error)
	// MoveTarget moves branch from old to new in one compare-and-swap;
	// an error wrapping ErrTargetMoved when branch is no longer at old.
	MoveTarget(ctx context.Context, branch, new, old, reason string) error
	// Checkout makes a temporary detached worktree holding commit (named
	// after name) and returns its directory.
	Checkout(ctx context.Context, name, commit string) (string, error)
	// RemoveCheckout removes a temporary worktree Checkout made.
	RemoveCheckout(ctx context.Context, dir string) error
	// CleanCheckouts removes every temporary worktree a lander left
	// behind, and returns how many.
	CleanCheckouts(ctx context.Context) (int, error)
	// Check runs the shell command line cmd in dir with env added,
	// bounded by timeout.
	Check(ctx context.Context, dir, cmd string, env []string, timeout time.Duration) (check.Result, error)
}

// LandMerge is a merge of a task's work with the target.
type LandMerge struct {
	Tree     string
	Conflict bool
	Files    []string
}

// ErrTargetMoved is what Lander.MoveTarget wraps when the target moved
// since it was read.
var ErrTargetMoved = errors.New("the target moved")

// DefaultLandTimeout bounds one run of the land check when the caller
// sets none: a check that runs longer is killed (with its process group)
// and counts as failed.
const DefaultLandTimeout = 30 * time.Minute

// LandLeaseTTL is the lifetime of the lander's lease; the lander renews
// it every LandLeaseTTL/4 while it works, so a lander that dies frees
// the landing within LandLeaseTTL.
const LandLeaseTTL = 2 * time.Minute

// maxLandRetries bounds how often one task is merged again because the
// target moved under the lander.
const maxLandRetries = 20

// LandRequest is what coord land asks.
type LandRequest struct {
	// Agent is who lands (the lease's holder, the send-backs' author).
	Agent string
	// Tasks, when set, are the only tasks to land.
	Tasks []string
	// Check is the shell command line run on each candidate ("": the
	// config's land_check; none: no check).
	Check string
	// CheckTimeout bounds one run of the check (0: DefaultLandTimeout).
	CheckTimeout time.Duration
	// Parallel is how many candidates are checked at once (0: the
	// config's land_parallel): more than one makes a train (train.go).
	Parallel int
	// SameOrder keeps the queue's order in a train after a failure (for
	// measuring what reordering by shared files saves).
	SameOrder bool
	// Watch keeps landing as tasks become landable, until ctx ends; it
	// waits for the lease when another lander holds it.
	Watch bool
	// OnResult is told each task's outcome as it is decided (nil: not).
	OnResult func(LandResult)
	// OnWait is told the lease's holder when a watching lander waits
	// for it (nil: not).
	OnWait func(holder string)
	// OnReplan is told how many tasks were planned again after a pass
	// that landed work (Replan decided to), or why planning failed (nil:
	// not told). Planning never stops the lander.
	OnReplan func(planned int, err error)
	// OnMoved is called after the target moved to a task's landing and
	// before the landing is recorded (nil: not): a test's window onto
	// the one instant a crash leaves a landing unrecorded.
	OnMoved func(task string)
	// Meta is recorded on the lander's lease (the front end's host and
	// process id), for HolderGone to judge it by.
	Meta map[string]string
	// HolderGone reports, from a land lease's meta, that its lander is
	// certainly gone (nil: never known): a lander killed on this host
	// does not hold the landing until its lease expires.
	HolderGone func(meta map[string]string) bool
	// OnRemote is told, once each time, that the remote stopped
	// answering (err) and that it answers again (back) (nil: a warning
	// line for the first).
	OnRemote func(err error, back bool)
}

// The outcomes of a landing.
const (
	Landed   = "landed"    // the work is on the target (Commit)
	SentBack = "sent_back" // it went back to its owner (Why)
	Skipped  = "skipped"   // it was left as it is (Why)
)

// LandResult is the outcome of one task's landing.
type LandResult struct {
	Task    string `json:"task"`
	Outcome string `json:"outcome"`
	// Commit is the target's commit holding the work (landed).
	Commit string `json:"commit,omitempty"`
	// How is "fast-forward", "merge" or "found" (already on the target).
	How string `json:"how,omitempty"`
	// Owner is who the task went back to (sent_back).
	Owner string `json:"owner,omitempty"`
	// Why is the reason it was sent back or skipped.
	Why string `json:"why,omitempty"`
	// On are the tasks ahead of it in a train whose work its check
	// included (landed; they landed just before it).
	On []string `json:"on,omitempty"`

	unmergeable bool // skipped: its head cannot be merged here
}

// LandCheck is the check in force for a request: its own, else the
// config's land_check.
func (s *Service) LandCheck(req LandRequest) string {
	if req.Check != "" {
		return req.Check
	}
	return s.conf().LandCheck
}

// Land lands the landable tasks (req.Tasks, when named) and returns
// each one's outcome. It takes the coord-land lease first (CodeConflict
// naming its holder when another lander holds it; with req.Watch it
// waits), renews it while it works and releases it at the end. A lease
// lost meanwhile stops it (CodeLost) before it moves the target again.
func (s *Service) Land(ctx context.Context, l Lander, req LandRequest) ([]LandResult, error) {
	if err := coord.ValidActor(req.Agent); err != nil {
		return nil, err
	}
	for _, id := range req.Tasks {
		if err := coord.ValidTaskID(id); err != nil {
			return nil, err
		}
	}
	if req.CheckTimeout <= 0 {
		req.CheckTimeout = DefaultLandTimeout
	}
	if len(req.Tasks) > 0 {
		// A task named that does not exist is a mistake in the request,
		// answered before the lease is taken, as claim and plan answer it.
		err := s.tasks().View(ctx, func(tx *coord.Txn) error {
			for _, id := range req.Tasks {
				if tx.Task(id) == nil {
					return coord.Errorf(coord.CodeConflict, "task %q not found", id).WithHint("run 'coord ls' to see the task ids")
				}
			}
			return nil
		})
		if err != nil {
			return nil, interrupted(ctx, err)
		}
	}
	if _, err := l.Head(ctx, s.conf().TargetRef()); err != nil && !(req.Watch && errors.Is(err, ErrRemoteUnreachable)) {
		if ctx.Err() != nil {
			return nil, interrupted(ctx, err)
		}
		if errors.Is(err, ErrRemoteUnreachable) {
			return nil, err
		}
		return nil, coord.Errorf(coord.CodeConflict, "the target branch %q is not in this repository: nothing can land", s.conf().Target).
			WithHint("create it, or name the branch work lands on: coord config set target BRANCH")
	}
	lease, err := s.landLease(ctx, req)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := s.keepLease(wctx, lease, cancel)
	defer func() {
		stop()
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer rcancel()
		s.b.Leases().Release(rctx, lease.Name, lease.Holder, lease.Epoch)
	}()

	if _, err := l.CleanCheckouts(wctx); err != nil {
		return nil, landErr(wctx, err)
	}
	if err := s.tasks().Update(wctx, func(tx *coord.Txn) error {
		tx.ClearLanding()
		return nil
	}); err != nil {
		return nil, landErr(wctx, err)
	}
	ln := &lander{s: s, l: l, req: req, check: s.LandCheck(req), tried: map[string]string{}, absent: map[string]string{}}
	var all []LandResult
	for {
		got, err := ln.pass(wctx)
		all = append(all, got...)
		if err != nil && req.Watch && errors.Is(err, ErrRemoteUnreachable) {
			if err = ln.remoteDown(wctx, err); err == nil {
				continue
			}
		}
		if err != nil || !req.Watch {
			return all, landErr(wctx, err)
		}
		err = s.Until(wctx, 0, 200*time.Millisecond, func() (bool, error) {
			ln.follow(wctx)
			return ln.more(wctx)
		})
		if err != nil {
			return all, landErr(wctx, err)
		}
	}
}

// follow makes a watching lander use the project's settings as they now
// stand (config.json, coord config set): the check, the target, the
// review gate.
func (ln *lander) follow(ctx context.Context) {
	changed, err := ln.s.Reload(ctx)
	if err != nil {
		ln.s.warnf(fmt.Errorf("the settings could not be read again (those in force stay): %w", err))
		return
	}
	if changed {
		ln.check = ln.s.LandCheck(ln.req)
		ln.seen = nil // judged under other settings: look at all of it again
	}
}

// landErr is err, or the cause that stopped the lander's context (its
// lease lost).
func landErr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if c := context.Cause(ctx); c != nil && !errors.Is(c, context.Canceled) {
		return c
	}
	return interrupted(ctx, err)
}

// landLease takes the lander's lease, waiting for it with req.Watch.
func (s *Service) landLease(ctx context.Context, req LandRequest) (coord.Lease, error) {
	r := coord.LeaseRequest{Name: coord.LandLease, Holder: req.Agent, TTL: LandLeaseTTL, Meta: req.Meta}
	var lease coord.Lease
	told := ""
	try := func() (bool, error) {
		l, err := s.b.Leases().Acquire(ctx, r)
		if err != nil && s.freeGoneLander(ctx, req) {
			l, err = s.b.Leases().Acquire(ctx, r)
		}
		if err == nil {
			lease = l
			return true, nil
		}
		var ce *coord.Error
		if !req.Watch || !errors.As(err, &ce) || ce.Code != coord.CodeConflict {
			if errors.As(err, &ce) && ce.Code == coord.CodeConflict {
				return false, ce.WithHint("one lander at a time: wait for it to finish, or run 'coord land --watch', which waits")
			}
			return false, err
		}
		if h := ce.Holder; h != told && req.OnWait != nil {
			told = h
			req.OnWait(h)
		}
		return false, nil
	}
	if err := s.Until(ctx, 0, 0, try); err != nil {
		return coord.Lease{}, interrupted(ctx, err)
	}
	s.log(ctx, req.Agent, "started landing on %s", s.conf().Target)
	return lease, nil
}

// freeGoneLander releases the land lease of a lander req.HolderGone
// says is gone, and reports whether it did.
func (s *Service) freeGoneLander(ctx context.Context, req LandRequest) bool {
	if req.HolderGone == nil {
		return false
	}
	ls, err := s.b.Leases().List(ctx)
	if err != nil {
		return false
	}
	for _, l := range ls {
		if l.Name != coord.LandLease || !req.HolderGone(l.Meta) {
			continue
		}
		if s.b.Leases().Release(ctx, l.Name, l.Holder, l.Epoch) != nil {
			return false
		}
		s.log(ctx, req.Agent, "freed lease %s of %s (%s): that lander is gone", l.Name, l.Holder, metaText(l.Meta))
		return true
	}
	return false
}

// metaText is a lease's meta for the log: "host=h pid=1".
func metaText(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+coord.OneLine(m[k]))
	}
	return strings.Join(parts, " ")
}

// keepLease renews lease every LandLeaseTTL/4 until stop is called; a
// lease found lost cancels the lander's context with CodeLost.
func (s *Service) keepLease(ctx context.Context, lease coord.Lease, cancel context.CancelCauseFunc) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(LandLeaseTTL / 4)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			_, err := s.b.Leases().Renew(ctx, lease.Name, lease.Holder, lease.Epoch, LandLeaseTTL)
			var ce *coord.Error
			if errors.As(err, &ce) && ce.Code == coord.CodeLost {
				cancel(ce)
				return
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// lander is one run of Land.
type lander struct {
	s     *Service
	l     Lander
	req   LandRequest
	check string
	// tried are the tasks whose head could not be merged (skipped) by
	// id, with that head: a watching lander does not try them again
	// until their head changes.
	tried map[string]string
	// absent are the tried heads this repository did not hold: tried
	// again as soon as it does.
	absent map[string]string
	// seen are the queue entries (task, head and what it waits for) the
	// last pass took in hand: a watching lander passes again as soon as
	// the queue holds one it has not, such as work released while it
	// checked another task, without waiting for another event.
	seen map[queued]bool
	// downSince is when the remote stopped answering (zero: it
	// answers), pause the wait before the next try.
	downSince time.Time
	pause     time.Duration
	// fetchedAbsent is when heads the clone lacked were last fetched.
	fetchedAbsent time.Time
}

// queued is a task as the lander takes it from the queue.
type queued struct{ id, head, title, waits string }

// queue reads the landable tasks in order; named tasks that are not
// landable are outcomes of their own (skipped, with why).
func (ln *lander) queue(ctx context.Context) (q []queued, out []LandResult, err error) {
	err = ln.s.tasks().View(ctx, func(tx *coord.Txn) error {
		q, out = q[:0], out[:0]
		for _, t := range tx.LandQueue(ln.s.conf().ReviewGate, ln.req.Tasks) {
			if h, ok := ln.tried[t.ID]; ok && h == t.Head {
				continue
			}
			q = append(q, queued{t.ID, t.Head, t.Title, tx.LandWaits(t)})
		}
		for _, id := range ln.req.Tasks {
			t := tx.Task(id)
			switch {
			case t == nil:
				out = append(out, LandResult{Task: id, Outcome: Skipped, Why: "no such task"})
			case t.LandedAt != "":
				out = append(out, LandResult{Task: id, Outcome: Landed, Commit: t.LandedCommit, How: "found"})
			case !t.Landable(ln.s.conf().ReviewGate):
				out = append(out, LandResult{Task: id, Outcome: Skipped, Why: t.NotLandable(ln.s.conf().ReviewGate)})
			}
		}
		return nil
	})
	return q, out, err
}

// arrived forgets the tried heads that were absent and are now in this
// repository: the next pass tries them again.
func (ln *lander) arrived(ctx context.Context) {
	ln.fetchAbsent(ctx)
	for id, head := range ln.absent {
		if _, err := ln.l.Head(ctx, head); err == nil {
			delete(ln.absent, id)
			delete(ln.tried, id)
			for q := range ln.seen {
				if q.id == id {
					delete(ln.seen, q)
				}
			}
		}
	}
}

// more reports whether a watching lander has something to try: a queue
// entry the last pass did not take in hand.
func (ln *lander) more(ctx context.Context) (bool, error) {
	ln.arrived(ctx)
	q, _, err := ln.queue(ctx)
	for _, t := range q {
		if !ln.seen[t] {
			return true, err
		}
	}
	return false, err
}

// pass lands the queue once, in order. Reviews made void by a later
// commit go back to their owners first (VoidMovedReviews): what lands is
// what was reviewed.
func (ln *lander) pass(ctx context.Context) ([]LandResult, error) {
	// A checkout of the target an earlier move could not bring along
	// (its index was busy) is brought now.
	if _, err := ln.l.CleanCheckouts(ctx); err != nil {
		return nil, err
	}
	voided, err := ln.s.VoidMovedReviews(ctx)
	if err != nil {
		return nil, err
	}
	q, out, err := ln.queue(ctx)
	if err != nil {
		return nil, err
	}
	// With a remote, the heads of the queue read are fetched now: a
	// release pushes before it records, so each is there.
	if err := ln.fetchQueue(ctx); err != nil {
		return nil, err
	}
	ln.remoteUp()
	for _, t := range voided {
		out = append(out, LandResult{Task: t.ID, Outcome: SentBack, Owner: t.ClaimedBy, Why: t.ReviewNotes})
	}
	for _, r := range out {
		ln.tell(r)
	}
	ln.seen = make(map[queued]bool, len(q))
	for _, t := range q {
		ln.seen[t] = true
	}
	if n := ln.parallel(); n > 1 && ln.check != "" {
		got, err := ln.train(ctx, q, n)
		out = append(out, got...)
		if err == nil {
			ln.replan(ctx, out)
		}
		return out, err
	}
	for _, t := range q {
		r, err := ln.land(ctx, t)
		if err != nil {
			return out, err
		}
		if r.Outcome == Skipped && r.unmergeable {
			ln.tried[t.id] = t.head
			if _, err := ln.l.Head(ctx, t.head); err != nil {
				// Its commit is not in this repository yet (released on
				// another machine, fetched later): tried again once it is.
				ln.absent[t.id] = t.head
			}
		}
		ln.tell(r)
		out = append(out, r)
	}
	ln.replan(ctx, out)
	return out, nil
}

// replan plans the unclaimed tasks again when this pass landed work and
// enough has landed since the last plan (Service.Replan): what landed is
// history the predictions did not know.
func (ln *lander) replan(ctx context.Context, out []LandResult) {
	landed := false
	for _, r := range out {
		landed = landed || r.Outcome == Landed
	}
	if !landed {
		return
	}
	did, res, err := ln.s.Replan(ctx)
	if ln.req.OnReplan != nil && (did || (err != nil && ctx.Err() == nil)) {
		ln.req.OnReplan(len(res.Predictions), err)
	}
}

func (ln *lander) tell(r LandResult) {
	if ln.req.OnResult != nil {
		ln.req.OnResult(r)
	}
}

// land lands one task: recorded as found, sent back, skipped or landed.
// An error stops the lander (the repository or the backend failed, or it
// was interrupted); the task is then as it was, or landed on the target
// and not yet recorded (the next lander records it).
func (ln *lander) land(ctx context.Context, t queued) (LandResult, error) {
	target := ln.s.conf().Target
	res := LandResult{Task: t.id}
	started := false
	for attempt := 0; ; attempt++ {
		if attempt == maxLandRetries {
			res.Outcome, res.Why = Skipped, fmt.Sprintf("%s moved under the lander %d times; try again", target, attempt)
			return res, ln.unmark(ctx, t, started)
		}
		if why, err := ln.stillLandable(ctx, t); err != nil || why != "" {
			res.Outcome, res.Why = Skipped, why
			return res, err
		}
		if attempt == 0 {
			// Whatever route its commits took, the work lands only if it
			// carries no other task's claimed files.
			if why, err := ln.carriesClaims(ctx, t); err != nil {
				return res, err
			} else if why != "" {
				return ln.sendBack(ctx, t, why)
			}
		}
		tip, err := ln.l.Head(ctx, coord.BranchRef(target))
		if err != nil && errors.Is(err, ErrRemoteUnreachable) {
			ln.unmark(context.WithoutCancel(ctx), t, started)
			return res, err
		}
		if err != nil {
			return res, coord.Wrap(coord.CodeConflict, err, "cannot read the target branch %s", target).
				WithHint("config.json's \"target\" names the branch work lands on: create it, or set target")
		}
		held, err := ln.held(ctx, tip, t.head)
		if err != nil {
			return res, err
		}
		if held {
			// Already on the target (a lander stopped before recording
			// it, or someone merged it): record it, never land it twice.
			return ln.record(ctx, t, tip, "found")
		}
		m, err := ln.l.Merge(ctx, tip, t.head)
		if err != nil {
			if ctx.Err() != nil {
				return res, err
			}
			res.Outcome, res.Why, res.unmergeable = Skipped, "cannot merge its head: "+coord.OneLine(err.Error()), true
			return res, ln.unmark(ctx, t, started)
		}
		if m.Conflict {
			return ln.sendBack(ctx, t, fmt.Sprintf("landing on %s conflicts in %s: merge %s into your branch, resolve, and release again",
				target, coord.FilesPhrase(m.Files, 10), ln.s.targetToMerge()))
		}
		// A fast-forward only when the target's tip is on the head's
		// first-parent chain (a branch that merged the target in is
		// landed by a merge commit: the target's first parents stay
		// its landings).
		cand, how := t.head, "fast-forward"
		if ff, err := ln.l.OnFirstParents(ctx, tip, t.head); err != nil {
			return res, err
		} else if !ff {
			how = "merge"
			msg := fmt.Sprintf("coord: land task %s: %s\n\nTask: %s\nHead: %s\n", t.id, landTitle(t), t.id, t.head)
			if cand, err = ln.l.CommitMerge(ctx, m.Tree, []string{tip, t.head}, msg); err != nil {
				return res, err
			}
		}
		if ln.check != "" {
			if !started {
				if err := ln.mark(ctx, t); err != nil {
					return res, err
				}
				started = true
			}
			run, err := ln.runCheck(ctx, t, cand, tip)
			if err != nil {
				// Interrupted: what is being checked is nothing now.
				uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				ln.unmark(uctx, t, started)
				cancel()
				return res, err
			}
			if !run.Passed() {
				return ln.sendBack(ctx, t, checkFailure(ln.check, run, target))
			}
		}
		if ln.check != "" {
			// The check took time: a review made void meanwhile, or a task
			// changed, is not landed on the strength of it.
			if voided, err := ln.s.VoidMovedReviews(ctx); err != nil {
				return res, err
			} else {
				for _, v := range voided {
					if v.ID == t.id {
						res.Outcome, res.Owner, res.Why = SentBack, v.ClaimedBy, v.ReviewNotes
						return res, ln.unmark(ctx, t, started)
					}
				}
			}
			if why, err := ln.stillLandable(ctx, t); err != nil || why != "" {
				res.Outcome, res.Why = Skipped, why
				if err == nil {
					err = ln.unmark(ctx, t, started)
				}
				return res, err
			}
		}
		err = ln.l.MoveTarget(ctx, target, cand, tip, fmt.Sprintf("coord land: task %s (%s)", t.id, how))
		if errors.Is(err, ErrTargetMoved) {
			continue // merge again with the new tip: never overwrite
		}
		if err != nil {
			return res, err
		}
		if ln.req.OnMoved != nil {
			ln.req.OnMoved(t.id)
		}
		r, err := ln.record(ctx, t, cand, how)
		return r, err
	}
}

// landTitle is the task's title for a commit message (its id without).
func landTitle(t queued) string {
	if t.title != "" {
		return coord.OneLine(t.title)
	}
	return t.id
}

// held reports whether the target at tip already holds head. A head
// the repository cannot judge (it lacks the commit: work released on
// another machine) is not held; the merge then says why.
func (ln *lander) held(ctx context.Context, tip, head string) (bool, error) {
	ok, err := holds(ctx, ln.l, tip, head)
	if err != nil {
		return false, ctx.Err() // a head it cannot judge: the merge says why
	}
	return ok, nil
}

// stillLandable re-reads t: why it is no longer to be landed ("" when
// it is), or a prerequisite in flight it waits for.
func (ln *lander) stillLandable(ctx context.Context, t queued) (string, error) {
	why := ""
	err := ln.s.tasks().View(ctx, func(tx *coord.Txn) error {
		why = ""
		cur := tx.Task(t.id)
		switch {
		case cur == nil:
			why = "the task is gone"
		case !cur.Landable(ln.s.conf().ReviewGate) || cur.Head != t.head:
			why = "the task changed while the lander worked"
		default:
			if d := tx.LandWaits(cur); d != "" {
				why = fmt.Sprintf("it waits for task %s, which it depends on, to land", d)
			}
		}
		return nil
	})
	return why, err
}

// carriesClaims says why t's work may not land ("" when it may): it
// changes files other tasks in flight hold by write claim
// (coord.Txn.WorkClaims, refused under write_claims exclusive).
func (ln *lander) carriesClaims(ctx context.Context, t queued) (string, error) {
	why := ""
	err := ln.s.tasks().View(ctx, func(tx *coord.Txn) error {
		why = ""
		if cur := tx.Task(t.id); cur != nil {
			if _, err := tx.WorkClaims(t.id, cur.TouchedFiles); err != nil {
				why = "landing refused: " + coord.OneLine(err.Error())
			}
		}
		return nil
	})
	return why, err
}

// runCheck runs the check on cand in a temporary worktree, removed
// after it (even when the lander is interrupted).
func (ln *lander) runCheck(ctx context.Context, t queued, cand, tip string) (check.Result, error) {
	dir, err := ln.l.Checkout(ctx, t.id, cand)
	if err != nil {
		return check.Result{}, err
	}
	env := ln.checkEnv(t, cand, tip)
	run, err := ln.l.Check(ctx, dir, ln.check, env, ln.req.CheckTimeout)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if rerr := ln.l.RemoveCheckout(rctx, dir); rerr != nil && err == nil {
		ln.s.warnf(fmt.Errorf("cannot remove the land check's worktree %s (the next lander does): %w", dir, rerr))
	}
	return run, err
}

// checkEnv is the land check's environment: the task, the target, the
// candidate commit checked, the task's head and the commit it was
// merged on (the target's tip, or the candidate ahead of it in a train).
func (ln *lander) checkEnv(t queued, cand, base string) []string {
	return []string{coord.EnvTask + "=" + t.id, coord.EnvLandTarget + "=" + ln.s.conf().Target, coord.EnvLandCommit + "=" + cand,
		coord.EnvLandHead + "=" + t.head, coord.EnvLandBase + "=" + base}
}

// checkFailure is the send-back note of a failed check.
func checkFailure(cmd string, run check.Result, target string) string {
	what := run.How()
	tail := run.Tail
	if tail == "" {
		tail = "(no output)"
	}
	// A note is at most coord.MaxNote bytes: the tail's end is kept.
	head := fmt.Sprintf("land check %q on the merge with %s %s; its last lines: ", coord.OneLine(cmd), target, what)
	if room := coord.MaxNote - len(head) - 16; len(tail) > room {
		tail = "…" + tail[len(tail)-room:]
		tail = strings.ToValidUTF8(tail, "")
	}
	return head + tail
}

// mark records that the lander checks t (landing_at).
func (ln *lander) mark(ctx context.Context, t queued) error {
	return ln.s.tasks().Update(ctx, func(tx *coord.Txn) error {
		if tx.StartLanding(t.id, t.head, ln.s.conf().ReviewGate) {
			tx.Log(ln.req.Agent, "landing task %s: checking its merge with %s", t.id, ln.s.conf().Target)
		}
		return nil
	})
}

// unmark clears t's landing_at when the lander set it.
func (ln *lander) unmark(ctx context.Context, t queued, started bool) error {
	if !started {
		return nil
	}
	return ln.s.tasks().Update(ctx, func(tx *coord.Txn) error {
		if cur := tx.Task(t.id); cur != nil && cur.LandingAt != "" {
			cur.LandingAt, cur.Dirty = "", true
		}
		return nil
	})
}

// record records t landed at commit, in one registry commit.
func (ln *lander) record(ctx context.Context, t queued, commit, how string) (LandResult, error) {
	res := LandResult{Task: t.id, Outcome: Landed, Commit: commit, How: how}
	ok := false
	err := ln.s.tasks().Update(ctx, func(tx *coord.Txn) error {
		ok = tx.Landed(t.id, t.head, commit, ln.s.conf().Target)
		return nil
	})
	if err != nil {
		return res, err
	}
	if !ok {
		res.Why = "on the target; the task changed meanwhile, so it was not recorded"
	}
	return res, nil
}

// sendBack sends t back to its owner with why.
func (ln *lander) sendBack(ctx context.Context, t queued, why string) (LandResult, error) {
	res := LandResult{Task: t.id, Outcome: SentBack, Why: coord.OneLine(why)}
	err := ln.s.tasks().Update(ctx, func(tx *coord.Txn) error {
		cur := tx.Task(t.id)
		if cur == nil || cur.Head != t.head {
			return coord.Errorf(coord.CodeConflict, "task %s changed while the lander worked", t.id)
		}
		got, err := tx.SendBack(ln.req.Agent, t.id, why, ln.s.conf().MaxRejections)
		if err == nil {
			res.Owner = got.ClaimedBy
		}
		if err == nil && got.Status == coord.Blocked {
			res.Why = coord.OneLine(why) + fmt.Sprintf(" (blocked: sent back %d times)", got.Rejections)
		}
		return err
	})
	var ce *coord.Error
	if errors.As(err, &ce) && ce.Code == coord.CodeConflict {
		res.Outcome, res.Why = Skipped, "not sent back: "+ce.Msg
		return res, nil
	}
	return res, err
}

// LandingQueue is the landing queue now (coord.Txn.LandingQueue).
func (s *Service) LandingQueue(ctx context.Context) ([]coord.LandingRow, error) {
	var rows []coord.LandingRow
	err := s.tasks().View(ctx, func(tx *coord.Txn) error {
		rows = tx.LandingQueue(s.conf().ReviewGate)
		return nil
	})
	return nonNil(rows), interrupted(ctx, err)
}
