package plan

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// history builds a small synthetic history: commits with a subject and
// the paths they modified ("A:path" adds, "D:path" deletes,
// "R:old>new" renames).
func history(entries ...[]string) []Commit {
	var out []Commit
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, e := range entries {
		c := Commit{Hash: fmt.Sprintf("%040x", i+1), Time: t0.Add(time.Duration(i) * time.Hour), Subject: e[0]}
		for _, p := range e[1:] {
			switch {
			case strings.HasPrefix(p, "A:"):
				c.Changes = append(c.Changes, Change{Status: 'A', Path: p[2:]})
			case strings.HasPrefix(p, "D:"):
				c.Changes = append(c.Changes, Change{Status: 'D', Path: p[2:]})
			case strings.HasPrefix(p, "R:"):
				from, to, _ := strings.Cut(p[2:], ">")
				c.Changes = append(c.Changes, Change{Status: 'R', Path: to, From: from})
			default:
				c.Changes = append(c.Changes, Change{Status: 'M', Path: p})
			}
		}
		out = append(out, c)
	}
	return out
}

// sample is a few dozen commits of a project with a printer, a searcher,
// docs and a changelog.
func sample() []Commit {
	var e [][]string
	for i := range 8 {
		e = append(e, []string{fmt.Sprintf("printer: fix column %d", i), "crates/printer/src/util.rs", "crates/printer/src/standard.rs"})
		e = append(e, []string{fmt.Sprintf("searcher: speed up line buffer %d", i), "crates/searcher/src/line_buffer.rs"})
		e = append(e, []string{fmt.Sprintf("Add option --flag-%d to the command line", i), "crates/core/flags/defs.rs", "crates/core/flags/defs_test.rs", "CHANGELOG.md"})
		e = append(e, []string{fmt.Sprintf("docs: typo %d", i), "docs/guide.md"})
	}
	e = append(e, []string{"Update README", "README.md"})
	return history(e...)
}

func tree(cs []Commit) []string {
	have := map[string]bool{}
	for _, c := range cs {
		for _, ch := range c.Changes {
			switch ch.Status {
			case 'D':
				delete(have, ch.Path)
			case 'R':
				delete(have, ch.From)
				have[ch.Path] = true
			default:
				have[ch.Path] = true
			}
		}
	}
	var out []string
	for p := range have {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// testParams keep every path with any evidence, the better to see what
// each signal finds.
func testParams() Params {
	p := DefaultParams
	p.Cap = 0
	p.MinP = 0.001
	p.RelScore = 0
	p.MaxPaths = 10
	return p
}

func find(p Prediction, path string) *Path {
	for i := range p.Paths {
		if p.Paths[i].Path == path {
			return &p.Paths[i]
		}
	}
	return nil
}

func TestPredict_Prefix(t *testing.T) {
	cs := sample()
	m := NewModel(Input{Commits: cs, Tree: tree(cs)}, testParams())
	got := m.Predict(Task{ID: "1", Title: "printer: handle wide characters"})
	p := find(got, "crates/printer/src/util.rs")
	if p == nil || got.Paths[0].Path != "crates/printer/src/util.rs" && got.Paths[0].Path != "crates/printer/src/standard.rs" {
		t.Fatalf("the printer's files are not first: %+v", got.Paths)
	}
	if !slices.ContainsFunc(p.Why, func(s string) bool { return strings.Contains(s, `prefixed "printer:"`) }) {
		t.Errorf("no prefix reason: %q", p.Why)
	}
	if find(got, "docs/guide.md") != nil {
		t.Errorf("docs/guide.md predicted for a printer task: %+v", got.Paths)
	}
}

func TestPredict_CoChange(t *testing.T) {
	cs := sample()
	m := NewModel(Input{Commits: cs, Tree: tree(cs)}, testParams())
	// The text names defs.rs; its test changes with it every time.
	got := m.Predict(Task{ID: "1", Title: "Rework crates/core/flags/defs.rs"})
	if got.Paths[0].Path != "crates/core/flags/defs.rs" {
		t.Fatalf("the named file is not first: %+v", got.Paths)
	}
	p := find(got, "crates/core/flags/defs_test.rs")
	if p == nil {
		t.Fatalf("the co-changed test is missing: %+v", got.Paths)
	}
	if !slices.ContainsFunc(p.Why, func(s string) bool {
		return strings.Contains(s, "changed together with crates/core/flags/defs.rs in 100% of its changes")
	}) {
		t.Errorf("no co-change reason: %q", p.Why)
	}
}

func TestPredict_NamedPath(t *testing.T) {
	cs := sample()
	m := NewModel(Input{Commits: cs, Tree: tree(cs)}, testParams())
	for _, c := range []struct{ text, want, why string }{
		{"Fix a broken link in docs/guide.md", "docs/guide.md", "the text names docs/guide.md"},
		{"Clarify line_buffer.rs comments", "crates/searcher/src/line_buffer.rs", "the text names line_buffer.rs"},
		{"Tidy the README", "README.md", `the title names "readme"`},
	} {
		got := m.Predict(Task{ID: "1", Title: c.text})
		if len(got.Paths) == 0 || got.Paths[0].Path != c.want {
			t.Errorf("%q: want %s first, got %+v", c.text, c.want, got.Paths)
			continue
		}
		if !slices.Contains(got.Paths[0].Why, c.why) {
			t.Errorf("%q: why %q, want %q among them", c.text, got.Paths[0].Why, c.why)
		}
	}
}

func TestPredict_Renames(t *testing.T) {
	cs := history(
		[]string{"parser: handle quotes", "src/parse.go"},
		[]string{"parser: handle escapes", "src/parse.go"},
		[]string{"parser: handle nesting", "src/parse.go"},
		[]string{"move the parser", "R:src/parse.go>internal/parser/parse.go"},
		[]string{"drop the lexer", "D:src/lex.go"},
		[]string{"a new lexer", "A:src/lex.go"},
	)
	// src/lex.go was touched by the old lexer's commits: those are a
	// different file and must not count for the new one.
	cs = append(history([]string{"lexer: tokens", "A:src/lex.go"}, []string{"lexer: more tokens", "src/lex.go"}), cs...)
	m := NewModel(Input{Commits: cs, Tree: tree(cs)}, testParams())
	got := m.Predict(Task{ID: "1", Title: "parser: handle comments"})
	if len(got.Paths) == 0 || got.Paths[0].Path != "internal/parser/parse.go" {
		t.Fatalf("want the parser under its current name first, got %+v", got.Paths)
	}
	if !slices.ContainsFunc(got.Paths[0].Why, func(s string) bool { return strings.HasPrefix(s, `3 of 3 changes prefixed "parser:"`) }) {
		t.Errorf("the commits made under the old name do not count: %q", got.Paths[0].Why)
	}
	if find(got, "src/parse.go") != nil {
		t.Errorf("the old name is predicted: %+v", got.Paths)
	}
	got = m.Predict(Task{ID: "2", Title: "lexer: more tokens again"})
	if p := find(got, "src/lex.go"); p != nil && slices.ContainsFunc(p.Why, func(s string) bool {
		return strings.Contains(s, "lexer: more tokens") || strings.Contains(s, `prefixed "lexer:"`)
	}) {
		t.Errorf("the deleted lexer's commits count for the new file: %+v", got.Paths)
	}
}

// TestPredict_Conversion: a file converted to another format in one
// commit (deleted, and added under its name with another extension)
// keeps its history under the new name.
func TestPredict_Conversion(t *testing.T) {
	var e [][]string
	for i := range 20 {
		e = append(e, []string{fmt.Sprintf("changes: note %d", i), "CHANGES.rst", fmt.Sprintf("src/f%d.py", i)})
	}
	e = append(e, []string{"Convert changes to markdown", "D:CHANGES.rst", "A:CHANGES.md"})
	cs := history(e...)
	m := NewModel(Input{Commits: cs, Tree: tree(cs)}, testParams())
	got := m.Predict(Task{ID: "1", Title: "changes: note 99"})
	p := find(got, "CHANGES.md")
	if p == nil || !slices.ContainsFunc(p.Why, func(s string) bool {
		return strings.Contains(s, `20 of 21 changes prefixed "changes:"`) || strings.Contains(s, `of 20 changes prefixed`)
	}) {
		t.Fatalf("the converted file lost its history: %+v", got.Paths)
	}
}

func TestPredict_OnlyTreeOrDeclared(t *testing.T) {
	cs := history(
		[]string{"cache: evict", "cache.go", "cache_old.go"},
		[]string{"cache: resize", "cache.go", "cache_old.go"},
		[]string{"remove the old cache", "D:cache_old.go"},
	)
	m := NewModel(Input{Commits: cs, Tree: tree(cs)}, testParams())
	got := m.Predict(Task{ID: "1", Title: "cache: evict faster"})
	var paths []string
	for _, p := range got.Paths {
		paths = append(paths, p.Path)
	}
	if !reflect.DeepEqual(paths, []string{"cache.go"}) {
		t.Fatalf("got %q, want cache.go and nothing that left the tree", paths)
	}
	// Declared files replace the predictions.
	got = m.Predict(Task{ID: "1", Title: "cache: evict faster", Files: []string{"gen/new_cache.go", "docs/*.md"}})
	if len(got.Paths) != 0 || !got.Declared {
		t.Fatalf("a task with declared files was predicted %+v", got)
	}
}

func TestPredict_Finished(t *testing.T) {
	cs := sample()
	in := Input{Commits: cs, Tree: append(tree(cs), "web/app.tsx"), Finished: []Finished{
		{Title: "Dashboard: dark mode", Description: "colours", Touched: []string{"web/app.tsx", "./web/app.tsx", "gone.txt"}},
	}}
	m := NewModel(in, testParams())
	got := m.Predict(Task{ID: "1", Title: "Dashboard: light mode"})
	if len(got.Paths) == 0 || got.Paths[0].Path != "web/app.tsx" {
		t.Fatalf("a finished task's touched file is not predicted: %+v", got.Paths)
	}
}

func TestPredict_Idents(t *testing.T) {
	cs := sample()
	tr := append(tree(cs), "src/widget.go", "src/other.go")
	idents := map[string][]string{
		"src/widget.go": Identifiers([]byte("package src\nfunc parseWidget(s string) {}\n"), 100),
		"src/other.go":  Identifiers([]byte("package src\nfunc other() {}\n"), 100),
	}
	m := NewModel(Input{Commits: cs, Tree: tr, Idents: idents}, testParams())
	got := m.Predict(Task{ID: "1", Title: "Fix a crash", Description: "parseWidget panics on an empty string"})
	p := find(got, "src/widget.go")
	if p == nil || p.Why[0] != "it holds parseWidget, which the text names" {
		t.Fatalf("the file holding the named identifier is missing: %+v", got.Paths)
	}
	if find(got, "src/other.go") != nil {
		t.Errorf("src/other.go predicted: %+v", got.Paths)
	}
}

func TestPlan_PairsNearDuplicates(t *testing.T) {
	cs := sample()
	p := testParams()
	p.PairSim = 0.6
	m := NewModel(Input{Commits: cs, Tree: tree(cs)}, p)
	tasks := []Task{
		{ID: "a", Title: "Tweak flaky snapshot expectations on tiny terminals", Description: "See docs/guide.md"},
		{ID: "b", Title: "Tweak flaky snapshot expectations on tiny terminals (contd.)"},
	}
	got := m.Plan(tasks)
	b := find(got[1], "docs/guide.md")
	if b == nil || !strings.Contains(b.Why[0], "task a, which says nearly the same") {
		t.Fatalf("the near-duplicate does not share a's best file: %+v", got[1].Paths)
	}
	p.PairSim = 0
	if got := NewModel(Input{Commits: cs, Tree: tree(cs)}, p).Plan(tasks); find(got[1], "docs/guide.md") != nil {
		t.Fatalf("without pairing the file is predicted anyway (the test proves nothing): %+v", got[1].Paths)
	}
}

func TestPlan_Bound(t *testing.T) {
	cs := sample()
	p := testParams()
	var tasks []Task
	for i := range 20 {
		tasks = append(tasks, Task{ID: fmt.Sprint(i), Title: fmt.Sprintf("Add option --more-%d to the command line", i)})
	}
	sum := func(p Params) (float64, int) {
		s, n := 0.0, 0
		for _, pr := range NewModel(Input{Commits: cs, Tree: tree(cs)}, p).Plan(tasks) {
			if x := find(pr, "CHANGELOG.md"); x != nil {
				s += x.P
				n++
			}
		}
		return s, n
	}
	free, n := sum(p)
	if n != 20 || free <= 0 {
		t.Fatalf("without a bound CHANGELOG.md is predicted for %d of 20 tasks (sum %.2f), want 20", n, free)
	}
	// CHANGELOG.md is in 8 of 33 changes: Cap 0.5 allows a sum of
	// 0.5 × 20 × 8/33 (weighted by recency) + 1, about 3.4.
	p.Cap, p.CapSlack = 0.5, 1
	bounded, _ := sum(p)
	if bounded > 3.6 || bounded < 3 || bounded >= free {
		t.Fatalf("with Cap 0.5 the probabilities of CHANGELOG.md sum to %.2f (%.2f unbounded), want about 3.4", bounded, free)
	}
}

// TestPlan_BulkCommit: a history of one bulk commit (a fresh import, a
// shallow clone) cannot inform: no task is given paths it is likely to
// touch, and never the same first paths chosen by name.
func TestPlan_BulkCommit(t *testing.T) {
	var paths []string
	for _, d := range []string{"api", "ui", "docs"} {
		for i := range 10 {
			paths = append(paths, fmt.Sprintf("A:%s/f%d.go", d, i))
		}
	}
	cs := history(append([]string{"Initial import"}, paths...))
	m := NewModel(Input{Commits: cs, Tree: tree(cs)}, DefaultParams)
	tasks := []Task{{ID: "ui", Title: "Make the UI dark"}, {ID: "api", Title: "Add an API for imports"}, {ID: "d", Title: "Document the import"}, {ID: "x", Title: "Initial import fixes"}}
	firsts := map[string]int{}
	for _, pr := range m.Plan(tasks) {
		for _, x := range pr.Paths {
			if x.P >= 0.1 {
				t.Errorf("task %s: %s predicted at %.2f from one bulk commit", pr.Task, x.Path, x.P)
			}
		}
		if len(pr.Paths) > 0 {
			firsts[pr.Paths[0].Path]++
		}
	}
	for p, n := range firsts {
		if n > 1 {
			t.Errorf("%d tasks share the first path %s", n, p)
		}
	}
}

// TestPlan_NoNameOrder: candidates tied at the last place are left out
// together, not chosen by name.
func TestPlan_NoNameOrder(t *testing.T) {
	var e [][]string
	for i := range 3 {
		e = append(e, []string{fmt.Sprintf("gen: regenerate %d", i), "gen/a.go", "gen/b.go", "gen/c.go", "gen/d.go"})
	}
	cs := history(e...)
	p := testParams()
	p.MaxPaths = 2
	got := NewModel(Input{Commits: cs, Tree: tree(cs)}, p).Predict(Task{ID: "1", Title: "gen: regenerate again"})
	if len(got.Paths) != 0 {
		t.Fatalf("four tied files, two places: got %+v", got.Paths)
	}
	p.MaxPaths = 4
	if got := NewModel(Input{Commits: cs, Tree: tree(cs)}, p).Predict(Task{ID: "1", Title: "gen: regenerate again"}); len(got.Paths) != 4 {
		t.Fatalf("four tied files, four places: got %+v", got.Paths)
	}
}

// TestCalibrate: on a history long enough to measure, the probabilities
// match what held-out changes really touched: a file every change of a
// prefix touched is predicted near certainty, and over many tasks the
// probabilities add up to about the files they touch.
func TestCalibrate(t *testing.T) {
	var e [][]string
	for i := range 60 {
		e = append(e, []string{fmt.Sprintf("printer: fix column %d", i), "printer.go"})
		if i%2 == 0 {
			e[len(e)-1] = append(e[len(e)-1], "printer_test.go")
		}
		e = append(e, []string{fmt.Sprintf("search: faster scan %d", i), "search.go"})
	}
	cs := history(e...)
	m := NewModel(Input{Commits: cs, Tree: tree(cs)}, DefaultParams)
	if m.cal.n == 0 {
		t.Fatalf("120 changes were not measured")
	}
	got := m.Predict(Task{ID: "1", Title: "printer: fix column 99"})
	pp, pt := find(got, "printer.go"), find(got, "printer_test.go")
	if pp == nil || pp.P < 0.8 {
		t.Fatalf("printer.go: %+v", got.Paths)
	}
	if pt == nil || pt.P < 0.3 || pt.P > 0.7 {
		t.Fatalf("printer_test.go, touched by half the printer changes: %+v", got.Paths)
	}
	if find(got, "search.go") != nil && find(got, "search.go").P > 0.1 {
		t.Fatalf("search.go: %+v", got.Paths)
	}
	// A young history of the same kind says less.
	young := NewModel(Input{Commits: cs[:10], Tree: tree(cs)}, DefaultParams).Predict(Task{ID: "1", Title: "printer: fix column 99"})
	if yp := find(young, "printer.go"); yp == nil || yp.P >= pp.P || yp.P > 0.45 {
		t.Fatalf("ten changes: %+v", young.Paths)
	}
}

// TestPlan_HotFileByKind: a file changed with nearly every change of one
// kind (a changelog that features touch, docs changes never) is judged
// by the task's kind, not by its words.
func TestPlan_HotFileByKind(t *testing.T) {
	var e [][]string
	for i := range 30 {
		e = append(e, []string{fmt.Sprintf("feat: widget option %d", i), fmt.Sprintf("src/w%d.go", i%7), "CHANGELOG.md"})
		e = append(e, []string{fmt.Sprintf("docs: widget option %d explained", i), "docs/widget.md"})
	}
	cs := history(e...)
	m := NewModel(Input{Commits: cs, Tree: tree(cs)}, DefaultParams)
	pr := m.Plan([]Task{{ID: "f", Title: "feat: a new widget colour"}, {ID: "d", Title: "docs: the widget colour"}})
	f, d := find(pr[0], "CHANGELOG.md"), find(pr[1], "CHANGELOG.md")
	if f == nil || f.P < 0.6 {
		t.Fatalf("a feature is not predicted to touch the changelog: %+v", pr[0].Paths)
	}
	if d != nil && d.P > 0.2 {
		t.Fatalf("a docs change is predicted to touch the changelog at %.2f: %+v", d.P, pr[1].Paths)
	}
}

func TestPlan_Deterministic(t *testing.T) {
	cs := sample()
	tasks := []Task{
		{ID: "1", Title: "printer: handle wide characters"},
		{ID: "2", Title: "Add option --color to the command line"},
		{ID: "3", Title: "searcher: speed up"},
		{ID: "4", Title: "docs: explain --color"},
	}
	var first []Prediction
	for i := range 20 {
		got := NewModel(Input{Commits: cs, Tree: tree(cs)}, DefaultParams).Plan(tasks)
		if i == 0 {
			first = got
			continue
		}
		if !reflect.DeepEqual(got, first) {
			t.Fatalf("run %d differs:\n%+v\n%+v", i, got, first)
		}
	}
}

func TestScopes(t *testing.T) {
	for _, c := range []struct {
		subject string
		kind    string
		scopes  []string
	}{
		{"printer: fix …", "", []string{"printer"}},
		{"fix(config): accept 0", "fix", []string{"config"}},
		{"feat(s3)!: breaking", "feat", []string{"s3"}},
		{"ignore,globset: increase pool capacity", "", []string{"ignore", "globset"}},
		{"docs: typo", "docs", nil},
		{"Fix CI: Pin nushell", "", nil},
		{"Merge pull request #12 from x/y: z", "", nil},
		{"no prefix here", "", nil},
	} {
		k, s := scopes(c.subject)
		if k != c.kind || !reflect.DeepEqual(s, c.scopes) {
			t.Errorf("scopes(%q) = %q, %q; want %q, %q", c.subject, k, s, c.kind, c.scopes)
		}
	}
}

func TestWords(t *testing.T) {
	got := words("Fix parseWidget's tests for v0.74.3 (#4630) in the LineBuffer", nil)
	want := []string{versionWord, "fix", "parse", "widget", "test", "line", "buffer"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("words = %q, want %q", got, want)
	}
}

func TestIndex_SaveLoad(t *testing.T) {
	cs := sample()
	cs[3].Body = strings.Repeat("é", maxBody) // cut at a rune boundary
	cs[5].Changes = append(cs[5].Changes, Change{Status: 'R', Path: "new.go", From: "old.go"})
	ix := NewIndex("abc", 0, cs)
	var buf bytes.Buffer
	if err := ix.Save(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := Load(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, ix) {
		t.Fatalf("the loaded index differs from the saved one")
	}
	if len(got.Commits[3].Body) > maxBody {
		t.Errorf("body of %d bytes kept", len(got.Commits[3].Body))
	}
}

func TestIndex_UpdateEqualsRebuild(t *testing.T) {
	cs := sample()
	for _, max := range []int{0, 10} {
		whole := NewIndex("h2", max, cs)
		part := NewIndex("h1", max, cs[:20])
		part.Update("h2", cs[20:])
		if !reflect.DeepEqual(part, whole) {
			t.Fatalf("max %d: an updated index differs from a rebuilt one", max)
		}
		if max > 0 && len(whole.Commits) != max {
			t.Errorf("max %d: %d commits kept", max, len(whole.Commits))
		}
	}
}

func TestLoad_Damaged(t *testing.T) {
	for _, s := range []string{
		``,
		`{"version":2,"head":"","paths":[],"commits":[]}`,
		`{"version":1,"head":"","paths":["a"],"commits":[{"h":"x","t":0,"s":"","c":[[77,1]]}]}`,
		`{"version":1,"head":"","paths":["a"],"commits":[{"h":"x","t":0,"s":"","c":[[1,0]]}]}`,
		`{"version":1,"head":"","paths":["a"],"commits":[{"h":"x","t":0,"s":"","c":[[77]]}]}`,
		`{"version":1,"head":"","paths":[""],"commits":[{"h":"x","t":0,"s":"","c":[[77,0]]}]}`,
		`{"version":1,"head":"","max":-1,"paths":[],"commits":[]}`,
		`{"version":1,"head":"","paths":[],"commits":[],"extra":1}`,
		`{"version":1,"head":"","paths":[],"commits":[]} {}`,
	} {
		if _, err := Load(strings.NewReader(s)); err == nil {
			t.Errorf("Load(%q) accepted", s)
		}
	}
}

// TestPairApart: two tasks sharing a rare word but whose prefixes name
// different places are not paired: "docs: document --trim" is not given
// the printer's file because "printer: trim spaces" is predicted to
// touch it. Tasks with the same prefix still are.
func TestPairApart(t *testing.T) {
	var commits []Commit
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, c := range []struct{ subject, path string }{
		{"docs: explain --wrap", "docs/usage.md"}, {"printer: fix the column width", "printer.go"},
		{"search: skip binary files", "search.go"}, {"printer: wrap long lines", "printer.go"},
		{"docs: fix a typo", "docs/usage.md"}, {"printer: colour the matches", "printer.go"},
	} {
		commits = append(commits, Commit{Hash: fmt.Sprint(i), Time: t0.Add(time.Duration(i) * time.Hour), Subject: c.subject,
			Changes: []Change{{Status: 'M', Path: c.path}}})
	}
	m := NewModel(Input{Commits: commits, Tree: []string{"docs/usage.md", "printer.go", "search.go"}}, DefaultParams)
	got := m.Plan([]Task{{ID: "1", Title: "printer: trim trailing spaces"}, {ID: "2", Title: "docs: document --trim"}})
	for _, p := range got[1].Paths {
		if p.Path == "printer.go" {
			t.Fatalf("task 2 (docs) predicted printer.go: %+v", p)
		}
	}
	if area("fix(printer): x")[0] != "printer" || area("tests: y")[0] != "test" || area("fix: z") != nil && len(area("fix: z")) != 0 {
		t.Errorf("area: %v %v %v", area("fix(printer): x"), area("tests: y"), area("fix: z"))
	}
	if !apart([]string{"printer"}, []string{"doc"}) || apart([]string{"printer"}, nil) || apart([]string{"a", "b"}, []string{"b"}) {
		t.Error("apart")
	}
}

// TestNamed: the identifiers a batch names are its identifier-like words
// and the words it writes as calls, distinct, sorted, bounded; a file
// holding a word named as a call is predicted as one holding an
// identifier is.
func TestNamed(t *testing.T) {
	tasks := []Task{
		{ID: "1", Title: "printer: flush() loses the last line", Description: "see parseWidth and MAX_LEN; not a(b) or x.go(1)"},
		{ID: "2", Title: "parseWidth again", Description: "call render(w) before flush(w)"},
	}
	want := []string{"MAX_LEN", "flush", "parseWidth", "render"}
	if got := Named(tasks, 10); !slices.Equal(got, want) {
		t.Errorf("Named = %q, want %q", got, want)
	}
	if got := Named(tasks, 2); len(got) != 2 {
		t.Errorf("Named with limit 2 = %q", got)
	}
	cs := sample()
	tr := append(tree(cs), "src/out.go")
	m := NewModel(Input{Commits: cs, Tree: tr, Idents: map[string][]string{"src/out.go": {"flush"}}}, testParams())
	got := m.Predict(Task{ID: "3", Title: "Output is cut short", Description: "flush() is never called at exit"})
	if p := find(got, "src/out.go"); p == nil || p.Why[0] != "it holds flush, which the text names" {
		t.Fatalf("the file holding the called function is missing: %+v", got.Paths)
	}
}

// TestPlan_NewFiles: a task whose similar changes added a file in one
// folder is predicted to add one there, named like the task, and a task
// of the batch naming the same thing is predicted to touch it; another
// new thing gets another name; nothing is predicted when the similar
// changes added nothing.
func TestPlan_NewFiles(t *testing.T) {
	var e [][]string
	for i, lang := range []string{"french", "german", "dutch", "polish", "czech", "greek"} {
		e = append(e, []string{fmt.Sprintf("i18n: add %s translation", lang), fmt.Sprintf("A:locales/%s.json", lang[:2]), "locales/index.json"})
		e = append(e, []string{fmt.Sprintf("parser: handle case %d", i), "src/parser.go"})
	}
	cs := history(e...)
	m := NewModel(Input{Commits: cs, Tree: tree(cs)}, DefaultParams)
	pr := m.Plan([]Task{
		{ID: "a", Title: "i18n: add Welsh translation"},
		{ID: "b", Title: "Fix typos in the Welsh translation"},
		{ID: "c", Title: "i18n: add Breton translation"},
		{ID: "d", Title: "parser: handle one more case"},
	})
	a, b, c := find(pr[0], "locales/welsh-translation.json"), find(pr[1], "locales/welsh-translation.json"), find(pr[2], "locales/breton-translation.json")
	if a == nil || a.P < 0.3 || !strings.Contains(a.Why[0], "added a file in locales/") {
		t.Fatalf("a: %+v", pr[0].Paths)
	}
	if b == nil || !strings.Contains(b.Why[0], "task a is predicted to add it") {
		t.Fatalf("b: %+v", pr[1].Paths)
	}
	if c == nil || find(pr[2], "locales/welsh-translation.json") != nil {
		t.Fatalf("c: %+v", pr[2].Paths)
	}
	for _, x := range pr[3].Paths {
		if strings.HasPrefix(x.Path, "locales/") {
			t.Fatalf("d: %+v", pr[3].Paths)
		}
	}
	p := DefaultParams
	p.WNew = 0
	if find(NewModel(Input{Commits: cs, Tree: tree(cs)}, p).Predict(Task{ID: "a", Title: "i18n: add Welsh translation"}), "locales/welsh-translation.json") != nil {
		t.Fatal("WNew 0 still predicts the new file")
	}
}
