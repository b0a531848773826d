package coord

import "fmt"

// HandBack gives up a task its owner holds but did not finish (coord run
// interrupted by a signal, an agent's session ending). The task goes where
// the stale sweep would send it under policy (StaleOutcome), at once
// instead of after the stale timeout: unclaimed (progress reset), or with
// block-if-progress and some progress, blocked with the reason "<why> at
// N% progress"; a task already blocked stays blocked with its reason. In
// every case the owner, its lock and the path locks taken for the task
// go, so the task is never done and never held by an agent that has left.
func (tx *Txn) HandBack(agent, id string, epoch int64, why string, policy StalePolicy) (*Task, error) {
	if err := CheckNote("reason", why); err != nil {
		return nil, err
	}
	t, err := tx.owned(agent, id, epoch)
	if err != nil {
		return nil, err
	}
	switch st := StaleOutcome(t, policy); {
	case t.Status == Blocked:
	case st == Blocked:
		t.Status = Blocked
		t.BlockedAt = FormatTime(tx.Now)
		t.BlockedReason = OneLine(fmt.Sprintf("%s at %d%% progress", why, t.Progress))
	default:
		t.Status = Unclaimed
		t.Progress = 0
	}
	t.ClaimedBy = ""
	t.ClaimedAt = ""
	t.Dirty = true
	tx.Log(agent, "handed back task %s (%s): %s", t.ID, OneLine(why), t.Status)
	tx.releasePathLocksWith(agent, id)
	return t, nil
}
