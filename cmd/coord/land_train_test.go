//go:build !race

package main

// The landing train (land --parallel N) on real repositories with real
// coord, git and check processes: every landing's tree is a tree the
// check passed on, a failing candidate goes back and those behind it
// land checked without it; and the landing figures for N = 1, 2, 4, 8.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// trainCheck is the land check of these tests: it takes a moment,
// fails on a tree holding a file that says BROKEN, and leaves the id of
// each tree it passed on in $MARKS/passed (outside the worktree).
const trainCheck = `echo "$COORD_TASK" >> "$MARKS/runs"; sleep "$CHECK_SECONDS"; if grep -rqs BROKEN --include='*.txt' .; then echo broken; exit 1; fi; git rev-parse 'HEAD^{tree}' >> "$MARKS/passed"`

// newTrainProject is a project whose n tasks t0… are released, each
// with one commit of its own writing f<i>.txt (one that says BROKEN for
// the tasks in broken).
func newTrainProject(t *testing.T, n int, broken map[int]bool) *landProject {
	return newSharedProject(t, n, 0, broken)
}

// newSharedProject is newTrainProject where task i also changes its
// own line of m<i%groups>.txt (groups > 0): the tasks of a group share
// that file without conflicting; a broken task writes BROKEN there.
func newSharedProject(t *testing.T, n, groups int, broken map[int]bool) *landProject {
	t.Helper()
	p := newGitProject(t)
	lines := make([]string, 3*n+1)
	for i := range lines {
		lines[i] = fmt.Sprint("line ", i)
	}
	for g := range groups {
		p.write(fmt.Sprintf("m%d.txt", g), strings.Join(lines, "\n")+"\n")
	}
	p.git("add", ".")
	p.git("commit", "-q", "-m", "init")
	p.coord("init")
	p.coord("config", "set", "write_claims", "warn")
	p.seed(n)
	for i := range n {
		agent := fmt.Sprintf("a%d", i)
		p.git("checkout", "-q", "-b", "coord/"+agent, "main")
		p.coord("--agent", agent, "claim", "--task", fmt.Sprintf("t%d", i))
		text := "work\n"
		if broken[i] && groups == 0 {
			text = "BROKEN\n"
		}
		if groups > 0 {
			mine := slices.Clone(lines)
			mine[3*i+1] = fmt.Sprint("task ", i)
			if broken[i] {
				mine[3*i+1] = "BROKEN"
			}
			p.write(fmt.Sprintf("m%d.txt", i%groups), strings.Join(mine, "\n")+"\n")
		}
		p.write(fmt.Sprintf("f%d.txt", i), text)
		p.git("add", ".")
		p.git("commit", "-q", "-m", agent)
		p.coord("--agent", agent, "release", fmt.Sprintf("t%d", i), "--summary", "done")
		p.git("checkout", "-q", "main")
	}
	return p
}

// land runs the lander with the train check (seconds each) and returns
// its output and how long it took.
func (p *landProject) landTrain(parallel int, seconds string, extra ...string) (string, time.Duration) {
	p.t.Helper()
	marks := filepath.Join(filepath.Dir(p.dir), "marks")
	os.MkdirAll(marks, 0o755)
	args := append([]string{"--agent", "lander", "land", "--check", trainCheck, "--parallel", fmt.Sprint(parallel)}, extra...)
	cmd := exec.Command("coord", args...)
	cmd.Dir = p.dir
	cmd.Env = append(p.env, "MARKS="+marks, "CHECK_SECONDS="+seconds)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if err != nil && !exitedWith(err, 3) {
		p.t.Fatalf("coord land --parallel %d: %v\n%s", parallel, err, out)
	}
	return string(out), took
}

// checkTrain checks main's first-parent history since start: one task
// per commit, each commit's tree a tree the check passed on and, the
// check run again on it, passing still (no file of it says BROKEN);
// it returns the tasks landed in order.
func (p *landProject) checkTrain(start string) []string {
	p.t.Helper()
	passed := map[string]bool{}
	b, _ := os.ReadFile(filepath.Join(filepath.Dir(p.dir), "marks", "passed"))
	for _, l := range strings.Fields(string(b)) {
		passed[l] = true
	}
	var tasks []string
	for _, c := range strings.Fields(p.git("rev-list", "--reverse", "--first-parent", "main", "^"+start)) {
		tree := p.git("rev-parse", c+"^{tree}")
		if !passed[tree] {
			p.t.Fatalf("main's commit %.12s: its tree %.12s is not a tree the check passed on", c, tree)
		}
		if exec.Command("git", "-C", p.dir, "grep", "-q", "BROKEN", c, "--", "*.txt").Run() == nil {
			p.t.Fatalf("main's commit %.12s holds BROKEN work", c)
		}
		// one task per landing: its own file (and its line of a shared
		// file) is new, nothing else
		files := strings.Fields(p.git("diff-tree", "--no-commit-id", "--name-only", "-r", c+"^1", c))
		own := slices.DeleteFunc(slices.Clone(files), func(f string) bool { return !strings.HasPrefix(f, "f") })
		if len(own) != 1 || len(files) > 2 {
			p.t.Fatalf("main's commit %.12s is not one task's landing: it changes %v", c, files)
		}
		tasks = append(tasks, "t"+strings.TrimSuffix(strings.TrimPrefix(own[0], "f"), ".txt"))
	}
	if wl := p.git("worktree", "list", "--porcelain"); strings.Contains(wl, "coord-land") {
		p.t.Fatalf("a temporary worktree is left:\n%s", wl)
	}
	return tasks
}

// TestLandTrain: twelve tasks, four checks at once, all passing: all
// land in the queue's order, each landing's tree one the check passed on.
func TestLandTrain(t *testing.T) {
	t.Parallel()
	p := newTrainProject(t, 12, nil)
	start := p.git("rev-parse", "main")
	out, _ := p.landTrain(4, "0.3")
	got := p.checkTrain(start)
	want := []string{"t0", "t1", "t10", "t11", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"}
	if slices.Sort(got); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("landed %v, want %v\n%s", got, want, out)
	}
}

// TestLandTrainFailure: twelve tasks, four checks at once, t5 failing:
// it goes back to its owner; every other lands, checked without it
// (each landing's tree passed the check, which fails on t5's work).
func TestLandTrainFailure(t *testing.T) {
	t.Parallel()
	p := newTrainProject(t, 12, map[int]bool{5: true})
	start := p.git("rev-parse", "main")
	out, _ := p.landTrain(4, "0.3")
	got := p.checkTrain(start)
	want := []string{"t0", "t1", "t10", "t11", "t2", "t3", "t4", "t6", "t7", "t8", "t9"}
	if slices.Sort(got); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("landed %v, want %v\n%s", got, want, out)
	}
	if !strings.Contains(out, "sent back t5 to a5: land check") {
		t.Fatalf("t5 not sent back:\n%s", out)
	}
	for _, tk := range lsTasks(t, p.coord("ls", "--json")) {
		if tk.ID == "t5" && (tk.Status != "claimed" || !strings.Contains(tk.ReviewNotes, "broken")) {
			t.Fatalf("t5: %s, notes %q", tk.Status, tk.ReviewNotes)
		}
	}
}

// TestLandTrainFigures measures landings per minute with a 3 s check
// for N = 1, 2, 4, 8, all passing and with one failure in ten (tasks
// 4 and 14 of 20), in one run; a measurement (COORD_BENCH=1, make bench).
func TestLandTrainFigures(t *testing.T) {
	if os.Getenv("COORD_BENCH") == "" {
		t.Skip("a measurement: COORD_BENCH=1")
	}
	const n, check = 20, 3.0
	t.Logf("train: %d tasks, a %.0f s check; per N: landed, minutes, landings per minute, landings per check time (and / N)", n, check)
	for _, failing := range []map[int]bool{nil, {4: true, 14: true}} {
		for _, par := range []int{1, 2, 4, 8} {
			p := newTrainProject(t, n, failing)
			start := p.git("rev-parse", "main")
			out, took := p.landTrain(par, fmt.Sprint(check))
			landed := len(p.checkTrain(start))
			if landed != n-len(failing) {
				t.Fatalf("N=%d: landed %d of %d\n%s", par, landed, n-len(failing), out)
			}
			perCheck := float64(landed) / (took.Seconds() / check)
			what := "all passing"
			if len(failing) > 0 {
				what = "1 in 10 failing"
			}
			t.Logf("train %-15s N=%d: %2d landed in %5.1f s: %5.1f landings/min, %.2f per check time (%.2f x N), %d checks run",
				what, par, landed, took.Seconds(), float64(landed)/took.Minutes(), perCheck, perCheck/float64(par), p.checksRun())
		}
	}
	// Failures that share a file: tasks 4, 9 and 14 of 20 break the file
	// of their group (m4.txt, which task 19 shares too), N = 4, with the
	// order by shared files and with the queue's order kept.
	for _, same := range []bool{false, true} {
		p := newSharedProject(t, n, 5, map[int]bool{4: true, 9: true, 14: true})
		if same {
			p.env = append(p.env, "COORD_TEST_LAND_SAME_ORDER=1")
		}
		start := p.git("rev-parse", "main")
		out, took := p.landTrain(4, fmt.Sprint(check))
		if landed := len(p.checkTrain(start)); landed != n-3 {
			t.Fatalf("landed %d of %d\n%s", landed, n-3, out)
		}
		what := "failures ordered by shared files"
		if same {
			what = "failures in the queue's order"
		}
		t.Logf("train %-32s N=4: %d landed in %5.1f s, %d checks run", what, n-3, took.Seconds(), p.checksRun())
	}
}

// checksRun is how many checks the land check started.
func (p *landProject) checksRun() int {
	b, _ := os.ReadFile(filepath.Join(filepath.Dir(p.dir), "marks", "runs"))
	return len(strings.Fields(string(b)))
}

// TestLandTrainSharedFiles: ten tasks sharing five files, two of them
// (t4, t9, sharing m4.txt) failing, four checks at once: both go back,
// every other lands on a tree the check passed on, also when the train
// reorders the tasks that share the failed files.
func TestLandTrainSharedFiles(t *testing.T) {
	t.Parallel()
	p := newSharedProject(t, 10, 5, map[int]bool{4: true, 9: true})
	start := p.git("rev-parse", "main")
	out, _ := p.landTrain(4, "0.2")
	got := p.checkTrain(start)
	want := []string{"t0", "t1", "t2", "t3", "t5", "t6", "t7", "t8"}
	if slices.Sort(got); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("landed %v, want %v\n%s", got, want, out)
	}
}
