package plan

import (
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
)

// A Task is what the predictor knows of a task before work starts.
type Task struct {
	ID          string
	Title       string
	Description string
	// Files are the declared paths or patterns (coord's files).
	Files []string
}

// A Path is one predicted path with its score (0..1: how strongly the
// evidence speaks for it), the probability that the task touches it
// (P, calibrated on the repository's history: see calibrate.go), and
// the reasons it was chosen, strongest first.
type Path struct {
	Path  string
	Score float64
	P     float64
	Why   []string
}

// A Prediction is the paths a task will likely touch, most likely
// first. Declared says the task declares files, which replace its
// predictions: Paths is then empty.
type Prediction struct {
	Task     string
	Paths    []Path
	Declared bool
}

// Probs returns the paths' probabilities, in order.
func (p Prediction) Probs() []float64 {
	out := make([]float64, len(p.Paths))
	for i, x := range p.Paths {
		out[i] = x.P
	}
	return out
}

// Files returns the predicted paths alone, best first.
func (p Prediction) Files() []string {
	out := make([]string, len(p.Paths))
	for i, x := range p.Paths {
		out[i] = x.Path
	}
	return out
}

// evidence is what speaks for one file.
type evidence struct {
	text, scope, name, ident, co float64
	base, score                  float64
	nameWhy, identWhy            string
	// What the reasons of the history's signals are made of, put in
	// words only for the paths chosen (why): the most similar change
	// (textDoc) of textN that touched the file; scopeN of scopeOf
	// changes prefixed scopeName; changed together with coFile in coPct%
	// of its changes (coSet).
	textN, textDoc  int
	scopeN, scopeOf int
	scopeName       string
	coFile          int
	coPct           float64
	coSet           bool
	// paired: chosen because a task of the batch with a nearly
	// identical text has it (pairWhy says which).
	paired  bool
	pairWhy string
	// p is the probability; kind the hot file's rate for the task's
	// kind of change (kindWhy says it); bounded, that the batch's
	// bound on the file lowered p.
	p       float64
	kind    float64
	kindWhy string
	bounded bool
}

// histScore is the part of the score the history gives (similar
// changes, the prefix, co-change), which calibration measures.
func (e *evidence) histScore(p Params) float64 {
	return 1 - (1-p.WText*e.text)*(1-p.WScope*e.scope)*(1-p.WCo*e.co)
}

// Predict returns the paths task t will likely touch, best first, as
// Plan does for a batch of one.
func (m *Model) Predict(t Task) Prediction { return m.Plan([]Task{t})[0] }

// Plan predicts, for each task of a batch (the tasks not yet claimed),
// the paths it will likely touch, each with its probability, most
// likely first; a task that declares files gets none (its declared files
// replace its predictions). The batch matters in two ways: tasks whose
// texts nearly match share their best file, and a file's probabilities
// over the batch add up to no more than its share of recent changes
// warrants (Params.Cap). No path is ever chosen for its name: paths
// tied at the last place a task has room for are left out together.
// It is deterministic.
func (m *Model) Plan(tasks []Task) []Prediction {
	ev := make([]map[int]*evidence, len(tasks))
	sc := m.newScratch()
	for i, t := range tasks {
		if len(t.Files) > 0 {
			ev[i] = map[int]*evidence{}
			continue
		}
		ev[i] = m.gather(t, sc)
	}
	if m.p.PairSim > 0 && len(tasks) > 1 {
		m.pairUp(tasks, ev)
	}
	for i, t := range tasks {
		if len(t.Files) == 0 {
			m.probabilities(t, ev[i])
		}
	}
	m.bound(ev)
	out := make([]Prediction, len(tasks))
	for i, t := range tasks {
		out[i] = m.choose(t, ev[i])
	}
	if m.p.WNew > 0 {
		m.newFiles(tasks, out, sc)
	}
	return out
}

// gather collects the evidence for every file that anything speaks for.
func (m *Model) gather(t Task, sc *simScratch) map[int]*evidence {
	p := m.p
	ev := map[int]*evidence{}
	get := getter(ev)
	_, scs := scopes(t.Title)
	if p.WText > 0 {
		m.textVote(m.query(t), -1, sc, get)
	}
	if p.WScope > 0 {
		m.scopeVote(scs, -1, get)
	}
	if p.WName > 0 {
		m.nameVote(t, get)
	}
	if p.WIdent > 0 && len(m.idents) > 0 {
		m.identVote(t, get)
	}
	for _, e := range ev {
		e.base = 1 - (1-p.WText*e.text)*(1-p.WScope*e.scope)*(1-p.WName*e.name)*(1-p.WIdent*e.ident)
	}
	if p.WCo > 0 {
		m.coVote(ev, get, -1)
	}
	for _, e := range ev {
		e.score = 1 - (1-e.base)*(1-p.WCo*e.co)
	}
	return ev
}

// gatherHistory is gather's history part for the doc vector q with
// scopes scs, doc exclude left out of the history: what calibration
// measures.
func (m *Model) gatherHistory(q []term, scs []string, exclude int, sc *simScratch) map[int]*evidence {
	p := m.p
	ev := map[int]*evidence{}
	get := getter(ev)
	if p.WText > 0 {
		m.textVote(q, exclude, sc, get)
	}
	if p.WScope > 0 {
		m.scopeVote(scs, exclude, get)
	}
	for _, e := range ev {
		e.base = 1 - (1-p.WText*e.text)*(1-p.WScope*e.scope)
	}
	if p.WCo > 0 {
		m.coVote(ev, get, exclude)
	}
	return ev
}

func getter(ev map[int]*evidence) func(int) *evidence {
	return func(f int) *evidence {
		e := ev[f]
		if e == nil {
			e = &evidence{}
			ev[f] = e
		}
		return e
	}
}

// probabilities turns a task's evidence into probabilities: the
// history's score calibrated, combined with the text's names and
// identifiers and the batch's pairing; a hot file is judged by the
// task's prefix and kind of change, not by its words.
func (m *Model) probabilities(t Task, ev map[int]*evidence) {
	if len(m.hot) > 0 {
		// A hot file is judged by the share of changes like this one
		// that touched it: those with the task's prefix, drawn toward
		// the rate of its kind of change (KindPrior changes' worth).
		k := kindOf(t.Title)
		_, sc := scopes(t.Title)
		var sn float64
		scnt := map[int]float64{}
		for _, s := range sc {
			for _, d := range m.scopeDoc[s] {
				sn += m.docs[d].weight
				for _, f := range m.docs[d].files {
					scnt[f] += m.docs[d].weight
				}
			}
		}
		get := getter(ev)
		for _, f := range m.hot {
			e := get(f)
			e.kind = (scnt[f] + KindPrior*m.kindRate(k, f)) / (sn + KindPrior)
			switch n := m.kindW[k]; {
			case sn >= 1:
				e.kindWhy = fmt.Sprintf("%.0f%% of recent changes prefixed %q touched it", 100*scnt[f]/sn, sc[0]+":")
			case n >= 1 && k != "":
				e.kindWhy = fmt.Sprintf("%.0f%% of recent %q changes touched it", 100*m.kindFile[k][f]/n, k)
			default:
				e.kindWhy = fmt.Sprintf("%.0f%% of recent changes touched it", 100*m.fileW[f]/m.totalW)
			}
		}
	}
	for _, e := range ev {
		var ph float64
		if e.kindWhy != "" {
			// A hot file: the words of a task say little (similar
			// changes touched it because nearly every change does).
			ph = e.kind
		} else {
			ph = m.cal.prob(e.histScore(m.p))
		}
		if e.paired {
			ph = 1 - (1-ph)*(1-PairP)
		}
		pn := max(NameP*m.p.WName*e.name, IdentP*m.p.WIdent*e.ident)
		e.p = clamp01(1 - (1-ph)*(1-pn))
	}
}

// choose picks a task's paths from its evidence: files whose
// probability is at least MinP and RelScore times the best, at most
// MaxPaths, most likely first; paths tied at the last place are left out
// together (never chosen by name).
func (m *Model) choose(t Task, ev map[int]*evidence) Prediction {
	p := m.p
	out := Prediction{Task: t.ID, Declared: len(t.Files) > 0}
	var cand []int
	best := 0.0
	for _, e := range ev {
		best = max(best, e.p)
	}
	for f, e := range ev {
		if e.p >= p.MinP && e.p >= p.RelScore*best {
			cand = append(cand, f)
		}
	}
	slices.SortFunc(cand, func(a, b int) int {
		if ev[a].p != ev[b].p {
			if ev[a].p > ev[b].p {
				return -1
			}
			return 1
		}
		return strings.Compare(m.paths[a], m.paths[b])
	})
	if len(cand) > p.MaxPaths {
		cut := p.MaxPaths
		for cut > 0 && ev[cand[cut-1]].p == ev[cand[cut]].p {
			cut--
		}
		cand = cand[:cut]
	}
	for _, f := range cand {
		e := ev[f]
		out.Paths = append(out.Paths, Path{Path: m.paths[f], Score: round3(e.score), P: round2(e.p), Why: e.why(m)})
	}
	return out
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

func (e *evidence) why(m *Model) []string {
	type r struct {
		v float64
		s string
	}
	var rs []r
	if e.paired {
		rs = append(rs, r{1.5, e.pairWhy})
	}
	var textWhy, scopeWhy, coWhy string
	switch {
	case e.textN == 1:
		textWhy = fmt.Sprintf("a change like %s touched it", quote(m.docs[e.textDoc].subject))
	case e.textN > 1:
		textWhy = fmt.Sprintf("%d changes like %s touched it", e.textN, quote(m.docs[e.textDoc].subject))
	}
	if e.scopeN > 0 {
		scopeWhy = fmt.Sprintf("%d of %d changes prefixed %q touched it", e.scopeN, e.scopeOf, e.scopeName+":")
	}
	if e.coSet {
		coWhy = fmt.Sprintf("changed together with %s in %.0f%% of its changes", m.paths[e.coFile], e.coPct)
	}
	for _, x := range []r{{e.name, e.nameWhy}, {e.ident, e.identWhy}, {e.scope, scopeWhy}, {e.text, textWhy}, {e.co, coWhy}, {e.kind, e.kindWhy}} {
		if x.v > 0 && x.s != "" {
			rs = append(rs, x)
		}
	}
	slices.SortStableFunc(rs, func(a, b r) int {
		if a.v > b.v {
			return -1
		}
		if a.v < b.v {
			return 1
		}
		return 0
	})
	// A reason far weaker than the strongest one explains nothing.
	var out []string
	for _, x := range rs {
		if len(out) > 0 && x.v < 0.15*rs[0].v {
			break
		}
		out = append(out, x.s)
	}
	if e.bounded {
		out = append(out, "lowered to its share of past changes in this batch")
	}
	return out
}

// query is the task's text as a normalised tf-idf vector over the
// model's vocabulary (words the history never used carry nothing).
func (m *Model) query(t Task) []term {
	counts := map[int]float64{}
	for _, w := range words(t.Title, nil) {
		if id, ok := m.vocab[w]; ok {
			counts[id] += m.p.SubjectWeight
		}
	}
	for _, w := range words(t.Description, nil) {
		if id, ok := m.vocab[w]; ok {
			counts[id]++
		}
	}
	_, sc := scopes(t.Title)
	for _, s := range sc {
		if id, ok := m.vocab["scope:"+s]; ok {
			counts[id] += m.p.SubjectWeight
		}
	}
	var q []term
	var norm float64
	for id, c := range counts {
		v := (1 + math.Log(c)) * m.idf[id]
		if c < 1 {
			v = c * m.idf[id]
		}
		q = append(q, term{id, v})
		norm += v * v
	}
	norm = math.Sqrt(norm)
	for i := range q {
		q[i].v /= norm
	}
	slices.SortFunc(q, func(a, b term) int { return a.w - b.w })
	return q
}

// textVote: the past changes whose messages most resemble the query
// (a task's text, or a change's own when calibrating, with that change
// excluded) vote for the files they touched, each by its similarity and
// recency, a change of many files less for each.
func (m *Model) textVote(q []term, exclude int, sc *simScratch, get func(int) *evidence) {
	if len(q) == 0 {
		return
	}
	top := m.similar(q, sc, m.p.Neighbours, func(d int) bool { return len(m.docs[d].files) > 0 && d != exclude })
	total := m.p.TextPrior
	for _, x := range top {
		total += x.s * m.docs[x.d].weight
	}
	type vote struct {
		v    float64
		n    int
		best int
	}
	votes := map[int]*vote{}
	for _, x := range top {
		d := &m.docs[x.d]
		sp := m.spread(len(d.files))
		for _, f := range d.files {
			v := votes[f]
			if v == nil {
				v = &vote{best: x.d}
				votes[f] = v
			}
			v.v += x.s * d.weight * sp
			v.n++
		}
	}
	for f, v := range votes {
		e := get(f)
		e.text = v.v / total
		e.textN, e.textDoc = v.n, v.best
	}
}

// scopeVote: changes whose subjects carry the prefix sc ("printer:")
// vote for their files by the share of them that touched each (doc
// exclude left out).
func (m *Model) scopeVote(sc []string, exclude int, get func(int) *evidence) {
	for _, s := range sc {
		docs := m.scopeDoc[s]
		if len(docs) == 0 {
			continue
		}
		total := m.p.ScopePrior
		cnt := map[int]float64{}
		n := map[int]int{}
		for _, d := range docs {
			if d == exclude {
				continue
			}
			total += m.docs[d].weight
			for _, f := range m.docs[d].files {
				cnt[f] += m.docs[d].weight
				n[f]++
			}
		}
		for f, c := range cnt {
			e := get(f)
			v := c / total
			if v > e.scope {
				e.scope = v
				e.scopeN, e.scopeOf, e.scopeName = n[f], len(docs), s
			}
		}
	}
}

// nameVote: paths, file names and stems the text names.
func (m *Model) nameVote(t Task, get func(int) *evidence) {
	text := t.Title + "\n" + t.Description
	set := func(f int, v float64, why string) {
		e := get(f)
		if v > e.name {
			e.name = v
			e.nameWhy = why
		}
	}
	for _, mt := range mentions(text) {
		if f, ok := m.lower[mt]; ok {
			set(f, 1, fmt.Sprintf("the text names %s", m.paths[f]))
			continue
		}
		if fs := m.suffixes[mt]; len(fs) > 0 && len(fs) <= 3 {
			for _, f := range fs {
				set(f, 0.9/float64(len(fs)), fmt.Sprintf("the text names %s", mt))
			}
			continue
		}
		if fs := m.names[path.Base(mt)]; len(fs) > 0 && len(fs) <= 3 {
			for _, f := range fs {
				set(f, 0.8/float64(len(fs)), fmt.Sprintf("the text names %s", path.Base(mt)))
			}
		}
	}
	for _, w := range rawWords(t.Title) {
		if fs := m.stems[w]; len(fs) > 0 && len(fs) <= 3 {
			for _, f := range fs {
				set(f, 0.5/float64(len(fs)), fmt.Sprintf("the title names %q", w))
			}
		}
	}
}

// identVote: files whose contents hold an identifier the text names.
func (m *Model) identVote(t Task, get func(int) *evidence) {
	for _, id := range taskIdents(t) {
		fs := m.idents[id]
		if len(fs) == 0 || len(fs) > 5 {
			continue
		}
		for _, f := range fs {
			e := get(f)
			v := 0.6 / float64(len(fs))
			if v > e.ident {
				e.ident = v
				e.identWhy = fmt.Sprintf("it holds %s, which the text names", id)
			}
		}
	}
}

// coVote: files that change together with the best candidates (doc
// exclude left out). Candidates tied at the last seed's place are left
// out together.
func (m *Model) coVote(ev map[int]*evidence, get func(int) *evidence, exclude int) {
	var seeds []int
	for f := range ev {
		seeds = append(seeds, f)
	}
	slices.SortFunc(seeds, func(a, b int) int {
		if ev[a].base != ev[b].base {
			if ev[a].base > ev[b].base {
				return -1
			}
			return 1
		}
		return a - b
	})
	if len(seeds) > m.p.Seeds {
		cut := m.p.Seeds
		for cut > 0 && ev[seeds[cut-1]].base == ev[seeds[cut]].base {
			cut--
		}
		seeds = seeds[:cut]
	}
	var ex *doc
	if exclude >= 0 && len(m.docs[exclude].files) <= m.p.MaxCoFiles {
		ex = &m.docs[exclude]
	}
	for _, f := range seeds {
		sb := ev[f].base
		fw := m.fileW[f]
		inEx := ex != nil && slices.Contains(ex.files, f)
		if inEx {
			fw -= ex.weight
		}
		for g, c := range m.co[f] {
			if inEx && slices.Contains(ex.files, g) {
				c -= ex.weight
				if c <= 1e-12 {
					continue
				}
			}
			share := c / (fw + m.p.CoPrior)
			v := sb * share
			e := get(g)
			// the seeds go best first, so an equal vote keeps the first
			if v > e.co {
				e.co = v
				e.coFile, e.coPct, e.coSet = f, 100*c/fw, true
			}
		}
	}
}

// rawWords are the lower-case words of a text as written (for names).
func rawWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r >= 0x80)
	})
}

// quote shortens a subject for an explanation.
func quote(s string) string {
	if len(s) > 50 {
		i := 47
		for i > 0 && s[i]&0xC0 == 0x80 {
			i--
		}
		s = s[:i] + "…"
	}
	return "'" + s + "'"
}

// globMatch matches a declared pattern against a path, '**' spanning
// directories.
func globMatch(pat, p string) bool {
	if strings.Contains(pat, "**") {
		pre, post, _ := strings.Cut(pat, "**")
		if !strings.HasPrefix(p, pre) {
			return false
		}
		rest := strings.TrimPrefix(post, "/")
		if rest == "" {
			return true
		}
		segs := strings.Split(p[len(pre):], "/")
		for i := range segs {
			if ok, _ := path.Match(rest, strings.Join(segs[i:], "/")); ok {
				return true
			}
		}
		return false
	}
	ok, _ := path.Match(pat, p)
	return ok
}
