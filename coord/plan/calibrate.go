package plan

import (
	"math"
	"slices"
	"strings"
)

// Probabilities. A score (how strongly the evidence speaks for a file)
// is turned into a probability that the task touches the file, measured
// on the repository's own history: the newest informative changes
// (commits of at most MaxCoFiles files, and the project's finished tasks
// with what they touched) are each predicted from the rest of the model
// (the change itself left out) and the scores are fitted to what they
// really touched (isotonic regression: a higher score never means a
// lower probability). A history too short to measure (fewer than
// CalMin informative changes) gives each score YoungPrior's share of
// itself: a young repository, or one bulk import, predicts little.
//
// Beside the history, two signals carry their own probabilities: a
// file the text names (NameP) and one holding an identifier it names
// (IdentP), which say as much in a young repository as in an old one.

// cal maps a score to a probability.
type cal struct {
	// xs and ys are the knots of a non-decreasing piecewise linear
	// function; none means the young-history rule.
	xs, ys []float64
	// shrink is the young-history rule's factor.
	shrink float64
	// n is the number of held-out predictions measured.
	n int
}

func (c *cal) prob(s float64) float64 {
	if s <= 0 {
		return 0
	}
	if len(c.xs) == 0 {
		return s * c.shrink
	}
	i, _ := slices.BinarySearch(c.xs, s)
	switch {
	case i == 0:
		return c.ys[0] * s / c.xs[0]
	case i == len(c.xs):
		return c.ys[len(c.ys)-1]
	}
	x0, x1, y0, y1 := c.xs[i-1], c.xs[i], c.ys[i-1], c.ys[i]
	if x1 == x0 {
		return y1
	}
	return y0 + (y1-y0)*(s-x0)/(x1-x0)
}

// The calibration's constants.
const (
	// CalMin is the fewest informative changes a history needs for its
	// scores to be measured.
	CalMin = 40
	// CalSample is the most held-out changes measured.
	CalSample = 150
	// calBlock is the fewest scores a knot of the fit averages.
	calBlock = 25
	// YoungPrior: without a measurement a score counts n/(n+YoungPrior)
	// of itself, n the informative changes.
	YoungPrior = 60
	// NameP and IdentP are the probabilities that a task touches a file
	// its text names and one holding an identifier it names.
	NameP  = 0.6
	IdentP = 0.4
	// PairP is the probability that a task touches the best file of a
	// task of the batch that says nearly the same.
	PairP = 0.5
	// KindPrior is how many changes of a kind weigh a hot file's
	// overall rate in its rate for that kind.
	KindPrior = 4
)

// calibrate measures the history's scores (see the top of this file).
func (m *Model) calibrate() {
	var inf []int
	for i := range m.docs {
		if n := len(m.docs[i].files); n > 0 && n <= m.p.MaxCoFiles {
			inf = append(inf, i)
		}
	}
	m.informative = len(inf)
	m.cal = cal{shrink: float64(len(inf)) / float64(len(inf)+YoungPrior)}
	if len(inf) < CalMin {
		return
	}
	h := min(CalSample, len(inf)/4)
	type obs struct{ s, hit float64 }
	var os []obs
	sc := m.newScratch()
	for _, d := range inf[len(inf)-h:] {
		doc := &m.docs[d]
		ev := m.gatherHistory(doc.vec, doc.scopes, d, sc)
		for f, e := range ev {
			s := e.histScore(m.p)
			if s < 0.01 {
				continue
			}
			hit := 0.0
			if slices.Contains(doc.files, f) {
				hit = 1
			}
			os = append(os, obs{s, hit})
		}
	}
	if len(os) < calBlock {
		return
	}
	slices.SortFunc(os, func(a, b obs) int {
		if a.s != b.s {
			if a.s < b.s {
				return -1
			}
			return 1
		}
		return int(a.hit - b.hit)
	})
	// Pool adjacent violators over blocks of calBlock scores.
	type block struct{ sx, sy, n float64 }
	var bs []block
	for i := 0; i < len(os); i += calBlock {
		var b block
		for _, o := range os[i:min(i+calBlock, len(os))] {
			b.sx += o.s
			b.sy += o.hit
			b.n++
		}
		bs = append(bs, b)
		for len(bs) > 1 {
			a, c := bs[len(bs)-2], bs[len(bs)-1]
			if a.sy/a.n <= c.sy/c.n {
				break
			}
			bs = append(bs[:len(bs)-2], block{a.sx + c.sx, a.sy + c.sy, a.n + c.n})
		}
	}
	for _, b := range bs {
		x, y := b.sx/b.n, b.sy/b.n
		if len(m.cal.xs) > 0 && x <= m.cal.xs[len(m.cal.xs)-1] {
			continue
		}
		m.cal.xs = append(m.cal.xs, x)
		m.cal.ys = append(m.cal.ys, y)
	}
	m.cal.n = len(os)
}

// kindOf is the kind of change a subject says it is: its Conventional
// Commits type ("fix" of "fix(parser): …"), else the first word after
// any prefix ("add" of "printer: add …" or "Add …"), stemmed.
func kindOf(subject string) string {
	kind, sc := scopes(subject)
	if kind != "" {
		return kind
	}
	rest := subject
	if len(sc) > 0 {
		if i := strings.Index(subject, ":"); i >= 0 {
			rest = subject[i+1:]
		}
	}
	for _, w := range rawWords(rest) {
		if len(w) > 1 {
			return stem(w)
		}
	}
	return ""
}

// countKinds counts, for each hot file (changed by at least HotShare of
// the informative changes), how often changes of each kind touched it.
func (m *Model) countKinds() {
	if m.totalW == 0 || m.informative < CalMin {
		return
	}
	m.kindW = map[string]float64{}
	m.kindFile = map[string]map[int]float64{}
	for f, w := range m.fileW {
		if w/m.totalW >= m.p.HotShare {
			m.hot = append(m.hot, f)
		}
	}
	if len(m.hot) == 0 {
		return
	}
	for i := range m.docs {
		d := &m.docs[i]
		if len(d.files) == 0 || len(d.files) > m.p.MaxCoFiles {
			continue
		}
		m.kindW[d.kind] += d.weight
		for _, f := range m.hot {
			if slices.Contains(d.files, f) {
				if m.kindFile[d.kind] == nil {
					m.kindFile[d.kind] = map[int]float64{}
				}
				m.kindFile[d.kind][f] += d.weight
			}
		}
	}
}

// kindRate is how likely a change of kind k touches the hot file f: its
// share of that kind's changes, drawn toward f's overall share when the
// kind is rare.
func (m *Model) kindRate(k string, f int) float64 {
	rate := m.fileW[f] / m.totalW
	return (m.kindFile[k][f] + KindPrior*rate) / (m.kindW[k] + KindPrior)
}

// spread is how much one file of a change of n files counts: a change
// of many files (an import, a reformatting, a shallow clone's first
// commit) says little about any one of them.
func (m *Model) spread(n int) float64 {
	if n <= m.p.MaxCoFiles {
		return 1
	}
	return float64(m.p.MaxCoFiles) / float64(n)
}

// bound scales down, in a batch, the probabilities of each file whose
// sum over the batch exceeds what its share of past changes warrants
// (Cap times the share times the batch's size, plus CapSlack): a hot
// file is predicted in proportion to how often tasks really touch it.
func (m *Model) bound(ev []map[int]*evidence) {
	if m.p.Cap <= 0 || m.totalW == 0 {
		return
	}
	sum := map[int]float64{}
	for _, e := range ev {
		for f, x := range e {
			sum[f] += x.p
		}
	}
	n := float64(len(ev))
	for f, s := range sum {
		limit := m.p.Cap*m.fileW[f]/m.totalW*n + m.p.CapSlack
		if s <= limit {
			continue
		}
		k := limit / s
		for _, e := range ev {
			if x := e[f]; x != nil {
				x.p *= k
				x.bounded = true
			}
		}
	}
}

func clamp01(x float64) float64 { return math.Max(0, math.Min(1, x)) }
