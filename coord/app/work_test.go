package app_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/internal/gitrepo"
	"github.com/rotd/coordination/registry/backend/backendtest"
)

// gitDir is a repository on main with one commit, branch work checked
// out; run runs git there.
type gitDir struct {
	t   *testing.T
	dir string
}

func newGit(t *testing.T) *gitDir {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	g := &gitDir{t, filepath.Join(t.TempDir(), "repo")}
	g.run("init", "-q", "-b", "main", g.dir)
	g.commit("README.md", "first")
	g.run("checkout", "-q", "-b", "work")
	return g
}

func (g *gitDir) run(args ...string) string {
	g.t.Helper()
	if args[0] != "init" {
		args = append([]string{"-C", g.dir}, args...)
	}
	return backendtest.Git(g.t, "", args...)
}

func (g *gitDir) commit(path, msg string) {
	g.t.Helper()
	p := filepath.Join(g.dir, path)
	os.MkdirAll(filepath.Dir(p), 0o755)
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		g.t.Fatal(err)
	}
	f.WriteString(msg + "\n")
	f.Close()
	g.run("add", "--", path)
	g.run("commit", "-q", "-m", msg)
}

func gitProject(t *testing.T, g *gitDir, seed string) *backendtest.Project {
	return backendtest.NewProject(t, backendtest.Options{Seed: seed, Repo: gitrepo.ForProject(g.dir, nil)})
}

func snapshotTask(t *testing.T, s *app.Service, id string) *coord.Task {
	t.Helper()
	list, err := s.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range list {
		if task.ID == id {
			return task
		}
	}
	t.Fatalf("no task %s", id)
	return nil
}

// A claim records the caller's branch and base; a release records the
// branch tip and the paths its commits changed, or no head when the
// branch has no commit of its own (nothing to land, nothing held).
func TestReleaseRecordsWork(t *testing.T) {
	ctx := context.Background()
	g := newGit(t)
	p := gitProject(t, g, `{"id":"t1"}`+"\n"+`{"id":"t2"}`+"\n")
	s := p.Service
	base := g.run("rev-parse", "main")
	res, err := s.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: "a"}, TaskID: "t1"})
	if err != nil || res.Task.Branch != "refs/heads/work" || res.Task.Base != base {
		t.Fatalf("claim: %+v, %v; want branch work, base %s", res.Task, err, base)
	}
	g.commit("src/a.go", "a")
	g.commit("docs/b.md", "b")
	if _, err := s.Release(ctx, app.TaskRef{Agent: coord.Agent{ID: "a"}, TaskID: "t1", Epoch: coord.NoEpoch}, ""); err != nil {
		t.Fatal(err)
	}
	t1 := snapshotTask(t, s, "t1")
	if t1.Head != g.run("rev-parse", "HEAD") || !slices.Equal(t1.TouchedFiles, []string{"docs/b.md", "src/a.go"}) || !t1.InFlight() {
		t.Fatalf("released: %+v", t1)
	}
	// Nothing of its own: main checked out, no head.
	g.run("checkout", "-q", "main")
	if _, err := s.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: "b"}, TaskID: "t2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Release(ctx, app.TaskRef{Agent: coord.Agent{ID: "b"}, TaskID: "t2", Epoch: coord.NoEpoch}, ""); err != nil {
		t.Fatal(err)
	}
	if t2 := snapshotTask(t, s, "t2"); t2.Head != "" || t2.InFlight() {
		t.Fatalf("released without commits of its own: %+v", t2)
	}
}

// Work that reached main by a squash merge has landed too; maintenance
// finds it (and only once), the scheduler assigns what waited on its
// claims, and archiving keeps finished work until it has landed.
func TestLandedBySquashFreesClaims(t *testing.T) {
	ctx := context.Background()
	g := newGit(t)
	p := gitProject(t, g, `{"id":"t1"}`+"\n"+`{"id":"t2","files":["lib/*.go"]}`+"\n")
	s := p.Service
	if _, err := s.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: "a"}, TaskID: "t1"}); err != nil {
		t.Fatal(err)
	}
	g.commit("lib/x.go", "x")
	if _, err := s.Release(ctx, app.TaskRef{Agent: coord.Agent{ID: "a"}, TaskID: "t1", Epoch: coord.NoEpoch}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Register(ctx, app.RegisterRequest{Agent: "b"}); err != nil {
		t.Fatal(err)
	}
	round, err := s.Schedule(ctx, app.ScheduleRequest{})
	if err != nil || len(round.Assigned) != 0 {
		t.Fatalf("t2 assigned while t1's claims hold: %+v, %v", round.Assigned, err)
	}
	// Archiving keeps finished work not yet landed.
	if moved, err := s.Archive(ctx, time.Time{}); err != nil || len(moved) != 0 {
		t.Fatalf("archived %v, %v", moved, err)
	}
	if res, err := s.Maintain(ctx, app.MaintainRequest{Full: true}); err != nil || len(res.Landed) != 0 {
		t.Fatalf("landed before any merge: %+v, %v", res, err)
	}
	g.run("checkout", "-q", "main")
	g.run("merge", "-q", "--squash", "work")
	g.run("commit", "-q", "-m", "squashed")
	round, err = s.Schedule(ctx, app.ScheduleRequest{})
	if err != nil || len(round.Assigned) != 1 || round.Assigned[0].Task != "t2" {
		t.Fatalf("after the squash merge: %+v, %v", round.Assigned, err)
	}
	if t1 := snapshotTask(t, s, "t1"); t1.LandedAt == "" || t1.LandedCommit != g.run("rev-parse", "main") {
		t.Fatalf("not landed: %+v", t1)
	}
	if res, err := s.Maintain(ctx, app.MaintainRequest{Full: true}); err != nil || len(res.Landed) != 0 {
		t.Fatalf("landed twice: %+v, %v", res, err)
	}
	if moved, err := s.Archive(ctx, time.Time{}); err != nil || !slices.Equal(moved, []string{"t1"}) {
		t.Fatalf("archived %v, %v", moved, err)
	}
}

// inbox records where the work lives, as claim does.
func TestInboxRecordsBranch(t *testing.T) {
	ctx := context.Background()
	g := newGit(t)
	p := gitProject(t, g, `{"id":"t1"}`+"\n")
	s := p.Service
	if _, err := s.Register(ctx, app.RegisterRequest{Agent: "b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Schedule(ctx, app.ScheduleRequest{}); err != nil {
		t.Fatal(err)
	}
	in, err := s.Inbox(ctx, app.InboxRequest{Agent: "b"})
	if err != nil || in.Task == nil || in.Task.Branch != "refs/heads/work" || in.Task.Base != g.run("rev-parse", "main") {
		t.Fatalf("inbox: %+v, %v", in.Task, err)
	}
}

// A release made from another worktree records the task's branch, not
// the branch checked out where the release runs.
func TestReleaseFromElsewhere(t *testing.T) {
	ctx := context.Background()
	g := newGit(t)
	p := gitProject(t, g, `{"id":"t1"}`+"\n")
	s := p.Service
	if _, err := s.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: "a"}, TaskID: "t1"}); err != nil {
		t.Fatal(err)
	}
	g.commit("x.go", "x")
	tip := g.run("rev-parse", "work")
	g.run("checkout", "-q", "main")
	if _, err := s.Release(ctx, app.TaskRef{Agent: coord.Agent{ID: "a"}, TaskID: "t1", Epoch: coord.NoEpoch}, ""); err != nil {
		t.Fatal(err)
	}
	if t1 := snapshotTask(t, s, "t1"); t1.Head != tip || !slices.Equal(t1.TouchedFiles, []string{"x.go"}) {
		t.Fatalf("released from main: %+v, want head %s", t1, tip)
	}
}
