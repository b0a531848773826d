package coord

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// OneLine is the one sanitiser for text that reaches the log or a
// terminal: messages, reasons, summaries, notes, titles, paths and names
// read from files, error messages. The result is valid UTF-8 on one line
// that no reader can take for more than one line or for other text than
// it shows:
//
//   - invalid UTF-8 becomes U+FFFD;
//   - control characters (C0, DEL and C1, so also NEL U+0085) and the
//     Unicode line and paragraph separators (U+2028, U+2029) become a
//     space: a newline in a message cannot start a forged log line, and
//     no escape sequence reaches a terminal;
//   - invisible format characters (Unicode category Cf: the bidi
//     embeddings, overrides and isolates U+202A–U+202E and U+2066–U+2069,
//     the marks U+200E, U+200F and U+061C, zero-width spaces, the BOM,
//     tag characters …) are removed, so text cannot be reordered or
//     hidden on screen; only the zero-width joiner and non-joiner
//     (U+200D, U+200C), which emoji and several scripts need to render,
//     are kept;
//   - surrounding white space is trimmed.
//
// OneLine is idempotent, and returns s itself when s is already clean.
func OneLine(s string) string {
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f { // the common case: printable ASCII
		i++
	}
	if i == len(s) {
		return strings.TrimSpace(s)
	}
	if cleanFrom(s, i) {
		return strings.TrimSpace(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteRune(utf8.RuneError)
		case breaksLine(r):
			b.WriteByte(' ')
		case hidden(r):
		default:
			b.WriteString(s[i-n : i])
		}
	}
	return strings.TrimSpace(b.String())
}

// cleanFrom reports whether s[i:] needs no change.
func cleanFrom(s string, i int) bool {
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 || breaksLine(r) || hidden(r) {
			return false
		}
		i += n
	}
	return true
}

// breaksLine reports the runes OneLine turns into a space: controls (C0,
// DEL, C1) and the line and paragraph separators.
func breaksLine(r rune) bool {
	return r < 0x20 || r >= 0x7f && r <= 0x9f || r == '\u2028' || r == '\u2029'
}

// hidden reports the invisible format characters OneLine removes.
func hidden(r rune) bool {
	if r < 0xad || r == '\u200c' || r == '\u200d' {
		return false
	}
	return unicode.Is(unicode.Cf, r)
}

// Unsafe reports whether r may not appear in sanitised text (OneLine
// never returns it).
func Unsafe(r rune) bool { return breaksLine(r) || hidden(r) }

// CheckPathText refuses a path a caller asks coord to record (a
// worktree, a path lock) when it holds a character OneLine would turn
// into a space: a control character (C0, DEL, C1, so ESC and the
// newline) or a line or paragraph separator. Such a path could only be
// shown otherwise than it is (OneLine's rule), so it is never recorded:
// what names it in the one-line error (exit 1). Paths coord finds in a
// repository are recorded as git names them and shown through OneLine.
func CheckPathText(what, p string) error {
	for _, r := range p {
		if breaksLine(r) {
			return Errorf(CodeUsage, "%s %s holds a control character (%U); coord records no such path", what, Clip(strconv.Quote(p), 120), r).
				WithHint("name a path without control characters or line breaks")
		}
	}
	return nil
}

// Clip shortens text to at most max runes, ending a clipped one in "…".
// Tables use it for free text (titles, reasons, paths); ids are never
// clipped. max < 1 means no limit.
func Clip(s string, max int) string {
	if max < 1 || len(s) <= max || utf8.RuneCountInString(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// Cell is OneLine then Clip: a field of a table printed for people.
func Cell(s string, max int) string { return Clip(OneLine(s), max) }

// PathCell is Cell for a path: a clipped path keeps its end (the file or
// directory a person looks for), starting with "…".
func PathCell(s string, max int) string {
	s = OneLine(s)
	if max < 1 || len(s) <= max || utf8.RuneCountInString(s) <= max {
		return s
	}
	rs := []rune(s)
	return "…" + string(rs[len(rs)-(max-1):])
}

// MessageText is the text 'coord msg' logs: OneLine's, and marked as a
// message ("message: claimed task …") when it would otherwise read as one
// of coord's own events. An agent's message then never passes for a
// claim, a release or a repair, in 'log --json' or in the epoch scan, nor
// for a conflict coord found (which coord advise counts).
func MessageText(s string) string {
	s = OneLine(s)
	if typ, _, _ := classify(s); typ != "message" || coordEvent(s) {
		return "message: " + s
	}
	return s
}

// Bounds on free text (docs/COMMANDS.md, "Text is bounded"). Every front end
// reaches coord through coord/app, which checks them before any store is
// touched; the operations of Txn check them again, so no path writes an
// unbounded text into the registry or the log. A kv value keeps its own
// limit (MaxKVValue).
const (
	// MaxTitle bounds a task's title, in characters (runes).
	MaxTitle = 200
	// MaxDescription bounds a task's description, in bytes.
	MaxDescription = 8 << 10
	// MaxNote bounds a reason, note, summary, review note or log message,
	// in bytes.
	MaxNote = 4 << 10
)

// CheckTitle refuses a title longer than MaxTitle characters (CodeUsage).
func CheckTitle(title string) error {
	if len(title) <= MaxTitle {
		return nil
	}
	if n := utf8.RuneCountInString(title); n > MaxTitle {
		return Errorf(CodeUsage, "title is %d characters, more than %d", n, MaxTitle).
			WithHint("shorten it; the detail belongs in the description (up to %d bytes)", MaxDescription)
	}
	return nil
}

// CheckDescription refuses a description longer than MaxDescription bytes
// (CodeUsage).
func CheckDescription(description string) error {
	if len(description) > MaxDescription {
		return Errorf(CodeUsage, "description is %d bytes, more than %d", len(description), MaxDescription).
			WithHint("shorten it; put long material in a file of the repository and name it")
	}
	return nil
}

// CheckNote refuses a reason, note, summary, review note or log message
// (what names which) longer than MaxNote bytes (CodeUsage).
func CheckNote(what, text string) error {
	if len(text) > MaxNote {
		return Errorf(CodeUsage, "%s is %d bytes, more than %d", what, len(text), MaxNote).
			WithHint("shorten it; put long material in a file of the repository and name it")
	}
	return nil
}

// CheckReason refuses, for what (block, reject), a reason that says
// nothing (empty or blank) or is longer than MaxNote bytes (CodeUsage):
// a block or a rejection says why, in the log and on the task.
func CheckReason(what, reason string) error {
	if strings.TrimSpace(reason) == "" {
		return Errorf(CodeUsage, "%s needs a reason", what)
	}
	return CheckNote("reason", reason)
}

// CheckText checks the free text a task carries against the bounds: its
// title, description, blocked reason and review notes (what a seed line
// may bring in).
func (t *Task) CheckText() error {
	for _, err := range []error{
		CheckTitle(t.Title),
		CheckDescription(t.Description),
		CheckNote("blocked_reason", t.BlockedReason),
		CheckNote("review_notes", t.ReviewNotes),
	} {
		if err != nil {
			ce := err.(*Error)
			ce.Msg = "task " + strconv.Quote(t.ID) + ": " + ce.Msg
			return ce
		}
	}
	return nil
}
