package plan

import "slices"

// A docSim is one past change and its similarity to a query.
type docSim struct {
	d int
	s float64
}

// before orders the similar changes: the most similar first, the newer
// first among equals (a total order: no two docs are equal).
func (a docSim) before(b docSim) bool {
	if a.s != b.s {
		return a.s > b.s
	}
	return a.d > b.d
}

// A simScratch is the working memory of similar, one per goroutine
// (the Model stays read-only): a dense accumulator over the docs, the
// docs it holds, and the heap of the best.
type simScratch struct {
	acc  []float64
	seen []bool
	hit  []int
	top  simHeap
}

func (m *Model) newScratch() *simScratch {
	return &simScratch{acc: make([]float64, len(m.docs)), seen: make([]bool, len(m.docs))}
}

// similar returns the k docs most similar to the query q (cosine of
// normalised tf-idf vectors, by the postings) among those keep accepts,
// the most similar first, the newer first among equals: what sorting
// every doc sharing a word with q and keeping the first k gives,
// without sorting them all. The result is valid until the next call
// with sc.
func (m *Model) similar(q []term, sc *simScratch, k int, keep func(d int) bool) []docSim {
	for _, x := range q {
		for _, pst := range m.post[x.w] {
			if !sc.seen[pst.doc] {
				sc.seen[pst.doc] = true
				sc.hit = append(sc.hit, pst.doc)
			}
			sc.acc[pst.doc] += x.v * pst.v
		}
	}
	// The k best in a heap whose root is the worst of them.
	sc.top = sc.top[:0]
	for _, d := range sc.hit {
		x := docSim{d, sc.acc[d]}
		sc.acc[d], sc.seen[d] = 0, false
		if k <= 0 || !keep(d) {
			continue
		}
		if len(sc.top) < k {
			sc.top = append(sc.top, x)
			sc.top.up(len(sc.top) - 1)
			continue
		}
		if x.before(sc.top[0]) {
			sc.top[0] = x
			sc.top.down(0)
		}
	}
	sc.hit = sc.hit[:0]
	slices.SortFunc(sc.top, func(a, b docSim) int {
		if a.before(b) {
			return -1
		}
		return 1
	})
	return sc.top
}

// simHeap is a binary heap of docSims whose root is the one that comes
// last in the order of before.
type simHeap []docSim

func (h simHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h[p].before(h[i]) {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func (h simHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && h[l].before(h[r]) {
			c = r
		}
		if !h[i].before(h[c]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
