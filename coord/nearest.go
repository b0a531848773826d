package coord

import "strings"

// The one "did you mean" of coord: a field of a seed line, a setting,
// any name a user may mistype is matched to the known ones here.

// Nearest returns the name in known closest to name, ignoring case: one
// that name begins (an abbreviation: "prio", "skill"; at least 3
// letters), else the one with the fewest single character insertions,
// deletions, substitutions or swaps of two neighbours ("titel"). Ties go
// to the first in known's order.
func Nearest(name string, known []string) string {
	name = strings.ToLower(name)
	if len(name) >= 3 {
		for _, k := range known {
			if strings.HasPrefix(k, name) {
				return k
			}
		}
	}
	best, bestD := "", -1
	for _, k := range known {
		if d := editDistance(name, k); bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b,
// by bytes (field names are ASCII; others only ever compare as far).
func editDistance(a, b string) int {
	if len(a) > 256 {
		a = a[:256] // a field name is short; bound the work for a long one
	}
	// rows i-2, i-1 and i of the (len(a)+1) x (len(b)+1) table
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// NearestClose is Nearest when the match is close enough to suggest: a
// prefix, or at most a third of name's length of edits away; else "".
func NearestClose(name string, known []string) string {
	best := Nearest(name, known)
	if best == "" {
		return ""
	}
	lower := strings.ToLower(name)
	if len(lower) >= 3 && strings.HasPrefix(best, lower) {
		return best
	}
	if editDistance(lower, best) > len(lower)/3 {
		return ""
	}
	return best
}
