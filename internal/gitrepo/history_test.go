package gitrepo

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rotd/coordination/coord/plan"
)

// repo is a scratch git repository for a test.
type historyRepo struct {
	t   *testing.T
	dir string
}

func newHistoryRepo(t *testing.T) *historyRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	r := &historyRepo{t, t.TempDir()}
	r.git("init", "-q", "-b", "main")
	return r
}

func (r *historyRepo) git(args ...string) string {
	r.t.Helper()
	return testGit(r.t, r.dir, args...)
}

func (r *historyRepo) write(path, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *historyRepo) commit(msg string) string {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

// changes lists a commit's changes as "M path" or "R old>new".
func changes(c plan.Commit) []string {
	var out []string
	for _, ch := range c.Changes {
		if ch.From != "" {
			out = append(out, string(ch.Status)+" "+ch.From+">"+ch.Path)
		} else {
			out = append(out, string(ch.Status)+" "+ch.Path)
		}
	}
	return out
}

func TestLogAndTree(t *testing.T) {
	ctx := context.Background()
	r := newHistoryRepo(t)
	r.write("src/parse.go", strings.Repeat("package src // a parser\n", 20))
	r.write("docs/a guide.md", "hello\n")
	r.commit("parser: first\n\nThe body.\n\nMore body.")
	if err := os.Mkdir(filepath.Join(r.dir, "internal"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.git("mv", "src/parse.go", "internal/parse.go")
	r.write("docs/a guide.md", "hello again\n")
	r.commit("move the parser")
	r.git("rm", "-q", "docs/a guide.md")
	head := r.commit("drop the guide")

	got, err := Head(ctx, r.dir)
	if err != nil || got != head {
		t.Fatalf("Head = %q, %v; want %q", got, err, head)
	}
	cs, err := Log(ctx, r.dir, "", head, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"A docs/a guide.md", "A src/parse.go"},
		{"M docs/a guide.md", "R src/parse.go>internal/parse.go"},
		{"D docs/a guide.md"},
	}
	if len(cs) != 3 {
		t.Fatalf("%d commits, want 3", len(cs))
	}
	for i := range cs {
		if !reflect.DeepEqual(changes(cs[i]), want[i]) {
			t.Errorf("commit %d: %q, want %q", i, changes(cs[i]), want[i])
		}
	}
	if cs[0].Subject != "parser: first" || cs[0].Body != "The body.\n\nMore body." {
		t.Errorf("message: %q / %q", cs[0].Subject, cs[0].Body)
	}
	if cs[2].Hash != head {
		t.Errorf("the newest commit is %s, want %s last", cs[2].Hash, head)
	}
	last, err := Log(ctx, r.dir, "", head, 1)
	if err != nil || len(last) != 1 || last[0].Hash != head {
		t.Errorf("Log with max 1: %v, %v", last, err)
	}
	tree, err := Tree(ctx, r.dir, head)
	if err != nil || !reflect.DeepEqual(tree, []string{"internal/parse.go"}) {
		t.Errorf("Tree = %q, %v", tree, err)
	}
}

func TestHead_NoRepo(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ctx := context.Background()
	if _, err := Head(ctx, t.TempDir()); !errors.Is(err, ErrNoRepo) {
		t.Errorf("a directory without git: %v, want ErrNoRepo", err)
	}
	r := newHistoryRepo(t)
	if _, err := Head(ctx, r.dir); !errors.Is(err, ErrNoRepo) {
		t.Errorf("a repository without commits: %v, want ErrNoRepo", err)
	}
}

func TestRefresh(t *testing.T) {
	ctx := context.Background()
	r := newHistoryRepo(t)
	for i, p := range []string{"a.go", "b.go", "c.go"} {
		r.write(p, p+"\n")
		r.commit("add " + p + strings.Repeat("!", i))
	}
	var ix plan.Index
	head, changed, err := Refresh(ctx, r.dir, &ix)
	if err != nil || !changed || ix.Head != head || len(ix.Commits) != 3 {
		t.Fatalf("first refresh: %v %v %v, %d commits", head, changed, err, len(ix.Commits))
	}
	if _, changed, err := Refresh(ctx, r.dir, &ix); changed || err != nil {
		t.Fatalf("a refresh with nothing new changed the index (%v, %v)", changed, err)
	}
	r.write("a.go", "changed\n")
	r.commit("change a")
	r.write("d.go", "new\n")
	head, _, err = Refresh(ctx, r.dir, &ix)
	if err != nil {
		t.Fatal(err)
	}
	r.commit("add d")
	if _, _, err = Refresh(ctx, r.dir, &ix); err != nil {
		t.Fatal(err)
	}
	var full plan.Index
	if _, _, err := Refresh(ctx, r.dir, &full); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ix, full) {
		t.Fatalf("incremental refreshes differ from a rebuild:\n%+v\n%+v", ix, full)
	}

	// A rewritten branch: the index's head is no longer an ancestor.
	r.git("reset", "-q", "--hard", head)
	r.git("commit", "-q", "--amend", "-m", "change a, reworded")
	r.write("e.go", "e\n")
	r.commit("add e")
	if _, changed, err := Refresh(ctx, r.dir, &ix); !changed || err != nil {
		t.Fatalf("refresh after a rewrite: %v %v", changed, err)
	}
	var again plan.Index
	if _, _, err := Refresh(ctx, r.dir, &again); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ix, again) {
		t.Fatalf("after a rewrite the index keeps commits no longer on the branch")
	}
	for _, c := range ix.Commits {
		if c.Subject == "add d" {
			t.Fatalf("the dropped commit %q is still indexed", c.Subject)
		}
	}
}

func TestGit_NotFound(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := Head(context.Background(), t.TempDir()); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("without git on PATH: %v, want exec.ErrNotFound", err)
	}
}

// TestLog_HugeMessage: one commit message over the field bound (a squash
// of a long branch) is cut, not an error for the whole history: the
// commits before and after it, and its own changes, are read.
func TestLog_HugeMessage(t *testing.T) {
	ctx := context.Background()
	r := newHistoryRepo(t)
	r.write("a.go", "package a\n")
	r.commit("a: first")
	r.write("b.go", "package b\n")
	msgFile := filepath.Join(t.TempDir(), "msg")
	huge := "squash: everything\n\n" + strings.Repeat("é and a long line of the squashed branch's log\n", (maxField+maxField/2)/48)
	if err := os.WriteFile(msgFile, []byte(huge), 0o644); err != nil {
		t.Fatal(err)
	}
	r.git("add", "-A")
	r.git("commit", "-q", "-F", msgFile)
	r.write("a.go", "package a // more\n")
	r.commit("a: second")
	head := r.git("rev-parse", "HEAD")
	cs, err := Log(ctx, r.dir, "", head, 0)
	if err != nil {
		t.Fatalf("a message of %d bytes: %v", len(huge), err)
	}
	if len(cs) != 3 || cs[1].Subject != "squash: everything" || !reflect.DeepEqual(changes(cs[1]), []string{"A b.go"}) || cs[2].Subject != "a: second" {
		t.Fatalf("got %d commits: %+v", len(cs), cs)
	}
	if len(cs[1].Body) >= len(huge) || !utf8.ValidString(cs[1].Body) {
		t.Fatalf("the body was not cut at a character: %d bytes", len(cs[1].Body))
	}
}
