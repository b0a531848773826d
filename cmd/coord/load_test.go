//go:build !race

package main

// Reliability scenario 1 (mutual exclusion under load) and 2 (SIGKILL
// storm), with real processes. Each worker is a long-lived agent process
// using the library as the CLI does: claim, append a unique token to a
// shared artifact through coord's locked append, release and put the
// task back (a hot pool). Sizes: short in CI, long under make stress. The race detector cannot see
// across processes and slows each about tenfold, so this file is built
// only without it, and make test's procs pass runs it (Makefile).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/file"
)

func init() { workers["load"] = loadWorker }

// loadWorker claims until it has made COORD_TEST_CLAIMS claims (or
// forever for 0), printing "C task epoch" after each commit and "T token"
// after each artifact append.
func loadWorker(agent, root string) int {
	want, _ := strconv.Atoi(os.Getenv("COORD_TEST_CLAIMS"))
	s, err := file.Open(filepath.Join(root, file.RelDir), file.Options{Holder: agent, LockWait: 30 * time.Second, RotdDir: filepath.Join(root, ".rotd")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	arts := s.Artifacts()
	beats := s.Beats()
	out := bufio.NewWriter(os.Stdout)
	ctx := context.Background()
	a := coord.Agent{ID: agent}
	if err := beats.Beat(ctx, agent, nil); err != nil {
		fmt.Fprintln(os.Stderr, "beat:", err)
		return 2
	}
	go func() { // alive while the process runs, as under coord run
		for range time.Tick(100 * time.Millisecond) {
			beats.Beat(ctx, agent, nil)
		}
	}()
	for n := 0; want == 0 || n < want; {
		var id string
		var epoch int64
		err := s.Tasks().Update(ctx, func(tx *coord.Txn) error {
			task, err := tx.Claim(a, coord.ClaimOptions{Any: rand.IntN(2) == 0})
			if task != nil {
				id, epoch = task.ID, task.Epoch
			}
			return err
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "claim:", err)
			return 3
		}
		if id == "" {
			time.Sleep(time.Duration(rand.IntN(500)) * time.Microsecond)
			continue
		}
		n++
		if err := beats.Beat(ctx, agent, nil); err != nil {
			fmt.Fprintln(os.Stderr, "beat:", err)
			return 2
		}
		fmt.Fprintf(out, "C %s %d\n", id, epoch)
		out.Flush()
		tok := fmt.Sprintf(`{"token":"%s-%d","task":"%s","epoch":%d}`, agent, n, id, epoch)
		if err := arts.Append(ctx, "load.jsonl", []byte(tok)); err != nil {
			fmt.Fprintln(os.Stderr, "append:", err)
			return 3
		}
		fmt.Fprintf(out, "T %s-%d\n", agent, n)
		out.Flush()
		err = s.Tasks().Update(ctx, func(tx *coord.Txn) error {
			task, err := tx.Release(agent, id, epoch, "", false)
			if err == nil {
				task.Status, task.ClaimedBy, task.ClaimedAt, task.CompletedAt = coord.Unclaimed, "", "", "" // back to the pool
			}
			return err
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "release:", err)
			return 6
		}
	}
	return 0
}

func fastDir(t *testing.T) string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		d, err := os.MkdirTemp("/dev/shm", "coord-load")
		if err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return t.TempDir()
}

type loadRun struct {
	claims  map[string]string // "task epoch" -> agent
	tokens  map[string]bool   // tokens the workers saw appended
	errs    []string
	elapsed time.Duration
}

// runLoad starts procs workers, each making claims claims (0: until
// stopped after dur). With kill, a random worker is SIGKILLed every
// 0–40 ms and replaced, and a sweeper frees dead workers' tasks.
func runLoad(t *testing.T, root string, procs, claims int, dur time.Duration, kill bool) *loadRun {
	t.Helper()
	r := &loadRun{claims: map[string]string{}, tokens: map[string]bool{}}
	type w struct {
		cmd      *exec.Cmd
		out, err *bytes.Buffer
		agent    string
	}
	next := 0
	start := func() *w {
		next++
		agent := fmt.Sprintf("w%03d", next)
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), workerEnv+"=load", "COORD_AGENT="+agent, "COORD_ROOT="+root, "COORD_TEST_CLAIMS="+strconv.Itoa(claims))
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return &w{cmd, &out, &errb, agent}
	}
	collect := func(x *w, killed bool) {
		err := x.cmd.Wait()
		// A worker writes to stderr only when an operation failed (a kill
		// writes nothing), so stderr is an error even for killed workers.
		if err != nil && !killed || x.err.Len() > 0 {
			r.errs = append(r.errs, fmt.Sprintf("%s: %v: %s", x.agent, err, x.err))
		}
		for _, l := range strings.Split(x.out.String(), "\n") {
			f := strings.Fields(l)
			switch {
			case len(f) == 3 && f[0] == "C":
				k := f[1] + " " + f[2]
				if prev, dup := r.claims[k]; dup {
					r.errs = append(r.errs, fmt.Sprintf("task %s granted to %s and %s", k, prev, x.agent))
				}
				r.claims[k] = x.agent
			case len(f) == 2 && f[0] == "T":
				r.tokens[f[1]] = true
			}
		}
	}
	t0 := time.Now()
	ws := make([]*w, procs)
	for i := range ws {
		ws[i] = start()
	}
	if dur > 0 {
		lastSweep := time.Now()
		for time.Since(t0) < dur {
			time.Sleep(time.Duration(rand.IntN(41)) * time.Millisecond)
			if kill {
				i := rand.IntN(procs)
				ws[i].cmd.Process.Signal(syscall.SIGKILL)
				collect(ws[i], true)
				ws[i] = start()
			}
			if kill && time.Since(lastSweep) > 500*time.Millisecond {
				// cron: free what killed workers held (they never beat again)
				if code, _, errs := coordIn("--root", root, "clean-stale", "--timeout", "2s"); code != 0 {
					r.errs = append(r.errs, "clean-stale: "+errs)
				}
				lastSweep = time.Now()
			}
		}
		for _, x := range ws {
			x.cmd.Process.Signal(syscall.SIGKILL)
			collect(x, true)
		}
	} else {
		for _, x := range ws {
			collect(x, false)
		}
	}
	r.elapsed = time.Since(t0)
	return r
}

func loadTree(t *testing.T, dir string, nTasks int) string {
	var lines []string
	for i := range nTasks {
		lines = append(lines, fmt.Sprintf(`{"id":"L%05d","title":"load"}`, i))
	}
	root := filepath.Join(dir, "tree")
	os.MkdirAll(root, 0o755)
	mustCoord(t, "--root", root, "init")
	seed := filepath.Join(dir, "seed.jsonl")
	os.WriteFile(seed, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	mustCoord(t, "--root", root, "seed-tasks", seed)
	return root
}

// checkArtifact: every token a worker saw appended is in the artifact
// exactly once, every line parses, and (without kills) nothing else is.
func checkArtifact(t *testing.T, root string, r *loadRun, exact bool) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, ".rotd", "load.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var tok struct{ Token, Task string }
		if err := json.Unmarshal([]byte(l), &tok); err != nil {
			t.Fatalf("artifact line %d is torn: %.100q", i+1, l)
		}
		if seen[tok.Token] {
			t.Fatalf("token %s appended twice", tok.Token)
		}
		seen[tok.Token] = true
	}
	for tok := range r.tokens {
		if !seen[tok] {
			t.Errorf("token %s lost", tok)
		}
	}
	if exact && len(seen) != len(r.tokens) {
		t.Errorf("artifact has %d tokens, workers appended %d", len(seen), len(r.tokens))
	}
	return len(seen)
}

// replayLog: from the coordination log (written in commit order under the
// registry flock), no task is claimed while it is held.
func replayLog(t *testing.T, root string) int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(root, ".rotd", "coordination", "coordination*.log"))
	held := map[string]string{}
	claims := 0
	for _, f := range files {
		data, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(data), "\n") {
			m := logRE.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			switch m[2] {
			case "claimed":
				claims++
				if h := held[m[3]]; h != "" {
					t.Fatalf("task %s claimed by %s while %s held it", m[3], m[1], h)
				}
				held[m[3]] = m[1]
			case "released":
				delete(held, m[3])
			}
		}
	}
	return claims
}

// TestMutualExclusionUnderLoad, scenario 1: 16 processes on a hot pool of
// 100 tasks and on 10,000 tasks. Zero double grants, zero lost tokens,
// every read parses. CI: 8,000 claims on the hot pool and 160 on the wide
// one; stress: 1,000,000 and 20,000.
//
// Broken build this fails against: file.Store.Update without the
// registry flock (double grants and, from lost updates, a claim logged
// while the task is held).
func TestMutualExclusionUnderLoad(t *testing.T) {
	t.Parallel()
	longTier(t, "a load") // the default loop: TestMultiProcessDrain
	for _, c := range []struct {
		name          string
		tasks, claims int
	}{
		{"hot-100", 100, longScale(8000, 1000000)},
		{"wide-10000", 10000, longScale(160, 20000)},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := loadTree(t, fastDir(t), c.tasks)
			r := runLoad(t, root, 16, c.claims/16, 0, false)
			for _, e := range r.errs {
				t.Error(e)
			}
			if len(r.claims) != c.claims/16*16 {
				t.Fatalf("%d claims, want %d", len(r.claims), c.claims/16*16)
			}
			checkArtifact(t, root, r, true)
			if n := replayLog(t, root); n != len(r.claims) {
				t.Errorf("log has %d claims, workers made %d", n, len(r.claims))
			}
			mustCoord(t, "--root", root, "doctor")
			t.Logf("%d claims by 16 processes in %v (%.0f claims/s)", len(r.claims), r.elapsed.Round(time.Millisecond), float64(len(r.claims))/r.elapsed.Seconds())
		})
	}
}

// TestSIGKILLStorm, scenario 2: a random worker is SIGKILLed every 0–40 ms
// while 8 claim and release (CI 15 s, stress 60 s), and a sweep every
// 0.5 s frees what the dead held (2 s timeout; live workers beat every
// 100 ms, as coord run does, so one waiting for the registry flock on a
// loaded machine is not taken for dead, and on every
// claim). A live worker's release is never refused (nobody may take a task
// it holds), no claim is granted twice, every token appended is in the
// artifact once, the registry parses, doctor --repair restores every
// invariant and no temp file remains. Throughput under the storm against
// a kill-free run is a figure, not an assertion (it depends on the
// machine's load): make bench and make stress (COORD_BENCH=1 or
// COORD_STRESS=1) run the kill-free baseline and log the ratio.
//
// The log is not replayed here: a kill between a commit and its log
// append loses that line (the documented log durability), so a release
// can be missing from the log.
//
// Broken build this fails against: Store.Update without reconcile (a lock
// orphaned by a kill before the commit is never removed, and doctor
// finds it).
func TestSIGKILLStorm(t *testing.T) {
	t.Parallel()
	longTier(t, "a storm") // the default loop: TestMultiProcessSIGKILL
	secs := time.Duration(longScale(15, 60)) * time.Second
	var calm *loadRun
	if os.Getenv("COORD_BENCH") != "" || os.Getenv("COORD_STRESS") != "" {
		base := loadTree(t, fastDir(t), 200)
		calm = runLoad(t, base, 8, 0, secs/3, false) // kill-free baseline
	}
	root := loadTree(t, fastDir(t), 200)
	r := runLoad(t, root, 8, 0, secs, true)
	for _, e := range r.errs {
		t.Error(e)
	}
	mustCoord(t, "--root", root, "ls", "--json")
	code, out, errs := coordIn("--root", root, "doctor", "--repair")
	if code != 0 {
		t.Fatalf("doctor --repair exit %d:\n%s%s", code, out, errs)
	}
	code, out, _ = coordIn("--root", root, "doctor")
	if code != 0 {
		t.Fatalf("invariants still broken after repair:\n%s", out)
	}
	checkArtifact(t, root, r, false)
	stormRate := float64(len(r.claims)) / r.elapsed.Seconds()
	if calm == nil {
		t.Logf("storm %.0f claims/s, %d claims", stormRate, len(r.claims))
		return
	}
	calmRate := float64(len(calm.claims)) / calm.elapsed.Seconds()
	t.Logf("throughput: no-kill %.0f claims/s, storm %.0f claims/s (%.0f%%), %d claims", calmRate, stormRate, 100*stormRate/calmRate, len(r.claims))
}
