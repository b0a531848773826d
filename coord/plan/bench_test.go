package plan

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"
)

// synthetic builds a history of n commits over a tree of modules (a few
// dozen folders of a dozen files each, a changelog most changes touch),
// with subjects prefixed by their module, bodies of a few dozen words
// drawn from a skewed vocabulary, and tasks written the same way, some
// naming an identifier of a file; idents gives each file's identifiers.
// It is deterministic.
func synthetic(n, tasks int) (Input, []Task) {
	r := rand.New(rand.NewSource(1))
	const modules, perModule = 40, 12
	var vocab []string
	for i := range 3000 {
		vocab = append(vocab, fmt.Sprintf("w%sx%d", strings.Repeat("o", i%5), i))
	}
	word := func() string { // skewed: low ids far more often
		return vocab[int(float64(len(vocab))*r.Float64()*r.Float64()*r.Float64())]
	}
	mod := func(m int) string { return fmt.Sprintf("mod%02d", m) }
	file := func(m, f int) string { return fmt.Sprintf("src/%s/file%02d.go", mod(m), f) }
	ident := func(m, f, k int) string { return fmt.Sprintf("parse%sFile%dIdent%d", mod(m), f, k) }
	text := func(m, words int) string {
		var b strings.Builder
		for i := range words {
			if i > 0 {
				b.WriteByte(' ')
			}
			if r.Intn(4) == 0 {
				b.WriteString(mod(m))
			} else {
				b.WriteString(word())
			}
		}
		return b.String()
	}
	var in Input
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		m := int(modules * r.Float64() * r.Float64())
		c := Commit{Hash: fmt.Sprintf("%040x", i+1), Time: t0.Add(time.Duration(i) * time.Hour),
			Subject: mod(m) + ": " + text(m, 3+r.Intn(6)), Body: text(m, r.Intn(60))}
		for range 1 + r.Intn(4) {
			c.Changes = append(c.Changes, Change{Status: 'M', Path: file(m, r.Intn(perModule))})
		}
		if r.Intn(5) == 0 {
			c.Changes = append(c.Changes, Change{Status: 'M', Path: "CHANGELOG.md"})
		}
		if i < modules*perModule/4 { // the first commits add the tree
			for f := range 4 {
				c.Changes = append(c.Changes, Change{Status: 'A', Path: file(i%modules, (i/modules)*4+f)})
			}
		}
		in.Commits = append(in.Commits, c)
	}
	in.Idents = map[string][]string{}
	for m := range modules {
		for f := range perModule {
			in.Tree = append(in.Tree, file(m, f))
			var ids []string
			for k := range 50 {
				ids = append(ids, ident(m, f, k))
			}
			in.Idents[file(m, f)] = ids
		}
	}
	in.Tree = append(in.Tree, "CHANGELOG.md", "README.md")
	var ts []Task
	for i := range tasks {
		m := int(modules * r.Float64() * r.Float64())
		t := Task{ID: fmt.Sprintf("t%03d", i), Title: mod(m) + ": " + text(m, 3+r.Intn(6)), Description: text(m, r.Intn(80))}
		if r.Intn(3) == 0 {
			t.Description += " in " + ident(m, r.Intn(perModule), r.Intn(50)) + "()"
		}
		ts = append(ts, t)
	}
	return in, ts
}

// BenchmarkPlan200 is one plan of coord plan without its I/O: the model
// built from a history of 3,000 commits (with the identifiers of the
// tree's files) and 200 tasks planned as one batch. The target is a
// plan of 200 tasks over 3,000 commits in under a second, git included.
func BenchmarkPlan200(b *testing.B) {
	in, tasks := synthetic(3000, 200)
	b.ResetTimer()
	for b.Loop() {
		m := NewModel(in, DefaultParams)
		m.Plan(tasks)
	}
}

// BenchmarkNewModel3000 is the model's part of BenchmarkPlan200.
func BenchmarkNewModel3000(b *testing.B) {
	in, _ := synthetic(3000, 200)
	b.ResetTimer()
	for b.Loop() {
		NewModel(in, DefaultParams)
	}
}
