package replay

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord/plan"
	"github.com/rotd/coordination/internal/gitrepo"
)

func mod(path string, hunks ...[2]int) FileChange {
	n := 1
	return FileChange{Path: path, Status: "M", Add: &n, Del: &n, Hunks: hunks}
}

func TestMeet(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b FileChange
		want bool
	}{
		{"overlapping ranges", mod("f", [2]int{10, 5}), mod("f", [2]int{12, 1}), true},
		{"adjacent: lines 5-6 and line 7", mod("f", [2]int{5, 2}), mod("f", [2]int{7, 1}), true},
		{"one untouched line between: lines 5-6 and line 8", mod("f", [2]int{5, 2}), mod("f", [2]int{8, 1}), false},
		{"disjoint hunks of one file", mod("f", [2]int{1, 3}, [2]int{100, 2}), mod("f", [2]int{50, 10}), false},
		{"two insertions at one place", mod("f", [2]int{4, 0}), mod("f", [2]int{4, 0}), true},
		{"an insertion after line 4 and a change of lines 5-6", mod("f", [2]int{4, 0}), mod("f", [2]int{5, 2}), true},
		{"an insertion after line 3 and a change of lines 5-6", mod("f", [2]int{3, 0}), mod("f", [2]int{5, 2}), false},
		{"different files", mod("f", [2]int{1, 1}), mod("g", [2]int{1, 1}), false},
		{"an added file", FileChange{Path: "f", Status: "A", Hunks: [][2]int{{0, 0}}}, mod("f", [2]int{90, 1}), true},
		{"a deleted file", FileChange{Path: "f", Status: "D"}, mod("f", [2]int{90, 1}), true},
		{"a file renamed away", FileChange{Path: "g", From: "f", Status: "R"}, mod("f", [2]int{90, 1}), true},
		{"a file renamed to", FileChange{Path: "g", From: "f", Status: "R"}, mod("g", [2]int{90, 1}), true},
		{"two renames from one file", FileChange{Path: "g", From: "f", Status: "R"}, FileChange{Path: "h", From: "f", Status: "R"}, true},
		{"a rename of another file", FileChange{Path: "g", From: "f", Status: "R"}, mod("h", [2]int{1, 1}), false},
		{"a binary file (no ranges)", FileChange{Path: "f", Status: "M"}, mod("f", [2]int{90, 1}), true},
	} {
		if got := Meet([]FileChange{c.a}, []FileChange{c.b}); got != c.want {
			t.Errorf("%s: Meet = %v, want %v", c.name, got, c.want)
		}
		if got := Meet([]FileChange{c.b}, []FileChange{c.a}); got != c.want {
			t.Errorf("%s (reversed): Meet = %v, want %v", c.name, got, c.want)
		}
	}
}

// work makes tasks from changes, each lasting Duration(lines).
func work(lines []int, changes ...[]FileChange) []Work {
	cs := make([]Commit, len(changes))
	for i := range cs {
		cs[i] = Commit{Sha: fmt.Sprint(i), Subject: fmt.Sprintf("task %d", i), Files: changes[i]}
		a := lines[i]
		if len(cs[i].Files) > 0 {
			cs[i].Files[0].Add, cs[i].Files[0].Del = &a, new(int)
		}
	}
	return Works(cs)
}

func TestSimulate(t *testing.T) {
	// t1 and t2 change one range of f; t3 changes a far range of f; t4
	// another file. Two agents: t1 and t2 start together.
	w := work([]int{10, 10, 10, 10},
		[]FileChange{mod("f", [2]int{10, 2})},
		[]FileChange{mod("f", [2]int{11, 1})},
		[]FileChange{mod("f", [2]int{500, 1})},
		[]FileChange{mod("g", [2]int{1, 1})},
	)
	unit := Duration(10)
	oracle := make([][]string, len(w))
	for i := range w {
		oracle[i] = RealFiles(w[i].Commit)
	}
	for _, c := range []struct {
		name      string
		files     [][]string
		conflicts int
		pairs     [][2]string
		makespan  time.Duration
	}{
		// t1‖t2 meet; then t3‖t4: disjoint ranges of f are no conflict.
		{"first come, first served", nil, 1, [][2]string{{"t001", "t002"}}, 2 * unit},
		// t1‖t4, then t2, then t3: every task touching f waits.
		{"oracle", oracle, 0, nil, 3 * unit},
		// A wrong prediction for t2 (g instead of f) costs both ways.
		{"a wrong prediction", [][]string{{"f"}, {"g"}, {"f"}, {"g"}}, 1, [][2]string{{"t001", "t002"}}, 2 * unit},
	} {
		res, err := Simulate(w, c.files, Options{Agents: 2})
		if err != nil {
			t.Fatal(err)
		}
		if res.Conflicts != c.conflicts || !reflect.DeepEqual(res.Pairs, c.pairs) || res.Makespan != c.makespan {
			t.Errorf("%s: %d conflicts %v, makespan %v; want %d %v, %v", c.name, res.Conflicts, res.Pairs, res.Makespan, c.conflicts, c.pairs, c.makespan)
		}
	}
	if _, err := Simulate(w, nil, Options{}); err == nil {
		t.Error("zero agents accepted")
	}
}

func TestSimulate_InFlightOnlyCounts(t *testing.T) {
	// One agent: nothing is ever in flight together, whatever meets.
	w := work([]int{1, 1, 1}, []FileChange{mod("f", [2]int{1, 1})}, []FileChange{mod("f", [2]int{1, 1})}, []FileChange{{Path: "f", Status: "D"}})
	res, err := Simulate(w, nil, Options{Agents: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Conflicts != 0 || res.Makespan != 3*Duration(1) {
		t.Errorf("one agent: %+v", res)
	}
	// A long task overlaps two short ones that start after it.
	w = work([]int{400, 1, 1},
		[]FileChange{mod("f", [2]int{1, 1})},
		[]FileChange{mod("g", [2]int{1, 1})},
		[]FileChange{{Path: "f", Status: "R", From: "f0"}, {Path: "h", Status: "A"}})
	res, err = Simulate(w, nil, Options{Agents: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Conflicts != 1 || res.Pairs[0] != [2]string{"t001", "t003"} {
		t.Errorf("a long task and a rename of its file: %+v", res)
	}
}

func TestSimulate_WriteClaims(t *testing.T) {
	// work() gives a task's first file the lines asked and each other
	// file 2 lines more.
	u, u2 := Duration(10), Duration(12)
	long := Duration(402)
	for _, c := range []struct {
		name    string
		lines   []int
		changes [][]FileChange
		warn    bool
		want    Result
	}{
		// A write after a wait is to a file that landed meanwhile: a
		// stale write (the agent merges the target first).
		{"one line of one file: the second write waits for the first task to land", []int{10, 10},
			[][]FileChange{{mod("f", [2]int{10, 2})}, {mod("f", [2]int{11, 1})}}, false,
			Result{Makespan: 2 * u, Refused: 1, RefusedMeet: 1, Waited: u, MaxWait: u, StaleMeets: 1}},
		{"different hunks of one file: refused all the same (claims are per file)", []int{10, 10},
			[][]FileChange{{mod("f", [2]int{1, 1})}, {mod("f", [2]int{90, 1})}}, false,
			Result{Makespan: 2 * u, Refused: 1, RefusedMeet: 0, Waited: u, MaxWait: u}},
		{"writes over the task's time: the second file is written half way", []int{10, 10},
			[][]FileChange{{mod("a", [2]int{1, 1}), mod("b", [2]int{1, 1})}, {mod("c", [2]int{1, 1}), mod("b", [2]int{1, 1})}}, false,
			Result{Makespan: u2 + u2/2, Refused: 1, RefusedMeet: 1, Waited: u2 / 2, MaxWait: u2 / 2, StaleMeets: 1}},
		{"two tasks waiting on each other: the one claimed last hands back", []int{10, 10},
			[][]FileChange{{mod("a", [2]int{1, 1}), mod("b", [2]int{1, 1})}, {mod("b", [2]int{1, 1}), mod("a", [2]int{1, 1})}}, false,
			Result{Makespan: 2 * u2, Refused: 3, RefusedMeet: 3, Waited: u2 / 2, MaxWait: u2 / 2, HandBacks: 1, Lost: u2 / 2, StaleMeets: 1}},
		{"warn: nothing refused, the meeting writes are conflicts", []int{10, 10},
			[][]FileChange{{mod("f", [2]int{10, 2})}, {mod("f", [2]int{11, 1})}}, true,
			Result{Makespan: u, Conflicts: 1, Pairs: [][2]string{{"t001", "t002"}}}},
		{"warn: different hunks are no conflict", []int{10, 10},
			[][]FileChange{{mod("f", [2]int{1, 1})}, {mod("f", [2]int{90, 1})}}, true,
			Result{Makespan: u}},
		{"a file that landed while the writer worked: a stale write", []int{10, 400},
			[][]FileChange{{mod("f", [2]int{5, 1})}, {mod("g", [2]int{1, 1}), mod("f", [2]int{5, 1})}}, false,
			Result{Makespan: long, StaleMeets: 1}},
	} {
		w := work(c.lines, c.changes...)
		res, err := Simulate(w, nil, Options{Agents: 2, WriteClaims: true, ClaimsWarn: c.warn})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(res, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, res, c.want)
		}
	}
}

// TestSimulate_WriteClaimsDrains: on a history where most tasks touch
// a few hot files, every task lands, exclusive claims leave no
// conflict, and warn leaves some.
func TestSimulate_WriteClaimsDrains(t *testing.T) {
	w := Works(synthetic(120))
	for _, n := range []int{2, 4, 8} {
		fcfs, err := Simulate(w, nil, Options{Agents: n})
		if err != nil {
			t.Fatal(err)
		}
		ex, err := Simulate(w, nil, Options{Agents: n, WriteClaims: true})
		if err != nil {
			t.Fatalf("%d agents, exclusive: %v", n, err)
		}
		warn, err := Simulate(w, nil, Options{Agents: n, WriteClaims: true, ClaimsWarn: true})
		if err != nil {
			t.Fatalf("%d agents, warn: %v", n, err)
		}
		if ex.Conflicts != 0 || ex.Refused == 0 || ex.Waited <= 0 {
			t.Errorf("%d agents, exclusive: %+v", n, ex)
		}
		if fcfs.Conflicts == 0 || warn.Conflicts == 0 || warn.Refused != 0 {
			t.Errorf("%d agents: FCFS %d conflicts, warn %+v", n, fcfs.Conflicts, warn)
		}
	}
}

func TestSimulate_Replan(t *testing.T) {
	w := work([]int{10, 10, 10},
		[]FileChange{mod("f", [2]int{1, 1})},
		[]FileChange{mod("g", [2]int{1, 1})},
		[]FileChange{mod("f", [2]int{1, 1})})
	var calls [][2][]int
	// With one agent: after each landing, the planner learns the third
	// task's file.
	res, err := Simulate(w, nil, Options{Agents: 1, ReplanEvery: 1, Predicted: true, Replan: func(landed, unclaimed []int) (map[int]Predicted, error) {
		calls = append(calls, [2][]int{landed, unclaimed})
		return map[int]Predicted{2: {Files: []string{"f"}, P: []float64{0.9}}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := [][2][]int{{{0}, {1, 2}}, {{0, 1}, {2}}}
	if !reflect.DeepEqual(calls, want) || res.Conflicts != 0 {
		t.Errorf("re-plans %v (want %v), %+v", calls, want, res)
	}
}

// synthetic is a history of n commits over a small tree: a changelog most
// changes touch at its top, two modules with prefixed subjects, a file
// renamed half way, and one deleted.
func synthetic(n int) []Commit {
	var cs []Commit
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	one := 1
	for i := range n {
		c := Commit{Sha: fmt.Sprintf("%040x", i+1), Date: t0.Add(time.Duration(i) * time.Hour).Format(time.RFC3339)}
		switch {
		case i == 0:
			c.Subject = "initial import"
			for _, p := range []string{"CHANGELOG.md", "src/printer.go", "src/searcher.go", "old/name.go", "doomed.txt"} {
				c.Files = append(c.Files, FileChange{Path: p, Status: "A", Add: &one, Del: new(int), Hunks: [][2]int{{0, 0}}})
			}
		case i == n/2:
			c.Subject = "move name.go"
			c.Files = []FileChange{{Path: "new/name.go", From: "old/name.go", Status: "R"}, {Path: "doomed.txt", Status: "D"}}
		case i%2 == 0:
			c.Subject = fmt.Sprintf("printer: fix column %d", i)
			c.Files = []FileChange{mod("src/printer.go", [2]int{10 * i, 1}), mod("CHANGELOG.md", [2]int{3, 0})}
		default:
			c.Subject = fmt.Sprintf("searcher: faster scan %d", i)
			c.Files = []FileChange{mod("src/searcher.go", [2]int{10 * i, 1})}
			if i%3 == 0 {
				c.Files = append(c.Files, mod(map[bool]string{true: "old/name.go", false: "new/name.go"}[i < n/2], [2]int{i, 1}))
			}
		}
		cs = append(cs, c)
	}
	return cs
}

func TestRepo_ReadBack(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ctx := context.Background()
	cs := synthetic(30)
	r, err := NewRepo(ctx, filepath.Join(t.TempDir(), "repo"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Append(ctx, cs[:20]); err != nil {
		t.Fatal(err)
	}
	if err := r.Append(ctx, cs[20:]); err != nil { // on top of the first
		t.Fatal(err)
	}
	var ix plan.Index
	head, _, err := gitrepo.Refresh(ctx, r.Dir, &ix)
	if err != nil {
		t.Fatal(err)
	}
	if len(ix.Commits) != len(cs) {
		t.Fatalf("%d commits read back, want %d", len(ix.Commits), len(cs))
	}
	byPath := func(a, b plan.Change) int { return strings.Compare(a.Path, b.Path) }
	for i, c := range ix.Commits {
		w := cs[i].ForPlan()
		w.Hash = c.Hash
		slices.SortFunc(w.Changes, byPath) // git lists a commit's changes by path
		if !reflect.DeepEqual(c.Changes, w.Changes) || c.Subject != w.Subject || !c.Time.Equal(w.Time) {
			t.Errorf("commit %d read back as %+v, want %+v", i, c, w)
		}
	}
	tree, err := gitrepo.Tree(ctx, r.Dir, head)
	if err != nil {
		t.Fatal(err)
	}
	if want := Tree(cs); !reflect.DeepEqual(tree, want) {
		t.Errorf("tree %q, want %q", tree, want)
	}
}

// writeHistory writes commits as a history file in dir.
func writeHistory(t *testing.T, dir, name string, cs []Commit) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	enc := json.NewEncoder(zw)
	for _, c := range cs {
		if err := enc.Encode(c); err != nil {
			t.Fatal(err)
		}
	}
	zw.Close()
	if err := os.WriteFile(filepath.Join(dir, name+".jsonl.gz"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBench(t *testing.T) {
	dir := t.TempDir()
	writeHistory(t, dir, "toy", synthetic(80))
	p := plan.DefaultParams
	for _, direct := range []bool{true, false} {
		if !direct {
			if _, err := exec.LookPath("git"); err != nil {
				t.Skip("git is not installed")
			}
		}
		fs, err := Bench(context.Background(), BenchOptions{Dir: dir, Histories: []string{"toy"}, Agents: []int{3}, Tasks: 20, Params: p, ReplanEvery: 5, Direct: direct, Temp: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		f := fs[0]
		if f.Oracle.Conflicts != 0 || f.FCFS.Conflicts == 0 {
			t.Errorf("direct %v: oracle %d conflicts, FCFS %d", direct, f.Oracle.Conflicts, f.FCFS.Conflicts)
		}
		// Half the tasks are printer tasks that all meet at the
		// changelog's top: the prefix finds them all.
		if f.Once.Conflicts != 0 || f.Recall < 0.5 {
			t.Errorf("direct %v: planned once, %d conflicts, recall %.2f", direct, f.Once.Conflicts, f.Recall)
		}
		if f.Replans == 0 {
			t.Errorf("direct %v: no re-plan", direct)
		}
		var out strings.Builder
		Print(&out, fs, 5)
		if !strings.Contains(out.String(), "### toy: 20 tasks after 60 commits") {
			t.Errorf("the table:\n%s", out.String())
		}
	}
}

func TestWorks_Order(t *testing.T) {
	w := Works(synthetic(5))
	if !slices.IsSortedFunc(w, func(a, b Work) int { return strings.Compare(a.ID, b.ID) }) || w[0].ID != "t001" {
		t.Errorf("ids %v", []string{w[0].ID, w[4].ID})
	}
}

func TestBenchClaims(t *testing.T) {
	dir := t.TempDir()
	writeHistory(t, dir, "toy", synthetic(80))
	fs, err := BenchClaims(BenchOptions{Dir: dir, Histories: []string{"toy"}, Agents: []int{2, 4}, Tasks: 40})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 2 {
		t.Fatalf("%d rows", len(fs))
	}
	for _, f := range fs {
		if f.Tasks != 40 || f.FCFS.Conflicts == 0 || f.Exclusive.Conflicts != 0 || f.Exclusive.Refused == 0 || f.Warn.Refused != 0 {
			t.Errorf("%d agents: %+v", f.Agents, f)
		}
	}
	var out strings.Builder
	PrintClaims(&out, fs)
	if !strings.Contains(out.String(), "| toy (40 tasks) | 4 |") {
		t.Errorf("the table:\n%s", out.String())
	}
	if _, err := BenchClaims(BenchOptions{Dir: dir, Histories: []string{"missing"}}); err == nil {
		t.Error("a missing history replayed")
	}
}

// TestOwn: a repository's own history is read in the data set's form:
// every commit that changed files, the same messages, dates and changes
// as package gitrepo reads them (FromPlan inverts ForPlan), and the
// newest ones with their line counts and the ranges they changed (a
// modification of the synthetic contents' second line is [2, 1]); the
// older ones without (their counts unknown).
func TestOwn(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ctx := context.Background()
	cs := synthetic(30)
	r, err := NewRepo(ctx, filepath.Join(t.TempDir(), "repo"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Append(ctx, cs); err != nil {
		t.Fatal(err)
	}
	own, err := Own(ctx, r.Dir, 10)
	if err != nil {
		t.Fatal(err)
	}
	var ix plan.Index
	if _, _, err := gitrepo.Refresh(ctx, r.Dir, &ix); err != nil {
		t.Fatal(err)
	}
	if len(own) != len(cs) || len(ix.Commits) != len(cs) {
		t.Fatalf("%d commits read, want %d", len(own), len(cs))
	}
	for i := range own {
		if got := own[i].ForPlan(); !reflect.DeepEqual(got, ix.Commits[i]) {
			t.Errorf("commit %d: %+v, read by gitrepo as %+v", i, got, ix.Commits[i])
		}
		for _, f := range own[i].Files {
			withDiff := i >= len(cs)-10
			if (f.Add != nil) != withDiff {
				t.Errorf("commit %d %s: counts %v, want them only for the newest 10", i, f.Path, f.Add)
			}
			if withDiff && strings.HasPrefix(f.Path, "src/") && (!reflect.DeepEqual(f.Hunks, [][2]int{{2, 1}}) || *f.Add != 1 || *f.Del != 1) {
				t.Errorf("commit %d %s: hunks %v, +%d -%d; want [[2 1]], +1 -1", i, f.Path, f.Hunks, *f.Add, *f.Del)
			}
		}
	}
	if _, err := Own(ctx, t.TempDir(), 10); !errors.Is(err, gitrepo.ErrNoRepo) {
		t.Errorf("outside a repository: %v, want gitrepo.ErrNoRepo", err)
	}
}

// TestBenchCommits_Contents: with Contents, every plan (the first and
// each re-plan) looks up the identifiers its batch names, and a file
// holding one is predicted for the task naming it.
func TestBenchCommits_Contents(t *testing.T) {
	cs := synthetic(80)
	cs[75].Subject = "searcher: scanFaster() skips the last file"
	var calls int
	asked := map[string]bool{}
	contents := func(_ context.Context, names []string) (map[string][]string, error) {
		calls++
		for _, n := range names {
			asked[n] = true
		}
		if slices.Contains(names, "scanFaster") {
			return map[string][]string{"new/name.go": {"scanFaster"}}, nil
		}
		return map[string][]string{}, nil
	}
	fs, err := BenchCommits(context.Background(), BenchOptions{Agents: []int{3}, Tasks: 20, Params: plan.DefaultParams,
		ReplanEvery: 5, Direct: true, Contents: contents}, "toy", cs)
	if err != nil {
		t.Fatal(err)
	}
	if !asked["scanFaster"] || calls != 1+fs[0].Replans {
		t.Errorf("asked %v in %d calls, want scanFaster in %d", asked, calls, 1+fs[0].Replans)
	}
	p := &planner{params: plan.DefaultParams, work: Works(cs[60:]), contents: contents, history: PlanCommits(cs[:60]), tree: Tree(cs[:60])}
	p.tasks = PlanTasks(p.work)
	got, err := p.plan(context.Background(), []int{15})
	if err != nil || !slices.Contains(got[15].Files, "new/name.go") {
		t.Errorf("the task naming scanFaster: %v, %v", got[15], err)
	}
}
