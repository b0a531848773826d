package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gitFixture lays down, by hand (no git binary needed), the files git
// keeps for a main worktree with linked worktrees: one beside it, one
// nested inside it, one recorded with relative paths
// (worktree.useRelativePaths), plus a symlinked spelling of the main one
// and a directory outside git.
func gitFixture(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(p, content string) {
		p = filepath.Join(d, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("main/.git/HEAD", "ref: refs/heads/main\n")
	mk("main/src/a.go", "")
	mk("main/pkg/src/a.go", "")
	for _, w := range []struct{ name, top string }{{"wt", d + "/wt"}, {"n", d + "/main/.wt/n"}} {
		mk("main/.git/worktrees/"+w.name+"/gitdir", w.top+"/.git\n")
		mk("main/.git/worktrees/"+w.name+"/commondir", "../..\n")
		rel, _ := filepath.Rel(d, w.top)
		mk(rel+"/.git", "gitdir: "+d+"/main/.git/worktrees/"+w.name+"\n")
		mk(rel+"/src/a.go", "")
		mk(rel+"/pkg/src/a.go", "")
		mk(rel+"/other/x", "")
	}
	mk("main/.git/worktrees/rel/gitdir", "../../../../rel/.git\n")
	mk("main/.git/worktrees/rel/commondir", "../..\n")
	mk("rel/.git", "gitdir: ../main/.git/worktrees/rel\n")
	mk("rel/src/a.go", "")
	mk("elsewhere/x", "")
	mk("plain/sub/a", "")
	if err := os.Symlink(d+"/main", d+"/link"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.go", d+"/main/src/link.go"); err != nil {
		t.Fatal(err)
	}
	return d
}

// RepoPath: one mapping for every command, whichever worktree and
// subdirectory the caller stands in.
func TestRepoPath(t *testing.T) {
	d := gitFixture(t)
	for _, c := range []struct {
		name, root, cwd, arg string
		want                 string // "" with err set
		err                  string
	}{
		{"top", "main", "main", "src/a.go", "src/a.go", ""},
		{"subdirectory", "main", "main/src", "a.go", "src/a.go", ""},
		{"dot is the caller's directory", "main", "main/src", ".", "src", ""},
		{"trailing slash", "main", "main", "src/", "src", ""},
		{"linked worktree subdirectory", "main", "wt/src", "a.go", "src/a.go", ""},
		{"dot-dot from a linked worktree", "main", "wt/src", "../README", "README", ""},
		{"dot-dot out of the worktree", "main", "wt/src", "../../x", "", "outside the project"},
		{"absolute in the main worktree", "main", "wt", d + "/main/src/a.go", "src/a.go", ""},
		{"absolute in a linked worktree", "main", "main", d + "/wt/src/a.go", "src/a.go", ""},
		{"absolute in a nested worktree", "main", "main", d + "/main/.wt/n/src/a.go", "src/a.go", ""},
		{"inside a nested worktree", "main", "main/.wt/n/src", "a.go", "src/a.go", ""},
		{"worktree recorded with relative paths", "main", "rel/src", "a.go", "src/a.go", ""},
		{"symlinked spelling of the caller's directory", "main", "link/src", "a.go", "src/a.go", ""},
		{"symlinked spelling in an absolute path", "main", "wt", d + "/link/src/a.go", "src/a.go", ""},
		{"a symlinked file is itself", "main", "main/src", "link.go", "src/link.go", ""},
		{"outside the repository: relative to the root", "main", "elsewhere", "src/a.go", "src/a.go", ""},
		{"outside the repository: no climbing", "main", "elsewhere", "../x", "", "invalid path"},
		{"absolute outside", "main", "main", "/etc/passwd", "", "outside the project"},
		{"the root itself", "main", "main/src", "..", "", "project root itself"},
		{"empty", "main", "main", "", "", "invalid path"},
		{"project in a subdirectory, from a linked worktree", "main/pkg", "wt/pkg/src", "a.go", "src/a.go", ""},
		{"project in a subdirectory, absolute", "main/pkg", "main", d + "/wt/pkg/src/a.go", "src/a.go", ""},
		{"project in a subdirectory, caller beside it", "main/pkg", "wt/other", "x", "", "outside the project"},
		{"no git", "plain", "plain/sub", "a", "sub/a", ""},
		{"no git, outside the root", "plain", "elsewhere", "sub/a", "sub/a", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := NewPaths(filepath.Join(d, c.root), filepath.Join(d, c.cwd)).RepoPath(c.arg)
			switch {
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("RepoPath(%q) = %q, %v; want an error containing %q", c.arg, got, err, c.err)
			case c.err == "" && (err != nil || got != c.want):
				t.Fatalf("RepoPath(%q) = %q, %v; want %q", c.arg, got, err, c.want)
			}
		})
	}
}

// WorkTop is the caller's own worktree (where its diff is), or the root
// from outside the repository.
func TestWorkTop(t *testing.T) {
	d := gitFixture(t)
	for cwd, want := range map[string]string{
		"main/src":       d + "/main",
		"wt/src":         d + "/wt",
		"main/.wt/n/src": d + "/main/.wt/n",
		"rel/src":        d + "/rel",
		"elsewhere":      d + "/main",
	} {
		if got := NewPaths(d+"/main", filepath.Join(d, cwd)).WorkTop(); got != want {
			t.Errorf("WorkTop from %s = %s, want %s", cwd, got, want)
		}
	}
}

// Root discovery and the exclude file from every kind of worktree.
func TestGitLayout(t *testing.T) {
	d := gitFixture(t)
	for dir, want := range map[string][2]string{
		"main/src":       {d + "/main", ""},
		"wt/src":         {d + "/wt", d + "/main"},
		"main/.wt/n/src": {d + "/main/.wt/n", d + "/main"},
		"rel/src":        {d + "/rel", d + "/main"},
		"elsewhere":      {"", ""},
	} {
		top, main := GitTop(filepath.Join(d, dir))
		if top != want[0] || main != want[1] {
			t.Errorf("GitTop(%s) = %q, %q; want %q, %q", dir, top, main, want[0], want[1])
		}
	}
	// a .git file naming a git dir that is gone gets no exclude file
	if err := os.MkdirAll(d+"/gone", 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(d+"/gone/.git", []byte("gitdir: "+d+"/nowhere/.git\n"), 0o644)
	for root, want := range map[string]string{"main": d + "/main/.git/info/exclude", "wt": d + "/main/.git/info/exclude", "elsewhere": "", "gone": ""} {
		if got, _ := gitExclude(filepath.Join(d, root)); got != want {
			t.Errorf("gitExclude(%s) = %q, want %q", root, got, want)
		}
	}
	if _, err := os.Stat(d + "/nowhere"); err == nil {
		t.Errorf("gitExclude created %s/nowhere", d)
	}
}

// A FIFO planted at .git (or at a worktree's gitdir file) is never read,
// so root discovery cannot block on it.
func TestGitFilesNeverBlock(t *testing.T) {
	d := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(d, ".git"), 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan [2]string, 1)
	go func() {
		top, main := GitTop(filepath.Join(d))
		done <- [2]string{top, main}
	}()
	select {
	case got := <-done:
		if got[1] != "" {
			t.Errorf("gitTop = %q, want no main worktree", got)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("gitTop blocked on a FIFO at .git")
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/x":        "/tmp/x",
		"my dir":        "'my dir'",
		"it's":          `'it'\''s'`,
		"":              "''",
		"$HOME":         "'$HOME'",
		"a;rm -rf b":    "'a;rm -rf b'",
		"dir/with-dash": "dir/with-dash",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
