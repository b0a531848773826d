package coord

import (
	"path"
	"strings"
	"unicode/utf8"
)

// PatternsOverlap reports whether some path could match both glob patterns.
// Patterns use path.Match syntax per segment ('*', '?', '[...]', '\\'
// escapes), with a class negated by the shell's '[!...]' as well as
// path.Match's '[^...]', plus '**' as a whole segment matching zero or
// more segments; a trailing '/' means the whole directory ("src/" is
// "src/**"). The decision is conservative: where exactness would need
// more than a per-character comparison (negated classes against classes),
// or where a character class holds a '/' (so the pattern cannot be cut
// into segments), it answers true. A pattern with a class is read both
// ways: as the class, and with its brackets as literal characters, since
// "app/[slug]/page.tsx" is far more often a file's real name than a glob;
// the patterns overlap if any reading of one overlaps any reading of the
// other.
func PatternsOverlap(a, b string) bool {
	if slashInClass(a) || slashInClass(b) {
		return true
	}
	for _, x := range readings(a) {
		for _, y := range readings(b) {
			if segsOverlap(splitPattern(x), splitPattern(y)) {
				return true
			}
		}
	}
	return false
}

// readings is p as written and, when p has an unescaped '[' or ']', p
// with those brackets escaped (taken literally).
func readings(p string) []string {
	if !strings.ContainsAny(p, "[]") {
		return []string{p}
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '\\':
			b.WriteByte(c)
			if i+1 < len(p) {
				i++
				b.WriteByte(p[i])
			}
		case '[', ']':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	if lit := b.String(); lit != p {
		return []string{p, lit}
	}
	return []string{p}
}

// QuoteGlob escapes the glob metacharacters of a literal path ('*', '?',
// '[', ']' and '\\'), so that PatternsOverlap reads it as that one path.
func QuoteGlob(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if strings.IndexByte("*?[]\\", p[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// slashInClass reports whether a '/' stands inside a '[...]' class, as in
// "a[/_]b", which path.Match lets match "a/b" across two segments.
func slashInClass(p string) bool {
	in := false
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\':
			i++ // the escaped byte is literal
		case !in && c == '[':
			in = true
			if i+1 < len(p) && p[i+1] == '^' {
				i++
			}
			if i+1 < len(p) && p[i+1] == ']' { // "[]...]": a leading ']' is a member
				i++
			}
		case in && c == ']':
			in = false
		case in && c == '/':
			return true
		}
	}
	return false
}

// AnyOverlap reports whether any pattern of as overlaps any of bs.
func AnyOverlap(as, bs []string) bool {
	for _, a := range as {
		for _, b := range bs {
			if PatternsOverlap(a, b) {
				return true
			}
		}
	}
	return false
}

// CleanPath normalises a repository-relative path or pattern: no "./",
// no duplicate separators, keeping a trailing "/". Separators are '/'
// only: a backslash is a glob escape (or part of a file name), never a
// separator.
func CleanPath(p string) string {
	dir := strings.HasSuffix(p, "/")
	p = path.Clean("/" + p)[1:]
	if dir && p != "" {
		p += "/"
	}
	return p
}

// HasDotDot reports whether a slash- or backslash-separated path has a
// ".." segment (which CleanPath would silently resolve away).
func HasDotDot(p string) bool {
	for _, seg := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return true
		}
	}
	return false
}

func splitPattern(p string) []string {
	p = CleanPath(p)
	segs := strings.Split(strings.TrimSuffix(p, "/"), "/")
	if strings.HasSuffix(p, "/") {
		segs = append(segs, "**")
	}
	// Collapse runs of "**".
	out := segs[:0]
	for _, s := range segs {
		if s == "**" && len(out) > 0 && out[len(out)-1] == "**" {
			continue
		}
		out = append(out, s)
	}
	return out
}

// segsOverlap decides whether two segment sequences share a path, with
// "**" matching any number of segments.
func segsOverlap(a, b []string) bool {
	return seqOverlap(a, b, func(seg string) bool { return seg == "**" }, segmentOverlap)
}

// seqOverlap decides whether two pattern sequences can match one common
// sequence: an element for which wild is true matches any run of elements
// (the empty run included); the others pair off one to one where match
// says they can. Memoised over (i, j), so it is O(len(a)·len(b)).
func seqOverlap[T any](a, b []T, wild func(T) bool, match func(x, y T) bool) bool {
	memo := make(map[[2]int]bool)
	var rec func(i, j int) bool
	rec = func(i, j int) bool {
		k := [2]int{i, j}
		if v, ok := memo[k]; ok {
			return v
		}
		memo[k] = false
		var r bool
		switch {
		case i == len(a) && j == len(b):
			r = true
		case i < len(a) && wild(a[i]):
			r = rec(i+1, j) || (j < len(b) && rec(i, j+1))
		case j < len(b) && wild(b[j]):
			r = rec(i, j+1) || (i < len(a) && rec(i+1, j))
		case i == len(a) || j == len(b):
			r = false
		default:
			r = match(a[i], b[j]) && rec(i+1, j+1)
		}
		memo[k] = r
		return r
	}
	return rec(0, 0)
}

// A glob token within a segment.
type gtok struct {
	star   bool
	any    bool // '?'
	lit    rune
	class  [][2]rune // ranges, for '[...]'
	negate bool
	isCls  bool
}

func tokenize(s string) []gtok {
	var out []gtok
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '*':
			if len(out) == 0 || !out[len(out)-1].star {
				out = append(out, gtok{star: true})
			}
			i++
		case '?':
			out = append(out, gtok{any: true})
			i++
		case '[':
			t, n, ok := parseClass(s[i:])
			if !ok { // malformed: treat the rest as matching anything
				return append(out, gtok{star: true})
			}
			out = append(out, t)
			i += n
		case '\\':
			if i+1 < len(s) {
				r, n := utf8.DecodeRuneInString(s[i+1:])
				out = append(out, gtok{lit: r})
				i += 1 + n
			} else {
				out = append(out, gtok{lit: '\\'})
				i++
			}
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			out = append(out, gtok{lit: r})
			i += n
		}
	}
	return out
}

func parseClass(s string) (gtok, int, bool) {
	t := gtok{isCls: true}
	i := 1
	if i < len(s) && (s[i] == '^' || s[i] == '!') {
		t.negate = true
		i++
	}
	first := true
	for i < len(s) {
		if s[i] == ']' && !first {
			return t, i + 1, true
		}
		first = false
		lo, n := readClassRune(s[i:])
		if n == 0 {
			return t, 0, false
		}
		i += n
		hi := lo
		if i+1 < len(s) && s[i] == '-' && s[i+1] != ']' {
			hi, n = readClassRune(s[i+1:])
			if n == 0 {
				return t, 0, false
			}
			i += 1 + n
		}
		t.class = append(t.class, [2]rune{lo, hi})
	}
	return t, 0, false
}

func readClassRune(s string) (rune, int) {
	if s == "" {
		return 0, 0
	}
	if s[0] == '\\' {
		if len(s) < 2 {
			return 0, 0
		}
		r, n := utf8.DecodeRuneInString(s[1:])
		return r, n + 1
	}
	r, n := utf8.DecodeRuneInString(s)
	return r, n
}

func (t gtok) has(r rune) bool {
	if t.any {
		return true
	}
	if !t.isCls {
		return t.lit == r
	}
	in := false
	for _, rg := range t.class {
		if r >= rg[0] && r <= rg[1] {
			in = true
			break
		}
	}
	return in != t.negate
}

// charsOverlap: can one character match both single-character tokens?
func charsOverlap(x, y gtok) bool {
	switch {
	case x.any || y.any:
		return true
	case !x.isCls:
		return y.has(x.lit)
	case !y.isCls:
		return x.has(y.lit)
	case x.negate || y.negate:
		return true // conservative
	}
	for _, a := range x.class {
		for _, b := range y.class {
			if a[0] <= b[1] && b[0] <= a[1] {
				return true
			}
		}
	}
	return false
}

// segmentOverlap decides whether one path segment could match both globs.
func segmentOverlap(a, b string) bool {
	if a == b {
		return true
	}
	star := func(t gtok) bool { return t.star }
	return seqOverlap(tokenize(a), tokenize(b), star, charsOverlap)
}

// Path locks. A lock path names a file, a directory or a glob, relative to
// the repository; it covers every path that equals it, lies under it, or
// matches it as a glob (or lies under a match). "src/editor" and
// "src/editor/" are the same lock: both cover "src/editor/modal.ts";
// "src/*.ts" covers "src/a.ts"; "**" covers the whole repository. A lock
// path is literal unless it holds '*', '?' or '[' (IsGlobLock), and a
// backslash in it is always an ordinary character, never a glob escape:
// "a\b.go" is the file of that name, "x\*.go" every name starting
// "x\" and ending ".go". Every comparison of a lock path (with another
// lock, with a task's files patterns, with a staged path) goes through
// lockPattern, so the rule holds in one place.

// IsGlobLock reports whether a lock path is a glob: it holds '*', '?' or
// '['. Any other lock path names one file or directory, literally.
func IsGlobLock(lock string) bool { return strings.ContainsAny(lock, "*?[") }

// lockPattern is the glob pattern of every path lock covers: the lock
// path as a directory ("src/editor/", which is "src/editor/**", and
// "**" matches zero segments, so the lock path itself too), its
// backslashes escaped (ordinary characters), and, for a literal lock,
// its other glob characters too.
func lockPattern(lock string) string {
	lock = strings.TrimSuffix(lock, "/")
	if !IsGlobLock(lock) {
		return QuoteGlob(lock) + "/"
	}
	return strings.ReplaceAll(lock, `\`, `\\`) + "/"
}

// LockCovers reports whether the path lock covers p, a repository path
// taken as a name (its glob metacharacters are literal).
func LockCovers(lock, p string) bool {
	return PatternsOverlap(lockPattern(lock), QuoteGlob(p))
}

// LocksOverlap reports whether two path locks cover a common path.
func LocksOverlap(a, b string) bool {
	return PatternsOverlap(lockPattern(a), lockPattern(b))
}

// LockOverlapsFiles reports whether the path lock covers some path that
// one of the files patterns (a task's "files") could match.
func LockOverlapsFiles(lock string, files []string) bool {
	lp := lockPattern(lock)
	for _, f := range files {
		if PatternsOverlap(lp, f) {
			return true
		}
	}
	return false
}
