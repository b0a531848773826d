package coord

// Problem is one broken invariant found by a doctor: one line naming the
// file or object and the fix.
type Problem struct {
	What  string `json:"problem"`
	Fixed bool   `json:"fixed"`
	// Note marks a finding that breaks no invariant (a dead writer's
	// temp file, which the next commit removes): reported, never counted
	// as a problem that remains.
	Note bool `json:"note,omitempty"`
	// Fix repairs the problem and may say what it did ("removed it"); nil
	// when it cannot be repaired safely. Doctors run it only on --repair.
	Fix func() (done string, err error) `json:"-"`
}

// Remains reports whether p is a broken invariant still there: not
// fixed, and not a note.
func (p Problem) Remains() bool { return !p.Fixed && !p.Note }
