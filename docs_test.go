package rotdtemplate

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
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

// docFiles are the documents checked: README.md and docs/*.md.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"README.md"}, files...)
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
			tb, err := os.ReadFile(filepath.FromSlash(target))
			if err != nil {
				t.Fatal(err)
			}
			if !anchors(string(tb))[anchor] {
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
		for _, re := range citation {
			if m := re.FindString(l); m != "" {
				out = append(out, strconv.Itoa(i+1)+": "+m)
				break
			}
		}
	}
	return out
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
		"(contract §" + "10)", "§" + "4a", "contract " + "4a", "(" + is + " 23)",
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
