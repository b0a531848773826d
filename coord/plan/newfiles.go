package plan

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// New files. A task often adds files no path of the tree names: a
// changeset, a translation, a generated file, a new module. When most of
// the changes most like the task added a file in one folder, the task is
// predicted to add one there too, named like the task (its distinctive
// title words, with the extension the folder's additions have), and a
// task of the batch whose title names those words is predicted to touch
// that file as well: two tasks about one new thing meet in its file.

// The new-file rule's constants.
const (
	// NewShare is the least share of the similar changes (by
	// similarity) that added a file in a folder for a task to be
	// predicted to add one there.
	NewShare = 0.5
	// NewP scales that share into the probability of the new path.
	NewP = 0.6
	// slugWords is how many distinctive words name a new file.
	slugWords = 3
)

// addition is one folder a change added files in, and their extension.
type addition struct {
	dir, ext string
}

// additions lists the folders (and extensions) a commit added files in.
func additions(c *Commit) []addition {
	var out []addition
	for _, ch := range c.Changes {
		if ch.Status != 'A' {
			continue
		}
		a := addition{path.Dir(ch.Path), path.Ext(ch.Path)}
		if a.dir == "." {
			a.dir = ""
		}
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// slug is the name a task's new file is predicted under: its title's
// distinctive words (no stop words, no kind of change, no numbers), at
// most slugWords, joined by '-'; "" when none.
func slug(title string) string {
	kind := kindOf(title)
	_, sc := scopes(title)
	rest := title
	if len(sc) > 0 {
		if i := strings.Index(title, ":"); i >= 0 {
			rest = title[i+1:]
		}
	}
	var ws []string
	for _, w := range rawWords(rest) {
		w = strings.Trim(w, "-_")
		if len(w) < 3 || stopWords[w] || stem(w) == kind || allDigits(w) || slices.Contains(ws, w) {
			continue
		}
		ws = append(ws, w)
		if len(ws) == slugWords {
			break
		}
	}
	return strings.Join(ws, "-")
}

// newFiles predicts the files each task of the batch adds (see the top
// of this file), appended to its paths while it has room; the paths of
// the tree are never among them.
func (m *Model) newFiles(tasks []Task, out []Prediction, sc *simScratch) {
	type np struct {
		path, why string
		p         float64
		words     []string
	}
	preds := make([]*np, len(tasks))
	for i, t := range tasks {
		if len(t.Files) > 0 {
			continue
		}
		s := slug(t.Title)
		q := m.query(t)
		if s == "" || len(q) == 0 {
			continue
		}
		top := m.similar(q, sc, m.p.Neighbours, func(d int) bool { return len(m.docs[d].adds) > 0 || len(m.docs[d].files) > 0 })
		total := m.p.TextPrior
		share := map[addition]float64{}
		n := map[addition]int{}
		for _, x := range top {
			total += x.s
			for _, a := range m.docs[x.d].adds {
				share[a] += x.s
				n[a]++
			}
		}
		var best addition
		bs := 0.0
		for a, v := range share {
			if v > bs || v == bs && (a.dir < best.dir || a.dir == best.dir && a.ext < best.ext) {
				best, bs = a, v
			}
		}
		if bs/total < NewShare || n[best] < 2 {
			continue
		}
		p := path.Join(best.dir, s+best.ext)
		if _, inTree := m.ids[p]; inTree {
			continue
		}
		preds[i] = &np{path: p, p: round2(NewP * bs / total), words: strings.Split(s, "-"),
			why: fmt.Sprintf("%d of %d changes like this one added a file in %s/; named after the task", n[best], len(top), best.dir)}
	}
	for i := range tasks {
		if preds[i] == nil {
			continue
		}
		out[i].Paths = appendPath(out[i].Paths, Path{Path: preds[i].path, P: preds[i].p, Why: []string{preds[i].why}}, m.p.MaxPaths)
		// A task of the batch whose title names the new file's words
		// touches it too.
		for j, u := range tasks {
			if j == i || len(u.Files) > 0 {
				continue
			}
			words := rawWords(u.Title)
			if !all(preds[i].words, func(w string) bool { return slices.Contains(words, w) }) {
				continue
			}
			out[j].Paths = appendPath(out[j].Paths, Path{Path: preds[i].path, P: round2(NameP * preds[i].p / NewP),
				Why: []string{fmt.Sprintf("task %s is predicted to add it, and the title names %q", tasks[i].ID, strings.Join(preds[i].words, " "))}}, m.p.MaxPaths)
		}
	}
}

// appendPath adds x to paths (kept most likely first) unless it is there
// or there is no room.
func appendPath(paths []Path, x Path, max int) []Path {
	if len(paths) >= max || slices.ContainsFunc(paths, func(p Path) bool { return p.Path == x.Path }) {
		return paths
	}
	i := len(paths)
	for i > 0 && paths[i-1].P < x.P {
		i--
	}
	return slices.Insert(paths, i, x)
}

func all(ws []string, f func(string) bool) bool {
	for _, w := range ws {
		if !f(w) {
			return false
		}
	}
	return true
}
