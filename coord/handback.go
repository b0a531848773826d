package coord

import "fmt"

// HandBack gives up a task its owner holds but did not finish (coord run
// was interrupted by a signal). The task goes where the stale sweep would
// send it under policy, at once instead of after the stale timeout:
// unclaimed (progress reset), or with BlockIfProgress and some progress,
// blocked with the reason "<why> at N% progress". A task already blocked
// stays blocked with its reason. In every case the owner and the lock go,
// so the task is never done and never held by an agent that has left.
func (tx *Txn) HandBack(agent, id string, epoch int64, why string, policy StalePolicy) (*Task, error) {
	t, err := tx.owned(agent, id, epoch)
	if err != nil {
		return nil, err
	}
	switch {
	case t.Status == Blocked:
	case policy == BlockIfProgress && t.Progress > 0:
		t.Status = Blocked
		t.BlockedReason = OneLine(fmt.Sprintf("%s at %d%% progress", why, t.Progress))
	default:
		t.Status = Unclaimed
		t.Progress = 0
	}
	t.ClaimedBy = ""
	t.ClaimedAt = ""
	t.Dirty = true
	tx.Log(agent, "handed back task %s (%s): %s", t.ID, OneLine(why), t.Status)
	return t, nil
}

// Drained reports whether no work is left at all: no task is unclaimed,
// claimed, blocked or in review (every task is done, or there are none).
// An agent loop (coord wait, coord run) ends there.
func (tx *Txn) Drained() bool {
	for _, t := range tx.Tasks {
		if t.Status != Done {
			return false
		}
	}
	return true
}
