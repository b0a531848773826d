//go:build !race

package main

// Landing figures (docs/GIT.md, "Landing"): throughput of coord land with a
// trivial check, and the time from release to landed with eight agents
// finishing at once under a watching lander. Real coord and git
// processes; run with COORD_BENCH=1 (make bench-land):
//
//	COORD_BENCH=1 go test -count=1 -v -run 'TestLandFigures' ./cmd/coord

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rotd/coordination/registry/backend/backendtest"
)

// landProject is a repository with a coord project whose tasks t0…
// each have one commit of their own on coord/aN (distinct files), claimed
// by aN; released unless hold.
type landProject struct {
	t   *testing.T
	dir string
	env []string
}

// newGitProject is a landing test's repository, not yet committed: git
// on main with a README, coord run with the test's clean environment.
func newGitProject(t *testing.T) *landProject {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	base := t.TempDir()
	p := &landProject{t: t, dir: filepath.Join(base, "repo"),
		env: append(append(cleanEnv(), backendtest.GitEnv...), "HOME="+base)}
	os.MkdirAll(p.dir, 0o755)
	p.git("init", "-q", "-b", "main")
	p.write("README", "x\n")
	return p
}

// seed seeds tasks t0..t(n-1).
func (p *landProject) seed(n int) {
	var seed strings.Builder
	for i := range n {
		fmt.Fprintf(&seed, "{\"id\":\"t%d\",\"title\":\"task %d\"}\n", i, i)
	}
	p.write(".seed.jsonl", seed.String())
	p.coord("seed-tasks", filepath.Join(p.dir, ".seed.jsonl"))
	os.Remove(filepath.Join(p.dir, ".seed.jsonl"))
}

func newLandProject(t *testing.T, n int, release bool) *landProject {
	t.Helper()
	p := newGitProject(t)
	p.git("add", ".")
	p.git("commit", "-q", "-m", "init")
	p.coord("init")
	p.seed(n)
	for i := range n {
		agent := fmt.Sprintf("a%d", i)
		p.git("checkout", "-q", "-b", "coord/"+agent, "main")
		p.coord("--agent", agent, "claim", "--task", fmt.Sprintf("t%d", i))
		p.write(fmt.Sprintf("f%d.txt", i), "work\n")
		p.git("add", ".")
		p.git("commit", "-q", "-m", agent)
		if release {
			p.coord("--agent", agent, "release", fmt.Sprintf("t%d", i), "--summary", "done")
		}
		p.git("checkout", "-q", "main")
	}
	return p
}

func (p *landProject) git(args ...string) string {
	p.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = p.dir, p.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		p.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (p *landProject) coord(args ...string) string {
	p.t.Helper()
	return runCoord(p.t, p.dir, p.env, "", args...)
}

func (p *landProject) write(name, text string) {
	p.t.Helper()
	if err := os.WriteFile(filepath.Join(p.dir, name), []byte(text), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// TestLandFigures measures landing throughput (tasks per minute, check
// `true` and no check) and release-to-landed latency with eight agents
// releasing at once under `coord land --watch`.
func TestLandFigures(t *testing.T) {
	if os.Getenv("COORD_BENCH") == "" {
		t.Skip("a measurement: COORD_BENCH=1")
	}
	const n = 24
	for _, check := range []string{"true", ""} {
		p := newLandProject(t, n, true)
		args := []string{"--agent", "lander", "land"}
		if check != "" {
			args = append(args, "--check", check)
		}
		start := time.Now()
		out := p.coord(args...)
		took := time.Since(start)
		if got := strings.Count(out, "landed "); got != n {
			t.Fatalf("landed %d of %d:\n%s", got, n, out)
		}
		what := "check " + check
		if check == "" {
			what = "no check"
		}
		t.Logf("throughput (%s): %d tasks in %v: %.0f tasks/min, %v per task", what, n, took.Round(time.Millisecond),
			float64(n)/took.Minutes(), (took / n).Round(time.Millisecond))
	}

	// Eight agents release at once; a watching lander lands them.
	const agents = 8
	p := newLandProject(t, agents, false)
	lander := exec.Command("coord", "--agent", "lander", "land", "--watch", "--check", "true")
	lander.Dir, lander.Env = p.dir, p.env
	stdout, err := lander.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := lander.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { lander.Process.Kill(); lander.Wait() }()
	// The lander holds its lease once it is watching.
	landWait(t, 60*time.Second, func() bool { return strings.Contains(p.coord("lease", "list"), "coord-land") }, make(chan error, 1))
	landed := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) > 1 && f[0] == "landed" {
				landed <- f[1]
			}
		}
	}()
	start := time.Now()
	var wg sync.WaitGroup
	released := make([]time.Duration, agents)
	for i := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("coord", "--agent", fmt.Sprintf("a%d", i), "release", fmt.Sprintf("t%d", i), "--summary", "done")
			cmd.Dir, cmd.Env = p.dir, p.env
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("release t%d: %v\n%s", i, err, out)
			}
			released[i] = time.Since(start)
		}()
	}
	var lat []time.Duration
	timeout := time.After(120 * time.Second)
	for len(lat) < agents {
		select {
		case <-landed:
			lat = append(lat, time.Since(start))
		case <-timeout:
			t.Fatalf("%d of %d landed within 120 s", len(lat), agents)
		}
	}
	wg.Wait()
	slices.Sort(released)
	t.Logf("8 agents releasing at once: releases done by %v; landed after %v (first), %v (median), %v (last) from the releases' start",
		released[agents-1].Round(time.Millisecond), lat[0].Round(time.Millisecond), lat[agents/2].Round(time.Millisecond), lat[agents-1].Round(time.Millisecond))
}
