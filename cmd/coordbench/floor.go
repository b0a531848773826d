package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/rotd/coordination/coord"
)

// floorBench (coordbench -floor) measures coord's hot paths against the
// floor programs of cmd/coordbench/floor, side by side in one run:
//
//   - the edit hook an agent runs before every write (`coord hook claude
//     PreToolUse` on a free file of a file-backend project, nothing held)
//     and `coord --version` against hello, a Go program that prints one
//     line of JSON: the floor of a process start;
//   - a fresh `coord claim` at 1,000 tasks against claim, the floor of a
//     claim ("mono-raw": one JSON registry, raw JSON per task, flock and
//     a durable rename), on tmpfs and on disk.
//
// The programs alternate run by run, the order rotating, so a machine's
// load falls on all of them alike. Each program runs from fileCopies
// copies of its file, in turn: on this VM identical copies of one binary
// start up to 7% apart (where the page cache holds a file's pages, and
// in what sizes, moves the cost of faulting its text in), which one copy
// each would put into every ratio. A round is k runs of each; its ratio
// is the ratio of the p50s; the row gives the median ratio over the
// rounds and their range, beside the ratio of CPU time (user + system,
// from each process's rusage), which load moves less.
type floorBench struct {
	coord, hello, claim string
	disk, shm           string
	rounds, k           int
	env                 []string            // coord's environment: no COORD_* from the caller
	copies              map[string][]string // program -> its copies
}

// fileCopies is how many copies of each program's file a run uses.
const fileCopies = 3

// The targets: the edit hook at most 2.5 times a minimal Go
// program's start, a claim at 1,000 tasks at most the floor claim's.
const (
	hookTarget  = 2.5
	claimTarget = 1.0
)

// proc is one program run: argv, working directory, standard input.
type proc struct {
	argv  []string
	dir   string
	stdin string
	want  int // exit status
}

// run runs p once; the nth run of a program uses its copy n mod
// fileCopies.
func (f *floorBench) run(p proc, n int) (sample, []byte, error) {
	bin := p.argv[0]
	if c := f.copies[bin]; len(c) > 0 {
		bin = c[n%len(c)]
	}
	cmd := exec.Command(bin, p.argv[1:]...)
	cmd.Dir = p.dir
	cmd.Env = f.env
	if p.stdin != "" {
		cmd.Stdin = strings.NewReader(p.stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t0 := time.Now()
	err := cmd.Run()
	s := sample{wall: ms(time.Since(t0))}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		return s, nil, err
	}
	if code != p.want {
		return s, nil, fmt.Errorf("%s: exit %d, want %d: %s", strings.Join(p.argv, " "), code, p.want, strings.TrimSpace(errb.String()))
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.cpu = float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
	}
	return s, out.Bytes(), nil
}

// run0 runs p once from its own file (set-up and checks).
func (f *floorBench) run0(p proc) (sample, []byte, error) {
	c := f.copies
	f.copies = nil
	defer func() { f.copies = c }()
	return f.run(p, 0)
}

// interleave runs every program of procs k times a round, the order
// rotating run by run, and returns the samples per round and program.
func (f *floorBench) interleave(procs []proc) ([][][]sample, error) {
	res := make([][][]sample, f.rounds)
	for r := range f.rounds {
		res[r] = make([][]sample, len(procs))
		for i := range f.k {
			for j := range procs {
				b := (i + j + r) % len(procs)
				s, _, err := f.run(procs[b], i)
				if err != nil {
					return nil, err
				}
				res[r][b] = append(res[r][b], s)
			}
		}
	}
	return res, nil
}

// ratioRow is one table row: program num (coord) against program den
// (the floor): their p50 wall and CPU times over all rounds, the median
// and range of the rounds' ratios, the CPU ratio, and whether the target
// holds for the median ratio (target 0: a figure, no target).
func ratioRow(what string, res [][][]sample, num, den int, target float64) []string {
	var all [2][]sample
	var ratios, cpuRatios []float64
	for _, round := range res {
		all[0] = append(all[0], round[num]...)
		all[1] = append(all[1], round[den]...)
		ratios = append(ratios, pct(walls(round[num]), 50)/pct(walls(round[den]), 50))
		cpuRatios = append(cpuRatios, pct(cpus(round[num]), 50)/pct(cpus(round[den]), 50))
	}
	slices.Sort(ratios)
	slices.Sort(cpuRatios)
	med := median(ratios)
	verdict := "–"
	switch {
	case target > 0 && med <= target:
		verdict = "≤ " + f1(target) + ": met"
	case target > 0:
		verdict = "≤ " + f1(target) + ": **not met**"
	}
	return []string{what,
		fmt.Sprintf("%s ms (cpu %s)", f2(pct(walls(all[1]), 50)), f2(pct(cpus(all[1]), 50))),
		fmt.Sprintf("%s ms (cpu %s)", f2(pct(walls(all[0]), 50)), f2(pct(cpus(all[0]), 50))),
		fmt.Sprintf("**%s** (%s–%s)", f2(med), f2(ratios[0]), f2(ratios[len(ratios)-1])),
		fmt.Sprintf("%s (%s–%s)", f2(median(cpuRatios)), f2(cpuRatios[0]), f2(cpuRatios[len(cpuRatios)-1])),
		verdict,
	}
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// hook: hello, coord --version and the edit hook on a free file.
func (f *floorBench) hook() ([][]string, error) {
	root, err := os.MkdirTemp(f.disk, "coordbench-hook")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	if _, _, err := f.run0(proc{argv: []string{f.coord, "init"}, dir: root}); err != nil {
		return nil, err
	}
	seed := `{"id":"ed","title":"the editor","files":["src/editor/**"]}` + "\n" + `{"id":"free","title":"a free task"}` + "\n"
	if _, _, err := f.run0(proc{argv: []string{f.coord, "seed-tasks", "--stdin"}, dir: root, stdin: seed}); err != nil {
		return nil, err
	}
	payload := func(file string) string {
		return `{"session_id":"bench","hook_event_name":"PreToolUse","cwd":"` + root + `","tool_name":"Edit","tool_input":{"file_path":"` +
			filepath.Join(root, file) + `","old_string":"a","new_string":"b"}}`
	}
	free := payload("src/editor/modal.ts")
	procs := []proc{
		{argv: []string{f.hello}, dir: root},
		{argv: []string{f.coord, "--version"}, dir: root},
		{argv: []string{f.coord, "hook", "claude", "PreToolUse"}, dir: root, stdin: free},
	}
	res, err := f.interleave(procs)
	if err != nil {
		return nil, err
	}
	// The hook measured does guard: once another agent holds the task,
	// the same edit is refused (exit 2).
	if _, _, err := f.run0(proc{argv: []string{f.coord, "--agent", "other", "claim", "--task", "ed"}, dir: root}); err != nil {
		return nil, err
	}
	if _, _, err := f.run0(proc{argv: []string{f.coord, "hook", "claude", "PreToolUse"}, dir: root, stdin: free, want: 2}); err != nil {
		return nil, fmt.Errorf("the hook did not refuse an edit of a held task's file: %v", err)
	}
	return [][]string{
		ratioRow("`coord hook claude PreToolUse`, a free file, nothing held / hello", res, 2, 0, hookTarget),
		ratioRow("`coord --version` / hello", res, 1, 0, 0),
	}, nil
}

// claims: a fresh coord claim at n tasks against the floor claim on the
// same registry, under base.
func (f *floorBench) claims(where, base string, n int) ([]string, error) {
	if f.rounds*f.k > n {
		return nil, fmt.Errorf("-rounds × -k (%d) claims would drain %d tasks", f.rounds*f.k, n)
	}
	root, err := (&suite{bin: f.coord}).tree(base, n)
	if root != "" {
		defer os.RemoveAll(root)
	}
	if err != nil {
		return nil, err
	}
	// The floor's registry is coord's, as seeded: the same tasks, bytes
	// and size.
	fl, err := os.MkdirTemp(base, "coordbench-floor")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(fl)
	if err := copyFile(filepath.Join(root, ".rotd", "coordination", "active_work_registry.json"), filepath.Join(fl, "registry.json")); err != nil {
		return nil, err
	}
	procs := []proc{
		{argv: []string{f.claim, fl, "a"}},
		{argv: []string{f.coord, "--root", root, "--agent", "a", "claim"}},
	}
	res, err := f.interleave(procs)
	if err != nil {
		return nil, err
	}
	return ratioRow(fmt.Sprintf("`coord claim`, %d tasks, %s / floor claim", n, where), res, 1, 0, claimTarget), nil
}

func copyFile(from, to string) error {
	r, err := os.Open(from)
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// runFloor prints the table of coordbench -floor. only is "" (all),
// "hook" or "claim".
func runFloor(f *floorBench, only string) error {
	dir, err := os.MkdirTemp(f.disk, "coordbench-bin")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	f.copies = map[string][]string{}
	for _, p := range []*string{&f.coord, &f.hello, &f.claim} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		if _, err := os.Stat(abs); err != nil {
			return fmt.Errorf("%v (make bench-hook builds the floor programs into bin/)", err)
		}
		*p = abs
		for i := range fileCopies {
			c := filepath.Join(dir, fmt.Sprintf("%s.%d", filepath.Base(abs), i))
			if err := copyFile(abs, c); err != nil {
				return err
			}
			if err := os.Chmod(c, 0o755); err != nil {
				return err
			}
			f.copies[abs] = append(f.copies[abs], c)
		}
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "COORD_") && !strings.HasPrefix(kv, "ROTD_") && !strings.HasPrefix(kv, "CLAUDE_") {
			f.env = append(f.env, kv)
		}
	}
	f.env = append(f.env, coord.EnvAgent+"=me")
	fmt.Printf("%d rounds of %d runs of each program (from %d copies of its file), interleaved\n\n", f.rounds, f.k, fileCopies)
	fmt.Println("| what | floor p50 | coord p50 | ratio of p50s: median (range over rounds) | CPU ratio | target |")
	fmt.Println("|---|---|---|---|---|---|")
	print := func(row []string) { fmt.Println("| " + strings.Join(row, " | ") + " |") }
	if only == "" || only == "hook" {
		rows, err := f.hook()
		if err != nil {
			return err
		}
		for _, r := range rows {
			print(r)
		}
	}
	if only == "" || only == "claim" {
		for _, w := range []struct{ where, base string }{{"tmpfs", f.shm}, {"disk", f.disk}} {
			row, err := f.claims(w.where, w.base, 1000)
			if err != nil {
				return err
			}
			print(row)
		}
	}
	return nil
}
