package plan

import (
	"math"
	"path"
	"slices"
	"strings"
)

// A Finished task is one of the project's own tasks that is done, with
// the paths it really touched (its touched_files): the best evidence of
// how this project's task texts map to files.
type Finished struct {
	Title       string
	Description string
	Touched     []string
}

// Input is what the predictor learns from. Every field is plain data;
// the caller reads the repository.
type Input struct {
	// Commits is the history, oldest first (an Index's Commits).
	Commits []Commit
	// Tree is the paths of the current tree. Only these (and a task's
	// declared paths) are ever predicted.
	Tree []string
	// Idents optionally maps a path of the tree to the identifiers its
	// content holds (see Identifiers); nil when contents are not read.
	Idents map[string][]string
	// Finished is the project's finished tasks with what they touched.
	Finished []Finished
}

// A doc is one piece of evidence linking a text to files: a commit, or a
// finished task.
type doc struct {
	subject string
	files   []int // tree ids
	weight  float64
	vec     []term // normalised tf-idf vector, sorted by word
	scopes  []string
	kind    string     // kindOf(subject)
	adds    []addition // folders the commit added files in
}

type term struct {
	w int // word id
	v float64
}

// A Model is the history digested for prediction. It is built once per
// run (in milliseconds for a few thousand commits) and answers for any
// number of tasks; it is read-only after NewModel, so Predict may be
// called from several goroutines.
type Model struct {
	p     Params
	paths []string       // tree ids -> path, sorted
	ids   map[string]int // path -> tree id
	docs  []doc

	vocab map[string]int
	idf   []float64
	post  [][]posting // word id -> docs holding it

	fileW    []float64         // recency-weighted number of informative docs touching each file
	co       []map[int]float64 // file -> file -> weighted docs touching both
	totalW   float64           // sum of informative doc weights
	scopeDoc map[string][]int  // scope -> docs
	names    map[string][]int  // lower-case base name ("printer.go") -> files
	stems    map[string][]int  // lower-case stem ("printer") -> files
	idents   map[string][]int  // identifier -> files holding it
	suffixes map[string][]int  // lower-case path suffixes of two or more segments -> files
	lower    map[string]int    // lower-case path -> file

	informative int // docs of 1 to MaxCoFiles files
	cal         cal // score -> probability
	// hot files, and the weighted informative docs of each kind and of
	// each kind touching each hot file.
	hot      []int
	kindW    map[string]float64
	kindFile map[string]map[int]float64
}

type posting struct {
	doc int
	v   float64
}

// NewModel digests the input with parameters p.
func NewModel(in Input, p Params) *Model {
	m := &Model{p: p, ids: map[string]int{}, vocab: map[string]int{},
		scopeDoc: map[string][]int{},
		names:    map[string][]int{}, stems: map[string][]int{},
		idents: map[string][]int{}, suffixes: map[string][]int{}, lower: map[string]int{}}
	m.paths = append([]string(nil), in.Tree...)
	slices.Sort(m.paths)
	m.paths = slices.Compact(m.paths)
	for i, p := range m.paths {
		m.ids[p] = i
	}
	m.indexNames()
	m.indexIdents(in.Idents)

	files := resolve(in.Commits, m.ids)
	var ts textScratch
	n := len(in.Commits)
	for i := range in.Commits {
		c := &in.Commits[i]
		age := float64(n - 1 - i)
		w := math.Exp2(-age / p.HalfLife)
		d := doc{subject: c.Subject, files: files[i], weight: w, kind: kindOf(c.Subject)}
		if len(c.Changes) <= p.MaxCoFiles {
			d.adds = additions(c)
		}
		_, d.scopes = scopes(c.Subject)
		m.docs = append(m.docs, d)
		m.addText(len(m.docs)-1, c.Subject, c.Body, &ts)
	}
	for _, f := range in.Finished {
		d := doc{subject: f.Title, weight: p.FinishedWeight, kind: kindOf(f.Title)}
		for _, t := range f.Touched {
			if id, ok := m.ids[CleanPath(t)]; ok {
				d.files = appendNew(d.files, id)
			}
		}
		_, d.scopes = scopes(f.Title)
		m.docs = append(m.docs, d)
		m.addText(len(m.docs)-1, f.Title, f.Description, &ts)
	}
	m.finishVectors()
	m.countFiles()
	m.calibrate()
	if p.HotShare > 0 {
		m.countKinds()
	}
	return m
}

// addText counts the words of a doc's text: the subject's words weigh
// SubjectWeight each, the body's 1, and the scopes of its prefix are
// words of their own ("scope:printer"). b is the build's scratch.
func (m *Model) addText(i int, subject, body string, b *textScratch) {
	add := func(w string, c float64) {
		id, ok := m.vocab[w]
		if !ok {
			id = len(m.vocab)
			m.vocab[w] = id
			m.post = append(m.post, nil)
			b.counts = append(b.counts, 0)
			b.in = append(b.in, false)
		}
		if !b.in[id] {
			b.in[id] = true
			b.ids = append(b.ids, id)
		}
		b.counts[id] += c
	}
	b.words = words(subject, b.words[:0])
	for _, w := range b.words {
		add(w, m.p.SubjectWeight)
	}
	b.words = words(body, b.words[:0])
	for _, w := range b.words {
		add(w, 1)
	}
	d := &m.docs[i]
	for _, s := range d.scopes {
		add("scope:"+s, m.p.SubjectWeight)
	}
	slices.Sort(b.ids)
	d.vec = make([]term, 0, len(b.ids))
	for _, id := range b.ids {
		d.vec = append(d.vec, term{id, b.counts[id]})
		b.counts[id], b.in[id] = 0, false
	}
	b.ids = b.ids[:0]
}

// textScratch is addText's working memory: word counts by word id
// (in: counted), the ids counted, the words of a text.
type textScratch struct {
	counts []float64
	in     []bool
	ids    []int
	words  []string
}

// finishVectors turns the docs' word counts into normalised tf-idf
// vectors and fills the postings.
func (m *Model) finishVectors() {
	df := make([]float64, len(m.vocab))
	for i := range m.docs {
		for _, t := range m.docs[i].vec {
			df[t.w]++
		}
	}
	n := float64(len(m.docs))
	m.idf = make([]float64, len(df))
	for w, f := range df {
		m.idf[w] = math.Log((n + 1) / (f + 0.5))
	}
	for i := range m.docs {
		d := &m.docs[i]
		var norm float64
		for j := range d.vec {
			v := (1 + math.Log(d.vec[j].v)) * m.idf[d.vec[j].w]
			if d.vec[j].v < 1 {
				v = d.vec[j].v * m.idf[d.vec[j].w]
			}
			d.vec[j].v = v
			norm += v * v
		}
		norm = math.Sqrt(norm)
		if norm == 0 {
			continue
		}
		for j := range d.vec {
			d.vec[j].v /= norm
			m.post[d.vec[j].w] = append(m.post[d.vec[j].w], posting{i, d.vec[j].v})
		}
	}
}

// countFiles gathers how often each file changed and with which others
// (both weighted by recency). Docs that touch more than MaxCoFiles files
// (a reformatting, a vendored update, an import, a shallow clone's first
// commit) say little about which files belong together or how often a
// file changes, and are left out of both.
func (m *Model) countFiles() {
	nf := len(m.paths)
	m.fileW = make([]float64, nf)
	m.co = make([]map[int]float64, nf)
	for i := range m.docs {
		d := &m.docs[i]
		if len(d.files) == 0 || len(d.files) > m.p.MaxCoFiles {
			continue
		}
		m.totalW += d.weight
		for _, f := range d.files {
			m.fileW[f] += d.weight
		}
		for _, f := range d.files {
			for _, g := range d.files {
				if f == g {
					continue
				}
				if m.co[f] == nil {
					m.co[f] = map[int]float64{}
				}
				m.co[f][g] += d.weight
			}
		}
		for _, s := range d.scopes {
			m.scopeDoc[s] = append(m.scopeDoc[s], i)
		}
	}
}

// indexNames indexes the tree's paths by base name, stem and path
// suffix, for the paths and names a task's text mentions.
func (m *Model) indexNames() {
	for id, p := range m.paths {
		lp := strings.ToLower(p)
		m.lower[lp] = id
		base := path.Base(lp)
		m.names[base] = append(m.names[base], id)
		st := base
		if i := strings.IndexByte(st[1:], '.'); i >= 0 {
			st = st[:i+1]
		}
		m.stems[st] = append(m.stems[st], id)
		segs := strings.Split(lp, "/")
		for k := 1; k < len(segs)-1; k++ {
			suf := strings.Join(segs[k:], "/")
			m.suffixes[suf] = append(m.suffixes[suf], id)
		}
	}
}

// indexIdents indexes the identifiers of file contents.
func (m *Model) indexIdents(idents map[string][]string) {
	for p, ids := range idents {
		f, ok := m.ids[p]
		if !ok {
			continue
		}
		for _, id := range ids {
			m.idents[id] = appendNew(m.idents[id], f)
		}
	}
}

// CleanPath normalises a repository-relative path: no "./" prefix, no
// duplicate or trailing slashes.
func CleanPath(p string) string {
	p = path.Clean("/" + p)
	return strings.TrimPrefix(p, "/")
}
