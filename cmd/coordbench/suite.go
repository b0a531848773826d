package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// suite runs every measurement of docs/BENCHMARKS.md and prints one
// markdown table. Each coord figure is paired with the naive reference
// measured in the same run (same machine state), and reported as a ratio.
type suite struct {
	bin, self string
	disk, shm string
	quick     bool
	rows      [][]string
}

func (s *suite) row(cols ...string) {
	s.rows = append(s.rows, cols)
	fmt.Fprintln(os.Stderr, "  "+strings.Join(cols, " | "))
}

// tree makes a coordination tree of n tasks under base by seeding a
// generated batch through coord.
func (s *suite) tree(base string, n int) (string, error) {
	root, err := os.MkdirTemp(base, "coordbench")
	if err != nil {
		return "", err
	}
	if err := run(s.bin, "--root", root, "init"); err != nil {
		return "", err
	}
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id":"b%d","title":"bench task %d","description":"generated","priority":"%s"}`+"\n",
			i, i, []string{"urgent", "high", "medium", "low"}[i%4])
	}
	seed := filepath.Join(root, "seed.jsonl")
	if err := os.WriteFile(seed, []byte(b.String()), 0o644); err != nil {
		return "", err
	}
	return root, run(s.bin, "--root", root, "seed-tasks", seed)
}

func run(bin string, args ...string) error {
	cmd := exec.Command(bin, args...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %v: %s", filepath.Base(bin), strings.Join(args, " "), err, errb.String())
	}
	return nil
}

// timed runs the command k times and returns the latencies and the peak
// RSS (KiB) of the largest run.
func timed(k int, argv func(i int) []string) ([]float64, int64, error) {
	var lat []float64
	var rss int64
	for i := range k {
		a := argv(i)
		cmd := exec.Command(a[0], a[1:]...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			return nil, 0, fmt.Errorf("%s: %v: %s", strings.Join(a, " "), err, errb.String())
		}
		lat = append(lat, ms(time.Since(t0)))
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > rss {
			rss = ru.Maxrss
		}
	}
	return lat, rss, nil
}

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
func f2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// claimLatency: k claims by one agent, one process each, coord then the
// naive reference on identical fresh trees.
func (s *suite) claimLatency(where, base string, n, k int) error {
	var p50 [2]float64
	var p99 [2]float64
	var rss [2]int64
	for impl := range 2 {
		root, err := s.tree(base, n)
		if err != nil {
			return err
		}
		lat, r, err := timed(k, func(i int) []string {
			if impl == 0 {
				return []string{s.bin, "--root", root, "--agent", "a", "claim"}
			}
			return []string{s.self, "-naive-claim", root, "a"}
		})
		os.RemoveAll(root)
		if err != nil {
			return err
		}
		p50[impl], p99[impl], rss[impl] = pct(lat, 50), pct(lat, 99), r
	}
	s.row(fmt.Sprintf("claim, 1 process, %d tasks, %s", n, where),
		f1(p50[0])+" ms (p99 "+f1(p99[0])+", "+strconv.FormatInt(rss[0]/1024, 10)+" MB)",
		f1(p50[1])+" ms (p99 "+f1(p99[1])+", "+strconv.FormatInt(rss[1]/1024, 10)+" MB)",
		f2(p50[0]/p50[1]))
	return nil
}

// drain: procs processes claim until nothing is left in a tree of n tasks.
func (s *suite) drain(base string, n, procs int) error {
	var rate [2]float64
	for impl := range 2 {
		root, err := s.tree(base, n)
		if err != nil {
			return err
		}
		r, _, err := drain(n, procs, func(agent string) []string {
			if impl == 0 {
				return []string{s.bin, "--root", root, "--agent", agent, "claim"}
			}
			return []string{s.self, "-naive-claim", root, agent}
		})
		os.RemoveAll(root)
		if err != nil {
			return err
		}
		rate[impl] = r
	}
	s.row(fmt.Sprintf("%d processes draining %d tasks, disk", procs, n),
		f1(rate[0])+" claims/s", f1(rate[1])+" claims/s", f2(rate[0]/rate[1])+"× (throughput)")
	return nil
}

// startup and beat: both are process-start bound.
func (s *suite) beat(base string) error {
	root, err := s.tree(base, 10)
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	run(s.bin, "--root", root, "--agent", "a", "beat")
	k := 100
	if s.quick {
		k = 30
	}
	ver, _, err := timed(k, func(int) []string { return []string{s.bin, "--version"} })
	if err != nil {
		return err
	}
	bt, _, err := timed(k, func(int) []string { return []string{s.bin, "--root", root, "--agent", "a", "beat"} })
	if err != nil {
		return err
	}
	s.row("coord beat (vs coord --version)", f1(pct(bt, 50))+" ms", f1(pct(ver, 50))+" ms (--version)", f2(pct(bt, 50)/pct(ver, 50)))
	return nil
}

// staleTree writes a registry of n claimed tasks, each with its lock file
// and its agent's heartbeat, aged by age.
func (s *suite) staleTree(base string, n int, age time.Duration) (string, error) {
	root, err := os.MkdirTemp(base, "coordbench")
	if err != nil {
		return "", err
	}
	if err := run(s.bin, "--root", root, "init"); err != nil {
		return "", err
	}
	dir := filepath.Join(root, ".rotd", "coordination")
	now := time.Now().UTC()
	since := now.Add(-age).Format(time.RFC3339)
	var b strings.Builder
	b.WriteString(`{"version":1,"last_epoch":` + strconv.Itoa(n) + `,"tasks":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "\n"+`{"id":"s%d","title":"t","status":"claimed","priority":"medium","claimed_by":"ag%d","claimed_at":"%s","completed_at":null,"epoch":%d,"progress":0,"blocked_reason":null,"reviewer_id":null}`, i, i, since, i+1)
		lock := fmt.Sprintf(`{"holder":"ag%d","since":"%s","task_id":"s%d","epoch":%d}`, i, since, i, i+1)
		os.WriteFile(filepath.Join(dir, "agent_locks", fmt.Sprintf("s%d.ag%d.lock", i, i)), []byte(lock), 0o644)
		hb := filepath.Join(dir, "heartbeat", fmt.Sprintf("ag%d.beat", i))
		os.WriteFile(hb, []byte(fmt.Sprintf(`{"agent_id":"ag%d","status":"working"}`, i)), 0o644)
		os.Chtimes(hb, now.Add(-age), now.Add(-age))
	}
	b.WriteString("\n]}\n")
	return root, os.WriteFile(filepath.Join(dir, "active_work_registry.json"), []byte(b.String()), 0o644)
}

func (s *suite) cleanStale(base string, n int) error {
	for _, c := range []struct {
		name string
		age  time.Duration
	}{{"all alive (judge only)", time.Minute}, {"all stale (free all, one commit)", time.Hour}} {
		root, err := s.staleTree(base, n, c.age)
		if err != nil {
			return err
		}
		lat, _, err := timed(1, func(int) []string { return []string{s.bin, "--root", root, "clean-stale", "--timeout", "15m"} })
		os.RemoveAll(root)
		if err != nil {
			return err
		}
		s.row(fmt.Sprintf("clean-stale over %d locks and heartbeats, %s", n, c.name), f1(lat[0])+" ms", "", "")
	}
	return nil
}

func (s *suite) ls(base string, n int) error {
	root, err := s.tree(base, n)
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	lat, _, err := timed(10, func(int) []string { return []string{s.bin, "--root", root, "ls", "--json"} })
	if err != nil {
		return err
	}
	s.row(fmt.Sprintf("ls --json, %d tasks", n), f1(pct(lat, 50))+" ms", "", "")
	return nil
}

func runSuite(bin, self, disk, shm string, quick bool) error {
	s := &suite{bin: bin, self: self, disk: disk, shm: shm, quick: quick}
	k := 50
	if quick {
		k = 15
	}
	steps := []func() error{
		func() error { return s.beat(disk) },
		func() error { return s.claimLatency("disk", disk, 10, k) },
		func() error { return s.claimLatency("disk", disk, 1000, k) },
		func() error { return s.claimLatency("tmpfs", shm, 1000, k) },
		func() error { return s.claimLatency("tmpfs", shm, 10000, k/2) },
		func() error { return s.claimLatency("tmpfs", shm, 100000, 5) },
		func() error { return s.claimLatency("disk", disk, 100000, 5) },
		func() error { return s.drain(disk, 1000, 2) },
		func() error { return s.drain(disk, 1000, 8) },
		func() error { return s.drain(disk, 1000, 32) },
		func() error { return s.cleanStale(shm, 10000) },
		func() error { return s.ls(shm, 10000) },
	}
	for _, st := range steps {
		if err := st(); err != nil {
			return err
		}
	}
	fmt.Println("| what | coord | naive reference | ratio |")
	fmt.Println("|---|---|---|---|")
	for _, r := range s.rows {
		for len(r) < 4 {
			r = append(r, "")
		}
		fmt.Println("| " + strings.Join(r, " | ") + " |")
	}
	return nil
}
