package coord

import "fmt"

// MaxCounter is the ceiling of every counter coord issues: task epochs,
// lease epochs and kv revisions are at most 2^53, the largest range of
// integers every JSON reader holds exactly (a JavaScript number). Coord
// never issues a value above it, so a value above it in a file or key was
// never issued: a seed line or a hand edit put it there. Such a value is
// not taken as a counter (Counted), the next value is issued from the
// in-range ones, and doctor reports it with its fix. At one claim a
// millisecond the range lasts 285,000 years, so "the counter is at its
// ceiling" can only mean damage.
const MaxCounter int64 = 1 << 53

// CounterOK reports whether n is a value a counter could have issued
// (0 to MaxCounter).
func CounterOK(n int64) bool { return n >= 0 && n <= MaxCounter }

// Counted is n where it counts towards a counter's floor: n itself when
// CounterOK, else 0 (a value coord never issued raises nothing).
func Counted(n int64) int64 {
	if CounterOK(n) {
		return n
	}
	return 0
}

// NextCounter is the value after floor, or an error (CodeIO) when floor
// is at the ceiling. what names the counter ("epoch", "lease epoch", "kv
// revision").
func NextCounter(what string, floor int64) (int64, error) {
	if floor >= MaxCounter {
		return 0, Errorf(CodeIO, "the %s counter is at its ceiling (%d): no new value can be issued", what, MaxCounter).
			WithHint("a hand edit raised it; run 'coord doctor' to see where")
	}
	return max(floor, 0) + 1, nil
}

// CounterDamage describes a value above the ceiling for doctor: what
// holds it ("task 4.2's epoch", "leases.json last_epoch") and why it is
// damage.
func CounterDamage(what string, n int64) string {
	return fmt.Sprintf("%s %d is above the counter ceiling %d: coord never issues such a value (a seed line or a hand edit put it there)", what, n, MaxCounter)
}
