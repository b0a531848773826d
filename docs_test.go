package rotdtemplate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The README and docs/ are the project's documentation: every relative
// link in them must name a file of this repository (and, with #anchor, a
// heading of that file), and nothing in them, or in the code's comments,
// may point outside the repository (a clone holds nothing beside it).

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeSpan  = regexp.MustCompile("`[^`\n]*`")
	mdHeading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *#*$`)
)

// docFiles are the documents checked: README.md, docs/*.md and
// docs/decisions/*.md.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	decisions, err := filepath.Glob(filepath.Join("docs", "decisions", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append(append([]string{"README.md"}, files...), decisions...)
}

// prose is md without fenced code blocks and inline code spans, so a link
// shown as code is not taken for one.
func prose(md string) string {
	var b strings.Builder
	fenced := false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			b.WriteString(codeSpan.ReplaceAllString(l, "") + "\n")
		}
	}
	return b.String()
}

// anchors returns the anchors GitHub gives md's headings: lower case,
// only letters, digits, spaces, '-' and '_' kept, spaces as '-', a repeat
// suffixed -1, -2, ….
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	fenced := false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
		}
		m := mdHeading.FindStringSubmatch(l)
		if fenced || m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		for i, base := 1, a; out[a]; i++ {
			a = base + "-" + strconv.Itoa(i)
		}
		out[a] = true
	}
	return out
}

func TestDocLinks(t *testing.T) {
	anchorsOf := map[string]map[string]bool{} // by file, each read once
	for _, doc := range docFiles(t) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(prose(string(b)), -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(link, "#")
			target := doc
			if file != "" {
				target = path.Join(path.Dir(doc), file)
				if target == ".." || strings.HasPrefix(target, "../") || path.IsAbs(file) {
					t.Errorf("%s: link %q points outside the repository", doc, link)
					continue
				}
				if _, err := os.Stat(filepath.FromSlash(target)); err != nil {
					t.Errorf("%s: link %q: %v", doc, link, err)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				t.Errorf("%s: link %q: an anchor into a file that is not Markdown", doc, link)
				continue
			}
			have, ok := anchorsOf[target]
			if !ok {
				tb, err := os.ReadFile(filepath.FromSlash(target))
				if err != nil {
					t.Fatal(err)
				}
				have = anchors(string(tb))
				anchorsOf[target] = have
			}
			if !have[anchor] {
				t.Errorf("%s: link %q: %s has no heading with anchor #%s", doc, link, target, anchor)
			}
		}
	}
}

// TestNothingPointsOutside fails on a path into the directories beside
// the repository (where the project's planning lives) in the docs or in
// any Go file: a reader of a clone cannot follow it.
func TestNothingPointsOutside(t *testing.T) {
	bad := "../" + "shared" // not spelled out, so this file passes
	check := func(name string) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, bad) {
				t.Errorf("%s:%d: points outside the repository: %s", name, i+1, strings.TrimSpace(l))
			}
		}
	}
	for _, doc := range docFiles(t) {
		check(doc)
	}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			check(p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestAnchors(t *testing.T) {
	got := anchors("# The agent loop\n## `coord mcp`\n## run --inbox\n## quota.json, leases.json\n## Choices\n## Choices\n```\n# not a heading\n```\n")
	for _, want := range []string{"the-agent-loop", "coord-mcp", "run---inbox", "quotajson-leasesjson", "choices", "choices-1"} {
		if !got[want] {
			t.Errorf("anchor %q missing from %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Errorf("a line in a code block was taken for a heading")
	}
}

var (
	testName  = regexp.MustCompile(`^(Test|Fuzz|Benchmark)[A-Za-z0-9_]+`)
	testFunc  = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)[A-Za-z0-9_]+)\(`)
	runFlag   = regexp.MustCompile(`-(?:run|bench) '([^']*)'`)
	nameInRun = regexp.MustCompile(`(?:Test|Fuzz|Benchmark)[A-Za-z0-9_]+`)
)

// testFuncs maps each Test, Fuzz and Benchmark function of the
// repository to the _test.go files (slash paths) that define it.
func testFuncs(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range testFunc.FindAllStringSubmatch(string(b), -1) {
			out[m[1]] = append(out[m[1]], filepath.ToSlash(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDocReliabilityNamesExist holds docs/RELIABILITY.md to the code: every
// test it names is defined (in the _test.go file named before it in the
// same table cell, when one is), every script it names is in
// testdata/script, and every `go test -run` (or `go -C DIR test -run`,
// in a nested module) it gives names tests of the packages it runs.
func TestDocReliabilityNamesExist(t *testing.T) {
	const doc = "docs/RELIABILITY.md"
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	funcs := testFuncs(t)
	script := func(name string) bool {
		_, err := os.Stat(filepath.Join("testdata", "script", name+".txtar"))
		return err == nil
	}
	for i, line := range strings.Split(string(b), "\n") {
		where := fmt.Sprintf("%s:%d", doc, i+1)
		for _, cell := range strings.Split(strings.ReplaceAll(line, `\|`, "\x00"), "|") {
			cell = strings.ReplaceAll(cell, "\x00", "|")
			file := ""
			for _, span := range codeSpan.FindAllString(cell, -1) {
				span = strings.Trim(span, "`")
				switch {
				case strings.HasPrefix(span, "go test ") || strings.HasPrefix(span, "go -C "):
					checkRun(t, where, span, funcs, script)
				case strings.HasSuffix(span, "_test.go") || strings.HasSuffix(span, ".txtar"):
					if _, err := os.Stat(filepath.FromSlash(span)); err != nil {
						t.Errorf("%s: %v", where, err)
					}
					file = span
				case strings.HasPrefix(span, "TestScript/"):
					if name := strings.TrimPrefix(span, "TestScript/"); !script(name) {
						t.Errorf("%s: no script testdata/script/%s.txtar", where, name)
					}
				case testName.MatchString(span):
					name := testName.FindString(span)
					files := funcs[name]
					if len(files) == 0 {
						t.Errorf("%s: no test named %s", where, name)
					} else if strings.HasSuffix(file, "_test.go") && !slices.Contains(files, file) {
						t.Errorf("%s: %s is not in %s (it is in %s)", where, name, file, strings.Join(files, ", "))
					}
				}
			}
		}
	}
}

// checkRun checks a `go test -run 'RE' PKG…` command, or `go -C DIR test
// -run 'RE' PKG…` (a nested module's tests, its packages read from DIR):
// each test name in RE is defined in one of the packages (a ./dir/...
// pattern counts every package under dir), and each TestScript/
// alternative is a script.
func checkRun(t *testing.T, where, cmd string, funcs map[string][]string, script func(string) bool) {
	t.Helper()
	base := "."
	fields := strings.Fields(cmd)
	if len(fields) > 3 && fields[1] == "-C" {
		base = fields[2]
		if _, err := os.Stat(filepath.Join(filepath.FromSlash(base), "go.mod")); err != nil {
			t.Errorf("%s: %q: -C names no module: %v", where, cmd, err)
		}
		fields = fields[3:]
	}
	var dirs []string
	for _, f := range fields {
		if strings.HasPrefix(f, "./") {
			dirs = append(dirs, path.Join(base, strings.TrimPrefix(f, "./")))
		}
	}
	m := runFlag.FindStringSubmatch(cmd)
	if m == nil {
		t.Errorf("%s: %q has no -run or -bench pattern", where, cmd)
		return
	}
	re := m[1]
	if _, err := regexp.Compile(re); err != nil {
		t.Errorf("%s: %q: %v", where, cmd, err)
	}
	if _, rest, ok := strings.Cut(re, "TestScript/"); ok {
		rest = strings.TrimPrefix(rest, "^")
		if strings.HasPrefix(rest, "(") {
			rest = rest[1:strings.Index(rest, ")")]
		} else {
			rest, _, _ = strings.Cut(rest, "$")
		}
		for _, alt := range strings.Split(rest, "|") {
			if alt == "" {
				continue
			}
			if !script(alt) {
				// a pattern such as write_claims(_hub)?: its stem must exist
				if stem, _, _ := strings.Cut(alt, "("); !script(stem) {
					t.Errorf("%s: no script testdata/script/%s.txtar for %q", where, alt, cmd)
				}
			}
		}
	}
	for _, pattern := range nameInRun.FindAllString(re, -1) {
		if !runsSome(pattern, dirs, funcs) {
			t.Errorf("%s: %q: no test %s in %s", where, cmd, pattern, strings.Join(dirs, " "))
		}
	}
}

// runsSome reports whether a test whose name starts with pattern (as -run
// reads an unanchored name such as TestCrash) is defined in one of the
// package directories (dir/... counting every package under dir).
func runsSome(pattern string, dirs []string, funcs map[string][]string) bool {
	for name, files := range funcs {
		if !strings.HasPrefix(name, pattern) {
			continue
		}
		for _, file := range files {
			dir := path.Dir(file)
			for _, d := range dirs {
				base, tree := strings.CutSuffix(d, "/...")
				if dir == base || tree && strings.HasPrefix(dir, base+"/") {
					return true
				}
			}
		}
	}
	return false
}

// The project's contract and its issue tracker are not in the
// repository, so nothing in it may send a reader there: a contract
// section (the section sign, or the word contract, before a number) or an
// issue number (the word issue before a number, with or without a hash).
// A comment says the behaviour in its own words or names the document
// that explains it. Another project's issue named with its repository
// ("golang/go#75804") is a reference a reader can follow, and a '#'
// followed by digits elsewhere (a colour, a pull request in a commit
// message a test parses) is not a citation.
var citation = []*regexp.Regexp{
	regexp.MustCompile(`§\s*\d+[a-z]?`),
	regexp.MustCompile(`(?i)\bcontract\s+§?\s*\d+[a-z]?\b`),
	regexp.MustCompile(`(?i)\bissues?\s+(?:no\.?\s*)?#?\d+\b`),
	regexp.MustCompile(`(?i)\bissues?\b[^\n]{0,30}?(?:^|[^\w/.-])#\d+\b`),
}

// citations returns the citations in text, one per line that has any,
// as "line: text".
func citations(text string) []string {
	var out []string
	for i, l := range strings.Split(text, "\n") {
		if !mayCite(l) {
			continue
		}
		for _, re := range citation {
			if m := re.FindString(l); m != "" {
				out = append(out, strconv.Itoa(i+1)+": "+m)
				break
			}
		}
	}
	return out
}

// mayCite reports whether line holds a word every citation pattern needs
// (a section sign, "contract" or "issue", in any case): the patterns run
// only on those lines, which keeps the scan of every tracked file cheap.
func mayCite(line string) bool {
	if strings.Contains(line, "§") {
		return true
	}
	for i := 0; i+5 <= len(line); i++ {
		switch line[i] | 0x20 {
		case 'c':
			if i+8 <= len(line) && strings.EqualFold(line[i:i+8], "contract") {
				return true
			}
		case 'i':
			if strings.EqualFold(line[i:i+5], "issue") {
				return true
			}
		}
	}
	return false
}

// TestNoCitations fails on a contract section or an issue number in any
// file git tracks.
func TestNoCitations(t *testing.T) {
	ls, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("git ls-files: %v (not a git checkout)", err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(ls), "\x00"), "\x00") {
		b, err := os.ReadFile(filepath.FromSlash(name))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the work tree, not yet in the index
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.IndexByte(b, 0) >= 0 {
			continue // binary
		}
		for _, c := range citations(string(b)) {
			t.Errorf("%s:%s: cites a contract section or an issue number; say it in words or name the doc", name, c)
		}
	}
}

func TestCitations(t *testing.T) {
	is := "iss" + "ue" // not spelled out, so this file passes
	for _, s := range []string{
		"(contract " + "§" + "10)", "§" + "4a", "contract " + "4a", "(" + is + " 23)",
		is + "s 14 and 16", is + " #23", "Is" + "sue 7's targets", "see " + is + " no. 12",
		"the " + is + " (#" + "36)",
	} {
		if len(citations(s)) == 0 {
			t.Errorf("%q: no citation found", s)
		}
	}
	for _, s := range []string{
		"golang/go#75804, unfixed", "Go's fuzz coordinator (" + is + " golang/go#75804)",
		"--ok: #15803d;", "Merge pull request #12 from x/y", "FormatS.md#the-agent-loop",
		"the epoch " + is + "d 23 times", "a counter coord " + is + "s", "# 1. register",
		"echo $# args",
	} {
		if c := citations(s); len(c) != 0 {
			t.Errorf("%q: taken for a citation: %v", s, c)
		}
	}
}
