package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/fsops"
	"github.com/rotd/coordination/internal/gitrepo"
	"github.com/rotd/coordination/registry/backend/backendtest"
)

// checkWriteClaims: write claims (docs/GIT.md) are all or nothing; a
// write to paths the task already holds commits nothing; another agent's
// write, lock or claim of a task that meets them is refused naming the
// holder; they hold while the task is in flight (claimed, blocked with
// its owner, done with commits not yet on the target) and are freed when
// its work lands on the target (found in a real git repository), when it
// is handed back, and when its owner is swept; two agents writing one
// new path at once: exactly one gets it.
func checkWriteClaims(t *testing.T, e *env) {
	repo := gitRepo(t)
	d := decorate(e.open())
	s, err := app.New(e.ctx, d, app.Options{Clock: e.clock.Now, Repo: gitrepo.ForProject(repo.dir, nil),
		Warn: func(msg string) { t.Logf("warning: %s", msg) }})
	ok(t, "app.New", err)
	e.seed(s, &coord.Task{ID: "t1"}, &coord.Task{ID: "t2"}, &coord.Task{ID: "t3", Files: []string{"go.mod"}}, &coord.Task{ID: "t4"})
	e1 := e.claim(s, "a", "t1")
	e.claim(s, "b", "t2")
	write := func(agent string, paths ...string) error {
		_, err := s.WriteClaim(e.ctx, agent, paths)
		return err
	}
	touched := func(id string) []string { return e.task(s, id).TouchedFiles }

	ok(t, "a writes", write("a", "go.mod", "README.md"))
	if got := touched("t1"); !slices.Equal(got, []string{"README.md", "go.mod"}) {
		t.Fatalf("t1 touched %v", got)
	}
	// A write to paths the task holds is a read: no transaction at all.
	before := d.Updates()
	ok(t, "a writes again", write("a", "go.mod"))
	if n := d.Updates() - before; n != 0 {
		t.Errorf("a write to a claimed path ran %d transactions, want none", n)
	}
	// All or nothing, naming the holder and the task.
	refused := func(what string, err error) {
		t.Helper()
		wantCode(t, what, err, coord.CodeConflict, "go.mod", "task t1", "a")
		if ce, isCE := err.(*coord.Error); !isCE || ce.Holder != "a" {
			t.Errorf("%s: holder not named: %v", what, err)
		}
	}
	refused("b writes", write("b", "docs/x.md", "go.mod"))
	if got := touched("t2"); len(got) != 0 {
		t.Fatalf("a refused write claimed %v", got)
	}
	_, err = s.LockPaths(e.ctx, "b", []string{"go.mod"}, 0)
	refused("b locks", err)
	hits, err := s.Guard(e.ctx, "b", []string{"go.mod", "main.go"})
	ok(t, "guard", err)
	if len(hits) != 1 || hits[0].TaskID != "t1" || hits[0].Holder != "a" {
		t.Errorf("guard for b: %+v", hits)
	}
	_, err = s.Claim(e.ctx, app.ClaimRequest{Agent: coord.Agent{ID: "c"}, TaskID: "t3"})
	wantCode(t, "c claims a task whose files a claim holds", err, coord.CodeConflict, "file go.mod is write-claimed by task t1 (a)")

	// Blocked with its owner: still in flight.
	_, err = s.Block(e.ctx, app.TaskRef{Agent: coord.Agent{ID: "a"}, TaskID: "t1", Epoch: e1}, "waiting")
	ok(t, "block", err)
	refused("b writes while t1 is blocked", write("b", "go.mod"))
	_, err = s.Unblock(e.ctx, app.TaskRef{Agent: coord.Agent{ID: "a"}, TaskID: "t1", Epoch: e1})
	ok(t, "unblock", err)
	// Back in the pool for its owner: its claims go on with it.
	refused("b writes while t1 waits for its owner", write("b", "go.mod"))
	_, err = s.Claim(e.ctx, app.ClaimRequest{Agent: coord.Agent{ID: "b"}, TaskID: "t1"})
	wantCode(t, "b claims t1 while its owner is here", err, coord.CodeConflict, "returned to its owner a")
	back, err := s.Claim(e.ctx, app.ClaimRequest{Agent: coord.Agent{ID: "a"}})
	ok(t, "the owner takes t1 back", err)
	if back.Task == nil || back.Task.ID != "t1" {
		t.Fatalf("the owner's claim: %+v", back.Task)
	}
	e1 = back.Task.Epoch

	// Done with commits of its own: held until they are on the target.
	repo.commit(t, "work", "lib/a.go")
	_, err = s.Release(e.ctx, app.TaskRef{Agent: coord.Agent{ID: "a"}, TaskID: "t1", Epoch: e1}, "done")
	ok(t, "release", err)
	t1 := e.task(s, "t1")
	if t1.Head == "" || !slices.Equal(t1.TouchedFiles, []string{"README.md", "go.mod", "lib/a.go"}) {
		t.Fatalf("released: head %q touched %v", t1.Head, t1.TouchedFiles)
	}
	refused("b writes while t1's work is not on main", write("b", "go.mod"))
	wantCode(t, "b writes the commit's path", write("b", "lib/a.go"), coord.CodeConflict, "lib/a.go", "task t1")
	repo.git(t, "checkout", "-q", "main")
	repo.git(t, "merge", "-q", "work")
	ok(t, "b writes once t1's work landed", write("b", "go.mod", "lib/a.go"))
	t1 = e.task(s, "t1")
	if t1.LandedAt == "" || t1.LandedCommit == "" || t1.InFlight() {
		t.Fatalf("landed: %+v", t1)
	}

	// Handed back: b's claims go with the task.
	_, err = s.HandBack(e.ctx, app.TaskRef{Agent: coord.Agent{ID: "b"}, TaskID: "t2", Epoch: coord.NoEpoch}, "session ended")
	ok(t, "hand back", err)
	if got := touched("t2"); len(got) != 0 {
		t.Fatalf("handed back, still touched %v", got)
	}
	ok(t, "c writes what b gave back", write("c", "go.mod"))

	// Swept: the claims go with the stale owner's task.
	e.claim(s, "d", "t4")
	ok(t, "d writes", write("d", "app.go"))
	wantCode(t, "e writes d's file", write("e", "app.go"), coord.CodeConflict, "task t4")
	e.clock.Advance(past)
	_, err = s.Sweep(e.ctx, app.SweepRequest{Timeout: staleAfter})
	ok(t, "sweep", err)
	ok(t, "e writes once d was swept", write("e", "app.go"))

	// Two agents, one new path, at once: exactly one gets it.
	e.seed(s, &coord.Task{ID: "r1"}, &coord.Task{ID: "r2"})
	e.claim(s, "p", "r1")
	e.claim(s, "q", "r2")
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, agent := range []string{"p", "q"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			other := e.service(e.open())
			_, errs[i] = other.WriteClaim(e.ctx, agent, []string{"race.txt"})
		}()
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("two writers of one new path: %v, %v; want exactly one refused", errs[0], errs[1])
	}
	for _, err := range errs {
		if err != nil && coord.CodeOf(err) != coord.CodeConflict {
			t.Fatalf("the loser: %v, want a conflict", err)
		}
	}
	if a, b := touched("r1"), touched("r2"); len(a)+len(b) != 1 {
		t.Fatalf("race.txt claimed by %v and %v", a, b)
	}
}

// testRepo is a git repository for a check: branch main with one
// commit, and branch work checked out.
type testRepo struct{ dir string }

func gitRepo(t *testing.T) *testRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: write claims that land need a repository")
	}
	r := &testRepo{dir: filepath.Join(t.TempDir(), "repo")}
	r.git(t, "init", "-q", "-b", "main", r.dir)
	r.commit(t, "", "README.md")
	r.git(t, "checkout", "-q", "-b", "work")
	return r
}

// git runs git in the repository with a fixed identity and no user
// configuration (init: where the test runs).
func (r *testRepo) git(t *testing.T, args ...string) {
	t.Helper()
	dir := r.dir
	if args[0] == "init" {
		dir = ""
	}
	backendtest.Git(t, dir, args...)
}

// commit adds a line to the file at path and commits it.
func (r *testRepo) commit(t *testing.T, msg, path string) {
	t.Helper()
	p := filepath.Join(r.dir, filepath.FromSlash(path))
	ok(t, "mkdir", os.MkdirAll(filepath.Dir(p), 0o755))
	ok(t, "write "+path, fsops.AppendFile(p, []byte("line\n"), 0o644))
	r.git(t, "add", "--", path)
	if msg == "" {
		msg = "add " + path
	}
	r.git(t, "commit", "-q", "-m", msg)
}
