package coord

import "fmt"

// A review is pinned to a commit (docs/GIT.md): a task in review was
// released at its head, an approved one was approved at its
// reviewed_commit. When the task's branch moves past that commit before
// the work lands, the review no longer covers the work: it is void, and
// the task goes back to its owner (Txn.SendBack).

// ReviewPin is the commit t's review covers, or "" when t has no review
// that a later commit could void: in review, its head (released there);
// approved (done with a reviewer) and not landed, its reviewed_commit
// (its head, for an approval recorded before reviewed_commit was). A
// task without a branch or an owner has none either: nothing to watch,
// nobody to send it back to.
func (t *Task) ReviewPin() string {
	if t.Branch == "" || t.ClaimedBy == "" || t.LandedAt != "" {
		return ""
	}
	switch {
	case t.Status == Review:
		return t.Head
	case t.Status == Done && t.ReviewerID != "":
		if t.ReviewedCommit != "" {
			return t.ReviewedCommit
		}
		return t.Head
	}
	return ""
}

// ReviewVoid is the rule that voids t's review, given where its branch
// stands now: tip, the branch's commit, and pinOnBranch, whether the
// pinned commit (ReviewPin) is still on the branch (an ancestor of tip).
// It returns the note the owner gets ("" : the review stands):
//
//   - the branch still stands at the pin: the review stands;
//   - the pin is no longer on the branch (rewritten: reset, rebase,
//     amend): void;
//   - the branch has commits after the pin: void, unless the owner holds
//     another task (claimed or blocked) recorded on the same branch,
//     whose work those commits may be: one branch per agent, the next
//     task begun on top of the reviewed one, leaves the review standing
//     (what lands is the reviewed commit, not the branch's tip).
func (tx *Txn) ReviewVoid(t *Task, tip string, pinOnBranch bool) string {
	pin := t.ReviewPin()
	if pin == "" || tip == "" || tip == pin {
		return ""
	}
	if pinOnBranch && tx.ownerWorksOn(t) {
		return ""
	}
	how := "moved"
	if !pinOnBranch {
		how = "was rewritten"
	}
	return fmt.Sprintf("review void: %s %s from %s to %s after the review", ShortBranch(t.Branch), how, ShortID(pin), ShortID(tip))
}

// ownerWorksOn reports whether t's owner holds another task recorded on
// t's branch.
func (tx *Txn) ownerWorksOn(t *Task) bool {
	for _, o := range tx.Tasks {
		if o != t && o.ID != t.ID && o.ClaimedBy == t.ClaimedBy && o.HoldsLock() && o.Branch == t.Branch {
			return true
		}
	}
	return false
}
