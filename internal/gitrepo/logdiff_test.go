package gitrepo

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestDiffs: a commit's FileDiffs line up with its Log changes (same
// files, same order) and carry the old side's changed ranges and the
// line counts; a binary file has none; a merge has no diff of its own.
func TestDiffs(t *testing.T) {
	ctx := context.Background()
	r := newHistoryRepo(t)
	lines := func(n int, tag string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			b.WriteString(tag + " line " + strings.Repeat("x", i) + "\n")
		}
		return b.String()
	}
	r.write("a.go", lines(10, "a"))
	r.write("move.go", lines(20, "m"))
	r.commit("first")
	r.git("checkout", "-q", "-b", "side")
	r.write("side.go", "side\n")
	r.commit("side")
	r.git("checkout", "-q", "main")
	// a.go: line 3 replaced by two lines, line 8 deleted; move.go renamed
	// unchanged; a binary added.
	a := strings.Split(lines(10, "a"), "\n")
	a[2] = "new three\nnew three b"
	a = append(a[:7], a[8:]...)
	r.write("a.go", strings.Join(a, "\n"))
	r.git("mv", "move.go", "moved.go")
	r.write("bin.dat", "\x00\x01\x02binary")
	second := r.commit("second")
	r.git("merge", "-q", "--no-ff", "-m", "merge side", "side")
	head := r.git("rev-parse", "HEAD")

	cs, err := Log(ctx, r.dir, "", head, 0)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := Diffs(ctx, r.dir, head, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != len(cs) {
		t.Fatalf("%d commits with diffs, %d in the log", len(ds), len(cs))
	}
	for _, c := range cs {
		if len(ds[c.Hash]) != len(c.Changes) {
			t.Errorf("commit %q: %d diffs for %d changes", c.Subject, len(ds[c.Hash]), len(c.Changes))
		}
	}
	if d := ds[head]; len(d) != 0 {
		t.Errorf("the merge has diffs of its own: %+v", d)
	}
	got := map[string]FileDiff{}
	for _, c := range cs {
		if c.Hash == second {
			for i, ch := range c.Changes {
				got[ch.Path] = ds[second][i]
			}
		}
	}
	want := map[string]FileDiff{
		"a.go":     {Add: 2, Del: 2, Hunks: [][2]int{{3, 1}, {8, 1}}},
		"moved.go": {},
		"bin.dat":  {Binary: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diffs of the second commit:\n got %+v\nwant %+v", got, want)
	}
	if last, err := Diffs(ctx, r.dir, head, 1); err != nil || len(last) != 1 {
		t.Errorf("Diffs with max 1: %v, %v", last, err)
	}
}

func TestParseDiffs_Errors(t *testing.T) {
	for _, in := range []string{
		"diff --git a/x b/x\n",                          // a file before any commit
		"\x1eXYZ\n",                                     // not a hash
		"\x1e" + h1 + "\n@@ -1 +1 @@\n",                 // a hunk outside a file
		"\x1e" + h1 + "\ndiff --git a b\n@@ -x +1 @@\n", // a bad range
	} {
		if _, err := ParseDiffs(strings.NewReader(in)); err == nil {
			t.Errorf("ParseDiffs(%q) accepted it", in)
		}
	}
	ds, err := ParseDiffs(strings.NewReader("\x1e" + h1 + "\ndiff --git a/x b/x\n@@ -0,0 +1,3 @@\n+a\n+b\n+c\n@@ -7 +9,0 @@\n-x\n"))
	want := map[string][]FileDiff{h1: {{Add: 3, Del: 1, Hunks: [][2]int{{0, 0}, {7, 1}}}}}
	if err != nil || !reflect.DeepEqual(ds, want) {
		t.Errorf("ParseDiffs: %+v, %v", ds, err)
	}
}

// formatDiffs writes diffs as git log -U0 --format=%x1e%H does, in the
// form ParseDiffs reads (a file's added lines all in its first hunk).
func formatDiffs(ds map[string][]FileDiff) []byte {
	var b bytes.Buffer
	hashes := make([]string, 0, len(ds))
	for h := range ds {
		hashes = append(hashes, h)
	}
	sort.Strings(hashes)
	for _, h := range hashes {
		fmt.Fprintf(&b, "\x1e%s\n", h)
		for _, f := range ds[h] {
			b.WriteString("diff --git a/x b/x\nindex 1..2\n")
			for i, x := range f.Hunks {
				add := 0
				if i == 0 {
					add = f.Add
				}
				fmt.Fprintf(&b, "@@ -%d,%d +1,%d @@ ctx\n-old\n+new\n", x[0], x[1], add)
			}
			if f.Binary {
				b.WriteString("Binary files a/x and b/x differ\n")
			}
		}
	}
	return b.Bytes()
}

// FuzzParseDiffs: whatever the input, ParseDiffs never panics, a file's
// deleted lines are the sum of its hunks' old lengths, and what it
// accepts it reads back the same once written out again.
func FuzzParseDiffs(f *testing.F) {
	f.Add([]byte("\x1e" + h1 + "\ndiff --git a/x b/x\n@@ -0,0 +1,3 @@\n+a\n@@ -7 +9,0 @@\n-x\n\x1e" + h2 + "\n"))
	f.Add([]byte("\x1e" + h1 + "\ndiff --git a/b b/b\nBinary files a/b and b/b differ\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		ds, err := ParseDiffs(bytes.NewReader(in))
		if err != nil {
			return
		}
		for h, fs := range ds {
			for _, fd := range fs {
				del := 0
				for _, x := range fd.Hunks {
					del += x[1]
				}
				if del != fd.Del || fd.Add < 0 {
					t.Fatalf("commit %s: %+v", h, fd)
				}
			}
		}
		again, err := ParseDiffs(bytes.NewReader(formatDiffs(ds)))
		if err != nil {
			t.Fatalf("ParseDiffs accepted %q but not its own reading: %v", in, err)
		}
		if !reflect.DeepEqual(again, ds) {
			t.Fatalf("read %+v, then %+v", ds, again)
		}
	})
}
