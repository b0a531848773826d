package coord

// Problem is one broken invariant found by a doctor: one line naming the
// file or object and the fix.
type Problem struct {
	What  string `json:"problem"`
	Fixed bool   `json:"fixed"`
	// Fix repairs the problem and may say what it did ("removed it"); nil
	// when it cannot be repaired safely. Doctors run it only on --repair.
	Fix func() (done string, err error) `json:"-"`
}
