package coord

// HandBack gives up a task its owner holds but did not finish (coord run
// interrupted by a signal, an agent's session ending): the transition the
// stale sweep makes (ownerLeaves), at once instead of after the stale
// timeout, with why as the reason of a block. The owner's lock and the
// path locks it took for the task go with it.
func (tx *Txn) HandBack(agent, id string, epoch int64, why string, policy StalePolicy) (*Task, error) {
	if err := CheckNote("reason", why); err != nil {
		return nil, err
	}
	t, err := tx.owned(agent, id, epoch)
	if err != nil {
		return nil, err
	}
	tx.ownerLeaves(t, why, policy)
	tx.Log(agent, "handed back task %s (%s): %s", t.ID, OneLine(why), t.Status)
	tx.releasePathLocksWith(agent, id)
	return t, nil
}
