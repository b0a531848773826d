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

// MaxNamed bounds how many identifiers Named returns for a batch: a
// caller looks each up in the tree's file contents.
const MaxNamed = 256

// Named returns the distinct identifiers the tasks' texts name, sorted:
// what a caller looks up in the tree's file contents to fill
// Input.Idents (and the only identifiers the model asks about). They
// are the identifier-like words (parseConfig, MAX_LEN, utf8len; see
// Identifiers) and the words written as calls (render(), flush(w)). At
// most limit are kept, the first tasks' first.
func Named(tasks []Task, limit int) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range tasks {
		for _, w := range taskIdents(t) {
			if len(out) >= limit {
				break
			}
			if !seen[w] {
				seen[w] = true
				out = append(out, w)
			}
		}
	}
	slices.Sort(out)
	return out
}

// taskIdents are the identifiers a task's text names.
func taskIdents(t Task) []string {
	s := t.Title + "\n" + t.Description
	out := codeWords(s)
	for _, w := range callWords(s, 64) {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// callWords are the words of s written as a call: at least three
// characters of an identifier directly followed by "(" (flush(),
// render(w)), at most limit of them.
func callWords(s string, limit int) []string {
	var out []string
	start := -1
	for i := 0; i < len(s) && len(out) < limit; i++ {
		c := s[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			if start < 0 && !(c >= '0' && c <= '9') {
				start = i
			}
			continue
		}
		if c == '(' && start >= 0 && i-start >= 3 && i-start <= 64 {
			if (start == 0 || !isIdentByte(s[start-1])) && !slices.Contains(out, s[start:i]) {
				out = append(out, s[start:i])
			}
		}
		start = -1
	}
	return out
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
