package plan

import (
	"slices"
	"unicode"
)

// Identifiers returns the distinct identifiers of a file's content that
// can name something precisely (at least four characters, holding an
// underscore, a digit or a case change: parseConfig, MAX_LEN, utf8len),
// sorted. The predictor matches them against identifiers a task's text
// names. At most limit are kept (the first found).
func Identifiers(content []byte, limit int) []string {
	seen := map[string]bool{}
	var out []string
	start := -1
	flush := func(end int) {
		if start >= 0 && len(out) < limit {
			w := string(content[start:end])
			if codeLike(w) && !seen[w] {
				seen[w] = true
				out = append(out, w)
			}
		}
		start = -1
	}
	for i, c := range content {
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			if start < 0 {
				if c >= '0' && c <= '9' {
					continue
				}
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(content))
	slices.Sort(out)
	return out
}

// codeLike reports whether a word looks like an identifier rather than
// an English word.
func codeLike(w string) bool {
	if len(w) < 4 || len(w) > 64 {
		return false
	}
	lower, upperAfterLower := false, false
	for _, r := range w {
		switch {
		case r == '_' || unicode.IsDigit(r):
			return true
		case unicode.IsUpper(r):
			if lower {
				upperAfterLower = true
			}
		default:
			lower = true
		}
	}
	return upperAfterLower
}

// codeWords are the identifier-like words of a text.
func codeWords(s string) []string {
	return Identifiers([]byte(s), 64)
}
