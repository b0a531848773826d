package replay

import (
	"fmt"
	"strconv"
	"time"

	"github.com/rotd/coordination/coord"
)

// Write claims (docs/GIT.md) as agents meet them. An agent writes its
// task's files one by one over the task's duration, in the order the
// commit lists them: with n files, file k (from 0) when k/n of the work
// is done. The first write of a path claims it for the task until the
// task lands (its release: the simulation lands work as it finishes).
// A write to a path another task in flight has claimed is refused (the
// edit hook's exit 2); the agent keeps its task and waits until the
// holder lands, then writes and goes on. Two tasks that each wait for a
// path the other holds would wait forever: the one claimed last hands
// its task back (its claims freed, its work lost; the task is claimed
// again later), as an agent told so by the refusal would.
//
// With ClaimsWarn the claims are recorded but not enforced (write_claims
// "warn"): every write goes ahead, and a write to a path another task in
// flight wrote, where their changes of it meet, is a conflict left.
// Under exclusive claims no such write happens: none is left.
//
// Stale writes count the writes to a path that a task landed after the
// writer claimed its own, where the two changes meet: work that merges
// cleanly only if the agent brings its branch up to date (merges the
// target) before that write, which a waiting agent is told to do.

// claimRun is one task in flight under write claims.
type claimRun struct {
	task      int
	agent     int
	epoch     int64
	claimedAt time.Duration
	writes    []string // the paths it writes, in order
	next      int      // the next write
	done      time.Duration
	resumed   time.Duration // when its current stretch of work began
	waitOn    *claimRun     // the holder it waits for; nil: working
	waitFrom  time.Duration
	wrote     map[string]bool
}

// writeAt is how much work is done when the k-th write happens.
func (r *claimRun) writeAt(k int, dur time.Duration) time.Duration {
	return dur * time.Duration(k) / time.Duration(len(r.writes))
}

// writePaths are the paths a commit writes, in its order, each once (a
// rename writes its old and its new path).
func writePaths(c *Commit) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, f := range c.Files {
		add(f.Path)
		if f.Status == "R" {
			add(f.From)
		}
	}
	return out
}

// changeOf is the change of c that occupies path (its path, or the old
// path of a rename), or nil.
func changeOf(c *Commit, path string) *FileChange {
	for i := range c.Files {
		f := &c.Files[i]
		if f.Path == path || (f.Status == "R" && f.From == path) {
			return f
		}
	}
	return nil
}

// meetOn reports whether two commits' changes of path meet.
func meetOn(a, b *Commit, path string) bool {
	x, y := changeOf(a, path), changeOf(b, path)
	return x != nil && y != nil && filesMeet(x, y)
}

// simulateClaims is Simulate with write claims.
func simulateClaims(work []Work, tx *coord.Txn, byID map[string]int, epoch time.Time, opt Options) (Result, error) {
	agents := make([]coord.Agent, opt.Agents)
	busy := make([]bool, opt.Agents)
	for i := range agents {
		agents[i] = coord.Agent{ID: "a" + strconv.Itoa(i)}
	}
	var res Result
	var inflight []*claimRun
	holder := map[string]*claimRun{}    // path -> the task in flight that claimed it
	landedAt := map[string][]int{}      // path -> tasks that landed having written it, in order
	landTime := map[int]time.Duration{} // task -> when it landed
	conflicted := map[[2]int]bool{}
	stale := map[[2]int]bool{}
	var now time.Duration
	done := 0
	dur := func(r *claimRun) time.Duration { return work[r.task].Dur }
	progress := func(r *claimRun) time.Duration {
		if r.waitOn != nil {
			return r.done
		}
		return r.done + now - r.resumed
	}
	commit := func(i int) *Commit { return work[i].Commit }

	// write tries r's due writes; it reports whether r stopped to wait.
	write := func(r *claimRun) {
		for r.waitOn == nil && r.next < len(r.writes) && r.writeAt(r.next, dur(r)) <= progress(r) {
			p := r.writes[r.next]
			if h := holder[p]; h != nil && h != r {
				if !opt.ClaimsWarn {
					res.Refused++
					if meetOn(commit(r.task), commit(h.task), p) {
						res.RefusedMeet++
					}
					r.done = progress(r)
					r.waitOn, r.waitFrom = h, now
					return
				}
			}
			// The write goes ahead. Writes another task in flight made
			// to p (only under warn) are conflicts where they meet.
			for _, o := range inflight {
				if o != r && o.wrote[p] && meetOn(commit(r.task), commit(o.task), p) {
					k := [2]int{min(o.task, r.task), max(o.task, r.task)}
					if !conflicted[k] {
						conflicted[k] = true
						res.Conflicts++
						res.Pairs = append(res.Pairs, [2]string{work[k[0]].ID, work[k[1]].ID})
					}
				}
			}
			for _, l := range landedAt[p] {
				if landTime[l] > r.claimedAt && meetOn(commit(r.task), commit(l), p) && !stale[[2]int{l, r.task}] {
					stale[[2]int{l, r.task}] = true
					res.StaleMeets++
				}
			}
			if holder[p] == nil {
				holder[p] = r
			}
			r.wrote[p] = true
			r.next++
		}
	}
	// free drops r's claims and wakes the tasks waiting for r.
	free := func(r *claimRun) {
		for p, h := range holder {
			if h == r {
				delete(holder, p)
			}
		}
		for _, o := range inflight {
			if o.waitOn == r {
				res.Waited += now - o.waitFrom
				res.MaxWait = max(res.MaxWait, now-o.waitFrom)
				o.waitOn, o.resumed = nil, now
			}
		}
	}
	remove := func(r *claimRun) {
		kept := inflight[:0]
		for _, o := range inflight {
			if o != r {
				kept = append(kept, o)
			}
		}
		inflight = kept
	}
	// deadlock finds a cycle of waits and returns the task of it that
	// was claimed last, or nil.
	deadlock := func() *claimRun {
		for _, r := range inflight {
			seen := map[*claimRun]bool{}
			x := r
			for x != nil && !seen[x] {
				seen[x] = true
				x = x.waitOn
			}
			if x == nil {
				continue
			}
			// x is on a cycle: pick its youngest member.
			victim := x
			for y := x.waitOn; y != x; y = y.waitOn {
				if y.claimedAt > victim.claimedAt || (y.claimedAt == victim.claimedAt && y.task > victim.task) {
					victim = y
				}
			}
			return victim
		}
		return nil
	}

	for {
		tx.Now = epoch.Add(now)
		// Settle this instant: due writes, deadlocks, then claims by
		// idle agents (in agent order), until nothing changes.
		for changed := true; changed; {
			changed = false
			for _, r := range inflight {
				before := r.next
				write(r)
				if r.next != before || r.waitOn != nil {
					changed = changed || r.next != before
				}
			}
			if v := deadlock(); v != nil {
				res.HandBacks++
				res.Lost += progress(v)
				if _, err := tx.HandBack(agents[v.agent].ID, work[v.task].ID, v.epoch, "write claims wait on each other", coord.Requeue); err != nil {
					return Result{}, err
				}
				tx.Events = nil
				res.Waited += now - v.waitFrom
				v.waitOn = nil
				free(v)
				remove(v)
				busy[v.agent] = false
				changed = true
				continue
			}
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
					break
				}
				i := byID[t.ID]
				r := &claimRun{task: i, agent: a, epoch: t.Epoch, claimedAt: now, resumed: now, writes: writePaths(commit(i)), wrote: map[string]bool{}}
				busy[a] = true
				inflight = append(inflight, r)
				changed = true
			}
		}
		if len(inflight) == 0 {
			if done < len(work) {
				return Result{}, fmt.Errorf("replay: %d tasks left that no agent can claim", len(work)-done)
			}
			res.Makespan = now
			return res, nil
		}
		// The next event: a write or the end of a task being worked on.
		next := time.Duration(-1)
		for _, r := range inflight {
			if r.waitOn != nil {
				continue
			}
			at := dur(r)
			if r.next < len(r.writes) {
				at = r.writeAt(r.next, dur(r))
			}
			if t := r.resumed + at - r.done; next < 0 || t < next {
				next = t
			}
		}
		if next < 0 {
			return Result{}, fmt.Errorf("replay: every task in flight waits")
		}
		now = next
		tx.Now = epoch.Add(now)
		// Tasks whose work is done (every write made) land.
		for _, r := range append([]*claimRun(nil), inflight...) {
			if r.waitOn != nil || r.next < len(r.writes) || progress(r) < dur(r) {
				continue
			}
			if _, err := tx.Release(agents[r.agent].ID, work[r.task].ID, r.epoch, "", false); err != nil {
				return Result{}, err
			}
			tx.Events = nil
			busy[r.agent] = false
			done++
			landTime[r.task] = now
			for _, p := range r.writes {
				landedAt[p] = append(landedAt[p], r.task)
			}
			free(r)
			remove(r)
		}
	}
}
