package coord

import (
	"fmt"
	"sort"
	"time"
)

// StalePolicy says what the sweep does with a dead agent's task.
type StalePolicy string

// The stale policies of config.json's on_stale.
const (
	Requeue         StalePolicy = "requeue"
	BlockIfProgress StalePolicy = "block-if-progress"
)

// Valid reports whether p is one of the policies.
func (p StalePolicy) Valid() bool { return p == Requeue || p == BlockIfProgress }

// LockRef names one task lock as the sweep judged it.
type LockRef struct {
	TaskID string
	Agent  string
	Epoch  int64
}

// Stale is one lock judged stale: what the sweep frees (or, in a dry run,
// would free), with the task's status afterwards.
type Stale struct {
	TaskID string        `json:"task"`
	Agent  string        `json:"agent"`
	Epoch  int64         `json:"epoch"`
	Idle   time.Duration `json:"-"`
	IdleS  int64         `json:"idle_seconds"`
	Status Status        `json:"status"` // the task's status after the sweep
}

// Ref names the judged lock.
func (s Stale) Ref() LockRef { return LockRef{s.TaskID, s.Agent, s.Epoch} }

// StaleOutcome is what a task whose owner went stale becomes under
// policy: a blocked task stays blocked (only its owner goes); with
// block-if-progress a task with progress is blocked; anything else goes
// back to unclaimed. The sweep and its dry run both ask this.
func StaleOutcome(t *Task, policy StalePolicy) Status {
	switch {
	case t.Status == Blocked:
		return Blocked
	case policy == BlockIfProgress && t.Progress > 0:
		return Blocked
	}
	return Unclaimed
}

// ownerLeaves is the one transition of a task whose owner leaves it
// unfinished, whether the owner says so (HandBack) or goes silent
// (FreeStale): the task goes where StaleOutcome sends it under policy.
// A blocked task stays blocked with its reason; a task blocked now gets
// the reason "<why> at N% progress"; anything else goes back to
// unclaimed with its progress reset. In every case the owner goes, so the
// task is never done and never held by an agent that has left. The
// caller logs the change and frees the path locks as its case needs.
func (tx *Txn) ownerLeaves(t *Task, why string, policy StalePolicy) {
	switch {
	case t.Status == Blocked:
		// stays blocked with its reason; only the owner goes
	case StaleOutcome(t, policy) == Blocked:
		t.Status = Blocked
		t.BlockedAt = FormatTime(tx.Now)
		t.BlockedReason = OneLine(fmt.Sprintf("%s at %d%% progress", why, t.Progress))
	default:
		t.Status = Unclaimed
		t.Progress = 0
	}
	t.ClaimedBy = ""
	t.ClaimedAt = ""
	t.freeClaims()
	t.Dirty = true
}

// LastSignOfLife is when the owner of a lock-holding task last showed it
// was alive, judged with timeout: its heartbeat (from beats, clamped by
// the beat store), else the claim's claimed_at as SignFromFile reads it.
// An instant in the future counts as now. ok is false when there is no
// sign at all (the lock is stale at once).
func LastSignOfLife(t *Task, beats map[string]time.Time, now time.Time, timeout time.Duration) (time.Time, bool) {
	at, ok := beats[t.ClaimedBy]
	if !ok {
		return SignFromFile(t.ClaimedAt, now, timeout)
	}
	if at.After(now) {
		at = now
	}
	return at, true
}

// SignFromFile reads an instant a file records as a sign of life at now
// (a claim's claimed_at, a registration's registered_at, for an agent
// without a heartbeat), judged with timeout. Up to timeout in the future
// (a clock set back, a coarse one) it counts as now, as a heartbeat's
// mtime from the future does; further ahead, where only a hand edit puts
// it, it is no sign at all: counted as now it would stay fresh at every
// judgment and pin the claim for ever (a heartbeat's mtime is clamped on
// disk, and ages from there; a time inside a file is not rewritten). ok
// is false for no sign (and for an unreadable time).
func SignFromFile(s string, now time.Time, timeout time.Duration) (time.Time, bool) {
	at, err := ParseTime(s)
	switch {
	case err != nil, at.Sub(now) > timeout:
		return time.Time{}, false
	case at.After(now):
		return now, true
	}
	return at, true
}

// JudgeStale returns every lock whose owner has been silent longer than
// timeout at now, given the owners' heartbeats, each with the status the
// sweep would give its task. It changes nothing: the sweep re-checks each
// under exclusion with FreeStale.
func (tx *Txn) JudgeStale(beats map[string]time.Time, now time.Time, timeout time.Duration, policy StalePolicy) []Stale {
	var out []Stale
	for _, t := range tx.Tasks {
		if !t.HoldsLock() {
			continue
		}
		seen, ok := LastSignOfLife(t, beats, now, timeout)
		idle := now.Sub(seen)
		if ok && idle <= timeout {
			continue
		}
		if !ok {
			idle = timeout + 1
		}
		out = append(out, Stale{TaskID: t.ID, Agent: t.ClaimedBy, Epoch: t.Epoch, Idle: idle, IdleS: int64(idle / time.Second), Status: StaleOutcome(t, policy)})
	}
	return out
}

// LockHolders returns the agents that hold a task lock, sorted.
func (tx *Txn) LockHolders() []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range tx.Tasks {
		if t.HoldsLock() && !seen[t.ClaimedBy] {
			seen[t.ClaimedBy] = true
			out = append(out, t.ClaimedBy)
		}
	}
	sort.Strings(out)
	return out
}

// NextDue is the earliest instant some lock held now would become stale,
// and false when no lock is held: a sweeper sleeps until then.
func (tx *Txn) NextDue(beats map[string]time.Time, now time.Time, timeout time.Duration) (time.Time, bool) {
	var due time.Time
	found := false
	for _, t := range tx.Tasks {
		if !t.HoldsLock() {
			continue
		}
		seen, ok := LastSignOfLife(t, beats, now, timeout)
		if !ok {
			seen = now.Add(-timeout)
		}
		if d := seen.Add(timeout); !found || d.Before(due) {
			due, found = d, true
		}
	}
	return due, found
}

// FreeStale frees a lock judged stale, after re-checking that the task is
// still held by the same agent at the same epoch; the agent's path locks
// go with it. It returns false (and changes nothing) when the lock has
// changed since it was judged.
func (tx *Txn) FreeStale(ref LockRef, policy StalePolicy) bool {
	t := tx.Task(ref.TaskID)
	if t == nil || !t.HoldsLock() || t.ClaimedBy != ref.Agent || t.Epoch != ref.Epoch {
		return false
	}
	tx.ownerLeaves(t, "agent "+ref.Agent+" went stale", policy)
	tx.Log(CoordinatorID, "freed stale lock task %s (agent %s)", t.ID, ref.Agent)
	tx.dropPathLocks(CoordinatorID, func(l PathLock) bool { return l.Holder == ref.Agent })
	return true
}
