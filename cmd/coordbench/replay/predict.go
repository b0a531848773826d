package replay

import (
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/rotd/coordination/coord/plan"
)

// Tree is the set of paths present after the commits (oldest first),
// sorted: what a repository built from them holds.
func Tree(cs []Commit) []string {
	have := map[string]bool{}
	for _, c := range cs {
		for _, f := range c.Files {
			switch f.Status {
			case "D":
				delete(have, f.Path)
			case "R":
				if f.From != "" {
					delete(have, f.From)
				}
				have[f.Path] = true
			default:
				have[f.Path] = true
			}
		}
	}
	out := make([]string, 0, len(have))
	for p := range have {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// PlanTasks are the works as tasks for the predictor: the subject as
// title, the body as description, nothing declared.
func PlanTasks(work []Work) []plan.Task {
	out := make([]plan.Task, len(work))
	for i, w := range work {
		out[i] = plan.Task{ID: w.ID, Title: w.Commit.Subject, Description: w.Commit.Body}
	}
	return out
}

// PlanCommits are the commits as the predictor's history.
func PlanCommits(cs []Commit) []plan.Commit {
	out := make([]plan.Commit, len(cs))
	for i := range cs {
		out[i] = cs[i].ForPlan()
	}
	return out
}

// Naive is the reference predictor: for each task, the two
// files most often changed by earlier commits whose subjects share words
// with the task's title, weighted by the number of shared words.
func Naive(history []Commit, tree []string, work []Work) [][]string {
	inTree := map[string]bool{}
	for _, p := range tree {
		inTree[p] = true
	}
	type hc struct {
		words map[string]bool
		files []string
	}
	hs := make([]hc, len(history))
	for i, c := range history {
		hs[i].words = naiveWords(c.Subject)
		for _, f := range c.Files {
			if inTree[f.Path] {
				hs[i].files = append(hs[i].files, f.Path)
			}
		}
	}
	out := make([][]string, len(work))
	for i, w := range work {
		tw := naiveWords(w.Commit.Subject)
		score := map[string]float64{}
		for _, h := range hs {
			n := 0
			for x := range tw {
				if h.words[x] {
					n++
				}
			}
			if n == 0 {
				continue
			}
			for _, f := range h.files {
				score[f] += float64(n)
			}
		}
		var fs []string
		for f := range score {
			fs = append(fs, f)
		}
		slices.SortFunc(fs, func(a, b string) int {
			if score[a] != score[b] {
				if score[a] > score[b] {
					return -1
				}
				return 1
			}
			return strings.Compare(a, b)
		})
		if len(fs) > 2 {
			fs = fs[:2]
		}
		out[i] = fs
	}
	return out
}

func naiveWords(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) > 2 && !naiveStop[w] {
			m[w] = true
		}
	}
	return m
}

var naiveStop = map[string]bool{"the": true, "and": true, "for": true, "with": true, "from": true, "when": true, "not": true, "add": true, "fix": true, "use": true, "update": true}

// Accuracy compares predicted files with the real ones: recall is the
// share of real files (present before the task) predicted, precision the
// share of predicted files that were real, both over all tasks.
func Accuracy(work []Work, pred [][]string) (recall, precision float64) {
	var hit, real, predicted int
	for i, w := range work {
		rf := RealFiles(w.Commit)
		set := map[string]bool{}
		for _, p := range rf {
			set[p] = true
		}
		for _, p := range pred[i] {
			predicted++
			if set[p] {
				hit++
			}
		}
		real += len(rf)
	}
	if real > 0 {
		recall = float64(hit) / float64(real)
	}
	if predicted > 0 {
		precision = float64(hit) / float64(predicted)
	}
	return
}
