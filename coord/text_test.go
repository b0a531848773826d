package coord

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestOneLine: each class of rune that could forge a line, act on a
// terminal or reorder what a reader sees is removed or made a space.
//
// Broken build this fails against: the old OneLine, which only replaced
// C0 controls and DEL (C1 controls, U+2028/U+2029, bidi overrides and
// invalid UTF-8 went through).
func TestOneLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"  trimmed\t", "trimmed"},
		{"two\nlines\r\nthree", "two lines  three"},
		{"bell\a esc\x1b[2J", "bell  esc [2J"},
		{"del\x7f", "del"},
		{"nel\u0085next", "nel next"},
		{"csi\u009b31m", "csi 31m"},
		{"line\u2028sep\u2029para", "line sep para"},
		{"bad \xff\xfe utf8", "bad \ufffd\ufffd utf8"},
		{"cut \xe2\x96", "cut \ufffd\ufffd"},
		{"rlo \u202egnp.exe", "rlo gnp.exe"},
		{"isolates \u2066a\u2067b\u2068c\u2069", "isolates abc"},
		{"lre\u202a pdf\u202c lro\u202d rle\u202b", "lre pdf lro rle"},
		{"marks \u200e\u200f\u061c", "marks"},
		{"zero\u200bwidth \ufeffbom \u2060wj", "zerowidth bom wj"},
		{"tags \U000e0041\U000e0042 hidden", "tags  hidden"},
		{"emoji 👩\u200d💻 and persian می\u200cخواهم", "emoji 👩\u200d💻 and persian می\u200cخواهم"},
		{"ünïcödé ▶ ok", "ünïcödé ▶ ok"},
		{"\u202e", ""},
	} {
		got := OneLine(c.in)
		if got != c.want {
			t.Errorf("OneLine(%q) = %q, want %q", c.in, got, c.want)
		}
		if again := OneLine(got); again != got {
			t.Errorf("OneLine is not idempotent on %q: %q", got, again)
		}
	}
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven runes", 10, "eleven ru…"},
		{"ääääääääääää", 5, "ääää…"},
		{"anything", 0, "anything"},
	} {
		if got := Clip(c.in, c.max); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}

func TestPathCell(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"/a/b", 10, "/a/b"},
		{"/very/long/tmp/dir/app-alice", 12, "…r/app-alice"},
		{"/tmp/ä\nx/äbc", 4, "…äbc"},
		{"/x\ny", 0, "/x y"},
	} {
		in := strings.ReplaceAll(c.in, `\n`, "\n")
		if got := PathCell(in, c.max); got != c.want {
			t.Errorf("PathCell(%q, %d) = %q, want %q", in, c.max, got, c.want)
		}
	}
}

// TestLogLineSanitised: a line written by hand (or by an older coord) with
// forbidden runes reads back clean, the same for every reader.
func TestLogLineSanitised(t *testing.T) {
	line := "[2026-11-22T10:00:00Z] a\u202e ▶ done\u2028[2026-11-22T10:00:01Z] b ▶ forged\x1b[2J"
	got, ok := CleanLogLine(line)
	if !ok {
		t.Fatalf("line refused")
	}
	want := "[2026-11-22T10:00:00Z] a ▶ done [2026-11-22T10:00:01Z] b ▶ forged [2J"
	if got != want {
		t.Fatalf("CleanLogLine = %q, want %q", got, want)
	}
	e, _ := ParseLogLine(line)
	if e.AgentID != "a" || e.Message != "done [2026-11-22T10:00:01Z] b ▶ forged [2J" {
		t.Fatalf("ParseLogLine = %+v", e)
	}
	clean := "[2026-11-22T10:00:00Z] a ▶ hello"
	if got, _ := CleanLogLine(clean); got != clean {
		t.Fatalf("a clean line changed: %q", got)
	}
	if _, ok := CleanLogLine("[2026-11-22T10:00:00Z] \u202e ▶ x"); ok {
		t.Fatalf("a line whose agent is only format characters was accepted")
	}
}

// FuzzOneLine: for any input, the sanitised text holds no forbidden rune,
// is valid UTF-8 without a newline, and a log line written with it (under
// any agent name) is one line that parses back to the same agent and text.
func FuzzOneLine(f *testing.F) {
	for _, s := range []string{"", "hello", "two\nlines", "\u202eevil", "\xff", "a\u2028b", "x ▶ y", "\x1b]0;title\a", "👩\u200d💻"} {
		f.Add(s, "agent-a")
	}
	f.Add("text", "bad agent\n")
	f.Add("text", "\u202e")
	f.Fuzz(func(t *testing.T, s, agent string) {
		got := OneLine(s)
		if !utf8.ValidString(got) {
			t.Fatalf("OneLine(%q) = %q is not valid UTF-8", s, got)
		}
		for _, r := range got {
			if Unsafe(r) {
				t.Fatalf("OneLine(%q) = %q keeps %U", s, got, r)
			}
		}
		if strings.ContainsAny(got, "\n\r") || got != strings.TrimSpace(got) || OneLine(got) != got {
			t.Fatalf("OneLine(%q) = %q", s, got)
		}
		line := FormatLogLine(Event{Time: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), Agent: agent, Text: s})
		if strings.ContainsAny(line, "\n\r") || !utf8.ValidString(line) {
			t.Fatalf("log line %q", line)
		}
		e, ok := ParseLogLine(line)
		if !ok {
			t.Fatalf("log line %q does not parse", line)
		}
		if e.Message != got {
			t.Fatalf("log line %q parses to text %q, want %q", line, e.Message, got)
		}
		if ValidAgentID(agent) == nil && e.AgentID != agent {
			t.Fatalf("log line %q parses to agent %q, want %q", line, e.AgentID, agent)
		}
		if again, ok := CleanLogLine(line); !ok || again != line {
			t.Fatalf("CleanLogLine changed a written line %q to %q", line, again)
		}
	})
}
