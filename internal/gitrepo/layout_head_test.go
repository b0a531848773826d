package gitrepo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHeadCommit: HEAD read from git's files is what git says, on a
// branch (loose and packed), detached, in a linked worktree; nothing on
// an unborn branch or outside a repository.
func TestHeadCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	git := func(d string, args ...string) string { t.Helper(); return testGit(t, d, args...) }
	repo := filepath.Join(dir, "repo")
	git(dir, "init", "-q", "-b", "main", repo)
	if c, gd := HeadCommit(repo); c != "" || gd == "" {
		t.Errorf("unborn: %q, %q", c, gd)
	}
	if err := os.WriteFile(filepath.Join(repo, "a"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(repo, "add", "a")
	git(repo, "commit", "-qm", "one")
	want := git(repo, "rev-parse", "HEAD")
	sub := filepath.Join(repo, "sub")
	os.Mkdir(sub, 0o755)
	if c, _ := HeadCommit(sub); c != want {
		t.Errorf("loose ref: %q, want %q", c, want)
	}
	git(repo, "pack-refs", "--all")
	if c, _ := HeadCommit(repo); c != want {
		t.Errorf("packed ref: %q, want %q", c, want)
	}
	git(repo, "commit", "-qm", "two", "--allow-empty")
	two := git(repo, "rev-parse", "HEAD")
	if c, _ := HeadCommit(repo); c != two {
		t.Errorf("after a commit: %q, want %q", c, two)
	}
	wt := filepath.Join(dir, "wt")
	git(repo, "worktree", "add", "-q", "-b", "coord/x", wt, want)
	c, gd := HeadCommit(wt)
	if c != want || !strings.Contains(gd, filepath.Join(".git", "worktrees")) {
		t.Errorf("linked worktree: %q in %q, want %q", c, gd, want)
	}
	git(wt, "checkout", "-q", "--detach", two)
	if c, _ := HeadCommit(wt); c != two {
		t.Errorf("detached: %q, want %q", c, two)
	}
	if c, gd := HeadCommit(t.TempDir()); c != "" || gd != "" {
		t.Errorf("outside: %q, %q", c, gd)
	}
}
