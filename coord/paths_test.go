package coord

import (
	"path"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPatternsOverlap(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		// literals
		{"src/a.go", "src/a.go", true},
		{"src/a.go", "src/b.go", false},
		{"src/a.go", "./src//a.go", true},
		{"src", "src/a.go", false}, // a file named src is not under it
		{"src/", "src/a.go", true}, // trailing slash: the whole directory
		{"src/", "srcx/a.go", false},
		// single-segment wildcards
		{"src/*.ts", "src/editor.ts", true},
		{"src/*.ts", "src/editor.go", false},
		{"src/*.ts", "src/x/editor.ts", false}, // * stays within one segment
		{"src/*.ts", "src/*.go", false},
		{"src/*", "src/*.go", true},
		{"src/a*", "src/*b", true}, // "ab" matches both
		{"src/a?c", "src/abc", true},
		{"src/a?c", "src/ac", false},
		{"*.md", "docs/x.md", false},
		// ** across segments
		{"src/**", "src/x/y/z.go", true},
		{"src/**", "src", true}, // ** matches zero segments
		{"src/**", "lib/x.go", false},
		{"**/*.go", "cmd/coord/main.go", true},
		{"**/*.go", "README.md", false},
		{"**/test/*.go", "a/b/test/x.go", true},
		{"a/**/z", "a/z", true},
		{"a/**/z", "a/b/c/z", true},
		{"a/**/z", "a/b/c/y", false},
		{"**", "anything/at/all", true},
		{"a/**/b/*.go", "a/**/c/*.go", false}, // the parent directory must be both b and c
		{"a/**/b/**", "a/**/c/*.go", true},    // a/b/c/x.go
		// character classes
		{"src/[ab].go", "src/a.go", true},
		{"src/[ab].go", "src/c.go", false},
		{"src/[a-c].go", "src/[x-z].go", false},
		{"src/[a-c].go", "src/[c-e].go", true},
		{"src/[!a].go", "src/a.go", false},
		{"src/[!a].go", "src/b.go", true},
		{"src/[!a].go", "src/[!b].go", true}, // conservative, and really true (c)
		{"src/[^a].go", "src/a.go", false},   // '^' negates too, as in path.Match
		{"src/[^a].go", "src/!.go", true},
		{"src/[!a].go", "src/!.go", true}, // '!' negates: "!.go" is not "a.go"
		// a '/' inside a class spans segments ("a[/_]b" matches "a/b"):
		// such a pattern cannot be cut into segments, so it overlaps all
		{"a[/_]b", "a/b", true},
		{"[/00]*", "0", true}, // found by FuzzPatternsOverlap
		{"x[/]y", "unrelated/file.go", true},
		{"a[]/]b", "a/b", true},                // ']' first in a class is a member
		{"a\\[/]b", "c/d", false},              // escaped '[': no class, literal segments
		{"src/[ab]/x.go", "src/c/x.go", false}, // '/' after the class closes splits normally
		// a class is also read as literal brackets (Next.js route folders)
		{"app/[slug]/page.tsx", "app/\\[slug\\]/page.tsx", true},
		{"app/[slug]/page.tsx", "app/s/page.tsx", true}, // and still as a class
		{"app/[slug]/page.tsx", "app/x/page.tsx", false},
		{"app/\\[slug\\]/page.tsx", "app/s/page.tsx", false}, // escaped: literal only
		// paths that only look alike
		{"src/editor.ts", "src/editor.tsx", false},
		{"src/editor", "src/editor.ts", false},
		{"Src/a.go", "src/a.go", false},     // case matters
		{"src/a\\*.go", "src/ab.go", false}, // escaped star is literal
		{"src/a\\*.go", "src/a*.go", true},
	}
	for _, c := range cases {
		if got := PatternsOverlap(c.a, c.b); got != c.want {
			t.Errorf("PatternsOverlap(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := PatternsOverlap(c.b, c.a); got != c.want {
			t.Errorf("PatternsOverlap(%q, %q) = %v, want %v (not symmetric)", c.b, c.a, got, c.want)
		}
	}
}

// QuoteGlob makes a staged file's name a pattern matching only itself.
func TestQuoteGlob(t *testing.T) {
	for _, c := range []struct {
		name, pattern string
		want          bool
	}{
		{"app/[slug]/page.tsx", "app/[slug]/page.tsx", true}, // the planner meant this file
		{"app/[slug]/page.tsx", "app/\\[slug\\]/**", true},
		{"app/[slug]/page.tsx", "app/s/page.tsx", false},
		{"app/s/page.tsx", "app/[slug]/page.tsx", true}, // the class reading still holds for patterns
		{"notes/a*b?.md", "notes/axb1.md", false},
		{"notes/a*b?.md", "notes/*.md", true},
		{"odd\\name", "odd\\\\name", true},
	} {
		if got := PatternsOverlap(QuoteGlob(c.name), c.pattern); got != c.want {
			t.Errorf("PatternsOverlap(QuoteGlob(%q), %q) = %v, want %v", c.name, c.pattern, got, c.want)
		}
	}
}

func TestHasDotDotAndCleanPath(t *testing.T) {
	for p, want := range map[string]bool{"a/../b": true, "..": true, "a\\..\\b": true, "a/..b": false, "a/b..": false, "./a": false} {
		if HasDotDot(p) != want {
			t.Errorf("HasDotDot(%q) = %v", p, !want)
		}
	}
	for in, want := range map[string]string{"./a//b/": "a/b/", "a\\b": "a\\b", "/a": "a", "a/./b": "a/b"} {
		if got := CleanPath(in); got != want {
			t.Errorf("CleanPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzPatternsOverlap: symmetric, reflexive, and never false when one side
// is a literal path that the other matches (path.Match within a segment).
func FuzzPatternsOverlap(f *testing.F) {
	f.Add("src/*.ts", "src/a.ts")
	f.Add("a/**/z", "a/b/z")
	f.Add("[a-c]?", "b*")
	f.Fuzz(func(t *testing.T, a, b string) {
		ab, ba := PatternsOverlap(a, b), PatternsOverlap(b, a)
		if ab != ba {
			t.Fatalf("not symmetric: %q %q: %v vs %v", a, b, ab, ba)
		}
		if _, err := path.Match(a, ""); err == nil && !PatternsOverlap(a, a) && a != "" {
			// A well-formed pattern that can match something overlaps itself;
			// an unmatchable class like "[]" is the exception, so only check
			// patterns without classes.
			if !containsAny(a, "[\\") {
				t.Fatalf("%q does not overlap itself", a)
			}
		}
		// b as a literal path: if path.Match says a matches it segment-wise
		// and neither uses ** or escapes, they overlap. path.Match negates a
		// class with '^' only; ours also takes the shell's '!', so the
		// oracle is given '^' (a has no escapes here, so every "[!" opens
		// a class).
		if !containsAny(b, "*?[\\") && !containsAny(a, "\\") && !hasDoubleStar(a) && CleanPath(a) == a && CleanPath(b) == b && a != "" {
			if ok, err := path.Match(strings.ReplaceAll(a, "[!", "[^"), b); err == nil && ok && !PatternsOverlap(a, b) {
				t.Fatalf("path.Match(%q, %q) but no overlap", a, b)
			}
		}
	})
}

func containsAny(s, chars string) bool {
	for i := 0; i < len(s); i++ {
		for j := 0; j < len(chars); j++ {
			if s[i] == chars[j] {
				return true
			}
		}
	}
	return false
}

func hasDoubleStar(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '*' && s[i+1] == '*' {
			return true
		}
	}
	return false
}

// A path lock covers what equals it, lies under it, or matches it as a
// glob; "src/editor" and "src/editor/" are the same lock.
func TestLockCovers(t *testing.T) {
	for _, c := range []struct {
		lock, path string
		want       bool
	}{
		{"src/a.go", "src/a.go", true},
		{"src/a.go", "src/b.go", false},
		{"src/a.go", "src/a.go.orig", false},
		// a directory covers everything under it, with or without the '/'
		{"src/editor", "src/editor/modal.ts", true},
		{"src/editor/", "src/editor/modal.ts", true},
		{"src/editor", "src/editor/deep/er/x.ts", true},
		{"src/editor", "src/editor", true},
		{"src/editor/", "src/editor", true},
		{"src/editor", "src/editorial.ts", false},
		{"src/editor", "src/editor2/x.ts", false},
		{"src/editor", "src", false}, // a lock under src does not cover src itself
		{"src/editor/modal.ts", "src/editor", false},
		// globs
		{"src/*.ts", "src/a.ts", true},
		{"src/*.ts", "src/a.go", false},
		{"src/*.ts", "src/x/a.ts", false}, // '*' stays in one segment
		{"src/*", "src/x/a.ts", true},     // under a match (src/x)
		{"**/*.md", "docs/guide/intro.md", true},
		{"**", "any/path/at/all", true},
		{"src/[ab].go", "src/a.go", true},
		{"src/[ab].go", "src/c.go", false},
		// a staged name is a name: its metacharacters are literal
		{"src/a.go", "src/*.go", false},
		{"web/app/[slug]", "web/app/[slug]/page.tsx", true},
		{"web/app/[slug]", "web/app/s/page.tsx", true}, // the class reading of the lock
		{"web/app/[slug]", "web/app/x/page.tsx", false},
		// a lock is literal unless it holds '*', '?' or '[': a backslash
		// is an ordinary character, never a glob escape
		{`a\b.go`, `a\b.go`, true},
		{`a\b.go`, "ab.go", false},
		{`src\`, `src\/x.go`, true},
		{`src\`, "src/x.go", false},
		{`dir\sub`, `dir\sub/deep/x.go`, true},
		{`a]b`, `a]b`, true},
		{`x\*.go`, `x\y.go`, true}, // a glob: '*' after an ordinary '\'
		{`x\*.go`, `x\*.go`, true},
		{`x\*.go`, "x*.go", false},
		{`x\*.go`, "xy.go", false},
		{`x\?`, `x\y`, true},
		{`x\[ab]`, `x\a`, true},
		{`x\[ab]`, `x\[ab]`, true}, // the literal reading of the brackets
		{`x\[ab]`, "xa", false},
	} {
		if got := LockCovers(c.lock, c.path); got != c.want {
			t.Errorf("LockCovers(%q, %q) = %v, want %v", c.lock, c.path, got, c.want)
		}
	}
}

// Two locks conflict when they cover a common path, whichever is wider.
func TestLocksOverlap(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"src/a.go", "src/a.go", true},
		{"src/a.go", "src/b.go", false},
		{"src/editor", "src/editor/", true},
		{"src/editor", "src/editor/modal.ts", true},
		{"src/editor/", "src/editor/modal.ts", true},
		{"src", "src/editor/modal.ts", true},
		{"src/editor", "src/editorial", false},
		{"src/editor", "src/view", false},
		{"src/*.ts", "src/a.ts", true},
		{"src/*.ts", "src/a.go", false},
		{"src/*", "src/x/y.go", true},
		{"src/**/*.ts", "src/editor", true}, // src/editor/a.ts
		{"docs", "src/**", false},
		{"**", "x", true},
		// the README's table
		{"src/editor", "**", true},
		{"src/editor", "src/editor2/x.ts", false},
		{"src/editor/modal.ts", "src/editor/*.ts", true},
		{"src/editor/modal.ts", "src/editor/view.ts", false},
		{"lib/*.go", "lib/x.go", true},
		{"lib/*.go", "lib/[xy].go", true},
		{"lib/*.go", "lib/x.ts", false},
		{"lib/*.go", "lib/sub/x.go", false},
		// a backslash is an ordinary character in a lock
		{`a\b`, "ab", false},
		{`a\b`, `a\b/c`, true},
		{`a\b`, `a\*`, true},
		{`a\*`, "ab", false},
		{`a\*`, "a*", true}, // both globs: both cover `a\z`
		{`a\*`, `a\`, true},
		{`a\[bc]`, `a\c`, true},
		{`a\[bc]`, "ac", false},
	} {
		for _, ab := range [][2]string{{c.a, c.b}, {c.b, c.a}} {
			if got := LocksOverlap(ab[0], ab[1]); got != c.want {
				t.Errorf("LocksOverlap(%q, %q) = %v, want %v", ab[0], ab[1], got, c.want)
			}
		}
	}
}

// A lock meets a task's files patterns when it covers a path they match.
func TestLockOverlapsFiles(t *testing.T) {
	for _, c := range []struct {
		lock  string
		files []string
		want  bool
	}{
		{"src/editor", []string{"src/editor/*.ts"}, true},
		{"src/editor/", []string{"src/editor/*.ts"}, true},
		{"src/editor/modal.ts", []string{"src/editor/*.ts"}, true},
		{"src/editor/modal.go", []string{"src/editor/*.ts"}, false},
		{"src/view", []string{"src/editor/*.ts", "docs/**"}, false},
		{"src", []string{"lib/x.go", "src/editor/deep/*.ts"}, true},
		{"src/*.ts", []string{"src/**"}, true},
		{"docs", nil, false},
	} {
		if got := LockOverlapsFiles(c.lock, c.files); got != c.want {
			t.Errorf("LockOverlapsFiles(%q, %q) = %v, want %v", c.lock, c.files, got, c.want)
		}
	}
}

// FuzzLockCovers: for a literal lock (one without '*', '?' or '[';
// a backslash or a ']' is an ordinary character) and any path taken as
// a name, the rule is plain string arithmetic (equal, or under the lock
// as a directory), and every lock covers itself.
func FuzzLockCovers(f *testing.F) {
	f.Add("src/editor", "src/editor/modal.ts")
	f.Add("src/editor/", "src/editorial")
	f.Add("a", "a")
	f.Add(`a\b.go`, `a\b.go`)
	f.Add(`a\b.go`, "ab.go")
	f.Add(`a\`, `a\/b`)
	f.Add("a]", "a]")
	f.Add("a", "a/*")
	f.Fuzz(func(t *testing.T, lock, p string) {
		// Invalid UTF-8 reads as U+FFFD in patterns (conservative: two
		// such names overlap); lock paths are refused unless valid UTF-8.
		if !utf8.ValidString(lock) || !utf8.ValidString(p) || containsAny(lock, "*?[") || lock == "" || p == "" || CleanPath(lock) != lock || CleanPath(p) != p || strings.HasSuffix(p, "/") {
			return
		}
		l := strings.TrimSuffix(lock, "/")
		if l == "" {
			return
		}
		want := p == l || strings.HasPrefix(p, l+"/")
		if got := LockCovers(lock, p); got != want {
			t.Fatalf("LockCovers(%q, %q) = %v, want %v", lock, p, got, want)
		}
		if !LocksOverlap(lock, l) || !LockCovers(lock, l) {
			t.Fatalf("lock %q does not cover itself", lock)
		}
	})
}
