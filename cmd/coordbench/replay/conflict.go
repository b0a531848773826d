package replay

// Conflicts are judged from what two commits really changed, as if both
// were made from one base (the replay's simplification: two tasks in
// flight at once branch from nearly the same target).
//
// Two changes meet, and count as one merge conflict, when they share a
// file and either
//   - one of them adds, deletes or renames it (a rename counts for both
//     its old and its new path; a copy adds its new path only), or
//   - one of them has no ranges for it (a binary file: the whole file),
//     or
//   - a changed range of one overlaps or touches a changed range of the
//     other (see rangesMeet).

// Meet reports whether the changes of a and b meet.
func Meet(a, b []FileChange) bool {
	for i := range a {
		for j := range b {
			if filesMeet(&a[i], &b[j]) {
				return true
			}
		}
	}
	return false
}

// names is the paths a change occupies: its path, and the old path of a
// rename.
func names(f *FileChange) (string, string) {
	if f.Status == "R" && f.From != f.Path {
		return f.Path, f.From
	}
	return f.Path, ""
}

func shareName(a, b *FileChange) bool {
	a1, a2 := names(a)
	b1, b2 := names(b)
	return a1 == b1 || (b2 != "" && a1 == b2) || (a2 != "" && (a2 == b1 || a2 == b2))
}

func filesMeet(a, b *FileChange) bool {
	if !shareName(a, b) {
		return false
	}
	if wholeFile(a) || wholeFile(b) {
		return true
	}
	return rangesMeet(a.Hunks, b.Hunks)
}

// wholeFile reports whether a change occupies its whole file: an
// addition, deletion or rename, or a change the history gives no ranges
// for.
func wholeFile(f *FileChange) bool {
	switch f.Status {
	case "M", "T":
		return len(f.Hunks) == 0
	}
	return true
}

// rangesMeet reports whether some hunk of a overlaps or is adjacent to
// some hunk of b. A hunk [s, n] is on the old side of its diff (git
// -U0): for n > 0 it replaces lines s..s+n-1, the half-open interval
// [s, s+n); for n == 0 it inserts after line s, the empty interval at
// s+1. Two intervals meet when no unchanged line lies between them:
// lo(a) <= hi(b) and lo(b) <= hi(a), with hi the exclusive end. So
// changes of lines 5-6 and of line 7 meet (adjacent), lines 5-6 and line
// 8 do not (line 7 between them is untouched), two insertions at the
// same place meet, and an insertion after line 4 meets a change of lines
// 5-6. This is git's own rule: its three-way merge reports adjacent
// changes as a conflict.
func rangesMeet(a, b [][2]int) bool {
	for _, x := range a {
		xl, xh := interval(x)
		for _, y := range b {
			yl, yh := interval(y)
			if xl <= yh && yl <= xh {
				return true
			}
		}
	}
	return false
}

func interval(h [2]int) (lo, hi int) {
	if h[1] == 0 {
		return h[0] + 1, h[0] + 1
	}
	return h[0], h[0] + h[1]
}
