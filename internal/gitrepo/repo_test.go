package gitrepo

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
)

// testRepo makes a repository on branch main with one commit, in a fresh
// directory, and returns its top.
func testRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := filepath.Join(t.TempDir(), "repo")
	git(t, "", "init", "-q", "-b", "main", dir)
	write(t, dir, "README.md", "hello\n")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "first")
	return dir
}

// testGit runs git in dir as the package runs it, with IsolatedEnv,
// failing t on an error; it returns the output, trimmed.
func testGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := Command(context.Background(), dir, IsolatedEnv, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// git runs git for a test, failing it on error.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return testGit(t, dir, args...)
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func commit(t *testing.T, dir, name, content, msg string) string {
	t.Helper()
	write(t, dir, name, content)
	git(t, dir, "add", "--", name)
	git(t, dir, "commit", "-q", "-m", msg)
	return git(t, dir, "rev-parse", "HEAD")
}

func TestBranchHeadMergeBase(t *testing.T) {
	ctx := context.Background()
	dir := testRepo(t)
	r := New(filepath.Join(dir)) // from the top
	first := git(t, dir, "rev-parse", "HEAD")

	if b, err := r.Branch(ctx); err != nil || b != "main" {
		t.Fatalf("Branch = %q, %v", b, err)
	}
	if h, err := r.Head(ctx, "main"); err != nil || h != first {
		t.Fatalf("Head(main) = %q, %v; want %s", h, err, first)
	}
	if _, err := r.Head(ctx, "nosuch"); !errors.Is(err, ErrNoRef) {
		t.Fatalf("Head(nosuch): %v, want ErrNoRef", err)
	}
	if _, err := r.Head(ctx, "--output=/tmp/x"); !errors.Is(err, ErrNoRef) {
		t.Fatalf("Head of an option: %v, want ErrNoRef", err)
	}

	git(t, dir, "checkout", "-q", "-b", "topic")
	topic := commit(t, dir, "go.mod", "module x\n", "topic")
	git(t, dir, "checkout", "-q", "main")
	moved := commit(t, dir, "main.txt", "m\n", "main moves")

	if mb, err := r.MergeBase(ctx, "topic", "main"); err != nil || mb != first {
		t.Fatalf("MergeBase = %q, %v; want %s", mb, err, first)
	}
	for _, c := range []struct {
		a, b string
		want bool
	}{{first, "main", true}, {topic, "main", false}, {"main", "main", true}, {moved, "topic", false}} {
		if got, err := r.IsAncestor(ctx, c.a, c.b); err != nil || got != c.want {
			t.Errorf("IsAncestor(%s, %s) = %v, %v; want %v", c.a, c.b, got, err, c.want)
		}
	}
	if _, err := r.IsAncestor(ctx, "nosuch", "main"); err == nil {
		t.Error("IsAncestor of an unknown commit: no error")
	}
	// The paths topic's commits changed, not those main gained since.
	if p, err := r.ChangedPaths(ctx, "main", "topic"); err != nil || !slices.Equal(p, []string{"go.mod"}) {
		t.Fatalf("ChangedPaths = %v, %v", p, err)
	}
	// A detached HEAD has no branch.
	git(t, dir, "checkout", "-q", "--detach", "HEAD")
	if b, err := r.Branch(ctx); err != nil || b != "" {
		t.Fatalf("detached: Branch = %q, %v", b, err)
	}
	// Unrelated histories have no merge base.
	git(t, dir, "checkout", "-q", "--orphan", "alone")
	git(t, dir, "commit", "-q", "-m", "alone")
	if mb, err := r.MergeBase(ctx, "alone", "main"); err != nil || mb != "" {
		t.Fatalf("MergeBase of unrelated = %q, %v", mb, err)
	}
}

func TestChangedPathsRenamesAndSubdirs(t *testing.T) {
	ctx := context.Background()
	dir := testRepo(t)
	commit(t, dir, "src/a.go", "package a\n", "a")
	base := git(t, dir, "rev-parse", "HEAD")
	git(t, dir, "mv", "src/a.go", "src/b.go")
	write(t, dir, "docs/x y.md", "x\n")
	write(t, dir, "dé.txt", "é\n")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "move")
	r := New(filepath.Join(dir, "src")) // from a subdirectory: paths from the top
	got, err := r.ChangedPaths(ctx, base, "HEAD")
	want := []string{"docs/x y.md", "dé.txt", "src/a.go", "src/b.go"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("ChangedPaths = %q, %v; want %q", got, err, want)
	}
}

func TestDirty(t *testing.T) {
	ctx := context.Background()
	dir := testRepo(t)
	r := New(dir)
	if d, err := r.Dirty(ctx); err != nil || len(d) != 0 {
		t.Fatalf("clean: %v, %v", d, err)
	}
	write(t, dir, ".gitignore", "*.log\n")
	git(t, dir, "add", ".gitignore")
	git(t, dir, "commit", "-q", "-m", "ignore")
	write(t, dir, "new/untracked.txt", "u\n")
	write(t, dir, "x.log", "ignored\n")
	write(t, dir, "README.md", "changed\n")
	commit(t, dir, "old.txt", "o\n", "old")
	git(t, dir, "mv", "old.txt", "renamed.txt")
	d, err := r.Dirty(ctx)
	slices.Sort(d)
	want := []string{"README.md", "new/untracked.txt", "renamed.txt"}
	if err != nil || !slices.Equal(d, want) {
		t.Fatalf("Dirty = %q, %v; want %q", d, err, want)
	}
}

func TestWorktrees(t *testing.T) {
	ctx := context.Background()
	dir := testRepo(t)
	r := New(dir)
	wt := filepath.Join(filepath.Dir(dir), "repo-alice")
	if err := r.AddWorktree(ctx, wt, "coord/alice", "main"); err != nil {
		t.Fatal(err)
	}
	if err := r.AddWorktree(ctx, wt, "coord/alice", "main"); err == nil {
		t.Fatal("a second worktree on the same branch and path was made")
	}
	list, err := r.Worktrees(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("Worktrees = %+v, %v", list, err)
	}
	if list[0].Branch != "main" || list[1].Branch != "coord/alice" || !sameDir(t, list[1].Path, wt) || list[1].Head == "" {
		t.Fatalf("Worktrees = %+v", list)
	}
	w := New(wt)
	if b, err := w.Branch(ctx); err != nil || b != "coord/alice" {
		t.Fatalf("the worktree's branch: %q, %v", b, err)
	}
	if top, err := w.Top(ctx); err != nil || !sameDir(t, top, wt) {
		t.Fatalf("Top = %q, %v", top, err)
	}
	c1, _ := r.CommonDir(ctx)
	c2, _ := w.CommonDir(ctx)
	if c1 == "" || c1 != c2 || !filepath.IsAbs(c1) {
		t.Fatalf("CommonDir %q and %q", c1, c2)
	}
	// Work only the worktree's branch has.
	c := commit(t, wt, "go.mod", "module x\n", "alice's work")
	un, err := r.Unmerged(ctx, "coord/alice", "main", 0)
	if err != nil || len(un) != 1 || !strings.HasPrefix(c, strings.Fields(un[0])[0]) || !strings.HasSuffix(un[0], " alice's work") {
		t.Fatalf("Unmerged = %q, %v", un, err)
	}
	if un, err := r.Unmerged(ctx, "main", "coord/alice", 0); err != nil || len(un) != 0 {
		t.Fatalf("Unmerged the other way = %q, %v", un, err)
	}
	// git refuses to remove a worktree with changes, unless forced.
	write(t, wt, "scratch.txt", "s\n")
	if err := r.RemoveWorktree(ctx, wt, false); err == nil {
		t.Fatal("a dirty worktree was removed")
	}
	if err := r.RemoveWorktree(ctx, wt, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Fatalf("the worktree's directory is still there: %v", err)
	}
	if err := r.DeleteBranch(ctx, "coord/alice", false); err == nil {
		t.Fatal("an unmerged branch was deleted by -d")
	}
	if err := r.DeleteBranch(ctx, "coord/alice", true); err != nil {
		t.Fatal(err)
	}
}

func sameDir(t *testing.T, a, b string) bool {
	t.Helper()
	ea, err1 := filepath.EvalSymlinks(a)
	eb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ea == eb
}

func TestNotARepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	_, err := New(dir).Branch(context.Background())
	if !errors.Is(err, ErrNotRepo) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Branch outside git: %v, want ErrNotRepo naming %s", err, dir)
	}
}

// A missing git is one error naming the fix, coded as I/O.
func TestNoGit(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := New(t.TempDir()).Branch(context.Background())
	if coord.CodeOf(err) != coord.CodeIO || !strings.Contains(err.Error(), "git is not installed") {
		t.Fatalf("without git: %v", err)
	}
}

// A git that does not answer is stopped at the timeout.
func TestTimeout(t *testing.T) {
	bin := t.TempDir()
	script := "#!/bin/sh\nexec sleep 60\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	r := New(t.TempDir())
	r.Timeout = 200 * time.Millisecond
	_, err := r.Branch(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no answer within") {
		t.Fatalf("a git that hangs: %v", err)
	}
}

func TestParseWorktrees(t *testing.T) {
	in := "worktree /r\x00HEAD abc\x00branch refs/heads/main\x00\x00" +
		"worktree /r-a\x00HEAD def\x00detached\x00locked reason\x00prunable gitdir file points to non-existent location\x00\x00" +
		"worktree /bare\x00bare\x00\x00"
	got := ParseWorktrees([]byte(in))
	want := []Worktree{{Path: "/r", Head: "abc", Branch: "main"}, {Path: "/r-a", Head: "def", Detached: true, Locked: true, Prunable: true}, {Path: "/bare", Bare: true}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

// FuzzParseWorktrees: any input parses without panicking, and every
// worktree read has the path its record named.
func FuzzParseWorktrees(f *testing.F) {
	f.Add([]byte("worktree /r\x00HEAD abc\x00branch refs/heads/main\x00\x00"))
	f.Add([]byte("HEAD x\x00worktree\x00\x00worktree a b\x00branch\x00"))
	f.Fuzz(func(t *testing.T, in []byte) {
		n := 0
		for _, l := range strings.Split(string(in), "\x00") {
			if k, _, _ := strings.Cut(l, " "); k == "worktree" {
				n++
			}
		}
		if got := ParseWorktrees(in); len(got) != n {
			t.Fatalf("%d worktrees read, %d named", len(got), n)
		}
	})
}

// Contains: an ancestor, a squash merge and a cherry-pick are held; a
// commit with changes the target lacks, or one that conflicts, is not.
func TestContains(t *testing.T) {
	ctx := context.Background()
	dir := testRepo(t)
	r := New(dir)
	git(t, dir, "checkout", "-q", "-b", "topic")
	a := commit(t, dir, "a.txt", "a\n", "a")
	b := commit(t, dir, "b.txt", "b\n", "b")
	git(t, dir, "checkout", "-q", "main")
	if ok, err := r.Contains(ctx, "main", b); err != nil || ok {
		t.Fatalf("unmerged work: %v, %v", ok, err)
	}
	git(t, dir, "merge", "-q", "--squash", "topic")
	git(t, dir, "commit", "-q", "-m", "squashed")
	if ok, err := r.Contains(ctx, "main", b); err != nil || !ok {
		t.Fatalf("squash-merged work: %v, %v", ok, err)
	}
	if ok, _ := r.IsAncestor(ctx, b, "main"); ok {
		t.Fatal("a squash made b an ancestor?")
	}
	if ok, err := r.Contains(ctx, "main", a); err != nil || !ok {
		t.Fatalf("an ancestor commit of squashed work: %v, %v", ok, err)
	}
	// main changes the same lines since: a conflict, not held.
	commit(t, dir, "b.txt", "B\n", "main rewrites b")
	if ok, err := r.Contains(ctx, "main", b); err != nil || ok {
		t.Fatalf("conflicting work: %v, %v", ok, err)
	}
	// an ancestor is held
	if ok, err := r.Contains(ctx, "main", "HEAD~1"); err != nil || !ok {
		t.Fatalf("ancestor: %v, %v", ok, err)
	}
}

// TestAddWorktreeFailedLeavesNoBranch: git makes the new branch before it
// finds the path taken; a failed add deletes that branch again, so the
// next try with a free path succeeds. A branch that existed is kept.
func TestAddWorktreeFailedLeavesNoBranch(t *testing.T) {
	ctx := context.Background()
	dir := testRepo(t)
	r := New(dir)
	main := git(t, dir, "rev-parse", "HEAD")
	taken := filepath.Join(filepath.Dir(dir), "taken")
	write(t, taken, "x.txt", "someone's\n")
	if err := r.AddWorktree(ctx, taken, "coord/carol", main); err == nil {
		t.Fatal("a worktree was made over a non-empty directory")
	}
	if _, err := r.Head(ctx, "refs/heads/coord/carol"); err == nil {
		t.Fatal("the failed add left its branch behind")
	}
	if err := r.AddWorktree(ctx, filepath.Join(filepath.Dir(dir), "repo-carol"), "coord/carol", main); err != nil {
		t.Fatalf("the next try: %v", err)
	}
	if err := r.AddWorktree(ctx, taken, "main", main); err == nil {
		t.Fatal("a second branch main was made")
	}
	if _, err := r.Head(ctx, "refs/heads/main"); err != nil {
		t.Fatal("a failed add deleted a branch it did not make")
	}
}

// TestPlace: where a worktree stands, on a branch, detached, in a linked
// worktree, on an unborn branch, and with a file named HEAD beside the
// ref of that name; TopAndCommonDir agrees with Top and CommonDir.
func TestPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := testRepo(t)
	head := git(t, dir, "rev-parse", "HEAD")
	r := New(dir)
	p, err := r.Place(ctx)
	if err != nil || !sameDir(t, p.Top, dir) || p.Linked || p.Branch != "refs/heads/main" || p.Head != head {
		t.Fatalf("on main: %+v, %v", p, err)
	}
	top, common, err := r.TopAndCommonDir(ctx)
	wantTop, _ := r.Top(ctx)
	wantCommon, _ := r.CommonDir(ctx)
	if err != nil || top != wantTop || common != wantCommon {
		t.Fatalf("TopAndCommonDir = %q, %q, %v; Top and CommonDir say %q, %q", top, common, err, wantTop, wantCommon)
	}

	write(t, dir, "HEAD", "a file named like the ref\n")
	git(t, dir, "switch", "-q", "--detach")
	if p, err := r.Place(ctx); err != nil || p.Branch != "" || p.Head != head {
		t.Fatalf("detached, a file HEAD beside: %+v, %v", p, err)
	}
	os.Remove(filepath.Join(dir, "HEAD"))
	git(t, dir, "switch", "-q", "main")

	linked := filepath.Join(t.TempDir(), "linked")
	git(t, dir, "worktree", "add", "-q", "-b", "side", linked)
	if p, err := New(linked).Place(ctx); err != nil || !sameDir(t, p.Top, linked) || !p.Linked || p.Branch != "refs/heads/side" || p.Head != head {
		t.Fatalf("linked: %+v, %v", p, err)
	}

	git(t, dir, "switch", "-q", "--orphan", "fresh")
	if p, err := r.Place(ctx); err != nil || !sameDir(t, p.Top, dir) || p.Branch != "refs/heads/fresh" || p.Head != "" {
		t.Fatalf("unborn: %+v, %v", p, err)
	}

	if _, err := New(t.TempDir()).Place(ctx); err == nil {
		t.Fatal("Place outside a repository did not fail")
	}
}
