package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// compare measures several coord binaries side by side on the figures a
// change must not make worse: process start, a claim as a fresh process at
// 1k, 10k and 100k tasks, ls and ready at 1k, the 8- and 16-process
// drains, the after-tool hook's conflict scan and a landing (git included). The binaries are interleaved run by run (the order rotating each
// round), so the load of a shared machine falls on all of them alike;
// every ratio is to the first binary. Besides wall time it reports each
// process's CPU time (user + system, from its rusage), which load moves
// less. Passing the same binary twice measures the noise floor of a
// ratio (an A/A column).
type compare struct {
	bins  []string // the first is the base of every ratio
	names []string
	quick bool
}

// sample is one process's wall and CPU milliseconds.
type sample struct{ wall, cpu float64 }

// procRun runs bin with args and returns its wall and CPU time and its
// standard output.
func procRun(bin string, args ...string) (sample, []byte, error) {
	return procRunIn("", nil, bin, args...)
}

// procRunIn is procRun in dir ("" : here) with stdin.
func procRunIn(dir string, stdin []byte, bin string, args ...string) (sample, []byte, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	t0 := time.Now()
	out, err := cmd.Output()
	s := sample{wall: ms(time.Since(t0))}
	if err != nil {
		return s, nil, fmt.Errorf("%s %s: %v: %s", filepath.Base(bin), strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.cpu = float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
	}
	return s, out, nil
}

// trees lays down one fresh tree of n tasks per binary, each by its own
// binary (init and seed-tasks), and returns them with a cleanup.
func (c *compare) trees(base string, n int) ([]string, func(), error) {
	var roots []string
	done := func() {
		for _, r := range roots {
			os.RemoveAll(r)
		}
	}
	for _, bin := range c.bins {
		r, err := (&suite{bin: bin}).tree(base, n)
		if r != "" {
			roots = append(roots, r)
		}
		if err != nil {
			done()
			return nil, nil, err
		}
	}
	return roots, done, nil
}

// interleave runs op k times for every binary, rotating which binary goes
// first in each round, and returns the samples per binary.
func (c *compare) interleave(k int, op func(b int) (sample, error)) ([][]sample, error) {
	res := make([][]sample, len(c.bins))
	for i := range k {
		for j := range c.bins {
			b := (i + j) % len(c.bins)
			s, err := op(b)
			if err != nil {
				return nil, err
			}
			res[b] = append(res[b], s)
		}
	}
	return res, nil
}

func mean(v []float64) float64 {
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t / float64(max(1, len(v)))
}

func walls(s []sample) []float64 {
	v := make([]float64, len(s))
	for i := range s {
		v[i] = s[i].wall
	}
	return v
}

func cpus(s []sample) []float64 {
	v := make([]float64, len(s))
	for i := range s {
		v[i] = s[i].cpu
	}
	return v
}

// latencyRow formats per-binary p50, p95 and CPU p50, and their ratios to
// the first binary.
func (c *compare) latencyRow(what string, res [][]sample) []string {
	row := []string{what}
	for _, s := range res {
		row = append(row, fmt.Sprintf("%s ms (p95 %s, cpu %s)", f1(pct(walls(s), 50)), f1(pct(walls(s), 95)), f1(pct(cpus(s), 50))))
	}
	for _, s := range res[1:] {
		row = append(row, fmt.Sprintf("%s (p95 %s, cpu %s)",
			f2(pct(walls(s), 50)/pct(walls(res[0]), 50)),
			f2(pct(walls(s), 95)/pct(walls(res[0]), 95)),
			f2(pct(cpus(s), 50)/pct(cpus(res[0]), 50))))
	}
	return row
}

// claims: k claims by one agent on each binary's own fresh tree of n
// tasks, one process each.
func (c *compare) claims(where, base string, n, k int) ([]string, error) {
	roots, done, err := c.trees(base, n)
	if err != nil {
		return nil, err
	}
	defer done()
	res, err := c.interleave(k, func(b int) (sample, error) {
		s, _, err := procRun(c.bins[b], "--root", roots[b], "--agent", "a", "claim")
		return s, err
	})
	if err != nil {
		return nil, err
	}
	return c.latencyRow(fmt.Sprintf("claim, %d tasks, %s (%d each)", n, where, k), res), nil
}

// reads: k runs of a read-only command on each binary's tree of n tasks.
func (c *compare) reads(base string, n, k int, args ...string) ([]string, error) {
	roots, done, err := c.trees(base, n)
	if err != nil {
		return nil, err
	}
	defer done()
	res, err := c.interleave(k, func(b int) (sample, error) {
		s, _, err := procRun(c.bins[b], append([]string{"--root", roots[b], "--agent", "a"}, args...)...)
		return s, err
	})
	if err != nil {
		return nil, err
	}
	return c.latencyRow(fmt.Sprintf("%s, %d tasks (%d each)", strings.Join(args, " "), n, k), res), nil
}

// start: coord --version, process start alone.
func (c *compare) start(k int) ([]string, error) {
	res, err := c.interleave(k, func(b int) (sample, error) {
		s, _, err := procRun(c.bins[b], "--version")
		return s, err
	})
	if err != nil {
		return nil, err
	}
	return c.latencyRow(fmt.Sprintf("coord --version, process start (%d each)", k), res), nil
}

// hookScan: the after-tool hook in a worktree whose HEAD moved (its
// marker removed before each run), with two tasks in flight whose trial
// merge is cached: the conflict scan every commit of an agent costs,
// git processes included (the CPU is the hook's and its children's). One
// repository serves every binary: a warm-up run merges the pair first.
func (c *compare) hookScan(base string, k int) ([]string, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return []string{"hook scan: skipped (no git)"}, nil
	}
	dir, err := os.MkdirTemp(base, "coordbench-hookscan-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	env := fixtureEnv(dir)
	bin := c.bins[len(c.bins)-1]
	repo := filepath.Join(dir, "repo")
	alice, bob := filepath.Join(dir, "alice"), filepath.Join(dir, "bob")
	err = runSteps(env, []step{
		{dir, []string{"git", "init", "-q", "-b", "main", repo}, "", ""},
		{repo, []string{"git", "add", "."}, "f.txt", "1\n2\n3\n4\n5\n"},
		{repo, []string{"git", "commit", "-q", "-m", "init"}, "", ""},
		{repo, []string{bin, "init"}, "", ""},
		{repo, []string{bin, "seed-tasks", "--stdin"}, "", "{\"id\":\"a\"}\n{\"id\":\"b\"}\n"},
		{repo, []string{"git", "worktree", "add", "-q", "-b", "coord/alice", alice}, "", ""},
		{repo, []string{"git", "worktree", "add", "-q", "-b", "coord/bob", bob}, "", ""},
		{alice, []string{bin, "--agent", "alice", "claim", "--task", "a"}, "", ""},
		{alice, []string{"git", "commit", "-q", "-a", "-m", "a"}, "f.txt", "1\n2\nthree (alice)\n4\n5\n"},
		{bob, []string{bin, "--agent", "bob", "claim", "--task", "b"}, "", ""},
		{bob, []string{"git", "commit", "-q", "-a", "-m", "b"}, "f.txt", "1\n2\nthree (bob)\n4\n5\n"},
	})
	if err != nil {
		return nil, fmt.Errorf("hook scan fixture: %w", err)
	}
	marker := filepath.Join(repo, ".git", "worktrees", "bob", "coord-hook-head")
	post := []byte(`{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"git commit -a"}}`)
	hook := func(b int) (sample, error) {
		if err := os.Remove(marker); err != nil && !os.IsNotExist(err) {
			return sample{}, err
		}
		s, _, err := procRunIn(bob, post, c.bins[b], "--agent", "bob", "hook", "codex", "PostToolUse")
		return s, err
	}
	if _, err := hook(len(c.bins) - 1); err != nil { // the warm-up: the pair merged and cached
		return nil, err
	}
	res, err := c.interleave(k, hook)
	if err != nil {
		return nil, err
	}
	return c.latencyRow(fmt.Sprintf("after-tool hook, conflict scan, merges cached (%d each)", k), res), nil
}

// landOne: coord land of one released task whose target moved since
// the task began (a merge, not a fast-forward), no check: the lander's
// own work for a landing, git included (the CPU is the land process's
// and its children's). Each run lands on a repository of its own, made
// alike (by the last binary) before the clock starts.
func (c *compare) landOne(base string, k int) ([]string, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return []string{"land: skipped (no git)"}, nil
	}
	dir, err := os.MkdirTemp(base, "coordbench-land-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	env := fixtureEnv(dir)
	bin := c.bins[len(c.bins)-1]
	n := 0
	land := func(b int) (sample, error) {
		n++
		repo, alice := filepath.Join(dir, fmt.Sprintf("repo%d", n)), filepath.Join(dir, fmt.Sprintf("alice%d", n))
		defer os.RemoveAll(repo)
		defer os.RemoveAll(alice)
		err := runSteps(env, []step{
			{dir, []string{"git", "init", "-q", "-b", "main", repo}, "", ""},
			{repo, []string{"git", "add", "."}, "f.txt", "1\n2\n3\n"},
			{repo, []string{"git", "commit", "-q", "-m", "init"}, "", ""},
			{repo, []string{bin, "init"}, "", ""},
			{repo, []string{bin, "seed-tasks", "--stdin"}, "", "{\"id\":\"a\"}\n"},
			{repo, []string{"git", "worktree", "add", "-q", "-b", "coord/alice", alice}, "", ""},
			{alice, []string{bin, "--agent", "alice", "claim", "--task", "a"}, "", ""},
			{alice, []string{"git", "add", "a.txt"}, "a.txt", "a\n"},
			{alice, []string{"git", "commit", "-q", "-m", "a"}, "", ""},
			{alice, []string{bin, "--agent", "alice", "release", "a", "--summary", "a"}, "", ""},
			{repo, []string{"git", "add", "b.txt"}, "b.txt", "b\n"},
			{repo, []string{"git", "commit", "-q", "-m", "main moves"}, "", ""},
		})
		if err != nil {
			return sample{}, fmt.Errorf("land fixture: %w", err)
		}
		s, out, err := procRunIn(repo, nil, c.bins[b], "--agent", "lander", "land", "--json")
		if err == nil && (!bytes.Contains(out, []byte(`"outcome":"landed","commit":`)) || !bytes.Contains(out, []byte(`"how":"merge"`))) {
			err = fmt.Errorf("land: not landed by a merge: %s", bytes.TrimSpace(out))
		}
		return s, err
	}
	res, err := c.interleave(k, land)
	if err != nil {
		return nil, err
	}
	return c.latencyRow(fmt.Sprintf("land one task by a merge, no check (%d each)", k), res), nil
}

// fixtureEnv is the environment a benchmark's git fixture runs in: a
// fixed identity, no system configuration, HOME in dir.
func fixtureEnv(dir string) []string {
	return append(os.Environ(), "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@example.com",
		"GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
}

// step is one command of a fixture, run in dir; with a file named, data
// is written to it there first, and without one data is the stdin.
type step struct {
	dir        string
	argv       []string
	file, data string
}

// runSteps runs a fixture's steps in order with env; the first that
// fails is the error, with its output.
func runSteps(env []string, steps []step) error {
	for _, st := range steps {
		cmd := exec.Command(st.argv[0], st.argv[1:]...)
		cmd.Dir, cmd.Env = st.dir, env
		if st.file != "" {
			if err := os.WriteFile(filepath.Join(st.dir, st.file), []byte(st.data), 0o644); err != nil {
				return err
			}
		} else if st.data != "" {
			cmd.Stdin = strings.NewReader(st.data)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v: %s", strings.Join(st.argv, " "), err, out)
		}
	}
	return nil
}

// drainRate: procs processes of bin claim until nothing is left in a
// fresh tree of n tasks; claims per second, and CPU ms per claim.
func drainRate(bin, base string, n, procs int) (rate, cpuPer float64, err error) {
	root, err := (&suite{bin: bin}).tree(base, n)
	if root != "" {
		defer os.RemoveAll(root)
	}
	if err != nil {
		return 0, 0, err
	}
	return drain(n, procs, func(agent string) []string {
		return []string{bin, "--root", root, "--agent", agent, "claim"}
	})
}

// drains: rounds drains by each binary, interleaved; every round's rate
// is printed, and the ratio of the means (a few rounds have no median
// worth the name).
func (c *compare) drains(base string, n, procs, rounds int) ([]string, error) {
	res, err := c.interleave(rounds, func(b int) (sample, error) {
		r, u, err := drainRate(c.bins[b], base, n, procs)
		return sample{wall: r, cpu: u}, err
	})
	if err != nil {
		return nil, err
	}
	row := []string{fmt.Sprintf("%d processes draining %d tasks, disk (%d rounds each)", procs, n, rounds)}
	for _, s := range res {
		var rs []string
		for _, x := range s {
			rs = append(rs, f1(x.wall))
		}
		row = append(row, strings.Join(rs, ", ")+" claims/s (cpu "+f1(mean(cpus(s)))+" ms/claim)")
	}
	for _, s := range res[1:] {
		row = append(row, f2(mean(walls(s))/mean(walls(res[0])))+"× throughput (cpu "+
			f2(mean(cpus(s))/mean(cpus(res[0])))+")")
	}
	return row, nil
}

// runCompare measures the binaries in befores (comma-separated) and then
// after, named name; the first of befores is the base of the ratios. only
// (comma-separated kinds, "" for all) and drainRounds (0: the default)
// narrow a run to what needs more samples.
func runCompare(befores, after, name, disk, shm string, quick bool, only string, drainRounds int) error {
	c := &compare{quick: quick}
	seen := map[string]int{}
	add := func(bin, label string) error {
		abs, err := filepath.Abs(bin)
		if err != nil {
			return err
		}
		if _, err := os.Stat(abs); err != nil {
			return err
		}
		seen[label]++
		if seen[label] > 1 {
			label += "." + strconv.Itoa(seen[label]) // the same binary twice: an A/A column
		}
		c.bins = append(c.bins, abs)
		c.names = append(c.names, label)
		return nil
	}
	for _, b := range strings.Split(befores, ",") {
		if err := add(b, strings.TrimPrefix(filepath.Base(b), "coord-")); err != nil {
			return err
		}
	}
	if err := add(after, name); err != nil {
		return err
	}
	k, k10, k100, rounds := 40, 20, 5, 2
	if quick {
		k, k10, k100, rounds = 15, 8, 3, 1
	}
	if drainRounds > 0 {
		rounds = drainRounds
	}
	all := []struct {
		kind string
		run  func() ([]string, error)
	}{
		{"start", func() ([]string, error) { return c.start(k) }},
		{"claim", func() ([]string, error) { return c.claims("disk", disk, 1000, k) }},
		{"claim", func() ([]string, error) { return c.claims("tmpfs", shm, 1000, k) }},
		{"claim", func() ([]string, error) { return c.claims("tmpfs", shm, 10000, k10) }},
		{"claim", func() ([]string, error) { return c.claims("tmpfs", shm, 100000, k100) }},
		{"read", func() ([]string, error) { return c.reads(shm, 1000, k, "ls", "--json") }},
		{"read", func() ([]string, error) { return c.reads(shm, 1000, k, "ready", "--json") }},
		{"drain8", func() ([]string, error) { return c.drains(disk, 1000, 8, rounds) }},
		{"drain16", func() ([]string, error) { return c.drains(disk, 1000, 16, rounds) }},
		{"hook", func() ([]string, error) { return c.hookScan(shm, k) }},
		{"land", func() ([]string, error) { return c.landOne(shm, k10) }},
	}
	var steps []func() ([]string, error)
	for _, st := range all {
		if only == "" || slices.Contains(strings.Split(only, ","), st.kind) {
			steps = append(steps, st.run)
		}
	}
	if len(steps) == 0 {
		return fmt.Errorf("-only %q: no such measurement (start, claim, read, drain8, drain16, hook, land)", only)
	}
	head := append([]string{"what"}, c.names...)
	for _, n := range c.names[1:] {
		head = append(head, n+" / "+c.names[0])
	}
	fmt.Println("| " + strings.Join(head, " | ") + " |")
	fmt.Println("|" + strings.Repeat("---|", len(head)))
	for _, st := range steps {
		row, err := st()
		if err != nil {
			return err
		}
		fmt.Println("| " + strings.Join(row, " | ") + " |")
	}
	return nil
}
