package gitrepo

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// stagedTree is the oracle: the tree `git add -A && git write-tree` gives
// in a copy of the worktree at dir (the copy's index is the one staged).
func stagedTree(t *testing.T, dir string) string {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "copy")
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		to := filepath.Join(cp, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	git(t, cp, "add", "-A")
	return git(t, cp, "write-tree")
}

// TestWorktreeTree: the tree of a worktree with its uncommitted changes
// (modified, staged, deleted, untracked files; ignored ones left out) is
// what staging everything would write, and computing it touches neither
// the index nor the files.
func TestWorktreeTree(t *testing.T) {
	dir := testRepo(t)
	commit(t, dir, ".gitignore", "*.log\n", "ignore")
	commit(t, dir, "src/a.go", "package a\n", "a")
	commit(t, dir, "gone.txt", "bye\n", "gone")
	ctx := context.Background()
	r := New(dir)

	clean, err := r.WorktreeTree(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := git(t, dir, "rev-parse", "HEAD^{tree}"); clean != want {
		t.Fatalf("clean worktree: tree %s, HEAD's is %s", clean, want)
	}

	steps := []struct {
		name string
		do   func()
		same bool // the tree stays what it was
	}{
		{"ignored file", func() { write(t, dir, "build.log", "noise\n") }, true},
		{"unstaged change", func() { write(t, dir, "README.md", "changed\n") }, false},
		{"staged change", func() { write(t, dir, "src/a.go", "package a // x\n"); git(t, dir, "add", "src/a.go") }, false},
		{"deleted file", func() { os.Remove(filepath.Join(dir, "gone.txt")) }, false},
		{"untracked file", func() { write(t, dir, "src/new.go", "package a\n") }, false},
	}
	prev := clean
	for _, s := range steps {
		s.do()
		index, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
		status := git(t, dir, "status", "--porcelain", "--untracked-files=all")
		got, err := r.WorktreeTree(ctx)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if want := stagedTree(t, dir); got != want {
			t.Errorf("%s: tree %s, staging everything gives %s", s.name, got, want)
		}
		if (got == prev) != s.same {
			t.Errorf("%s: tree %s, before %s: same=%v, want %v", s.name, got, prev, got == prev, s.same)
		}
		if after, _ := os.ReadFile(filepath.Join(dir, ".git", "index")); !bytes.Equal(index, after) {
			t.Errorf("%s: the real index changed", s.name)
		}
		if after := git(t, dir, "status", "--porcelain", "--untracked-files=all"); after != status {
			t.Errorf("%s: git status changed:\n%s\nto\n%s", s.name, status, after)
		}
		prev = got
	}

	// From a subdirectory: the whole worktree's tree, the same.
	sub, err := New(filepath.Join(dir, "src")).WorktreeTree(ctx)
	if err != nil || sub != prev {
		t.Errorf("from src/: %s, %v; want %s", sub, err, prev)
	}
}

// TestWorktreeTreeLinked: a linked worktree's tree is its own (its own
// index and files), not the main worktree's.
func TestWorktreeTreeLinked(t *testing.T) {
	dir := testRepo(t)
	wt := filepath.Join(filepath.Dir(dir), "linked")
	git(t, dir, "worktree", "add", "-q", "-b", "coord/a", wt)
	write(t, wt, "mine.txt", "linked work\n")
	ctx := context.Background()
	got, err := New(wt).WorktreeTree(ctx)
	if err != nil {
		t.Fatal(err)
	}
	main, err := New(dir).WorktreeTree(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got == main {
		t.Fatalf("the linked worktree's untracked file is not in its tree (%s)", got)
	}
	if want := git(t, dir, "rev-parse", "HEAD^{tree}"); main != want {
		t.Fatalf("main worktree: %s, want %s", main, want)
	}
	if st := git(t, wt, "status", "--porcelain"); st != "?? mine.txt" {
		t.Fatalf("linked worktree status changed: %q", st)
	}
}

// TestWorktreeTreeNotRepo: outside git, ErrNotRepo.
func TestWorktreeTreeNotRepo(t *testing.T) {
	testRepo(t) // skips without git
	if _, err := New(t.TempDir()).WorktreeTree(context.Background()); err == nil {
		t.Fatal("no error outside a repository")
	}
}

// TestWorktreeTreeRacy: a file changed, same size, in the second the index
// was written ("racy git") is in the tree: git hashes a racily clean entry
// again only when the index file's own time says it is racy, so the copy
// must keep that time. Made deterministic by git's own settings: stat
// compared by size and mtime seconds only, ctime ignored, and the file's
// and the index's mtimes set to the entry's.
func TestWorktreeTreeRacy(t *testing.T) {
	dir := testRepo(t)
	git(t, dir, "config", "core.checkStat", "minimal")
	git(t, dir, "config", "core.trustctime", "false")
	// a.txt staged well after its mtime, so its entry is not smudged
	p := filepath.Join(dir, "a.txt")
	write(t, dir, "a.txt", "a\n")
	m := time.Now().Add(-time.Minute).Truncate(time.Second)
	if err := os.Chtimes(p, m, m); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "a.txt")
	git(t, dir, "commit", "-q", "-m", "a")
	write(t, dir, "a.txt", "b\n")
	index := filepath.Join(dir, ".git", "index")
	for _, f := range []string{p, index} {
		if err := os.Chtimes(f, m, m); err != nil {
			t.Fatal(err)
		}
	}
	if st := git(t, dir, "--no-optional-locks", "status", "--porcelain"); st != "M a.txt" {
		t.Fatalf("git status = %q: the setup is not racy", st)
	}
	got, err := New(dir).WorktreeTree(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := stagedTree(t, dir); got != want {
		t.Fatalf("tree %s holds the old a.txt; staging gives %s", got, want)
	}
}
