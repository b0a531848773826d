package gitrepo

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// isolate runs every git of the test, the package's own runs included,
// as IsolatedEnv says: no user or system configuration, a fixed identity.
func isolate(t *testing.T) {
	for _, kv := range IsolatedEnv {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// TestLandingOps: a merge written in the object database, a merge
// commit made without a worktree, the target moved by compare-and-swap
// (refused, changing nothing, when it moved), and the lander's
// temporary worktrees made, removed and cleaned up after a crash.
func TestLandingOps(t *testing.T) {
	dir := testRepo(t)
	isolate(t)
	ctx := context.Background()
	r := New(dir)
	base := git(t, dir, "rev-parse", "main")
	git(t, dir, "checkout", "-q", "-b", "work")
	head := commit(t, dir, "a.txt", "a\n", "work")
	git(t, dir, "checkout", "-q", "main")
	tip := commit(t, dir, "b.txt", "b\n", "main moves")

	tree, files, conflict, err := r.MergeWrite(ctx, tip, head)
	if err != nil || conflict || len(files) > 0 || !isObjectID(tree) {
		t.Fatalf("MergeWrite = %q %v %v %v", tree, files, conflict, err)
	}
	merge, err := r.CommitTree(ctx, tree, []string{tip, head}, "coord: land task t: work\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := git(t, dir, "log", "-1", "--format=%P %s", merge); got != tip+" "+head+" coord: land task t: work" {
		t.Fatalf("merge commit: %q", got)
	}
	// The swap from a tip main no longer has is refused and moves nothing.
	err = r.MoveRef(ctx, "main", merge, base, "land")
	if !errors.Is(err, ErrRefMoved) {
		t.Fatalf("MoveRef from an old tip: %v", err)
	}
	if got := git(t, dir, "rev-parse", "main"); got != tip {
		t.Fatalf("main moved to %s", got)
	}
	if err := r.MoveRef(ctx, "main", merge, tip, "land"); err != nil {
		t.Fatal(err)
	}
	if got := git(t, dir, "rev-parse", "main"); got != merge {
		t.Fatalf("main at %s, want %s", got, merge)
	}

	// A conflict names the file.
	git(t, dir, "checkout", "-q", "-b", "other", base)
	other := commit(t, dir, "b.txt", "other\n", "other b")
	git(t, dir, "checkout", "-q", "main")
	if _, files, conflict, err := r.MergeWrite(ctx, merge, other); err != nil || !conflict || strings.Join(files, ",") != "b.txt" {
		t.Fatalf("conflict: %v %v %v", files, conflict, err)
	}

	// Temporary worktrees: made under coord-land/, removed; leftovers
	// (one git knows, one it does not) cleaned up.
	wt, err := r.AddCheckout(ctx, "t", merge)
	if err != nil {
		t.Fatal(err)
	}
	common, _ := r.CommonDir(ctx)
	if !strings.HasPrefix(wt, filepath.Join(common, LandDir)+"/") {
		t.Fatalf("worktree at %s", wt)
	}
	if _, err := os.Stat(filepath.Join(wt, "a.txt")); err != nil {
		t.Fatal(err)
	}
	if err := r.RemoveCheckout(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Fatalf("worktree left: %v", err)
	}
	if _, err := r.AddCheckout(ctx, "u", merge); err != nil {
		t.Fatal(err)
	}
	gone, err := r.AddCheckout(ctx, "gone", merge)
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(gone) // killed while git removed it: its record stays
	os.MkdirAll(filepath.Join(common, LandDir, "half-made"), 0o755)
	// A person's worktree on a disk not mounted now keeps its record.
	away := filepath.Join(t.TempDir(), "away")
	git(t, dir, "worktree", "add", "-q", "--detach", away, "main")
	os.RemoveAll(away)
	if n, err := r.CleanCheckouts(ctx); err != nil || n != 3 {
		t.Fatalf("CleanCheckouts = %d, %v", n, err)
	}
	if wl := git(t, dir, "worktree", "list", "--porcelain"); strings.Contains(wl, LandDir) || !strings.Contains(wl, away) {
		t.Fatalf("worktrees after the clean-up:\n%s", wl)
	}
	if got := git(t, dir, "branch", "--list", "--format=%(refname:short)"); got != "main\nother\nwork" {
		t.Fatalf("branches: %q", got)
	}
}

// TestRunCheck: the exit status and the last lines of the output; a
// check over its time is killed with what it started.
func TestRunCheck(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	run, err := RunCheck(ctx, dir, `for i in $(seq 1000); do echo line $i; done; echo "in $PWD $X" >&2; exit 3`, []string{"X=y"}, time.Minute)
	if err != nil || run.Exit != 3 || run.TimedOut {
		t.Fatalf("RunCheck = %+v, %v", run, err)
	}
	if !strings.HasSuffix(run.Tail, "in "+dir+" y") || len(run.Tail) > checkTail || !strings.HasPrefix(run.Tail, "line ") {
		t.Fatalf("tail %q", run.Tail)
	}
	pidfile := filepath.Join(dir, "child")
	run, err = RunCheck(ctx, dir, `sh -c 'echo $$ > `+pidfile+`.tmp; mv `+pidfile+`.tmp `+pidfile+`; exec sleep 60' & while [ ! -f `+pidfile+` ]; do sleep 0.01; done; sleep 60`, nil, 500*time.Millisecond)
	if err != nil || !run.TimedOut || run.Exit != 137 {
		t.Fatalf("RunCheck over time = %+v, %v", run, err)
	}
	if run.Took > 30*time.Second { // its processes live 60 s unless killed
		t.Fatalf("RunCheck returned after %v: the check's processes outlived its timeout", run.Took)
	}
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	end := time.Now().Add(60 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(end) {
			t.Fatalf("the check's child %d outlived it", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if ok, _ := RunCheck(ctx, dir, "true", nil, time.Minute); ok.Exit != 0 {
		t.Fatalf("true exited %d", ok.Exit)
	}
}

// TestSyncCheckouts: a checkout of the branch moved is brought along,
// keeping a local change to another file; one whose local change is in
// the way keeps its files and is named.
func TestSyncCheckouts(t *testing.T) {
	dir := testRepo(t)
	ctx := context.Background()
	r := New(dir)
	old := git(t, dir, "rev-parse", "main")
	git(t, dir, "checkout", "-q", "-b", "work")
	commit(t, dir, "a.txt", "a\n", "work a")
	next := commit(t, dir, "README.md", "changed\n", "work readme")
	git(t, dir, "checkout", "-q", "main")
	write(t, dir, "local.txt", "mine\n")
	git(t, dir, "update-ref", "refs/heads/main", next, old)
	if bad := r.SyncCheckouts(ctx, "main", old, next); len(bad) > 0 {
		t.Fatalf("SyncCheckouts: %v", bad)
	}
	if got := git(t, dir, "status", "--porcelain"); got != "?? local.txt" {
		t.Fatalf("status after the sync: %q", got)
	}

	git(t, dir, "checkout", "-q", "work")
	later := commit(t, dir, "README.md", "later\n", "work readme again")
	git(t, dir, "checkout", "-q", "main")
	write(t, dir, "README.md", "local edit\n")
	git(t, dir, "update-ref", "refs/heads/main", later, next)
	bad := r.SyncCheckouts(ctx, "main", next, later)
	if len(bad) != 1 || !strings.Contains(bad[0], "git diff "+next+" > mine.patch") {
		t.Fatalf("SyncCheckouts with a change in the way: %v", bad)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "README.md")); string(b) != "local edit\n" {
		t.Fatalf("the local edit was lost: %q", b)
	}
}

// TestOnFirstParents: a tip on the head's first-parent chain (itself
// included) is; one the head merged in as a second parent is not, nor
// one the head is behind.
func TestOnFirstParents(t *testing.T) {
	dir := testRepo(t)
	ctx := context.Background()
	r := New(dir)
	base := git(t, dir, "rev-parse", "main")
	git(t, dir, "checkout", "-q", "-b", "work")
	work := commit(t, dir, "a.txt", "a\n", "work")
	git(t, dir, "checkout", "-q", "main")
	tip := commit(t, dir, "b.txt", "b\n", "main moves")
	git(t, dir, "checkout", "-q", "work")
	git(t, dir, "merge", "-q", "--no-ff", "-m", "merge main", "main")
	merged := git(t, dir, "rev-parse", "HEAD")
	for _, c := range []struct {
		tip, head string
		want      bool
	}{{base, work, true}, {work, work, true}, {work, merged, true}, {tip, merged, false}, {work, base, false}} {
		if got, err := r.OnFirstParents(ctx, c.tip, c.head); err != nil || got != c.want {
			t.Errorf("OnFirstParents(%.7s, %.7s) = %v, %v; want %v", c.tip, c.head, got, err, c.want)
		}
	}
}

// TestRecoverMove: a lander killed between moving the target and
// bringing its checkouts leaves the move noted; the next lander's
// CleanCheckouts brings the checkout of the target to the new commit
// (a checkout already brought stays), and removes the note. A note of a
// move that never happened, or an unreadable one, changes nothing but is
// removed.
func TestRecoverMove(t *testing.T) {
	dir := testRepo(t)
	ctx := context.Background()
	r := New(dir)
	l := NewLanding(r, nil)
	var warned []string
	l.Warn = func(s string) { warned = append(warned, s) }
	journal := filepath.Join(dir, ".git", filepath.FromSlash(MoveJournal))
	old := git(t, dir, "rev-parse", "main")
	git(t, dir, "checkout", "-q", "-b", "work")
	next := commit(t, dir, "a.txt", "a\n", "work a")
	git(t, dir, "checkout", "-q", "main")

	// killed after the ref moved, before the checkout was brought
	if err := r.writeMoveJournal(ctx, "main", old, next); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "update-ref", "refs/heads/main", next, old)
	if got := git(t, dir, "status", "--porcelain"); got == "" {
		t.Fatal("the setup left the checkout clean")
	}
	if _, err := l.CleanCheckouts(ctx); err != nil {
		t.Fatal(err)
	}
	if got := git(t, dir, "status", "--porcelain"); got != "" || len(warned) > 0 {
		t.Fatalf("after recovery: status %q, warnings %v", got, warned)
	}
	if _, err := os.Stat(journal); err == nil {
		t.Fatal("the journal is left")
	}
	// the same note again (the checkout already brought): nothing changes
	if err := r.writeMoveJournal(ctx, "main", old, next); err != nil {
		t.Fatal(err)
	}
	if bad := r.RecoverMove(ctx); len(bad) > 0 || git(t, dir, "status", "--porcelain") != "" {
		t.Fatalf("a second recovery: %v", bad)
	}
	// a move that never happened: the branch is not at its new commit
	if err := r.writeMoveJournal(ctx, "main", next, old); err != nil {
		t.Fatal(err)
	}
	if bad := r.RecoverMove(ctx); len(bad) > 0 || git(t, dir, "rev-parse", "main") != next || git(t, dir, "status", "--porcelain") != "" {
		t.Fatalf("a move that never happened was acted on: %v", bad)
	}
	// a damaged note
	if err := os.WriteFile(journal, []byte("main ../x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if bad := r.RecoverMove(ctx); len(bad) != 1 || !strings.Contains(bad[0], "removed") {
		t.Fatalf("a damaged journal: %v", bad)
	}
	if _, err := os.Stat(journal); err == nil {
		t.Fatal("the damaged journal is left")
	}
}

// TestSyncCheckoutsStaleStat: a checkout whose index holds stale stat
// data for a file the landing changes (the file touched, or the checkout
// copied) is still brought along: read-tree alone calls it "not
// uptodate".
func TestSyncCheckoutsStaleStat(t *testing.T) {
	dir := testRepo(t)
	ctx := context.Background()
	r := New(dir)
	old := git(t, dir, "rev-parse", "main")
	git(t, dir, "checkout", "-q", "-b", "work")
	next := commit(t, dir, "README.md", "changed\n", "work readme")
	git(t, dir, "checkout", "-q", "main")
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "README.md"), past, past); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "update-ref", "refs/heads/main", next, old)
	if bad := r.SyncCheckouts(ctx, "main", old, next); len(bad) > 0 {
		t.Fatalf("SyncCheckouts: %v", bad)
	}
	if got := git(t, dir, "status", "--porcelain"); got != "" {
		t.Fatalf("status after the sync: %q", got)
	}
}

// TestLandingMergesOnce: the lander's question "does the target hold
// this work already?" and the merge that lands it are one merge, made
// once (one git merge-tree), with the same answers Repo.Contains and
// Repo.MergeWrite give: not held, held after a squash, a conflict.
func TestLandingMergesOnce(t *testing.T) {
	dir := testRepo(t)
	isolate(t)
	ctx := context.Background()
	base := git(t, dir, "rev-parse", "main")
	git(t, dir, "checkout", "-q", "-b", "work")
	head := commit(t, dir, "a.txt", "a\n", "work")
	git(t, dir, "checkout", "-q", "main")
	tip := commit(t, dir, "b.txt", "b\n", "main moves")
	git(t, dir, "checkout", "-q", "-b", "squashed")
	squashed := commit(t, dir, "a.txt", "a\n", "work, squashed")
	git(t, dir, "checkout", "-q", "-b", "other", base)
	other := commit(t, dir, "a.txt", "other\n", "other a")
	git(t, dir, "checkout", "-q", "main")

	// Every git the package starts from here on is logged.
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	calls := filepath.Join(bin, "calls")
	wrapper := "#!/bin/sh\necho \"$*\" >> " + calls + "\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	merges := func() int {
		b, _ := os.ReadFile(calls)
		return strings.Count(string(b), " merge-tree ")
	}

	r := New(dir)
	for _, c := range []struct {
		name           string
		into, commit   string
		held, conflict bool
	}{
		{"not held", tip, head, false, false},
		{"held after a squash", squashed, head, true, false},
		{"conflict", other, head, false, true},
	} {
		l := NewLanding(New(dir), nil)
		before := merges()
		held, err := l.Contains(ctx, c.into, c.commit)
		if err != nil || held != c.held {
			t.Fatalf("%s: Contains = %v, %v; want %v", c.name, held, err, c.held)
		}
		m, err := l.Merge(ctx, c.into, c.commit)
		if err != nil || m.Conflict != c.conflict {
			t.Fatalf("%s: Merge = %+v, %v", c.name, m, err)
		}
		if n := merges() - before; n != 1 {
			t.Fatalf("%s: %d git merge-tree for Contains and Merge, want 1", c.name, n)
		}
		// The same answers as the Repo's own, each its own merge.
		if want, err := r.Contains(ctx, c.into, c.commit); err != nil || want != held {
			t.Fatalf("%s: Repo.Contains = %v, %v; Landing.Contains = %v", c.name, want, err, held)
		}
		tree, files, conflict, err := r.MergeWrite(ctx, c.into, c.commit)
		if err != nil || tree != m.Tree || conflict != m.Conflict || strings.Join(files, ",") != strings.Join(m.Files, ",") {
			t.Fatalf("%s: Repo.MergeWrite = %s %v %v %v; Landing.Merge = %+v", c.name, tree, files, conflict, err, m)
		}
	}

	// A merge git could not make is an error each time it is asked,
	// never an answer kept: a commit the repository lacks.
	l := NewLanding(New(dir), nil)
	missing := strings.Repeat("0", 39) + "1"
	for i := range 2 {
		before := merges()
		if held, err := l.Contains(ctx, tip, missing); err == nil || held {
			t.Fatalf("Contains of a missing commit (ask %d) = %v, %v; want an error", i+1, held, err)
		}
		if _, err := l.Merge(ctx, tip, missing); err == nil {
			t.Fatalf("Merge of a missing commit (ask %d): no error", i+1)
		}
		if n := merges() - before; n != 2 {
			t.Fatalf("ask %d: %d git merge-tree for a merge that failed twice, want 2 (nothing kept)", i+1, n)
		}
	}
}
