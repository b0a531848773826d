package replay

import (
	"cmp"
	"fmt"
	"slices"
)

// Blamed is one file behind a run's conflicts: the pairs of tasks whose
// changes met in it, and how many of those pairs had it predicted (at
// the claim, with a probability of at least the floor that makes coord
// weigh it) for both tasks, for one, or for neither, and the mean
// probability the tasks had for it.
type Blamed struct {
	Path                 string
	Pairs                int
	Both, One, Neither   int
	MeanP                float64
	Touched, TouchedLate int // tasks of the replay that changed it, and of those in its second half
	// Whole: of the pairs, those where one task added, deleted or
	// renamed the file (the other's change then depends on it, or
	// would be lost with it).
	Whole int
}

// Blame lists the files in which the conflicting pairs' changes met,
// most pairs first, from the tasks' predictions at their claims (pred,
// by task index).
func Blame(work []Work, pairs [][2]string, pred []Predicted) []Blamed {
	idx := map[string]int{}
	for i, w := range work {
		idx[w.ID] = i
	}
	prob := func(i int, path string) float64 {
		if k := slices.Index(pred[i].Files, path); k >= 0 {
			if k < len(pred[i].P) {
				return pred[i].P[k]
			}
			return 1
		}
		return 0
	}
	by := map[string]*Blamed{}
	var sumP = map[string]float64{}
	for _, pr := range pairs {
		a, b := idx[pr[0]], idx[pr[1]]
		fa, fb := work[a].Commit.Files, work[b].Commit.Files
		seen := map[string]bool{}
		for x := range fa {
			for y := range fb {
				if !filesMeet(&fa[x], &fb[y]) {
					continue
				}
				p := fa[x].Path
				if seen[p] {
					continue
				}
				seen[p] = true
				bl := by[p]
				if bl == nil {
					bl = &Blamed{Path: p}
					by[p] = bl
				}
				bl.Pairs++
				if fa[x].Status != "M" || fb[y].Status != "M" {
					bl.Whole++
				}
				pa, pb := prob(a, p), prob(b, p)
				sumP[p] += pa + pb
				switch {
				case pa > 0 && pb > 0:
					bl.Both++
				case pa > 0 || pb > 0:
					bl.One++
				default:
					bl.Neither++
				}
			}
		}
	}
	var out []Blamed
	for p, bl := range by {
		bl.MeanP = sumP[p] / float64(2*bl.Pairs)
		for i, w := range work {
			if slices.Contains(RealFiles(w.Commit), p) {
				bl.Touched++
				if i >= len(work)/2 {
					bl.TouchedLate++
				}
			}
		}
		out = append(out, *bl)
	}
	slices.SortFunc(out, func(a, b Blamed) int {
		return cmp.Or(b.Pairs-a.Pairs, cmp.Compare(a.Path, b.Path))
	})
	return out
}

// TaskBlame counts, for each task, the conflicting pairs it is in, most
// first, as lines "pairs id subject (files)".
func TaskBlame(work []Work, pairs [][2]string) []string {
	n := map[string]int{}
	for _, p := range pairs {
		n[p[0]]++
		n[p[1]]++
	}
	var out []string
	for _, w := range work {
		if n[w.ID] > 0 {
			out = append(out, fmt.Sprintf("%03d %s %.60s (%d files)", n[w.ID], w.ID, w.Commit.Subject, len(RealFiles(w.Commit))))
		}
	}
	slices.Sort(out)
	slices.Reverse(out)
	return out
}
