package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/coord/plan"
)

// TestSourceIndex: the first Load reads the whole history and keeps it
// in <common dir>/coord/plan-index.json; the next reads only the commits
// made since (and nothing when there are none), the index growing by
// exactly those; a corrupt index is rebuilt with a one-line warning; a
// rewritten branch is read again from scratch.
func TestSourceIndex(t *testing.T) {
	ctx := context.Background()
	r := newHistoryRepo(t)
	for i, m := range []string{"docs: intro", "printer: width", "printer: wrap"} {
		r.write(map[int]string{0: "docs/a.md", 1: "printer.go", 2: "printer.go"}[i], m)
		r.commit(m)
	}
	src := &Source{Dir: r.dir}
	h, err := src.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h.Read != 3 || len(h.Commits) != 3 || h.Warning != "" || strings.Join(h.Tree, " ") != "docs/a.md printer.go" {
		t.Fatalf("first load: read %d, %d commits, tree %v, warning %q", h.Read, len(h.Commits), h.Tree, h.Warning)
	}
	file := filepath.Join(r.dir, ".git", IndexFile)
	saved := func() *plan.Index {
		t.Helper()
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		ix, err := plan.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}
	if ix := saved(); len(ix.Commits) != 3 || ix.Head != h.Head {
		t.Fatalf("saved index: %d commits at %s", len(ix.Commits), ix.Head)
	}
	info0, _ := os.Stat(file)

	// Nothing new: nothing read, the file untouched.
	if h, err = src.Load(ctx); err != nil || h.Read != 0 || len(h.Commits) != 3 {
		t.Fatalf("again: read %d of %d, %v", h.Read, len(h.Commits), err)
	}
	if info, _ := os.Stat(file); !info.ModTime().Equal(info0.ModTime()) {
		t.Error("an unchanged index was rewritten")
	}

	// Two new commits: only they are read.
	r.write("printer.go", "x")
	r.commit("printer: trim")
	r.write("docs/b.md", "x")
	r.commit("docs: more")
	if h, err = src.Load(ctx); err != nil || h.Read != 2 || len(h.Commits) != 5 {
		t.Fatalf("incremental: read %d of %d, %v", h.Read, len(h.Commits), err)
	}
	if ix := saved(); len(ix.Commits) != 5 || ix.Commits[4].Subject != "docs: more" {
		t.Fatalf("saved index after the update: %d commits", len(ix.Commits))
	}

	// Corrupt: rebuilt, one line of warning, saved again.
	if err := os.WriteFile(file, []byte(`{"version":1,"head":"x","paths":[],"commits":[{"c":[[77,9]]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if h, err = src.Load(ctx); err != nil || h.Read != 5 || !strings.Contains(h.Warning, "rebuilt") || strings.Contains(h.Warning, "\n") {
		t.Fatalf("corrupt index: read %d, warning %q, %v", h.Read, h.Warning, err)
	}
	if ix := saved(); len(ix.Commits) != 5 {
		t.Fatalf("rebuilt index holds %d commits", len(ix.Commits))
	}
	if h, err = src.Load(ctx); err != nil || h.Read != 0 || h.Warning != "" {
		t.Fatalf("after the rebuild: read %d, warning %q, %v", h.Read, h.Warning, err)
	}

	// A rewritten branch: read again from scratch.
	r.git("reset", "-q", "--hard", "HEAD~2")
	r.write("other.go", "x")
	r.commit("other: new")
	if h, err = src.Load(ctx); err != nil || h.Read != 4 || len(h.Commits) != 4 {
		t.Fatalf("rewritten: read %d of %d, %v", h.Read, len(h.Commits), err)
	}

	// No repository: ErrNoHistory.
	if _, err := (&Source{Dir: t.TempDir()}).Load(ctx); !errors.Is(err, app.ErrNoHistory) {
		t.Fatalf("outside a repository: %v", err)
	}
}

// TestHolders: one git grep finds the tracked files whose contents hold
// the names as whole words (not inside a longer word, not in an
// untracked or binary file), with paths mapped as Load maps them;
// nothing found is an empty answer, not an error.
func TestHolders(t *testing.T) {
	ctx := context.Background()
	r := newHistoryRepo(t)
	r.write("layout/columns.go", "package layout\n\nfunc parseWidth(s string) int { return flush(s) }\n")
	r.write("layout/rows.go", "package layout\n\n// parseWidthAll is another word\nfunc flush(s string) int { return 0 }\n")
	r.write("docs/a b.md", "call parseWidth() to read a width\n")
	r.write("bin.dat", "\x00parseWidth\x00")
	r.commit("add a layout package")
	r.write("untracked.go", "parseWidth\n")
	src := &Source{Dir: r.dir}
	got, err := src.Holders(ctx, []string{"parseWidth", "flush", "not an identifier", "absent_name"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"layout/columns.go": {"parseWidth", "flush"},
		"layout/rows.go":    {"flush"},
		"docs/a b.md":       {"parseWidth"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Holders = %q, want %q", got, want)
	}
	src.Map = func(top string, paths []string) []string {
		var out []string
		for _, p := range paths {
			if rest, ok := strings.CutPrefix(p, "layout/"); ok {
				out = append(out, rest)
			}
		}
		return out
	}
	if got, err = src.Holders(ctx, []string{"parseWidth"}); err != nil || !reflect.DeepEqual(got, map[string][]string{"columns.go": {"parseWidth"}}) {
		t.Errorf("mapped: %q, %v", got, err)
	}
	if got, err = src.Holders(ctx, []string{"absent_name"}); err != nil || len(got) != 0 {
		t.Errorf("nothing found: %q, %v", got, err)
	}
}
