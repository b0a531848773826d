package gitrepo

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// gitT runs git in dir for a test and returns its trimmed stdout.
func gitT(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2030-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2030-01-01T00:00:00Z")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

func writeT(t testing.TB, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func needGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	if err := CheckMergeTree(context.Background()); err != nil {
		t.Skip(err)
	}
}

// lines is "1\n2\n…n\n" with line k replaced where repl says.
func lines(n int, repl map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if s, ok := repl[i]; ok {
			b.WriteString(s + "\n")
			continue
		}
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

// newRepo makes a repository on main with f.txt (20 lines), r.txt (a
// file to rename), d.txt and bin.dat (binary).
func newRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	gitT(t, dir, "init", "-q", "-b", "main")
	gitT(t, dir, "config", "user.email", "t@example.com")
	gitT(t, dir, "config", "user.name", "t")
	gitT(t, dir, "config", "commit.gpgsign", "false")
	writeT(t, dir, "f.txt", lines(20, nil))
	writeT(t, dir, "r.txt", lines(40, map[int]string{1: "rename me"}))
	writeT(t, dir, "d.txt", "keep\n")
	writeT(t, dir, "bin.dat", "a\x00b\x00c")
	gitT(t, dir, "add", ".")
	gitT(t, dir, "commit", "-qm", "base")
	return dir
}

// branch makes branch name from main with change applied and
// committed, and returns its commit id. The main worktree is back on
// main afterwards.
func branch(t testing.TB, dir, name string, change func()) string {
	t.Helper()
	gitT(t, dir, "checkout", "-q", "-b", name, "main")
	change()
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-qm", name)
	id := gitT(t, dir, "rev-parse", "HEAD")
	gitT(t, dir, "checkout", "-q", "main")
	return id
}

func TestMergeTrees(t *testing.T) {
	needGit(t)
	ctx := context.Background()
	dir := newRepo(t)
	main0 := gitT(t, dir, "rev-parse", "main")
	a := branch(t, dir, "a", func() { writeT(t, dir, "f.txt", lines(20, map[int]string{3: "three (a)"})) })
	b := branch(t, dir, "b", func() { writeT(t, dir, "f.txt", lines(20, map[int]string{3: "three (b)"})) })
	c := branch(t, dir, "c", func() { writeT(t, dir, "f.txt", lines(20, map[int]string{18: "eighteen (c)"})) })
	bin1 := branch(t, dir, "bin1", func() { writeT(t, dir, "bin.dat", "a\x00B\x00c") })
	bin2 := branch(t, dir, "bin2", func() { writeT(t, dir, "bin.dat", "a\x00b\x00C") })
	del := branch(t, dir, "del", func() { gitT(t, dir, "rm", "-q", "d.txt") })
	mod := branch(t, dir, "mod", func() { writeT(t, dir, "d.txt", "changed\n") })
	ren := branch(t, dir, "ren", func() { gitT(t, dir, "mv", "r.txt", "r2.txt") })
	ren2 := branch(t, dir, "ren2", func() { gitT(t, dir, "mv", "r.txt", "r3.txt") })
	renmod := branch(t, dir, "renmod", func() { writeT(t, dir, "r.txt", lines(40, map[int]string{1: "rename me", 30: "thirty"})) })
	// main moves on: line 3 changed on the target.
	writeT(t, dir, "f.txt", lines(20, map[int]string{3: "three (main)"}))
	gitT(t, dir, "commit", "-qam", "main moves")
	main1 := gitT(t, dir, "rev-parse", "main")

	cases := []struct {
		name  string
		pair  [2]string
		files []string // nil: clean
	}{
		{"same line", [2]string{a, b}, []string{"f.txt"}},
		{"different hunks of one file", [2]string{a, c}, nil},
		{"binary", [2]string{bin1, bin2}, []string{"bin.dat"}},
		{"delete vs modify", [2]string{del, mod}, []string{"d.txt"}},
		{"rename vs modify", [2]string{ren, renmod}, nil},
		{"rename vs rename", [2]string{ren, ren2}, []string{"r.txt", "r2.txt", "r3.txt"}},
		{"disjoint files", [2]string{a, bin1}, nil},
		{"against the target before it moved", [2]string{main0, a}, nil},
		{"against the moved target", [2]string{main1, a}, []string{"f.txt"}},
		{"the moved target, other hunk", [2]string{main1, c}, nil},
		{"one commit", [2]string{a, a}, nil},
	}
	var pairs [][2]string
	for _, tc := range cases {
		pairs = append(pairs, tc.pair)
	}
	check := func(t *testing.T, got []MergeResult, cached bool) {
		t.Helper()
		if len(got) != len(cases) {
			t.Fatalf("%d results for %d pairs", len(got), len(cases))
		}
		for i, tc := range cases {
			r := got[i]
			if r.Err != nil {
				t.Errorf("%s: %v", tc.name, r.Err)
				continue
			}
			if r.Conflict != (tc.files != nil) || !reflect.DeepEqual(r.Files, tc.files) {
				t.Errorf("%s: conflict %v files %q, want files %q", tc.name, r.Conflict, r.Files, tc.files)
			}
			if tc.pair[0] != tc.pair[1] && r.Cached != cached {
				t.Errorf("%s: cached %v, want %v", tc.name, r.Cached, cached)
			}
		}
	}
	t.Run("Batch", func(t *testing.T) {
		got, err := New(dir).MergeTrees(ctx, pairs, nil)
		if err != nil {
			t.Fatal(err)
		}
		check(t, got, false)
	})
	t.Run("OneByOne", func(t *testing.T) {
		for i, tc := range cases {
			got, err := New(dir).MergeTrees(ctx, pairs[i:i+1], nil)
			if err != nil {
				t.Fatal(err)
			}
			r := got[0]
			if r.Err != nil || r.Conflict != (tc.files != nil) || !reflect.DeepEqual(r.Files, tc.files) {
				t.Errorf("%s alone: %+v, want files %q", tc.name, r, tc.files)
			}
		}
	})
	t.Run("Reversed", func(t *testing.T) {
		rev := make([][2]string, len(pairs))
		for i, p := range pairs {
			rev[i] = [2]string{p[1], p[0]}
		}
		got, err := New(dir).MergeTrees(ctx, rev, nil)
		if err != nil {
			t.Fatal(err)
		}
		check(t, got, false)
	})
	t.Run("Cache", func(t *testing.T) {
		common, err := New(dir).CommonDir(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c, err := LoadMergeCache(common, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := New(dir).MergeTrees(ctx, pairs, c)
		if err != nil {
			t.Fatal(err)
		}
		check(t, got, false)
		if err := c.Save(ctx); err != nil {
			t.Fatal(err)
		}
		c2, err := LoadMergeCache(common, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c2.Len() != len(cases)-1 {
			t.Fatalf("the saved cache holds %d pairs, want %d", c2.Len(), len(cases)-1)
		}
		got, err = New(dir).MergeTrees(ctx, pairs, c2)
		if err != nil {
			t.Fatal(err)
		}
		check(t, got, true)
	})
	t.Run("BadPairAlone", func(t *testing.T) {
		// A commit the repository lacks spoils git's batch; the other
		// pairs still get their results.
		missing := strings.Repeat("0", 39) + "1"
		got, err := New(dir).MergeTrees(ctx, [][2]string{{a, b}, {a, missing}, {a, c}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got[0].Err != nil || !got[0].Conflict || got[2].Err != nil || got[2].Conflict {
			t.Errorf("the good pairs: %+v, %+v", got[0], got[2])
		}
		if got[1].Err == nil {
			t.Errorf("a missing commit merged: %+v", got[1])
		}
	})
	t.Run("Unrelated", func(t *testing.T) {
		gitT(t, dir, "checkout", "-q", "--orphan", "orphan")
		gitT(t, dir, "rm", "-rqf", ".")
		writeT(t, dir, "z.txt", "z\n")
		gitT(t, dir, "add", "z.txt")
		gitT(t, dir, "commit", "-qm", "orphan")
		o := gitT(t, dir, "rev-parse", "HEAD")
		gitT(t, dir, "checkout", "-q", "-f", "main")
		got, err := New(dir).MergeTrees(ctx, [][2]string{{a, o}, {a, b}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got[0].Err == nil || got[1].Err != nil || !got[1].Conflict {
			t.Errorf("unrelated histories: %+v; the other pair: %+v", got[0], got[1])
		}
	})
	t.Run("NotAnID", func(t *testing.T) {
		got, err := New(dir).MergeTrees(ctx, [][2]string{{"main", "--help"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got[0].Err == nil {
			t.Errorf("names merged: %+v", got[0])
		}
	})
}

// TestMergeTrees_WorktreesUntouched: a trial merge reads no worktree
// and writes none. A linked worktree with uncommitted and untracked
// changes, and a main worktree in the middle of other work, keep every
// byte and their git status; the results are the same whatever each
// worktree has checked out.
func TestMergeTrees_WorktreesUntouched(t *testing.T) {
	needGit(t)
	ctx := context.Background()
	dir := newRepo(t)
	a := branch(t, dir, "a", func() { writeT(t, dir, "f.txt", lines(20, map[int]string{3: "three (a)"})) })
	b := branch(t, dir, "b", func() { writeT(t, dir, "f.txt", lines(20, map[int]string{3: "three (b)"})) })
	c := branch(t, dir, "c", func() { writeT(t, dir, "f.txt", lines(20, map[int]string{18: "eighteen (c)"})) })
	pairs := [][2]string{{a, b}, {a, c}, {b, c}}
	want, err := New(dir).MergeTrees(ctx, pairs, nil)
	if err != nil {
		t.Fatal(err)
	}

	wt := filepath.Join(t.TempDir(), "wt")
	gitT(t, dir, "worktree", "add", "-q", wt, "b")
	// Dirty both worktrees: the linked one on b, the main one switched
	// to a with a conflicting uncommitted change and a staged file.
	writeT(t, wt, "f.txt", lines(20, map[int]string{3: "uncommitted", 18: "also"}))
	writeT(t, wt, "new.txt", "untracked\n")
	gitT(t, dir, "checkout", "-q", "a")
	writeT(t, dir, "f.txt", "<<<<<<< not a merge\n")
	writeT(t, dir, "staged.txt", "staged\n")
	gitT(t, dir, "add", "staged.txt")

	snap := func() string {
		var b strings.Builder
		for _, d := range []string{dir, wt} {
			b.WriteString(gitT(t, d, "status", "--porcelain=v1", "-uall", "--branch"))
			b.WriteString(gitT(t, d, "rev-parse", "HEAD"))
			for _, f := range []string{"f.txt", "new.txt", "staged.txt"} {
				data, _ := os.ReadFile(filepath.Join(d, f))
				fmt.Fprintf(&b, "%s:%q\n", f, data)
			}
		}
		idx, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
		fmt.Fprintf(&b, "index %x\n", idx)
		return b.String()
	}
	before := snap()
	for _, from := range []string{dir, wt} {
		got, err := New(from).MergeTrees(ctx, pairs, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i].Err != nil || got[i].Conflict != want[i].Conflict || !slices.Equal(got[i].Files, want[i].Files) {
				t.Errorf("from %s, pair %d: %+v, want %+v", from, i, got[i], want[i])
			}
		}
	}
	if after := snap(); after != before {
		t.Errorf("a trial merge changed a worktree:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

func TestParseGitVersion(t *testing.T) {
	for _, tc := range []struct {
		in        string
		maj, min  int
		ok        bool
		mergeTree bool
	}{
		{"git version 2.39.5", 2, 39, true, true},
		{"git version 2.38.0\n", 2, 38, true, true},
		{"git version 2.37.1 (Apple Git-137.1)", 2, 37, true, false},
		{"git version 2.41.0.windows.1", 2, 41, true, true},
		{"git version 3.0", 3, 0, true, true},
		{"git version 1.9.5", 1, 9, true, false},
		{"hub version 2", 0, 0, false, false},
		{"", 0, 0, false, false},
	} {
		maj, min, ok := ParseGitVersion(tc.in)
		if maj != tc.maj || min != tc.min || ok != tc.ok {
			t.Errorf("ParseGitVersion(%q) = %d, %d, %v; want %d, %d, %v", tc.in, maj, min, ok, tc.maj, tc.min, tc.ok)
		}
		if ok {
			has := maj > MinMergeTreeVersion[0] || maj == MinMergeTreeVersion[0] && min >= MinMergeTreeVersion[1]
			if has != tc.mergeTree {
				t.Errorf("%q: merge-tree --write-tree %v, want %v", tc.in, has, tc.mergeTree)
			}
		}
	}
}

func TestParseMergeTree(t *testing.T) {
	tree := strings.Repeat("ab", 20)
	for _, tc := range []struct {
		name  string
		out   string
		code  int
		want  MergeResult
		isErr bool
	}{
		{"clean", tree + "\x00", 0, MergeResult{}, false},
		{"conflicts", tree + "\x00b.txt\x00a.txt\x00a.txt\x00", 1, MergeResult{Conflict: true, Files: []string{"a.txt", "b.txt"}}, false},
		{"no trailing NUL", tree + "\x00a.txt", 1, MergeResult{Conflict: true, Files: []string{"a.txt"}}, false},
		{"a name with a newline", tree + "\x00a\nb\x00", 1, MergeResult{Conflict: true, Files: []string{"a\nb"}}, false},
		{"not something we can merge", "", 1, MergeResult{}, true},
		{"fatal", "", 128, MergeResult{}, true},
		{"clean with files", tree + "\x00a\x00", 0, MergeResult{}, true},
		{"no tree", "a.txt\x00", 1, MergeResult{}, true},
	} {
		got, err := ParseMergeTree([]byte(tc.out), tc.code)
		if (err != nil) != tc.isErr || (err == nil && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("%s: %+v, %v; want %+v (error %v)", tc.name, got, err, tc.want, tc.isErr)
		}
	}
}

func TestParseMergeTreeBatch(t *testing.T) {
	tree := strings.Repeat("cd", 20)
	out := "0\x00" + tree + "\x00x\x00a\x00\x001\x00" + tree + "\x00\x00"
	got, err := ParseMergeTreeBatch([]byte(out), 2)
	want := []MergeResult{{Conflict: true, Files: []string{"a", "x"}}, {}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, %v; want %+v", got, err, want)
	}
	for _, bad := range []struct {
		out string
		n   int
	}{
		{out, 3},
		{out, 1},
		{"0\x00" + tree + "\x00x", 1},
		{"2\x00" + tree + "\x00\x00", 1},
		{"1\x00" + tree + "\x00a\x00\x00", 1},
		{"", 1},
	} {
		if got, err := ParseMergeTreeBatch([]byte(bad.out), bad.n); err == nil {
			t.Errorf("%q for %d merges: %+v, want an error", bad.out, bad.n, got)
		}
	}
}

func FuzzParseMergeTree(f *testing.F) {
	tree := strings.Repeat("ab", 20)
	f.Add([]byte(tree+"\x00a\x00"), 1, 1)
	f.Add([]byte("0\x00"+tree+"\x00x\x00\x001\x00"+tree+"\x00\x00"), 0, 2)
	f.Fuzz(func(t *testing.T, out []byte, code, n int) {
		if r, err := ParseMergeTree(out, code); err == nil {
			if r.Conflict != (code == 1) || (!r.Conflict && len(r.Files) > 0) || !slices.IsSorted(r.Files) {
				t.Fatalf("inconsistent result %+v for exit %d", r, code)
			}
		}
		n = n%64 + 1
		if n < 1 {
			n += 64
		}
		if rs, err := ParseMergeTreeBatch(out, n); err == nil {
			if len(rs) != n {
				t.Fatalf("%d results for %d merges", len(rs), n)
			}
			for _, r := range rs {
				if !r.Conflict && len(r.Files) > 0 {
					t.Fatalf("clean result with files: %+v", r)
				}
				for _, f := range r.Files {
					if f == "" {
						t.Fatal("an empty path")
					}
				}
			}
		}
	})
}

func TestBranchTipsAndHasCommits(t *testing.T) {
	needGit(t)
	ctx := context.Background()
	dir := newRepo(t)
	a := branch(t, dir, "coord/alice", func() { writeT(t, dir, "x.txt", "x\n") })
	tips, err := New(dir).BranchTips(ctx)
	if err != nil {
		t.Fatal(err)
	}
	main := gitT(t, dir, "rev-parse", "main")
	if !reflect.DeepEqual(tips, map[string]string{"refs/heads/main": main, "refs/heads/coord/alice": a}) {
		t.Errorf("tips %v", tips)
	}
	tree := gitT(t, dir, "rev-parse", "main^{tree}")
	missing := strings.Repeat("1", 40)
	has, err := New(dir).HasCommits(ctx, []string{a, main, tree, missing, "main"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(has, map[string]bool{a: true, main: true}) {
		t.Errorf("HasCommits %v", has)
	}
}
