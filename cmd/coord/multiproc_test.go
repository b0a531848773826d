//go:build !race

// Multi-process tests: the claims that coord makes about atomicity are
// about separate OS processes, each with its own file descriptors and
// flocks, so these tests start the test binary itself as worker processes
// (see workerMain) rather than goroutines. The race detector cannot see
// across processes and slows each about tenfold, so they are built only
// without it, and make test's procs pass runs them (Makefile).

package main

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
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/backend/backendtest"
	"github.com/rotd/coordination/registry/file"
)

var logRE = regexp.MustCompile(`^\[[^\]]+\] (\S+) ▶ (claimed|released) task ([^\s:]+)`)

// TestMultiProcessDrain: eight worker processes drain 240 tasks (120 in
// the default loop) with
// conflict groups, overlapping file patterns and capabilities. Every task is claimed exactly once,
// epochs never repeat, and replaying the log shows no conflict group with
// two claimed tasks, and no two overlapping file sets, at any moment.
//
// Broken build this fails against: Txn.ineligible without the files
// overlap rule (35 overlapping claims seen in the log replay).
func TestMultiProcessDrain(t *testing.T) {
	t.Parallel()
	// 240 tasks in the long tier, 120 in the default loop.
	nTasks, nWorkers := tierScale(120, 240, 240), 8
	group := map[string]string{}
	capOf := map[string]string{}
	files := map[string][]string{}
	var lines []string
	for i := range nTasks {
		id := fmt.Sprintf("t%03d", i)
		task := map[string]any{"id": id, "title": "task " + id, "priority": []string{"urgent", "high", "medium", "low"}[i%4]}
		if i%3 == 0 {
			group[id] = fmt.Sprintf("g%d", i%5)
			task["conflict_group"] = group[id]
		}
		if i%4 == 1 {
			capOf[id] = []string{"go", "ts"}[i%2]
			task["capability"] = capOf[id]
		}
		if i%3 == 1 {
			// Overlapping path patterns: src/pK/** against src/pK/*.go.
			files[id] = []string{fmt.Sprintf("src/p%d/%s", i%4, []string{"**", "*.go", "x.go"}[i%3])}
			task["files"] = files[id]
		}
		if i >= 10 && i%7 == 0 {
			task["deps"] = []string{fmt.Sprintf("t%03d", i-10)}
		}
		b, _ := json.Marshal(task)
		lines = append(lines, string(b))
	}
	root := seedTree(t, lines)

	type worker struct {
		cmd      *exec.Cmd
		out, err *bytes.Buffer
		caps     string
	}
	var ws []worker
	for i := range nWorkers {
		caps := []string{"go", "ts", "go,ts", ""}[i%4]
		cmd, out, errb := startWorker(t, root, "drain", fmt.Sprintf("w%d", i), caps)
		ws = append(ws, worker{cmd, out, errb, caps})
	}
	got := map[string]string{}
	epochs := map[string]string{}
	for i, w := range ws {
		if err := w.cmd.Wait(); err != nil {
			t.Fatalf("worker w%d: %v\n%s", i, err, w.err)
		}
		sc := bufio.NewScanner(w.out)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			id, epoch := f[1], f[2]
			if prev, dup := got[id]; dup {
				t.Errorf("task %s granted twice: to %s and w%d", id, prev, i)
			}
			got[id] = fmt.Sprintf("w%d", i)
			if prev, dup := epochs[epoch]; dup {
				t.Errorf("epoch %s given to both %s and %s", epoch, prev, id)
			}
			epochs[epoch] = id
			if c := capOf[id]; c != "" && !strings.Contains(w.caps, c) {
				t.Errorf("w%d (caps %q) got %s which needs %q", i, w.caps, id, c)
			}
		}
	}
	if len(got) != nTasks {
		t.Fatalf("%d of %d tasks were claimed", len(got), nTasks)
	}
	ls := mustCoord(t, "--root", root, "ls", "--json", "--status", "done")
	if n := strings.Count(ls, `"status":"done"`); n != nTasks {
		t.Fatalf("%d of %d tasks done", n, nTasks)
	}
	// Replay the log: at no moment two claimed tasks in one conflict group.
	logData, err := os.ReadFile(filepath.Join(root, ".rotd", "coordination", "coordination.log"))
	if err != nil {
		t.Fatal(err)
	}
	active := map[string]string{} // group -> task
	held := map[string]bool{}     // claimed tasks with files
	claims := 0
	for _, line := range strings.Split(strings.TrimSpace(string(logData)), "\n") {
		m := logRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		id := m[3]
		g := group[id]
		switch m[2] {
		case "claimed":
			claims++
			for other := range held {
				if coord.AnyOverlap(files[id], files[other]) {
					t.Errorf("%s %v claimed while %s %v (overlapping files) still held", id, files[id], other, files[other])
				}
			}
			if len(files[id]) > 0 {
				held[id] = true
			}
			if g != "" {
				if other := active[g]; other != "" {
					t.Errorf("conflict group %s: %s claimed while %s still held", g, id, other)
				}
				active[g] = id
			}
		case "released":
			delete(held, id)
			if g != "" && active[g] == id {
				delete(active, g)
			}
		}
	}
	if claims != nTasks {
		t.Errorf("log records %d claims, want %d", claims, nTasks)
	}
	mustCoord(t, "--root", root, "doctor")
}

// TestMultiProcessSIGKILL: workers are SIGKILLed at random moments while
// claiming as fast as they can. Whatever instant the kill lands on, the
// registry still parses, no task is held twice, and doctor --repair
// restores every invariant (a lock the registry does not back, from a
// kill between the lock create and the commit, is removed).
//
// A worker is killed a random 0-200 ms after its first claim (or after it
// found nothing left), never after a fixed delay from its start: a slow,
// loaded machine then kills later, not before the worker did anything.
func TestMultiProcessSIGKILL(t *testing.T) {
	t.Parallel()
	var lines []string
	for i := range 1500 {
		lines = append(lines, fmt.Sprintf(`{"id":"k%04d","title":"x"}`, i))
	}
	root := seedTree(t, lines)
	seen := map[string]string{}
	for round := range 6 {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i := range 4 {
			agent := fmt.Sprintf("r%dw%d", round, i)
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), workerEnv+"=hold", "COORD_AGENT="+agent, "COORD_ROOT="+root)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			first := make(chan struct{}) // closed at the first claim or the end of output
			var got []string
			collected := make(chan struct{})
			go func() {
				defer close(collected)
				sc := bufio.NewScanner(out)
				once := sync.OnceFunc(func() { close(first) })
				defer once()
				for sc.Scan() {
					got = append(got, sc.Text())
					once()
				}
			}()
			wg.Add(1)
			go func() {
				defer wg.Done()
				select {
				case <-first:
				case <-time.After(backendtest.Timeout):
					t.Errorf("worker %s claimed nothing within %s", agent, backendtest.Timeout)
				}
				time.Sleep(time.Duration(rand.IntN(200)) * time.Millisecond)
				_ = cmd.Process.Signal(syscall.SIGKILL)
				<-collected
				_ = cmd.Wait()
				mu.Lock()
				defer mu.Unlock()
				for _, l := range got {
					if f := strings.Fields(l); len(f) == 3 {
						if prev, dup := seen[f[1]]; dup {
							t.Errorf("task %s granted to %s and %s", f[1], prev, agent)
						}
						seen[f[1]] = agent
					}
				}
			}()
		}
		wg.Wait()
		// Every file must parse; ls reads the registry strictly.
		mustCoord(t, "--root", root, "ls", "--json")
		code, out, errs := coordIn("--root", root, "doctor", "--repair")
		if code != 0 {
			t.Fatalf("round %d: doctor --repair exit %d:\n%s%s", round, code, out, errs)
		}
	}
	// The registry agrees with what the killed workers were told: every
	// printed claim is claimed by that agent (a kill after the commit but
	// before the print loses only the print).
	var tasks []struct {
		ID        string `json:"id"`
		Status    string `json:"status"`
		ClaimedBy string `json:"claimed_by"`
	}
	if err := json.Unmarshal([]byte(mustCoord(t, "--root", root, "ls", "--json")), &tasks); err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if who, ok := seen[task.ID]; ok && (task.Status != "claimed" || task.ClaimedBy != who) {
			t.Errorf("%s was granted to %s but the registry says %s by %q", task.ID, who, task.Status, task.ClaimedBy)
		}
	}
	if len(seen) == 0 {
		t.Fatal("no worker claimed anything before being killed; the test proved nothing")
	}
	t.Logf("%d claims across 24 killed workers", len(seen))
}

// TestMultiProcessLog, scenario 8: sixteen processes append 150 messages
// each (eight of 80 in the default loop) (100 B to 4 KiB, half of the lines longer than PIPE_BUF) while
// this process forces a rotation every few milliseconds. Every line
// arrives whole, exactly once, in each writer's order, across all the
// rotated files.
//
// Broken build this fails against: Store.AppendLog writing each event
// with its own write(2) outside the log flock, or rotating by
// copy-and-truncate (lines lost between the copy and the truncate).
func TestMultiProcessLog(t *testing.T) {
	t.Parallel()
	// 16 writers of 150 in the long tier, 8 of 80 in the default loop
	// (still half of the lines longer than PIPE_BUF, rotations among them).
	writers, each := tierScale(8, 16, 16), tierScale(80, 150, 150)
	root := seedTree(t, []string{`{"id":"x","title":"x"}`})
	var cmds []*exec.Cmd
	var errs []*bytes.Buffer
	for i := range writers {
		cmd, _, errb := startWorker(t, root, fmt.Sprintf("log:%d", each), fmt.Sprintf("L%02d", i), "")
		cmds = append(cmds, cmd)
		errs = append(errs, errb)
	}
	store, err := file.Open(filepath.Join(root, file.RelDir), file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	done, stop := make(chan struct{}), make(chan struct{})
	rotations := 0
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(3 * time.Millisecond):
			}
			// A clock two days ahead makes every log "yesterday's".
			if name, err := store.Log().Rotate(context.Background(), time.Now().Add(48*time.Hour)); err == nil && name != "" {
				rotations++
			}
		}
	}()
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("writer L%02d: %v: %s", i, err, errs[i])
		}
	}
	close(stop)
	<-done
	files, err := logFiles(filepath.Join(root, file.RelDir))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\] (L\d\d) ▶ (L\d\d)-(\d{3}) (x*) end$`)
	next := map[string]int{}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, file.RelDir, f))
		if os.IsNotExist(err) {
			continue
		}
		for n, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if line == "" || strings.Contains(line, "seeded") {
				continue
			}
			m := re.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("%s line %d torn or interleaved: %.120q", f, n+1, line)
			}
			i, _ := strconv.Atoi(m[3])
			if m[1] != m[2] || i != next[m[1]] || len(m[4]) != logMsgLen(i) {
				t.Fatalf("%s line %d lost, duplicated or damaged: writer %s, message %s-%s (want %d), %d x's", f, n+1, m[1], m[2], m[3], next[m[1]], len(m[4]))
			}
			next[m[1]]++
		}
	}
	for i := range writers {
		if w := fmt.Sprintf("L%02d", i); next[w] != each {
			t.Errorf("writer %s: %d of %d lines", w, next[w], each)
		}
	}
	if rotations < 3 {
		t.Errorf("only %d forced rotations happened; the test proved little", rotations)
	}
	t.Logf("%d lines from %d writers across %d rotations", writers*each, writers, rotations)
}

// logFiles lists a tree's rotated logs oldest first (coordination-DAY.log
// before coordination-DAY.1.log, .2 …), then the current log.
func logFiles(dir string) ([]string, error) {
	rotated, err := filepath.Glob(filepath.Join(dir, "coordination-*.log"))
	if err != nil {
		return nil, err
	}
	key := func(p string) (string, int) {
		core := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "coordination-"), ".log")
		day, seq, _ := strings.Cut(core, ".")
		n, _ := strconv.Atoi(seq)
		return day, n
	}
	sort.Slice(rotated, func(i, j int) bool {
		di, ni := key(rotated[i])
		dj, nj := key(rotated[j])
		return di < dj || di == dj && ni < nj
	})
	var out []string
	for _, p := range rotated {
		out = append(out, filepath.Base(p))
	}
	return append(out, file.LogFile), nil
}

// TestAgentIDCreateRace: processes that all need an identity at once,
// with no .rotd/agent_id yet, end up with one id between them: the
// create race is lost by all but one, and the losers read the winner's id
// (within agentIDTries rounds, never by recursion).
func TestAgentIDCreateRace(t *testing.T) {
	t.Parallel()
	const procs, rounds = 8, 4
	var lines []string
	for i := 0; i < procs*rounds; i++ {
		lines = append(lines, fmt.Sprintf(`{"id":"t%d"}`, i))
	}
	root := seedTree(t, lines)
	idFile := filepath.Join(root, ".rotd", "agent_id")
	env := []string{}
	for _, v := range os.Environ() {
		if !strings.HasPrefix(v, "COORD_AGENT=") && !strings.HasPrefix(v, "ROTD_AGENT_ID=") {
			env = append(env, v)
		}
	}
	for round := 0; round < rounds; round++ {
		os.Remove(idFile)
		var cmds []*exec.Cmd
		var outs []*bytes.Buffer
		for p := 0; p < procs; p++ {
			cmd := cliProcess("--root", root, "claim")
			cmd.Env = append(append([]string(nil), env...), workerEnv+"=cli")
			cmd.Dir = root
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds, outs = append(cmds, cmd), append(outs, &out)
		}
		for p, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("round %d: claim %d: %v: %s", round, p, err, outs[p])
			}
		}
		b, err := os.ReadFile(idFile)
		if err != nil {
			t.Fatal(err)
		}
		id := strings.TrimSpace(string(b))
		for p, out := range outs {
			if !strings.Contains(out.String(), `"claimed_by":"`+id+`"`) {
				t.Fatalf("round %d: claim %d was not made as %s: %s", round, p, id, out)
			}
		}
	}
}
