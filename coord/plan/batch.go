package plan

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// pairUp makes tasks whose texts nearly match share their best file:
// two tasks saying the same thing ("Fix X", "Fix X (contd.)", "Revert
// \\"Fix X\\"") touch the same files far more often than the evidence
// for any one file shows. For each pair whose similarity reaches
// PairSim, the file with the best combined score that either has is
// given to both (when one is best: files tied for it are never chosen
// by name).
func (m *Model) pairUp(tasks []Task, ev []map[int]*evidence) {
	vecs := make([][]term, len(tasks))
	unseen := map[string]int{}
	for i, t := range tasks {
		vecs[i] = m.taskVector(t, unseen)
	}
	areas := make([][]string, len(tasks))
	for i, t := range tasks {
		areas[i] = area(t.Title)
	}
	for i := range tasks {
		for j := i + 1; j < len(tasks); j++ {
			if cosine(vecs[i], vecs[j]) < m.p.PairSim || apart(areas[i], areas[j]) {
				continue
			}
			best, bs, tied := -1, 0.0, false
			for _, pair := range [2]map[int]*evidence{ev[i], ev[j]} {
				for f := range pair {
					s := score(ev[i], f) + score(ev[j], f)
					switch {
					case s > bs:
						best, bs, tied = f, s, false
					case s == bs && f != best:
						tied = true
					}
				}
			}
			if best < 0 || tied {
				continue // no best file, or several: none is chosen by name
			}
			for _, k := range [2]int{i, j} {
				other := tasks[i+j-k]
				e := ev[k][best]
				if e == nil {
					e = &evidence{}
					ev[k][best] = e
				}
				if !e.paired {
					e.paired = true
					e.pairWhy = fmt.Sprintf("task %s, which says nearly the same (%s), is predicted to touch it", other.ID, quote(other.Title))
				}
			}
		}
	}
}

// area is where a subject's prefix says the change is: its scopes
// ("printer" of "printer: …" or "fix(printer): …"), else a kind that
// names a place ("docs: …", "test: …", "ci: …"); none otherwise.
func area(subject string) []string {
	kind, sc := scopes(subject)
	if len(sc) == 0 && placeKinds[kind] {
		sc = []string{kind}
	}
	out := make([]string, len(sc))
	for i, s := range sc {
		out[i] = strings.TrimSuffix(s, "s") // "docs" and "doc", "tests" and "test"
	}
	return out
}

// placeKinds are the Conventional Commits kinds that say where a change
// is as well as what it is.
var placeKinds = map[string]bool{"docs": true, "doc": true, "test": true, "tests": true, "ci": true, "build": true}

// apart reports whether two tasks' prefixes name different places: then
// words they share ("trim" in "printer: trim spaces" and "docs: document
// --trim") do not make them the same work.
func apart(a, b []string) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	for _, x := range a {
		if slices.Contains(b, x) {
			return false
		}
	}
	return true
}

func score(ev map[int]*evidence, f int) float64 {
	if e := ev[f]; e != nil {
		return e.score
	}
	return 0
}

// taskVector is a task's text as a normalised tf-idf vector for
// comparing tasks with one another: words the history never used count
// too, with the highest weight (two tasks naming a new thing share it),
// numbered past the vocabulary in unseen, which the batch shares.
func (m *Model) taskVector(t Task, unseen map[string]int) []term {
	counts := map[string]float64{}
	for _, w := range words(t.Title, nil) {
		counts[w] += m.p.SubjectWeight
	}
	for _, w := range words(t.Description, nil) {
		counts[w]++
	}
	maxIDF := math.Log(float64(len(m.docs)+1) / 0.5)
	var q []term
	var norm float64
	for w, c := range counts {
		id, ok := m.vocab[w]
		idf := maxIDF
		if ok {
			idf = m.idf[id]
		} else {
			if _, ok := unseen[w]; !ok {
				unseen[w] = len(m.vocab) + len(unseen)
			}
			id = unseen[w]
		}
		v := (1 + math.Log(c)) * idf
		q = append(q, term{id, v})
		norm += v * v
	}
	if norm == 0 {
		return nil
	}
	norm = math.Sqrt(norm)
	for i := range q {
		q[i].v /= norm
	}
	slices.SortFunc(q, func(a, b term) int { return a.w - b.w })
	return q
}

// cosine of two normalised vectors sorted by word id.
func cosine(a, b []term) float64 {
	var s float64
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i].w == b[j].w:
			s += a[i].v * b[j].v
			i++
			j++
		case a[i].w < b[j].w:
			i++
		default:
			j++
		}
	}
	return s
}
