package plan

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// words splits text into lower-case words for matching messages: runs of
// letters and digits, split again at lower-to-upper case changes
// (camelCase, PascalCase) and at underscores, without the stop words and
// numbers that say nothing about where a change goes. Each word is cut
// to a light stem (see stem) so that "tests", "test" and "testing"
// count as one.
func words(s string, out []string) []string {
	if hasVersion(s) {
		out = append(out, versionWord)
	}
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		out = splitCase(s[start:end], out)
		start = -1
	}
	for i, r := range s {
		if r == '_' || !(unicode.IsLetter(r) || unicode.IsDigit(r)) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(s))
	return out
}

// versionWord stands for a version number in a text ("0.74.3",
// "v1.2", "ignore-0.4.33"): release and dependency-bump changes say
// little else, and touch the same files each time.
const versionWord = "#version"

// hasVersion reports whether s holds a version number: digits, a dot,
// digits (so "1.2", "v0.4.33"; not "3" or "#4630").
func hasVersion(s string) bool {
	for i := 1; i+1 < len(s); i++ {
		if s[i] == '.' && isDigit(s[i-1]) && isDigit(s[i+1]) {
			// not inside a longer word such as an IP-like or a file
			// name: the run before the digits must start a token or a
			// "v"/"-" prefix
			j := i - 1
			for j > 0 && isDigit(s[j-1]) {
				j--
			}
			if j == 0 || !isLetter(s[j-1]) || s[j-1] == 'v' && (j == 1 || !isLetter(s[j-2])) {
				return true
			}
		}
	}
	return false
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// splitCase splits one alphanumeric run at case changes and appends
// its words.
func splitCase(run string, out []string) []string {
	add := func(w string) {
		w = strings.ToLower(w)
		if len(w) < 2 || stopWords[w] || allDigits(w) || w[0] == 'v' && allDigits(w[1:]) {
			return
		}
		out = append(out, stem(w))
	}
	start := 0
	prevLower := false
	for i, r := range run {
		upper := unicode.IsUpper(r)
		if upper && prevLower && i > start {
			add(run[start:i])
			start = i
		}
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	add(run[start:])
	return out
}

func allDigits(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			// hex hashes and version strings count as numbers too
			if !(w[i] >= 'a' && w[i] <= 'f') || len(w) < 7 {
				return false
			}
		}
	}
	return true
}

// stem cuts a few English inflections: enough to merge plurals and verb
// forms, not a linguistic stemmer.
func stem(w string) string {
	for _, suf := range []string{"ing", "ies", "es", "ed", "s"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 4 {
			b := w[:len(w)-len(suf)]
			switch suf {
			case "ies":
				return b + "y"
			case "es":
				// "fixes" -> "fix", "changes" -> "chang" (as "changed")
				return b
			}
			return b
		}
	}
	return w
}

// stopWords are words of commit messages too common or too vague to say
// where a change goes.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or but if then else of to in on at by for with from into onto
		as is are was were be been being it its this that these those there here not no nor so too very
		can could should would will shall may might must do does did done has have had having
		i we you he she they me us them my our your his her their what which who whom when where why how
		all any both each few more most other some such only own same than just also now
		up down out over under again further once about after before above below between through during
		co re etc via per vs eg ie
		please thanks thank see note notes`) {
		m[w] = true
	}
	return m
}()

// A scope is what a subject's prefix says the change is about:
// "printer: fix …" has scope "printer", "fix(config): …" has type "fix"
// and scope "config", "ignore,globset: …" has scopes "ignore" and
// "globset". Projects that name the part of the tree in the subject make
// this the strongest single signal.
func scopes(subject string) (kind string, sc []string) {
	colon := strings.Index(subject, ": ")
	if colon <= 0 || colon > 40 {
		if !strings.HasSuffix(subject, ":") || len(subject) > 41 {
			return "", nil
		}
		colon = len(subject) - 1
	}
	pre := subject[:colon]
	pre = strings.TrimSuffix(pre, "!")
	if i := strings.IndexByte(pre, '('); i >= 0 && strings.HasSuffix(pre, ")") {
		kind = strings.ToLower(strings.TrimSpace(pre[:i]))
		pre = pre[i+1 : len(pre)-1]
		if !isWordish(kind) {
			return "", nil
		}
	}
	for _, p := range strings.FieldsFunc(pre, func(r rune) bool { return r == ',' || r == '+' || r == '|' }) {
		p = strings.ToLower(strings.TrimSpace(p))
		if p == "" || !isScopeish(p) {
			return "", nil
		}
		sc = append(sc, p)
	}
	if kind == "" && len(sc) == 1 && conventionalKinds[sc[0]] {
		// "docs: …", "fix: …": a kind without a scope
		return sc[0], nil
	}
	return kind, sc
}

// conventionalKinds are the types of Conventional Commits, which say what
// kind of change it is, not where.
var conventionalKinds = map[string]bool{"feat": true, "fix": true, "docs": true, "doc": true, "chore": true, "refactor": true,
	"test": true, "tests": true, "perf": true, "style": true, "build": true, "ci": true, "revert": true, "deps": true}

func isWordish(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// isScopeish accepts a prefix that names a part of a tree: a word, a
// path, a glob; not a phrase ("Merge pull request #12 from x: …").
func isScopeish(s string) bool {
	if len(s) > 40 || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_./*{}", r)) {
			return false
		}
	}
	return true
}

// mentions returns the path-like terms of a text: runs of characters
// that may form a path ("src/printer.go", "foo.rs", "crates/ignore/")
// and hold a '/' or a '.' between letters, lower-cased, without
// surrounding punctuation.
func mentions(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_./", r))
	}) {
		f = strings.Trim(f, ".-/")
		f = strings.TrimPrefix(f, "./")
		if len(f) < 3 || !strings.ContainsAny(f, "./") {
			continue
		}
		out = append(out, strings.ToLower(f))
	}
	return out
}
