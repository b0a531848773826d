package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/internal/check"
)

// The train: landing with more than one check at once (land_parallel,
// land --parallel N). The landable tasks are taken in landing order as
// cars of a train: the first is merged with the target, each next one
// with the candidate of the car ahead of it, so car k's candidate is
// the target merged with cars 1..k−1 and k, exactly the tree it will
// have if those land. Up to N candidates are checked at once, each in
// its own temporary worktree. The front car lands (one compare-and-swap
// of the target, from the tip it was stacked on to its candidate) once
// its check passed; the car behind it was stacked on that candidate, so
// it is then the target merged with its own work alone, and it lands in
// turn. The target's first-parent history stays one task per landing,
// and every landing's tree is the tree its check passed on.
//
// A car whose check fails leaves the stack at once: every car behind
// it, which holds its work, is stopped and stacked again without it
// (its check run again: a result is never carried to another tree).
// The failure is final only when the car reaches the front (every car
// ahead of it passed and landed); a car ahead that fails first puts it
// back in the stack, on a tree without that car, to be checked again. A
// car that conflicts with the target is sent back as the lone lander
// sends it back; one that conflicts only with the cars ahead of it
// stays out of the stack and is judged again at the front.
//
// What coord knows of files is used to waste fewer checks: a failure is
// more likely to sink the candidates that share its files (written
// against the same code, often with the same mistake), so after a
// failure the cars stacked again and the tasks not yet taken that share
// a file with a failed candidate go behind those that do not
// (dependencies still first). A likely failure then stops fewer checks
// behind it.

// DefaultLandParallel is how many candidates the lander checks at once
// when neither the request nor the config says.
const DefaultLandParallel = 1

// landParallel is the number of checks at once in force for ln.
func (ln *lander) parallel() int {
	n := ln.req.Parallel
	if n <= 0 {
		n = ln.s.conf().LandParallel
	}
	return max(n, DefaultLandParallel)
}

// carState is where a car of the train stands.
type carState int

const (
	carNew      carState = iota // to be stacked on the cars ahead of it
	carReady                    // its candidate is made; not checked yet
	carChecking                 // its check runs
	carPassed                   // its check passed on its candidate
	carFailed                   // its check failed: out of the stack, sent back at the front
	carDeferred                 // cannot be stacked on the cars ahead: judged again at the front
)

// car is one candidate of the train.
type car struct {
	t     queued
	deps  []string // its prerequisites (the registry's Deps)
	files []string // the paths its work touched
	state carState
	base  string   // the commit its candidate is stacked on
	on    []string // the tasks whose work base holds beyond the target
	cand  string   // the commit that lands
	how   string   // "fast-forward" or "merge"
	why   string   // failed: the send-back note; deferred: why
	again string   // why it is checked again ("" the first time)
	gen   int      // its current check (results of others are stale)
	stop  context.CancelFunc
	mark  bool // landing_at is set for it
}

// in reports whether c is in the stack: the cars behind it hold its work.
func (c *car) in() bool { return c.state != carFailed && c.state != carDeferred }

// checked is what a check of a car gave.
type checked struct {
	c   *car
	gen int
	run check.Result
	err error
}

// train is one run of the train over a pass's queue.
type train struct {
	ln      *lander
	n       int
	target  string
	tip     string
	cars    []*car
	pending []queued
	taken   map[string]bool // the tasks this train took in hand
	results chan checked
	live    int // checks started and not yet reported
	gen     int
	out     []LandResult
	sunk    map[string]bool // the files of candidates whose check failed
	moved   int
	refresh time.Time // when the queue was last read for new work
	// worktrees is held while a check's worktree is made or removed:
	// git worktree add reads the other worktrees' records and fails on
	// one half made beside it.
	worktrees sync.Mutex
}

// train lands q with up to n checks at once (see above).
func (ln *lander) train(ctx context.Context, q []queued, n int) ([]LandResult, error) {
	tr := &train{ln: ln, n: n, target: ln.s.conf().Target, pending: q, taken: map[string]bool{},
		results: make(chan checked), sunk: map[string]bool{}, refresh: time.Now()}
	for _, t := range q {
		tr.taken[t.id] = true
	}
	tip, err := ln.l.Head(ctx, coord.BranchRef(tr.target))
	if err != nil {
		return nil, coord.Wrap(coord.CodeConflict, err, "cannot read the target branch %s", tr.target).
			WithHint("config.json's \"target\" names the branch work lands on: create it, or set target")
	}
	tr.tip = tip
	defer tr.halt(ctx)
	for {
		if err := tr.fill(ctx); err != nil {
			return tr.out, err
		}
		if err := tr.build(ctx); err != nil {
			return tr.out, err
		}
		if err := tr.start(ctx); err != nil {
			return tr.out, err
		}
		moved, err := tr.front(ctx)
		if err != nil {
			return tr.out, err
		}
		if moved {
			continue
		}
		if len(tr.cars) == 0 && len(tr.pending) == 0 {
			return tr.out, nil
		}
		if tr.live == 0 {
			// Nothing runs and nothing can start: cannot happen while the
			// front car is new, ready or checking; said rather than hung.
			return tr.out, fmt.Errorf("app: the landing train stalled at task %s", tr.cars[0].t.id)
		}
		select {
		case r := <-tr.results:
			tr.live--
			if err := tr.took(ctx, r); err != nil {
				return tr.out, err
			}
		case <-ctx.Done():
			return tr.out, ctx.Err()
		}
	}
}

// tell records and tells one outcome.
func (tr *train) tell(r LandResult) {
	tr.ln.tell(r)
	tr.out = append(tr.out, r)
}

// active is how many cars are to be checked or being checked.
func (tr *train) active() int {
	n := 0
	for _, c := range tr.cars {
		if c.state == carNew || c.state == carReady || c.state == carChecking {
			n++
		}
	}
	return n
}

// fill takes tasks from the queue into the train while checks are
// free: a task that is no longer landable, carries another task's
// claimed files or is already on the target is decided at once.
func (tr *train) fill(ctx context.Context) error {
	for tr.active() < tr.n && len(tr.cars) < 4*tr.n {
		if len(tr.pending) == 0 && !tr.more(ctx) {
			return nil
		}
		t := tr.pending[0]
		tr.pending = tr.pending[1:]
		c, why, err := tr.admit(ctx, t)
		if err != nil {
			return err
		}
		if why != "" {
			tr.tell(LandResult{Task: t.id, Outcome: Skipped, Why: why})
			continue
		}
		if why, err := tr.ln.carriesClaims(ctx, t); err != nil {
			return err
		} else if why != "" {
			r, err := tr.ln.sendBack(ctx, t, why)
			if err != nil {
				return err
			}
			tr.tell(r)
			continue
		}
		if held, err := tr.ln.held(ctx, tr.tip, t.head); err != nil {
			return err
		} else if held {
			r, err := tr.ln.record(ctx, t, tr.tip, "found")
			if err != nil {
				return err
			}
			tr.tell(r)
			continue
		}
		tr.cars = append(tr.cars, c)
	}
	return nil
}

// more reads the queue again for work released while the train ran
// (at most every half second), and reports whether it found some.
func (tr *train) more(ctx context.Context) bool {
	if time.Since(tr.refresh) < 500*time.Millisecond {
		return false
	}
	tr.refresh = time.Now()
	tr.ln.arrived(ctx)
	q, _, err := tr.ln.queue(ctx)
	if err != nil {
		return false
	}
	for _, t := range q {
		if !tr.taken[t.id] {
			tr.taken[t.id] = true
			tr.ln.seen[t] = true
			tr.pending = append(tr.pending, t)
		}
	}
	tr.order(ctx, nil)
	return len(tr.pending) > 0
}

// admit reads t as a car: why it is not to be landed now ("" when it
// is). A prerequisite in flight is no reason when it rides ahead of it
// in the train.
func (tr *train) admit(ctx context.Context, t queued) (*car, string, error) {
	c := &car{t: t}
	why := ""
	err := tr.ln.s.tasks().View(ctx, func(tx *coord.Txn) error {
		why = ""
		cur := tx.Task(t.id)
		switch {
		case cur == nil:
			why = "the task is gone"
		case !cur.Landable(tr.ln.s.conf().ReviewGate) || cur.Head != t.head:
			why = "the task changed while the lander worked"
		default:
			c.deps = slices.Clone(tx.Deps(cur))
			c.files = slices.Clone(cur.TouchedFiles)
			for _, d := range c.deps {
				if dt := tx.Task(d); dt != nil && dt.InFlight() && !tr.ahead(d, len(tr.cars)) {
					why = fmt.Sprintf("it waits for task %s, which it depends on, to land", d)
					break
				}
			}
		}
		return nil
	})
	return c, why, err
}

// ahead reports whether task id rides in the stack ahead of position i.
func (tr *train) ahead(id string, i int) bool {
	for _, c := range tr.cars[:i] {
		if c.t.id == id && c.in() {
			return true
		}
	}
	return false
}

// stack is what car i is stacked on: the candidate of the nearest car
// ahead of it in the stack (the target's tip when none), and the tasks
// whose work that holds.
func (tr *train) stack(i int) (base string, on []string) {
	base = tr.tip
	for _, c := range tr.cars[:i] {
		if c.in() {
			base = c.cand
			on = append(on, c.t.id)
		}
	}
	return base, on
}

// build makes the candidates of the new cars, front to back.
func (tr *train) build(ctx context.Context) error {
	for i := 0; i < len(tr.cars); {
		c := tr.cars[i]
		if c.state != carNew {
			i++
			continue
		}
		gone, err := tr.build1(ctx, i)
		if err != nil {
			return err
		}
		if gone {
			tr.cars = slices.Delete(tr.cars, i, i+1)
			continue
		}
		i++
	}
	return nil
}

// build1 makes car i's candidate on the cars ahead of it; gone reports
// that it left the train (decided: sent back, skipped, found).
func (tr *train) build1(ctx context.Context, i int) (gone bool, err error) {
	c := tr.cars[i]
	base, on := tr.stack(i)
	for _, d := range c.deps {
		if tr.ahead(d, i) || !slices.ContainsFunc(tr.cars, func(o *car) bool { return o.t.id == d }) {
			continue
		}
		// Its prerequisite rides in the train but left the stack: it
		// cannot land before it.
		tr.tell(LandResult{Task: c.t.id, Outcome: Skipped, Why: fmt.Sprintf("it waits for task %s, which it depends on, to land", d)})
		return true, nil
	}
	if base != tr.tip {
		// Work the cars ahead already bring (a branch built on another's)
		// would land as an empty merge: judged at the front instead.
		if held, err := tr.ln.held(ctx, base, c.t.head); err != nil {
			return false, err
		} else if held {
			c.state, c.why = carDeferred, "the tasks ahead of it bring its work"
			return false, nil
		}
	}
	m, err := tr.ln.l.Merge(ctx, base, c.t.head)
	if err != nil {
		if ctx.Err() != nil {
			return false, err
		}
		r := LandResult{Task: c.t.id, Outcome: Skipped, Why: "cannot merge its head: " + coord.OneLine(err.Error()), unmergeable: true}
		tr.ln.tried[c.t.id] = c.t.head
		if _, err := tr.ln.l.Head(ctx, c.t.head); err != nil {
			tr.ln.absent[c.t.id] = c.t.head
		}
		tr.tell(r)
		return true, nil
	}
	if m.Conflict {
		if base == tr.tip {
			r, err := tr.ln.sendBack(ctx, c.t, fmt.Sprintf("landing on %s conflicts in %s: merge %s into your branch, resolve, and release again",
				tr.target, coord.FilesPhrase(m.Files, 10), tr.target))
			if err != nil {
				return false, err
			}
			tr.tell(r)
			return true, nil
		}
		c.state, c.why = carDeferred, fmt.Sprintf("conflicts with tasks %s ahead of it in %s", strings.Join(on, ", "), coord.FilesPhrase(m.Files, 10))
		return false, nil
	}
	cand, how := c.t.head, "fast-forward"
	if ff, err := tr.ln.l.OnFirstParents(ctx, base, c.t.head); err != nil {
		return false, err
	} else if !ff {
		how = "merge"
		msg := fmt.Sprintf("coord: land task %s: %s\n\nTask: %s\nHead: %s\n", c.t.id, landTitle(c.t), c.t.id, c.t.head)
		if cand, err = tr.ln.l.CommitMerge(ctx, m.Tree, []string{base, c.t.head}, msg); err != nil {
			return false, err
		}
	}
	c.base, c.on, c.cand, c.how, c.state, c.why = base, on, cand, how, carReady, ""
	return false, nil
}

// start starts the checks of ready cars, front first, up to n at once.
func (tr *train) start(ctx context.Context) error {
	running := 0
	for _, c := range tr.cars {
		if c.state == carChecking {
			running++
		}
	}
	for _, c := range tr.cars {
		if running >= tr.n {
			return nil
		}
		if c.state != carReady {
			continue
		}
		if err := tr.ln.s.tasks().Update(ctx, func(tx *coord.Txn) error {
			if tx.StartLandingOn(c.t.id, c.t.head, c.on, tr.ln.s.conf().ReviewGate) {
				what := "checking its merge with " + tr.target
				if len(c.on) > 0 {
					what += " and task(s) " + strings.Join(c.on, ", ") + " ahead of it"
				}
				if c.again != "" {
					what += " (again: " + c.again + ")"
				}
				tx.Log(tr.ln.req.Agent, "landing task %s: %s", c.t.id, what)
			}
			return nil
		}); err != nil {
			return err
		}
		c.mark = true
		tr.gen++
		c.gen = tr.gen
		cctx, stop := context.WithCancel(ctx)
		c.stop, c.state = stop, carChecking
		running++
		tr.live++
		go func(c *car, gen int, name, cand, base string) {
			run, err := tr.ln.checkOn(cctx, &tr.worktrees, name, c.t, cand, base)
			tr.results <- checked{c, gen, run, err}
		}(c, c.gen, fmt.Sprintf("%s.%d", c.t.id, c.gen), c.cand, c.base)
	}
	return nil
}

// took takes a check's result in.
func (tr *train) took(ctx context.Context, r checked) error {
	c := r.c
	if r.gen != c.gen || c.state != carChecking {
		return nil // a check stopped because its tree changed
	}
	c.stop()
	if r.err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return r.err
	}
	if r.run.Passed() {
		c.state = carPassed
		return nil
	}
	c.state, c.why = carFailed, checkFailure(tr.ln.check, r.run, tr.target)
	for _, f := range c.files {
		tr.sunk[f] = true
	}
	i := slices.Index(tr.cars, c)
	return tr.restack(ctx, i+1, fmt.Sprintf("task %s ahead of it failed its check", c.t.id))
}

// restack stops the cars from position i on and stacks them again
// (their trees change: why says how), the likely failures last.
func (tr *train) restack(ctx context.Context, i int, why string) error {
	var unmark []*car
	for _, c := range tr.cars[i:] {
		if c.state == carChecking {
			c.stop()
		}
		if c.state != carNew {
			c.again = why
		}
		if c.mark {
			unmark = append(unmark, c)
			c.mark = false
		}
		c.state, c.gen = carNew, 0
	}
	tr.order(ctx, tr.cars[i:])
	if len(unmark) == 0 {
		return nil
	}
	return tr.ln.s.tasks().Update(ctx, func(tx *coord.Txn) error {
		for _, c := range unmark {
			if cur := tx.Task(c.t.id); cur != nil && cur.LandingAt != "" {
				cur.LandingAt, cur.LandingOn, cur.Dirty = "", nil, true
			}
		}
		return nil
	})
}

// order puts the cars of cs (all to be stacked again), and the tasks
// not yet taken, that share a file with a failed candidate behind those
// that do not, each after its prerequisites.
func (tr *train) order(ctx context.Context, cs []*car) {
	if len(tr.sunk) == 0 || tr.ln.req.SameOrder {
		return
	}
	risky := map[string]bool{}
	isRisky := func(id string, files, deps []string) bool {
		r := false
		for _, f := range files {
			r = r || tr.sunk[f]
		}
		for _, d := range deps {
			r = r || risky[d]
		}
		risky[id] = r
		return r
	}
	// A car's prerequisite is ahead of it: in order, a car is risky
	// when it or one of its prerequisites is.
	for _, c := range cs {
		isRisky(c.t.id, c.files, c.deps)
	}
	slices.SortStableFunc(cs, func(a, b *car) int { return boolCmp(risky[a.t.id], risky[b.t.id]) })
	if len(tr.pending) == 0 {
		return
	}
	files, deps := tr.pendingFacts(ctx)
	for _, t := range tr.pending {
		isRisky(t.id, files[t.id], deps[t.id])
	}
	slices.SortStableFunc(tr.pending, func(a, b queued) int { return boolCmp(risky[a.id], risky[b.id]) })
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// pendingFacts reads the touched files and prerequisites of the tasks
// not yet taken (nothing when the registry cannot be read: the order
// stays).
func (tr *train) pendingFacts(ctx context.Context) (files, deps map[string][]string) {
	files, deps = map[string][]string{}, map[string][]string{}
	tr.ln.s.tasks().View(ctx, func(tx *coord.Txn) error {
		for _, t := range tr.pending {
			if cur := tx.Task(t.id); cur != nil {
				files[t.id], deps[t.id] = slices.Clone(cur.TouchedFiles), slices.Clone(tx.Deps(cur))
			}
		}
		return nil
	})
	return files, deps
}

// front lands or sends back the cars at the front as far as their
// checks are decided; moved reports that it changed the train.
func (tr *train) front(ctx context.Context) (moved bool, err error) {
	for len(tr.cars) > 0 {
		c := tr.cars[0]
		switch c.state {
		case carFailed:
			r, err := tr.ln.sendBack(ctx, c.t, c.why)
			if err != nil {
				return moved, err
			}
			tr.cars = tr.cars[1:]
			tr.tell(r)
		case carDeferred:
			// At the front it stands on the target alone: stacked now, or
			// decided (sent back for a conflict, found on the target).
			if held, err := tr.ln.held(ctx, tr.tip, c.t.head); err != nil {
				return moved, err
			} else if held {
				r, err := tr.ln.record(ctx, c.t, tr.tip, "found")
				if err != nil {
					return moved, err
				}
				tr.cars = tr.cars[1:]
				tr.tell(r)
				break
			}
			c.state, c.again = carNew, ""
			gone, err := tr.build1(ctx, 0)
			if err != nil {
				return moved, err
			}
			if gone {
				tr.cars = tr.cars[1:]
			} else if err := tr.restack(ctx, 1, fmt.Sprintf("task %s joined the tasks ahead of it", c.t.id)); err != nil {
				return moved, err
			}
		case carPassed:
			if err := tr.land(ctx, c); err != nil {
				return moved, err
			}
		default:
			return moved, nil
		}
		moved = true
	}
	return moved, nil
}

// land moves the target to the front car's candidate and records it;
// a task that changed meanwhile, or a target that moved, restacks the
// train.
func (tr *train) land(ctx context.Context, c *car) error {
	ln := tr.ln
	if voided, err := ln.s.VoidMovedReviews(ctx); err != nil {
		return err
	} else if i := slices.IndexFunc(voided, func(v *coord.Task) bool { return v.ID == c.t.id }); i >= 0 {
		tr.cars = tr.cars[1:]
		tr.tell(LandResult{Task: c.t.id, Outcome: SentBack, Owner: voided[i].ClaimedBy, Why: voided[i].ReviewNotes})
		return tr.restack(ctx, 0, fmt.Sprintf("task %s ahead of it went back: its review is void", c.t.id))
	}
	if why, err := ln.stillLandable(ctx, c.t); err != nil {
		return err
	} else if why != "" {
		tr.cars = tr.cars[1:]
		if err := ln.unmark(ctx, c.t, c.mark); err != nil {
			return err
		}
		tr.tell(LandResult{Task: c.t.id, Outcome: Skipped, Why: why})
		return tr.restack(ctx, 0, fmt.Sprintf("task %s ahead of it changed", c.t.id))
	}
	err := ln.l.MoveTarget(ctx, tr.target, c.cand, c.base, fmt.Sprintf("coord land: task %s (%s)", c.t.id, c.how))
	if errors.Is(err, ErrTargetMoved) {
		// Someone else moved the target: every candidate stands on the
		// old tip, so every one is stacked (and checked) again.
		tip, herr := ln.l.Head(ctx, coord.BranchRef(tr.target))
		if herr != nil {
			return herr
		}
		tr.tip = tip
		if tr.moved++; tr.moved == maxLandRetries {
			tr.cars = tr.cars[1:]
			if err := ln.unmark(ctx, c.t, c.mark); err != nil {
				return err
			}
			tr.tell(LandResult{Task: c.t.id, Outcome: Skipped, Why: fmt.Sprintf("%s moved under the lander %d times; try again", tr.target, tr.moved)})
		}
		return tr.restack(ctx, 0, tr.target+" moved")
	}
	if err != nil {
		return err
	}
	if ln.req.OnMoved != nil {
		ln.req.OnMoved(c.t.id)
	}
	r, err := ln.record(ctx, c.t, c.cand, c.how)
	if err != nil {
		return err
	}
	r.On = c.on
	tr.tip = c.cand
	tr.cars = tr.cars[1:]
	tr.tell(r)
	return nil
}

// halt stops every check of the train, waits for them to end (their
// worktrees removed), and clears what it recorded as being checked.
func (tr *train) halt(ctx context.Context) {
	var marked []queued
	for _, c := range tr.cars {
		if c.state == carChecking {
			c.stop()
		}
		if c.mark {
			marked = append(marked, c.t)
		}
	}
	for tr.live > 0 {
		<-tr.results
		tr.live--
	}
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	// A check stopped while its worktree was being made leaves that
	// half made: no check of this lander runs now, so all go.
	if tr.gen > 0 {
		if _, err := tr.ln.l.CleanCheckouts(uctx); err != nil {
			tr.ln.s.warnf(fmt.Errorf("cannot remove the land checks' worktrees (the next lander does): %w", err))
		}
	}
	if len(marked) == 0 {
		return
	}
	tr.ln.s.tasks().Update(uctx, func(tx *coord.Txn) error {
		for _, t := range marked {
			if cur := tx.Task(t.id); cur != nil && cur.LandingAt != "" {
				cur.LandingAt, cur.LandingOn, cur.Dirty = "", nil, true
			}
		}
		return nil
	})
}

// checkOn runs the check on cand in a temporary worktree named name,
// removed after it (even when the check is stopped). The worktree is
// made and removed under mu, whole: a check stopped meanwhile stops
// after (a git worktree add killed halfway leaves a record that breaks
// the next).
func (ln *lander) checkOn(ctx context.Context, mu *sync.Mutex, name string, t queued, cand, base string) (check.Result, error) {
	mu.Lock()
	actx, acancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	dir, err := ln.l.Checkout(actx, name, cand)
	acancel()
	mu.Unlock()
	if err != nil {
		return check.Result{}, err
	}
	if ctx.Err() != nil {
		ln.removeCheckout(ctx, mu, dir)
		return check.Result{}, ctx.Err()
	}
	env := ln.checkEnv(t, cand, base)
	run, err := ln.l.Check(ctx, dir, ln.check, env, ln.req.CheckTimeout)
	ln.removeCheckout(ctx, mu, dir)
	return run, err
}

// removeCheckout removes a check's worktree under mu (a failure is
// warned of: the next lander removes it).
func (ln *lander) removeCheckout(ctx context.Context, mu *sync.Mutex, dir string) {
	mu.Lock()
	defer mu.Unlock()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := ln.l.RemoveCheckout(rctx, dir); err != nil {
		ln.s.warnf(fmt.Errorf("cannot remove the land check's worktree %s (the next lander does): %w", dir, err))
	}
}
