package gitlog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotd/coord/coord/app"
	"github.com/rotd/coord/coord/plan"
)

// TestSourceIndex: the first Load reads the whole history and keeps it
// in <common dir>/coord/plan-index.json; the next reads only the commits
// made since (and nothing when there are none), the index growing by
// exactly those; a corrupt index is rebuilt with a one-line warning; a
// rewritten branch is read again from scratch.
func TestSourceIndex(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
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
