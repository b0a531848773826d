// Command coordbench measures coord as agents use it: every operation is a
// separate coord process (exec of the real binary), so the figures include
// process start, flock contention between processes, the durable registry
// write and the log append.
//
//	coordbench -bin bin/coord -tasks 1000 -procs 1 -ops 200   # claim latency at 1k tasks
//	coordbench -bin bin/coord -tasks 1000 -procs 8 -ops 100   # contention throughput
//	coordbench -compare old/coord,mid/coord -bin bin/coord    # binaries side by side, interleaved
//	coordbench -floor -bin bin/coord                          # the edit hook and a claim against floor programs
//
// Each of -procs concurrent agents loops -ops times: claim, then release
// with --epoch. Released tasks go back into the pool (the harness re-seeds
// when it runs low), so the registry size stays near -tasks.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rotd/coordination/coord/app"
)

func main() {
	bin := flag.String("bin", "bin/coord", "coord binary")
	tasks := flag.Int("tasks", 1000, "tasks in the registry")
	procs := flag.Int("procs", 8, "concurrent agents (each op is its own process)")
	ops := flag.Int("ops", 100, "claim+release cycles per agent")
	asJSON := flag.Bool("json", false, "print the result as JSON")
	startup := flag.Int("startup", 0, "instead: time N runs of 'coord --version' (process start)")
	suiteFlag := flag.Bool("suite", false, "run every measurement against the naive reference and print a markdown table")
	quick := flag.Bool("quick", false, "with -suite or -compare: fewer repetitions")
	disk := flag.String("disk", os.TempDir(), "with -suite or -compare: a directory on disk")
	shm := flag.String("tmpfs", "/dev/shm", "with -suite or -compare: a directory on tmpfs")
	against := flag.String("compare", "", "instead: measure these binaries (comma-separated, the first the base of the ratios) and then -bin, interleaved (scripts/bench-compare.sh builds them from git revisions)")
	name := flag.String("name", "now", "with -compare: the column name of -bin")
	only := flag.String("only", "", "with -compare: only these measurements (comma-separated: start, claim, read, drain8, drain16, hook, land); with -nats: only claim, drain (a fresh process per claim), live (long-lived 'coord mcp' sessions) or rtt")
	rounds := flag.Int("rounds", 0, "with -compare: drain rounds per binary (default 2, 1 with -quick)")
	naive := flag.Bool("naive-claim", false, "internal: run one naive reference claim: -naive-claim ROOT AGENT")
	natsFlag := flag.Bool("nats", false, "run the NATS figures beside the file engine's (a coord hub on loopback) and print a markdown table")
	cluster := flag.Bool("cluster", false, "with -nats: also on a 3-node cluster of hubs")
	var pf planFlags
	flag.StringVar(&pf.dir, "plan", "", "instead: replay the histories in this directory as work and measure coord's planner (make bench-plan)")
	flag.IntVar(&pf.replan, "plan-replan", app.ReplanAfter, "with -plan: also plan again after every N landings, as coord watch and land do (0: only once, at seeding)")
	flag.BoolVar(&pf.direct, "plan-direct", false, "with -plan: feed the commits to the predictor directly instead of through a git repository")
	flag.IntVar(&pf.skip, "plan-skip", 0, "with -plan: replay an earlier window (skip the newest N×200 commits), for tuning on other data")
	flag.StringVar(&pf.params, "plan-params", "", "with -plan: JSON overriding the predictor's parameters")
	flag.BoolVar(&pf.ablate, "plan-ablate", false, "with -plan: measure the model with each signal off in turn")
	flag.StringVar(&pf.only, "plan-only", "", "with -plan: only these histories (comma-separated)")
	flag.BoolVar(&pf.self, "plan-self", true, "with -plan: also replay the history of the git repository of the working directory (the newest 200 commits as tasks)")
	flag.BoolVar(&pf.contents, "plan-contents", true, "with -plan-self: look the identifiers the tasks name up in the repository's files as they were before the first task, as coord plan does")
	flag.StringVar(&pf.agents, "plan-agents", "", "with -plan: numbers of agents (comma-separated; default 4,8)")
	flag.StringVar(&pf.cpuprofile, "plan-cpuprofile", "", "with -plan: write a CPU profile of the whole run to this file (go tool pprof)")
	flag.BoolVar(&pf.why, "plan-why", false, "with -plan: print the files behind each re-planned run's conflicts, and whether the tasks had them predicted")
	flag.StringVar(&pf.repos, "plan-repos", "", "with -plan: also replay these git repositories' histories (NAME=DIR,…; bare copies will do), read at run time")
	claimsDir := flag.String("replay-claims", "", "instead: replay the histories in this directory as work for 4 and 8 agents with and without write claims (make bench-claims)")
	floor := flag.Bool("floor", false, "instead: the edit hook and a claim at 1,000 tasks against the floor programs of cmd/coordbench/floor, interleaved, as ratios (-only hook or claim)")
	hello := flag.String("hello", "", "with -floor: the floor of a process start (default: floor-hello beside coordbench)")
	floorClaim := flag.String("floor-claim", "", "with -floor: the floor of a claim (default: floor-claim beside coordbench)")
	floorRounds := flag.Int("floor-rounds", 5, "with -floor: rounds")
	floorK := flag.Int("floor-k", 20, "with -floor: runs of each program a round")
	flag.Parse()
	if *claimsDir != "" {
		if err := runClaims(*claimsDir, pf); err != nil {
			fmt.Fprintln(os.Stderr, "coordbench:", err)
			os.Exit(1)
		}
		return
	}
	if pf.dir != "" {
		if err := runPlan(pf); err != nil {
			fmt.Fprintln(os.Stderr, "coordbench:", err)
			os.Exit(1)
		}
		return
	}
	if *floor {
		self, _ := os.Executable()
		if *hello == "" {
			*hello = filepath.Join(filepath.Dir(self), "floor-hello")
		}
		if *floorClaim == "" {
			*floorClaim = filepath.Join(filepath.Dir(self), "floor-claim")
		}
		f := &floorBench{coord: *bin, hello: *hello, claim: *floorClaim, disk: *disk, shm: *shm, rounds: *floorRounds, k: *floorK}
		if err := runFloor(f, *only); err != nil {
			fmt.Fprintln(os.Stderr, "coordbench:", err)
			os.Exit(1)
		}
		return
	}
	if *naive {
		if err := naiveClaim(flag.Arg(0), flag.Arg(1)); err != nil {
			fmt.Fprintln(os.Stderr, "naive claim:", err)
			os.Exit(2)
		}
		return
	}
	if *against != "" {
		if err := runCompare(*against, *bin, *name, *disk, *shm, *quick, *only, *rounds); err != nil {
			fmt.Fprintln(os.Stderr, "coordbench:", err)
			os.Exit(1)
		}
		return
	}
	if *natsFlag {
		self, _ := os.Executable()
		b, err := filepath.Abs(*bin)
		if err == nil {
			err = runNATSSuite(b, self, *disk, *quick, *cluster, *only)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "coordbench:", err)
			os.Exit(1)
		}
		return
	}
	if *suiteFlag {
		self, err := os.Executable()
		if err == nil {
			var b string
			b, err = filepath.Abs(*bin)
			if err == nil {
				err = runSuite(b, self, *disk, *shm, *quick)
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "coordbench:", err)
			os.Exit(1)
		}
		return
	}
	if *startup > 0 {
		var lat []float64
		for range *startup {
			t0 := time.Now()
			if err := exec.Command(*bin, "--version").Run(); err != nil {
				fmt.Fprintln(os.Stderr, "coordbench:", err)
				os.Exit(1)
			}
			lat = append(lat, ms(time.Since(t0)))
		}
		fmt.Printf("coord --version p50 %.1f ms  p95 %.1f ms (%d runs)\n", pct(lat, 50), pct(lat, 95), len(lat))
		return
	}
	res, err := runBench(*bin, *tasks, *procs, *ops)
	if err != nil {
		fmt.Fprintln(os.Stderr, "coordbench:", err)
		os.Exit(1)
	}
	if *asJSON {
		b, _ := json.Marshal(res)
		fmt.Println(string(b))
		return
	}
	fmt.Printf("tasks=%d procs=%d ops/proc=%d\n", res.Tasks, res.Procs, res.OpsPerProc)
	fmt.Printf("  claim   p50 %6.1f ms  p95 %6.1f ms  p99 %6.1f ms\n", res.ClaimP50, res.ClaimP95, res.ClaimP99)
	fmt.Printf("  release p50 %6.1f ms  p95 %6.1f ms  p99 %6.1f ms\n", res.ReleaseP50, res.ReleaseP95, res.ReleaseP99)
	fmt.Printf("  throughput %.1f claims/s (%.1f commits/s), %d claims in %.2fs, double grants: %d\n",
		res.ClaimsPerSec, 2*res.ClaimsPerSec, res.Claims, res.Seconds, res.DoubleGrants)
}

type result struct {
	Tasks, Procs, OpsPerProc, Claims, DoubleGrants int
	Seconds, ClaimsPerSec                          float64
	ClaimP50, ClaimP95, ClaimP99                   float64
	ReleaseP50, ReleaseP95, ReleaseP99             float64
}

func runBench(bin string, nTasks, procs, ops int) (*result, error) {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp("", "coordbench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	coord := func(args ...string) (string, error) {
		cmd := exec.Command(bin, append([]string{"--root", root}, args...)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("coord %s: %v: %s", strings.Join(args, " "), err, errb.String())
		}
		return out.String(), nil
	}
	if _, err := coord("init"); err != nil {
		return nil, err
	}
	var seed strings.Builder
	for i := range nTasks {
		fmt.Fprintf(&seed, `{"id":"b%d","title":"bench task %d","priority":"%s","files":["src/m%d/*.go"]}`+"\n",
			i, i, []string{"urgent", "high", "medium", "low"}[i%4], i)
	}
	seedFile := filepath.Join(root, "seed.jsonl")
	if err := os.WriteFile(seedFile, []byte(seed.String()), 0o644); err != nil {
		return nil, err
	}
	if _, err := coord("seed-tasks", seedFile); err != nil {
		return nil, err
	}
	// Each agent releases with --summary so no git runs; ops beyond the
	// task count would drain the pool, so the agents cycle over done
	// tasks by re-claiming only what is left; keep ops*procs <= tasks.
	if ops*procs > nTasks {
		return nil, fmt.Errorf("-ops × -procs (%d) must not exceed -tasks (%d)", ops*procs, nTasks)
	}
	var mu sync.Mutex
	var claimLat, releaseLat []float64
	granted := map[string]int{}
	var firstErr error
	start := time.Now()
	var wg sync.WaitGroup
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agent := "agent-" + strconv.Itoa(p)
			for range ops {
				t0 := time.Now()
				out, err := coord("--agent", agent, "claim")
				t1 := time.Now()
				if err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
				var c struct {
					ID    string `json:"id"`
					Epoch int64  `json:"epoch"`
				}
				if err := json.Unmarshal([]byte(out), &c); err != nil || c.ID == "" {
					mu.Lock()
					firstErr = fmt.Errorf("claim printed %q", out)
					mu.Unlock()
					return
				}
				_, err = coord("--agent", agent, "release", c.ID, "--epoch", strconv.FormatInt(c.Epoch, 10), "--summary", "bench")
				t2 := time.Now()
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				claimLat = append(claimLat, ms(t1.Sub(t0)))
				releaseLat = append(releaseLat, ms(t2.Sub(t1)))
				granted[c.ID]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	if firstErr != nil {
		return nil, firstErr
	}
	r := &result{Tasks: nTasks, Procs: procs, OpsPerProc: ops, Claims: len(claimLat), Seconds: elapsed,
		ClaimsPerSec: float64(len(claimLat)) / elapsed}
	for _, n := range granted {
		if n > 1 {
			r.DoubleGrants++
		}
	}
	r.ClaimP50, r.ClaimP95, r.ClaimP99 = pct(claimLat, 50), pct(claimLat, 95), pct(claimLat, 99)
	r.ReleaseP50, r.ReleaseP95, r.ReleaseP99 = pct(releaseLat, 50), pct(releaseLat, 95), pct(releaseLat, 99)
	return r, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func pct(v []float64, p int) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}
