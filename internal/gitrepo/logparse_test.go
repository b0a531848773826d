package gitrepo

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord/plan"
)

const h1 = "0123456789abcdef0123456789abcdef01234567"
const h2 = "89abcdef0123456789abcdef0123456789abcdef"
const h3 = "fedcba9876543210fedcba9876543210fedcba98"

// A log as git prints it: a root commit with two files, a rename with a
// modification and a multi-paragraph message holding a \x1f, and a
// commit with no changes (a merge).
var sampleLog = "\x1e" + h1 + "\x1f1700000000\x1fprinter: first\nline two\n\x1f\x00\nA\x00a.txt\x00A\x00dir/b c.go\x00" +
	"\x1e" + h2 + "\x1f1700000100\x1fmove\n\nbody \x1f para\n\nsecond\n\x1f\x00\nR087\x00a.txt\x00c.txt\x00M\x00dir/b c.go\x00D\x00gone\x00" +
	"\x1e" + h3 + "\x1f1700000200\x1fMerge branch 'x'\n\x1f\x00"

func TestParse(t *testing.T) {
	got, err := Parse(strings.NewReader(sampleLog))
	if err != nil {
		t.Fatal(err)
	}
	want := []plan.Commit{
		{Hash: h1, Time: time.Unix(1700000000, 0).UTC(), Subject: "printer: first line two",
			Changes: []plan.Change{{Status: 'A', Path: "a.txt"}, {Status: 'A', Path: "dir/b c.go"}}},
		{Hash: h2, Time: time.Unix(1700000100, 0).UTC(), Subject: "move", Body: "body \x1f para\n\nsecond",
			Changes: []plan.Change{{Status: 'R', Path: "c.txt", From: "a.txt"}, {Status: 'M', Path: "dir/b c.go"}, {Status: 'D', Path: "gone"}}},
		{Hash: h3, Time: time.Unix(1700000200, 0).UTC(), Subject: "Merge branch 'x'"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Parse:\n got %+v\nwant %+v", got, want)
	}
}

func TestParse_Errors(t *testing.T) {
	for _, in := range []string{
		"M\x00a\x00",                                           // a change before any commit
		"\x1e" + h1 + "\x1f1\x1fs\x1f",                         // a header without its NUL
		"\x1e" + h1 + "\x1f1\x1fs\x00",                         // an unterminated message
		"\x1eXYZ\x1f1\x1fs\x1f\x00",                            // not a hash
		"\x1e" + h1 + "\x1fsoon\x1fs\x1f\x00",                  // not a date
		"\x1e" + h1 + "\x1f-5\x1fs\x1f\x00",                    // a negative date
		"\x1e" + h1 + "\x1f1\x1fs\x1f\x00\nQ\x00a\x00",         // an unknown status
		"\x1e" + h1 + "\x1f1\x1fs\x1f\x00\nMM\x00a\x00",        // a status with a tail
		"\x1e" + h1 + "\x1f1\x1fs\x1f\x00\nR10x\x00a\x00b\x00", // a bad score
		"\x1e" + h1 + "\x1f1\x1fs\x1f\x00\nR100\x00a\x00",      // a rename without its new path
		"\x1e" + h1 + "\x1f1\x1fs\x1f\x00\nM\x00\x00",          // an empty path
		"\x1e" + h1 + "\x1f1\x1fs\x1f\x00\nM\x00a",             // the end inside a path
	} {
		if _, err := Parse(strings.NewReader(in)); !errors.Is(err, ErrFormat) {
			t.Errorf("Parse(%q) = %v, want ErrFormat", in, err)
		}
	}
	if cs, err := Parse(strings.NewReader("")); err != nil || len(cs) != 0 {
		t.Errorf("an empty log: %v, %v", cs, err)
	}
}

// format writes commits as git log does in the format Parse reads.
func format(cs []plan.Commit) []byte {
	var b bytes.Buffer
	for _, c := range cs {
		msg := c.Subject + "\n"
		if c.Body != "" {
			msg += "\n" + c.Body + "\n"
		}
		fmt.Fprintf(&b, "\x1e%s\x1f%d\x1f%s\x1f\x00", c.Hash, c.Time.Unix(), msg)
		if len(c.Changes) > 0 {
			b.WriteByte('\n')
		}
		for _, ch := range c.Changes {
			if ch.From != "" {
				fmt.Fprintf(&b, "%c100\x00%s\x00%s\x00", ch.Status, ch.From, ch.Path)
			} else {
				fmt.Fprintf(&b, "%c\x00%s\x00", ch.Status, ch.Path)
			}
		}
	}
	return b.Bytes()
}

// FuzzParse: whatever the input, Parse never panics, and what it accepts
// it reads back the same once written out again.
func FuzzParse(f *testing.F) {
	f.Add([]byte(sampleLog))
	f.Add([]byte("\x1e" + h1 + "\x1f1\x1f\n\n\x1f\x00"))
	f.Add([]byte("\x1e" + h1 + "\x1f1\x1fa\x1f\x00\nC050\x00x\x00y\x00T\x00z\x00"))
	f.Fuzz(func(t *testing.T, in []byte) {
		cs, err := Parse(bytes.NewReader(in))
		if err != nil {
			return
		}
		again, err := Parse(bytes.NewReader(format(cs)))
		if err != nil {
			t.Fatalf("Parse accepted %q but not its own reading %q: %v", in, format(cs), err)
		}
		if len(again) != len(cs) {
			t.Fatalf("%d commits, then %d", len(cs), len(again))
		}
		for i := range cs {
			if again[i].Hash != cs[i].Hash || !again[i].Time.Equal(cs[i].Time) || !reflect.DeepEqual(again[i].Changes, cs[i].Changes) {
				t.Fatalf("commit %d: %+v, then %+v", i, cs[i], again[i])
			}
		}
	})
}
