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

// A Path is one predicted path with its score (0..1, higher is surer)
// and the reasons it was chosen, strongest first.
type Path struct {
	Path  string
	Score float64
	Why   []string
}

// A Prediction is the paths a task will likely touch, best first.
type Prediction struct {
	Task  string
	Paths []Path
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
	textWhy, scopeWhy, nameWhy   string
	identWhy, coWhy              string
	declared                     bool
	// paired: chosen because a task of the batch with a nearly
	// identical text has it (pairWhy says which); cut: left out by the
	// batch's cap on the file.
	paired, cut bool
	pairWhy     string
}

// Predict returns the paths task t will likely touch, best first, as
// Plan does for a batch of one.
func (m *Model) Predict(t Task) Prediction { return m.Plan([]Task{t})[0] }

// Plan predicts, for each task of a batch (the tasks not yet claimed),
// the paths it will likely touch, best first: its declared literal paths
// first, then the tree's files chosen from the evidence, each with its
// reasons. The batch matters in two ways: tasks whose texts nearly match
// share their best file (so they are never in flight at once), and a
// file is predicted for no more of the batch's tasks than its share of
// recent changes warrants (see Params.Cap). It is deterministic.
func (m *Model) Plan(tasks []Task) []Prediction {
	ev := make([]map[int]*evidence, len(tasks))
	for i, t := range tasks {
		ev[i] = m.gather(t)
	}
	if m.p.PairSim > 0 && len(tasks) > 1 {
		m.pairUp(tasks, ev)
	}
	if m.p.Cap > 0 {
		m.capFiles(ev)
	}
	out := make([]Prediction, len(tasks))
	for i, t := range tasks {
		out[i] = m.choose(t, ev[i])
	}
	return out
}

// gather collects the evidence for every file that anything speaks for.
func (m *Model) gather(t Task) map[int]*evidence {
	p := m.p
	ev := map[int]*evidence{}
	get := func(f int) *evidence {
		e := ev[f]
		if e == nil {
			e = &evidence{}
			ev[f] = e
		}
		return e
	}
	// The tree's files that declared paths cover seed co-change.
	for _, d := range t.Files {
		d = CleanPath(d)
		if d == "" {
			continue
		}
		glob := strings.ContainsAny(d, "*?[")
		if f, ok := m.ids[d]; ok && !glob {
			get(f).declared = true
			continue
		}
		for f, fp := range m.paths {
			if (glob && globMatch(d, fp)) || strings.HasPrefix(fp, d+"/") {
				get(f).declared = true
			}
		}
	}
	if p.WText > 0 {
		m.textVote(t, get)
	}
	if p.WScope > 0 {
		m.scopeVote(t, get)
	}
	if p.WName > 0 {
		m.nameVote(t, get)
	}
	if p.WIdent > 0 && len(m.idents) > 0 {
		m.identVote(t, get)
	}
	for _, e := range ev {
		e.base = 1 - (1-p.WText*e.text)*(1-p.WScope*e.scope)*(1-p.WName*e.name)*(1-p.WIdent*e.ident)
		if e.declared {
			e.base = 1
		}
	}
	if p.WCo > 0 {
		m.coVote(ev, get)
	}
	for _, e := range ev {
		e.score = 1 - (1-e.base)*(1-p.WCo*e.co)
	}
	return ev
}

// choose picks a task's paths from its evidence: declared literal paths
// first, then files scoring at least MinScore and RelScore times the
// best, at most MaxPaths in all.
func (m *Model) choose(t Task, ev map[int]*evidence) Prediction {
	p := m.p
	out := Prediction{Task: t.ID}
	seen := map[string]bool{}
	for _, d := range t.Files {
		d = CleanPath(d)
		if d == "" || seen[d] || strings.ContainsAny(d, "*?[") {
			continue
		}
		seen[d] = true
		out.Paths = append(out.Paths, Path{Path: d, Score: 1, Why: []string{"declared"}})
	}
	var cand []int
	best := 0.0
	for f, e := range ev {
		if e.cut {
			continue
		}
		if e.score > best {
			best = e.score
		}
		cand = append(cand, f)
	}
	slices.SortFunc(cand, func(a, b int) int {
		if ev[a].score != ev[b].score {
			if ev[a].score > ev[b].score {
				return -1
			}
			return 1
		}
		return strings.Compare(m.paths[a], m.paths[b])
	})
	for _, f := range cand {
		e := ev[f]
		if len(out.Paths) >= p.MaxPaths && !e.declared {
			break
		}
		if !e.declared && !e.paired && (e.score < p.MinScore || e.score < p.RelScore*best) {
			continue
		}
		fp := m.paths[f]
		if seen[fp] {
			continue
		}
		seen[fp] = true
		out.Paths = append(out.Paths, Path{Path: fp, Score: round3(e.score), Why: e.why()})
	}
	return out
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

func (e *evidence) why() []string {
	type r struct {
		v float64
		s string
	}
	var rs []r
	if e.declared {
		rs = append(rs, r{2, "declared"})
	}
	if e.paired {
		rs = append(rs, r{1.5, e.pairWhy})
	}
	for _, x := range []r{{e.name, e.nameWhy}, {e.ident, e.identWhy}, {e.scope, e.scopeWhy}, {e.text, e.textWhy}, {e.co, e.coWhy}} {
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

// textVote: the past changes whose messages most resemble the task vote
// for the files they touched, each by its similarity and recency.
func (m *Model) textVote(t Task, get func(int) *evidence) {
	q := m.query(t)
	if len(q) == 0 {
		return
	}
	sim := map[int]float64{}
	for _, x := range q {
		for _, pst := range m.post[x.w] {
			sim[pst.doc] += x.v * pst.v
		}
	}
	type ds struct {
		d int
		s float64
	}
	var top []ds
	for d, s := range sim {
		if len(m.docs[d].files) > 0 {
			top = append(top, ds{d, s})
		}
	}
	slices.SortFunc(top, func(a, b ds) int {
		if a.s != b.s {
			if a.s > b.s {
				return -1
			}
			return 1
		}
		return b.d - a.d // the newer first
	})
	if len(top) > m.p.Neighbours {
		top = top[:m.p.Neighbours]
	}
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
		for _, f := range d.files {
			v := votes[f]
			if v == nil {
				v = &vote{best: x.d}
				votes[f] = v
			}
			v.v += x.s * d.weight
			v.n++
		}
	}
	for f, v := range votes {
		e := get(f)
		e.text = v.v / total
		like := quote(m.docs[v.best].subject)
		if v.n == 1 {
			e.textWhy = fmt.Sprintf("a change like %s touched it", like)
		} else {
			e.textWhy = fmt.Sprintf("%d changes like %s touched it", v.n, like)
		}
	}
}

// scopeVote: changes whose subjects carry the task's prefix ("printer:")
// vote for their files by the share of them that touched each.
func (m *Model) scopeVote(t Task, get func(int) *evidence) {
	_, sc := scopes(t.Title)
	for _, s := range sc {
		docs := m.scopeDoc[s]
		if len(docs) == 0 {
			continue
		}
		total := m.p.ScopePrior
		cnt := map[int]float64{}
		n := map[int]int{}
		for _, d := range docs {
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
				e.scopeWhy = fmt.Sprintf("%d of %d changes prefixed %q touched it", n[f], len(docs), s+":")
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

// coVote: files that change together with the best candidates.
func (m *Model) coVote(ev map[int]*evidence, get func(int) *evidence) {
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
		seeds = seeds[:m.p.Seeds]
	}
	for _, f := range seeds {
		sb := ev[f].base
		for g, c := range m.co[f] {
			share := c / (m.fileW[f] + m.p.CoPrior)
			v := sb * share
			e := get(g)
			// the seeds go best first, so an equal vote keeps the first
			if v > e.co {
				e.co = v
				e.coWhy = fmt.Sprintf("changed together with %s in %.0f%% of its changes", m.paths[f], 100*c/m.fileW[f])
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
