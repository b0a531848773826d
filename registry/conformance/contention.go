package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend"
)

// The contention check's worker: the test binary re-executed with these
// variables set (Main dispatches to worker).
const (
	workerEnv     = "CONFORMANCE_WORKER" // the worker's mode: "contend"
	workerURL     = "CONFORMANCE_URL"
	workerAgent   = "CONFORMANCE_AGENT"
	workerScratch = "CONFORMANCE_SCRATCH"
)

// Contention's size: enough processes and claims to race on every step on
// two cores, few enough to take seconds.
const (
	contenders = 4
	contested  = 40
	// handBackPct of holds end in a hand-back (the task is claimed again
	// later, by whoever wins it) instead of a release.
	handBackPct = 30
)

// record is one line a worker prints about what it did.
type record struct {
	Op    string `json:"op"` // claim, release, handback, double, error
	Agent string `json:"agent"`
	Task  string `json:"task,omitempty"`
	Epoch int64  `json:"epoch,omitempty"`
	Err   string `json:"err,omitempty"`
}

// checkContention: workers in separate processes open the project by URL
// and claim, hold, hand back and release until the registry drains. No
// task is ever held by two of them at once, every task is released exactly
// once and claimed once per hold (once more after each hand-back), and
// epochs are unique, grow along every worker's and every task's
// history, and agree with the log.
func checkContention(t *testing.T, e *env) {
	s := e.svc()
	var tasks []*coord.Task
	prio := []coord.Priority{coord.Urgent, coord.High, coord.Medium, coord.Low}
	for i := range contested {
		task := &coord.Task{ID: fmt.Sprintf("c%02d", i), Priority: prio[i%4]}
		switch {
		case i%10 == 3: // some tasks share a conflict group
			task.ConflictGroup = "g" + strconv.Itoa(i%3)
		case i%10 == 7 && i > 10: // some wait for another
			task.Deps = []string{fmt.Sprintf("c%02d", i-10)}
		}
		tasks = append(tasks, task)
	}
	e.seed(s, tasks...)

	scratch := t.TempDir()
	for _, d := range []string{"held", "seq"} {
		ok(t, "scratch", os.Mkdir(filepath.Join(scratch, d), 0o755))
	}
	type proc struct {
		agent    string
		cmd      *exec.Cmd
		out, err bytes.Buffer
	}
	procs := make([]*proc, contenders)
	for i := range procs {
		p := &proc{agent: fmt.Sprintf("w%d", i)}
		p.cmd = exec.Command(os.Args[0], "-test.run=^$")
		p.cmd.Env = append(os.Environ(), workerEnv+"=contend", workerURL+"="+e.p.URL,
			workerAgent+"="+p.agent, workerScratch+"="+scratch)
		p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.err
		ok(t, "start worker", p.cmd.Start())
		procs[i] = p
	}
	var recs []record
	for _, p := range procs {
		done := make(chan error, 1)
		go func() { done <- p.cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("worker %s: %v\n%s", p.agent, err, p.err.String())
			}
		case <-time.After(2 * bound):
			p.cmd.Process.Kill()
			<-done
			t.Fatalf("worker %s still running after %s\n%s", p.agent, 2*bound, p.err.String())
		}
		sc := bufio.NewScanner(&p.out)
		for sc.Scan() {
			var r record
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("worker %s printed %q", p.agent, sc.Text())
			}
			recs = append(recs, r)
		}
	}

	// The workers' own account.
	epochs := map[int64]record{}
	lastOf := map[string]int64{}
	claims := map[string][]int64{} // task -> epochs, sorted
	released := map[string]int{}
	handedBack := map[string]int{}
	for _, r := range recs {
		switch r.Op {
		case "double", "error":
			t.Errorf("worker %s: %s task %s epoch %d: %s", r.Agent, r.Op, r.Task, r.Epoch, r.Err)
		case "claim":
			if prev, dup := epochs[r.Epoch]; dup {
				t.Errorf("epoch %d granted twice: %s to %s and %s to %s", r.Epoch, prev.Task, prev.Agent, r.Task, r.Agent)
			}
			epochs[r.Epoch] = r
			if r.Epoch <= lastOf[r.Agent] {
				t.Errorf("worker %s got epoch %d after %d", r.Agent, r.Epoch, lastOf[r.Agent])
			}
			lastOf[r.Agent] = r.Epoch
			claims[r.Task] = append(claims[r.Task], r.Epoch)
		case "release":
			released[r.Task]++
		case "handback":
			handedBack[r.Task]++
		}
	}
	for _, task := range tasks {
		if released[task.ID] != 1 {
			t.Errorf("task %s released %d times, want once", task.ID, released[task.ID])
		}
		// Claimed once per hold: once, plus once more after each hand-back.
		if n := len(claims[task.ID]); n != handedBack[task.ID]+1 {
			t.Errorf("task %s claimed %d times and handed back %d", task.ID, n, handedBack[task.ID])
		}
		slices.Sort(claims[task.ID])
		// Each task's holds in the order they happened (appended while
		// holding the marker): epochs grow, and they are its claims.
		data, err := os.ReadFile(filepath.Join(scratch, "seq", task.ID))
		if err != nil {
			t.Errorf("task %s: never held: %v", task.ID, err)
			continue
		}
		var seq []int64
		for _, f := range strings.Fields(string(data)) {
			n, _ := strconv.ParseInt(f, 10, 64)
			seq = append(seq, n)
		}
		if !slices.IsSorted(seq) || !slices.Equal(seq, claims[task.ID]) {
			t.Errorf("task %s: held at epochs %v in that order, claimed at %v", task.ID, seq, claims[task.ID])
		}
	}
	final, err := s.Tasks(e.ctx, app.ListRequest{})
	ok(t, "list", err)
	for _, task := range final {
		if task.Status != coord.Done {
			t.Errorf("task %s is %s after the drain", task.ID, task.Status)
		}
	}

	// The log's account agrees.
	claimLine := regexp.MustCompile(`^claimed task (\S+) \(epoch (\d+)\)$`)
	releaseLine := regexp.MustCompile(`^released task (\S+)`)
	logged := map[int64]bool{}
	logReleased := map[string]int{}
	_, err = s.LogRead(e.ctx, 0, func(line string) error {
		le, isEvent := coord.ParseLogLine(line)
		if !isEvent {
			return nil
		}
		if m := claimLine.FindStringSubmatch(le.Message); m != nil {
			n, _ := strconv.ParseInt(m[2], 10, 64)
			r, known := epochs[n]
			if logged[n] || !known || r.Task != m[1] || r.Agent != le.AgentID {
				t.Errorf("log: %q: no such grant by the workers (or logged twice)", line)
			}
			logged[n] = true
		}
		if m := releaseLine.FindStringSubmatch(le.Message); m != nil {
			logReleased[m[1]]++
		}
		return nil
	})
	ok(t, "log read", err)
	if len(logged) != len(epochs) {
		t.Errorf("the log holds %d claims, the workers made %d", len(logged), len(epochs))
	}
	for _, task := range tasks {
		if logReleased[task.ID] != 1 {
			t.Errorf("log: task %s released %d times", task.ID, logReleased[task.ID])
		}
	}
	if len(epochs) < contested {
		t.Errorf("%d claims for %d tasks", len(epochs), contested)
	}
	t.Logf("%d workers, %d tasks: %d claims", contenders, contested, len(epochs))
}

// worker runs one contention worker and returns its exit status.
func worker(mode string) int {
	if mode != "contend" {
		fmt.Fprintf(os.Stderr, "conformance worker: unknown mode %q\n", mode)
		return 2
	}
	agent := os.Getenv(workerAgent)
	scratch := os.Getenv(workerScratch)
	ctx := context.Background()
	enc := json.NewEncoder(os.Stdout)
	say := func(r record) { r.Agent = agent; enc.Encode(r) }
	fail := func(what string, err error) int {
		say(record{Op: "error", Err: what + ": " + err.Error()})
		return 1
	}
	b, err := backend.Open(ctx, backend.Options{URL: os.Getenv(workerURL), Holder: agent})
	if err != nil {
		return fail("open", err)
	}
	defer b.Close()
	s, err := app.New(ctx, b, app.Options{})
	if err != nil {
		return fail("app", err)
	}
	me := coord.Agent{ID: agent}
	for {
		res, err := s.Claim(ctx, app.ClaimRequest{Agent: me})
		if err != nil {
			return fail("claim", err)
		}
		task := res.Task
		if res.Drained {
			return 0
		}
		if task == nil {
			r, err := s.Wait(ctx, app.WaitRequest{Agent: me, Timeout: bound})
			if err != nil {
				return fail("wait", err)
			}
			if r.Status == "drained" {
				return 0
			}
			continue
		}
		say(record{Op: "claim", Task: task.ID, Epoch: task.Epoch})
		ref := app.TaskRef{Agent: me, TaskID: task.ID, Epoch: task.Epoch}
		// Hold it: a marker no second holder could create, and the epoch
		// appended to the task's history while the marker is ours.
		marker := filepath.Join(scratch, "held", task.ID)
		f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if errors.Is(err, fs.ErrExist) {
			say(record{Op: "double", Task: task.ID, Epoch: task.Epoch, Err: "another worker holds it"})
		} else if err != nil {
			return fail("marker", err)
		} else {
			f.Close()
			seq, err := os.OpenFile(filepath.Join(scratch, "seq", task.ID), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			if err != nil {
				return fail("seq", err)
			}
			fmt.Fprintln(seq, task.Epoch)
			seq.Close()
		}
		if _, err := s.Progress(ctx, ref, 50, ""); err != nil {
			return fail("progress "+task.ID, err)
		}
		if err := os.Remove(marker); err != nil {
			return fail("marker", err)
		}
		if rand.IntN(100) < handBackPct {
			if _, err := s.HandBack(ctx, ref, "conformance"); err != nil {
				return fail("hand back "+task.ID, err)
			}
			say(record{Op: "handback", Task: task.ID, Epoch: task.Epoch})
			continue
		}
		if _, err := s.Release(ctx, ref, ""); err != nil {
			return fail("release "+task.ID, err)
		}
		say(record{Op: "release", Task: task.ID, Epoch: task.Epoch})
	}
}
