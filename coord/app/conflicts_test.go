package app_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/internal/gitrepo"
	"github.com/rotd/coordination/registry/backend/backendtest"
)

// gitRepo is a repository for a test: main with f.txt (20 lines) and
// g.txt.
type gitRepo struct {
	t   *testing.T
	dir string
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	if err := gitrepo.CheckMergeTree(context.Background()); err != nil {
		t.Skip(err)
	}
	r := &gitRepo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	r.write("f.txt", numbered(nil))
	r.write("g.txt", "g\n")
	r.git("add", ".")
	r.git("commit", "-qm", "base")
	return r
}

func numbered(repl map[int]string) string {
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		if s, ok := repl[i]; ok {
			b.WriteString(s + "\n")
		} else {
			b.WriteString(strings.Repeat("x", i) + "\n")
		}
	}
	return b.String()
}

func (r *gitRepo) git(args ...string) string {
	r.t.Helper()
	return backendtest.Git(r.t, r.dir, args...)
}

func (r *gitRepo) write(name, content string) {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.dir, name), []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// commit commits files on branch (made from main when new) and returns
// the commit; the checkout is back on main after.
func (r *gitRepo) commit(branch string, files map[string]string) string {
	r.t.Helper()
	if r.git("branch", "--list", branch) == "" {
		r.git("checkout", "-q", "-b", branch, "main")
	} else {
		r.git("checkout", "-q", branch)
	}
	for name, content := range files {
		r.write(name, content)
	}
	r.git("add", "-A")
	r.git("commit", "-qm", "on "+branch)
	id := r.git("rev-parse", "HEAD")
	r.git("checkout", "-q", "main")
	return id
}

func TestConflicts(t *testing.T) {
	ctx := context.Background()
	repo := newGitRepo(t)
	repo.commit("coord/alice", map[string]string{"f.txt": numbered(map[int]string{3: "alice"})})
	repo.commit("coord/bob", map[string]string{"f.txt": numbered(map[int]string{3: "bob"})})
	carol := repo.commit("coord/carol", map[string]string{"f.txt": numbered(map[int]string{18: "carol"})})
	repo.commit("coord/erin", map[string]string{"g.txt": "erin\n"})
	base := repo.git("rev-parse", "main")
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	// The registry as agents' claims and releases left it.
	root := backendtest.Init(t, backendtest.Options{}).Root
	reg := `{"version": 1, "tasks": [
		{"id": "1", "status": "claimed", "claimed_by": "alice", "epoch": 1, "branch": "coord/alice", "base": "BASE"},
		{"id": "2", "status": "claimed", "claimed_by": "bob", "epoch": 2, "branch": "coord/bob", "base": "BASE"},
		{"id": "3", "status": "done", "claimed_by": "carol", "epoch": 3, "branch": "coord/carol", "base": "BASE", "head": "CAROL"},
		{"id": "4", "status": "claimed", "claimed_by": "dave", "epoch": 4, "branch": "coord/dave"},
		{"id": "5", "status": "claimed", "claimed_by": "erin", "epoch": 5, "branch": "coord/erin", "base": "BASE"},
		{"id": "6", "status": "unclaimed"},
		{"id": "7", "status": "claimed", "claimed_by": "fay", "epoch": 7, "branch": "main"}]}`
	reg = strings.NewReplacer("BASE", base, "CAROL", carol).Replace(reg)
	// 4: another machine's branch; 7: at work on the target itself.
	if err := os.WriteFile(filepath.Join(root, coord.TreeDir, "active_work_registry.json"), []byte(reg), 0o644); err != nil {
		t.Fatal(err)
	}
	p := backendtest.NewProject(t, backendtest.Options{Root: root, Clock: func() time.Time { return now }})
	s := p.Service
	m := gitrepo.NewMerger(gitrepo.New(repo.dir), nil)
	logLines := func() []string {
		var out []string
		_, err := s.LogRead(ctx, 0, func(l string) error {
			if _, text, ok := strings.Cut(l, "conflict: "); ok {
				out = append(out, "conflict: "+text)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	res, err := s.Conflicts(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	want := []coord.ConflictPair{{Task: "1", With: "2", Files: []string{"f.txt"}}}
	if !reflect.DeepEqual(res.Pairs, want) || !reflect.DeepEqual(res.New, want) {
		t.Fatalf("pairs %+v, new %+v; want %+v", res.Pairs, res.New, want)
	}
	if !reflect.DeepEqual(res.Skipped, []app.SkippedWork{{Task: "4", Why: "branch coord/dave is not in this repository"}}) {
		t.Errorf("skipped %+v", res.Skipped)
	}
	// 1, 2, 3, 5 with main, and their 6 pairs; 7 (on main) in none.
	if res.Merged != 10 || res.Cached != 0 {
		t.Errorf("merged %d, cached %d; want 10, 0", res.Merged, res.Cached)
	}
	if got := logLines(); len(got) != 1 || got[0] != "conflict: task 1 (alice) and task 2 (bob) change f.txt" {
		t.Errorf("log %q", got)
	}

	// Again: the same pair, not new, every merge from the cache, nothing
	// logged again.
	res, err = s.Conflicts(ctx, m)
	if err != nil || len(res.New) != 0 || !reflect.DeepEqual(res.Pairs, want) || res.Cached != 10 || res.Merged != 0 {
		t.Fatalf("again: %+v, %v", res, err)
	}
	if got := logLines(); len(got) != 1 {
		t.Errorf("logged again: %q", got)
	}

	// The agents are told once each.
	for _, agent := range []string{"alice", "bob"} {
		told, err := s.TellConflicts(ctx, agent)
		if err != nil || len(told) != 1 {
			t.Fatalf("%s told %+v, %v", agent, told, err)
		}
		if again, _ := s.TellConflicts(ctx, agent); len(again) != 0 {
			t.Errorf("%s told twice: %+v", agent, again)
		}
	}
	if told, _ := s.TellConflicts(ctx, "erin"); len(told) != 0 {
		t.Errorf("erin told %+v", told)
	}

	// A scanner scans once until something moves.
	sc := s.ConflictScanner(m)
	if res, err := sc.Scan(ctx); err != nil || res.Unchanged {
		t.Fatalf("first scan: %+v, %v", res, err)
	}
	if res, err := sc.Scan(ctx); err != nil || !res.Unchanged {
		t.Fatalf("nothing moved: %+v, %v", res, err)
	}
	// The target moves onto line 18: carol's finished work now
	// conflicts with it.
	now = now.Add(time.Minute)
	repo.write("f.txt", numbered(map[int]string{18: "main"}))
	repo.git("commit", "-qam", "main moves")
	res, err = sc.Scan(ctx)
	if err != nil || res.Unchanged {
		t.Fatalf("main moved: %+v, %v", res, err)
	}
	wantNew := []coord.ConflictPair{{Task: "3", With: "main", Files: []string{"f.txt"}}}
	if !reflect.DeepEqual(res.New, wantNew) || res.Merged != 4 || res.Cached != 6 {
		t.Errorf("main moved: new %+v (want %+v), merged %d, cached %d", res.New, wantNew, res.Merged, res.Cached)
	}
	// Bob starts again from the moved target and takes alice's line:
	// their pair is resolved and dropped; alice's record keeps no
	// conflict.
	repo.git("branch", "-f", "coord/bob", "main")
	repo.commit("coord/bob", map[string]string{"f.txt": numbered(map[int]string{3: "alice", 18: "main"})})
	res, err = sc.Scan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Pairs, wantNew) {
		t.Errorf("bob rebased: pairs %+v, want %+v", res.Pairs, wantNew)
	}
	list, _ := s.Tasks(ctx, app.ListRequest{})
	for _, task := range list {
		if task.ID == "1" && len(task.Conflicts) != 0 {
			t.Errorf("task 1 keeps %+v", task.Conflicts)
		}
		if task.ID == "3" && (len(task.Conflicts) != 1 || task.Conflicts[0].Since != coord.FormatTime(now) || task.Conflicts[0].Told) {
			t.Errorf("task 3: %+v", task.Conflicts)
		}
	}
}

func TestConflicts_NoTarget(t *testing.T) {
	repo := newGitRepo(t)
	p := backendtest.NewProject(t, backendtest.Options{Config: `{"target": "trunk"}` + "\n"})
	_, err := p.Service.Conflicts(context.Background(), gitrepo.NewMerger(gitrepo.New(repo.dir), nil))
	if coord.CodeOf(err) != coord.CodeConflict || !strings.Contains(err.Error(), `"trunk"`) {
		t.Errorf("err %v", err)
	}
}
