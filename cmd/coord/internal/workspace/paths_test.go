package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rotd/coordination/internal/gitrepo"
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
	mk("main/real/secret.go", "")
	mk("main/brk[1]/x.go", "")
	mk("plain/psub/a", "")
	for link, target := range map[string]string{
		"main/src/link.go":   "a.go",
		"main/link":          "real",             // a symlinked folder
		"main/deep/link":     "../real",          // one below the top
		"main/abslink":       d + "/main/real",   // spelled absolute
		"main/blink":         "brk[1]",           // to a name with glob characters
		"main/out":           d + "/elsewhere",   // out of the project
		"main/src/outfile":   d + "/elsewhere/x", // a file out of the project
		"main/dangling":      "nowhere",
		"wt/crosslink":       d + "/main/real", // from a linked worktree into the main one
		"plain/plink":        "psub",
		"main/pkg/uplink":    "../real",       // out of a project that is a subdirectory
		"main/real/back.go":  "secret.go",     // a file link inside the folder
		"main/real/selfroot": "..",            // the project root
		"main/deep/into":     d + "/wt/other", // into another agent's worktree, one level down
		"main/loop":          "loop",          // a loop
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(d, link)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(d, link)); err != nil {
			t.Fatal(err)
		}
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
		// a symlinked folder names the same files as its target
		{"through a symlinked folder", "main", "main", "link/secret.go", "real/secret.go", ""},
		{"a new file in a symlinked folder", "main", "main", "link/new.go", "real/new.go", ""},
		{"a new directory in a symlinked folder", "main", "main", "link/n/e/w.go", "real/n/e/w.go", ""},
		{"the symlinked folder itself", "main", "main", "link", "real", ""},
		{"the symlinked folder with a slash", "main", "main", "link/", "real", ""},
		{"through a symlinked folder, absolute", "main", "wt", d + "/main/link/secret.go", "real/secret.go", ""},
		{"through a link one level down", "main", "main/deep", "link/secret.go", "real/secret.go", ""},
		{"through a link spelled absolute", "main", "main", "abslink/secret.go", "real/secret.go", ""},
		{"standing in a symlinked folder", "main", "main/link", "secret.go", "real/secret.go", ""},
		{"a glob through a symlinked folder", "main", "main", "link/*.go", "real/*.go", ""},
		{"from a linked worktree into the main one", "main", "wt", "crosslink/secret.go", "real/secret.go", ""},
		{"a file link inside a symlinked folder is itself", "main", "main", "link/back.go", "real/back.go", ""},
		{"a link to the project root", "main", "main", "real/selfroot/src/a.go", "src/a.go", ""},
		{"a link to the project root, itself", "main", "main", "real/selfroot", "", "project root itself"},
		{"a dangling link is itself", "main", "main", "dangling", "dangling", ""},
		{"no git, through a link, from outside", "plain", "elsewhere", "plink/a", "psub/a", ""},
		{"no git, through a link", "plain", "plain", "plink/a", "psub/a", ""},
		// never out of the tree
		{"through a link out of the project", "main", "main", "out/x", "", "leads through a symbolic link"},
		{"a link out of the project, itself", "main", "main", "out", "", "leads through a symbolic link"},
		{"a new file through a link out", "main", "main", "out/new", "", "leads through a symbolic link"},
		{"a link out of a project in a subdirectory", "main/pkg", "main/pkg", "uplink/secret.go", "", "leads through a symbolic link"},
		{"a file link out of the project is itself", "main", "main", "src/outfile", "src/outfile", ""},
		// ".." after a link climbs from the link's target, as the kernel
		// resolves it: never from the link's folder, as text would
		{"dot-dot after a symlinked folder", "main", "main", "deep/link/../src/a.go", "src/a.go", ""},
		{"dot-dot after a symlinked folder, absolute", "main", "wt", d + "/main/deep/link/../src/a.go", "src/a.go", ""},
		{"dot-dot after a symlinked folder, the caller standing in it", "main", "main/deep/link", "../src/a.go", "src/a.go", ""},
		{"dot-dot after a link out and back in", "main", "main", "out/../main/src/a.go", "src/a.go", ""},
		{"dot-dot after a link, past the root", "main", "main", "deep/link/../../x", "", "leads through a symbolic link"},
		{"dot-dot after a dangling link", "main", "main", "dangling/../src/a.go", "src/a.go", ""},
		{"dot-dot after a new folder", "main", "main", "new/../src/a.go", "src/a.go", ""},
		{"a loop", "main", "main", "loop/x", "", "too many levels of symbolic links"},
		// into another agent's worktree: that worktree's file
		{"through a link into another worktree", "main", "main", "deep/into/x", "other/x", ""},
		{"dot-dot after a link into another worktree", "main", "main", "deep/into/../src/a.go", "src/a.go", ""},
		{"dot-dot after a link into another worktree, new file", "main", "main", "deep/into/../secret.go", "secret.go", ""},
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

// EditPaths: a write through a link to a file changes that file too.
func TestEditPaths(t *testing.T) {
	d := gitFixture(t)
	m := NewPaths(d+"/main", d+"/main")
	for arg, want := range map[string][]string{
		"src/a.go":         {"src/a.go"},
		"src/link.go":      {"src/link.go", "src/a.go"},
		"link/back.go":     {"real/back.go", "real/secret.go"},
		"link/secret.go":   {"real/secret.go"},
		"src/outfile":      {"src/outfile"}, // its target is not the project's
		d + "/main/link/x": {"real/x"},
		// ".." after a link, as the kernel resolves it
		"deep/link/../src/link.go":         {"src/link.go", "src/a.go"},
		d + "/main/deep/link/../secret.go": {"secret.go"},
		"deep/into/../src/a.go":            {"src/a.go"},
	} {
		got, err := m.EditPaths(arg)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("EditPaths(%q) = %q, %v; want %q", arg, got, err, want)
		}
	}
	if _, err := m.EditPaths("out/x"); err == nil {
		t.Errorf("EditPaths(out/x) went through a link out of the project")
	}
}

// Pattern: a files pattern through a symlinked folder means the target's
// files; its literal prefix is resolved, the rest kept as written.
func TestPattern(t *testing.T) {
	d := gitFixture(t)
	for _, c := range []struct{ root, cwd, in, want string }{
		{"main", "main", "link/*.go", "real/*.go"},
		{"main", "main/src", "link/*.go", "real/*.go"}, // relative to the root, wherever the caller stands
		{"main", "main", "link/", "real/"},
		{"main", "main", "link", "real"},
		{"main", "main", "link/secret.go", "real/secret.go"},
		{"main", "main", "./link//secret.go", "real/secret.go"},
		{"main", "main", "link/sub/**/*.go", "real/sub/**/*.go"},
		{"main", "main", "deep/link/*.go", "real/*.go"},
		{"main", "main", "blink/*.go", `brk\[1\]/*.go`}, // the resolved part is quoted
		{"main", "main", "real/selfroot/src/*.go", "src/*.go"},
		{"main", "wt/src", "crosslink/*.go", "real/*.go"}, // in the caller's worktree
		{"plain", "elsewhere", "plink/*", "psub/*"},
		// unchanged
		{"main", "main", "src/*.go", "src/*.go"},
		{"main", "main", "src/a.go", "src/a.go"},
		{"main", "main", "src/link.go", "src/link.go"}, // a link to a file is itself
		{"main", "main", "**/*.go", "**/*.go"},
		{"main", "main", "l*/secret.go", "l*/secret.go"}, // only the literal prefix
		{"main", "main", `lin\k/*.go`, `lin\k/*.go`},
		{"main", "main", "out/*.go", "out/*.go"}, // out of the project: names nothing coord guards
		{"main", "main", "../x/*.go", "../x/*.go"},
		{"main", "main", "/abs/*.go", "/abs/*.go"},
		{"main", "main", "nowhere/*.go", "nowhere/*.go"},
		{"main", "main", "real/selfroot", "real/selfroot"}, // the root itself
	} {
		if got := NewPaths(filepath.Join(d, c.root), filepath.Join(d, c.cwd)).Pattern(c.in); got != c.want {
			t.Errorf("Pattern(%q) from %s = %q, want %q", c.in, c.cwd, got, c.want)
		}
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
		top, main := gitrepo.GitTop(filepath.Join(d, dir))
		if top != want[0] || main != want[1] {
			t.Errorf("gitrepo.GitTop(%s) = %q, %q; want %q, %q", dir, top, main, want[0], want[1])
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
		top, main := gitrepo.GitTop(filepath.Join(d))
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
