package coord

import (
	"fmt"
	"math"
	"strings"
)

// Proof of checks (docs/GIT.md): a receipt says a check (coord verify
// CMD) ran on a task's work, on which tree, and how it ended; with
// require_verified a release needs the newest receipt to have passed on
// exactly the tree being released.

// Receipt is one check run on a task's work.
type Receipt struct {
	// Tree is the git tree id of the worktree the check ran in, its
	// uncommitted changes included (as `git add -A` would stage them).
	Tree string `json:"tree"`
	// Cmd is the command line, for people (at most MaxNote bytes).
	Cmd string `json:"cmd"`
	// Exit is the command's exit status (128+N when signal N killed it);
	// 0 passed.
	Exit int `json:"exit"`
	// Seconds is how long it ran.
	Seconds float64 `json:"seconds"`
	// Tail is the last lines of its output (stdout and stderr as they
	// came), at most MaxNote bytes.
	Tail string `json:"tail"`
	// At is when it ended (RFC 3339 UTC).
	At string `json:"at"`
}

// MaxReceipts is how many receipts a task keeps: the newest ones.
const MaxReceipts = 5

// Passed reports whether the check passed (exit 0).
func (r Receipt) Passed() bool { return r.Exit == 0 }

func (r Receipt) check() error {
	switch {
	case !ValidCommit(r.Tree):
		return fmt.Errorf("tree %q is not a git object id", clip(r.Tree))
	case r.Cmd == "" || len(r.Cmd) > MaxNote || strings.ContainsRune(r.Cmd, 0):
		return fmt.Errorf("cmd is empty, longer than %d bytes or holds a NUL", MaxNote)
	case r.Exit < 0 || r.Exit > 255:
		return fmt.Errorf("exit %d is outside 0..255", r.Exit)
	case r.Seconds < 0 || math.IsInf(r.Seconds, 0) || math.IsNaN(r.Seconds):
		return fmt.Errorf("seconds %v is not a duration", r.Seconds)
	case len(r.Tail) > MaxNote:
		return fmt.Errorf("tail is longer than %d bytes", MaxNote)
	}
	if _, err := ParseTime(r.At); err != nil {
		return fmt.Errorf("at %q is not an RFC 3339 time", clip(r.At))
	}
	return nil
}

// NewReceipt makes the receipt of a check: cmd and tail are cut to
// MaxNote bytes (tail keeping its end), seconds rounded to the
// millisecond.
func NewReceipt(tree, cmd string, exit int, seconds float64, tail string, at string) Receipt {
	cmd = clipText(strings.ReplaceAll(cmd, "\x00", " "), MaxNote)
	if len(tail) > MaxNote {
		tail = tail[len(tail)-MaxNote:]
		for i := 0; i < len(tail) && i < 4 && !validStart(tail[0]); i++ {
			tail = tail[1:] // start at a rune boundary
		}
	}
	if seconds < 0 || math.IsNaN(seconds) || math.IsInf(seconds, 0) {
		seconds = 0
	}
	return Receipt{Tree: tree, Cmd: cmd, Exit: exit, Seconds: math.Round(seconds*1000) / 1000, Tail: tail, At: at}
}

// validStart reports whether b may start a UTF-8 encoded rune.
func validStart(b byte) bool { return b&0xC0 != 0x80 }

// Verifiable returns the task agent may record a receipt on: one it
// holds (CodeLost otherwise, as AddReceipt says).
func (tx *Txn) Verifiable(agent, id string) (*Task, error) { return tx.owned(agent, id, NoEpoch) }

// AddReceipt records a check's receipt on a task agent holds (at epoch,
// unless NoEpoch), keeping the newest MaxReceipts. The task may be
// claimed or blocked: a check is evidence, whatever the task's state.
func (tx *Txn) AddReceipt(agent, id string, epoch int64, r Receipt) (*Task, error) {
	if err := r.check(); err != nil {
		return nil, Errorf(CodeUsage, "receipt: %v", err)
	}
	t, err := tx.owned(agent, id, epoch)
	if err != nil {
		return nil, err
	}
	t.Receipts = append(t.Receipts, r)
	if n := len(t.Receipts); n > MaxReceipts {
		t.Receipts = append([]Receipt(nil), t.Receipts[n-MaxReceipts:]...)
	}
	t.Dirty = true
	verdict := "passed"
	if !r.Passed() {
		verdict = fmt.Sprintf("failed (exit %d)", r.Exit)
	}
	tx.Log(agent, "verified task %s: %s %s on tree %s", id, clipText(OneLine(r.Cmd), 200), verdict, ShortID(r.Tree))
	return t, nil
}

// CheckVerified is require_verified's rule for a release of task id by
// agent: the task's newest receipt passed on exactly tree, the tree
// being released. Ownership is checked first (CodeLost as Release
// says); otherwise a CodeConflict error names the mismatch: no receipt,
// the newest failed, or it is for another tree.
func (tx *Txn) CheckVerified(agent, id string, epoch int64, tree, here string) error {
	t, err := tx.owned(agent, id, epoch)
	if err != nil {
		return err
	}
	hint := fmt.Sprintf("run the checks on what you release: coord verify --task %s -- CMD", id)
	if len(t.Receipts) == 0 {
		return Errorf(CodeConflict, "task %q has no receipt: require_verified needs a passing check on the tree released (%s)", id, ShortID(tree)).WithHint("%s", hint)
	}
	r := t.Receipts[len(t.Receipts)-1]
	if !r.Passed() {
		return Errorf(CodeConflict, "task %q: the newest receipt failed (%s: exit %d on tree %s, at %s)", id, clipText(OneLine(r.Cmd), 200), r.Exit, ShortID(r.Tree), r.At).
			WithHint("fix it, then %s", hint)
	}
	if r.Tree != tree && r.Tree == here {
		return Errorf(CodeConflict, "task %q: the newest receipt is for the worktree with changes no commit holds (tree %s); what is released is the branch's last commit (tree %s)", id, ShortID(r.Tree), ShortID(tree)).
			WithHint("commit the changes the check saw, then %s", hint)
	}
	if r.Tree != tree {
		return Errorf(CodeConflict, "task %q: the newest receipt is for tree %s, releasing tree %s (the work changed after the check)", id, ShortID(r.Tree), ShortID(tree)).
			WithHint("%s", hint)
	}
	return nil
}

// ShortID is a git object id cut to 7 digits, as people read them.
func ShortID(id string) string {
	if len(id) > 7 {
		return id[:7]
	}
	return id
}
