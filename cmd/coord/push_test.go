//go:build !race

package main

// Push scheduling end to end with real processes: a scheduler process (or
// two, by mistake), registered agents each running `coord run --inbox`,
// a reviewer among them, the review gate on, and one agent SIGKILLed
// while it holds a task and has work waiting. The log is then replayed to
// check what no single command can: no two conflicting tasks were ever
// held or assigned at once, no task was assigned twice, no task was
// approved by its claimer, and the killed agent's work went to others. The race detector cannot see
// across processes and slows each about tenfold, so this file is built
// only without it, and make test's procs pass runs it (Makefile).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/backend/backendtest"
)

// startCoordProcess starts the test binary as `coord ARGS...` (a real process).
func startCoordProcess(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := cliProcess(args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, &out, &errb
}

// pushTask is a seeded task as the replay needs it.
type pushTask struct {
	group string
	files []string
}

// pushTasks builds n tasks: a third in five conflict groups, a third with
// a directory pattern and a third with a file inside one (so patterns
// overlap across tasks), some with dependencies, mixed priorities.
func pushTasks(n int) ([]string, map[string]pushTask) {
	var lines []string
	info := map[string]pushTask{}
	for i := range n {
		id := fmt.Sprintf("t%02d", i)
		task := map[string]any{"id": id, "priority": []string{"urgent", "high", "medium", "low"}[i%4]}
		var p pushTask
		switch i % 3 {
		case 0:
			p.group = fmt.Sprintf("g%d", i%5)
			task["conflict_group"] = p.group
		case 1:
			p.files = []string{fmt.Sprintf("src/m%d/**", i%4)}
		case 2:
			p.files = []string{fmt.Sprintf("src/m%d/f%d.go", i%4, i)}
		}
		if p.files != nil {
			task["files"] = p.files
		}
		if i%10 == 7 {
			task["deps"] = []string{fmt.Sprintf("t%02d", i-5)}
		}
		info[id] = p
		b, _ := json.Marshal(task)
		lines = append(lines, string(b))
	}
	return lines, info
}

func conflicting(a, b pushTask) bool {
	return a.group != "" && a.group == b.group || coord.AnyOverlap(a.files, b.files)
}

// replayPush checks the log of a push-mode run (backendtest.ReplayPush)
// and returns the last claimer of each task.
func replayPush(t *testing.T, lines []string, info map[string]pushTask) map[string]string {
	t.Helper()
	claimer, problems := backendtest.ReplayPush(lines, func(a, b string) bool { return conflicting(info[a], info[b]) })
	for _, p := range problems {
		t.Error(p)
	}
	return claimer
}

type pushRun struct {
	root  string
	info  map[string]pushTask
	ids   []string
	procs map[string]*exec.Cmd
	errs  map[string]*bytes.Buffer
}

// startPush lays down a push-mode project with the review gate on,
// registers the agents (the first ones implementers, the last a reviewer)
// and starts nSched scheduler processes and one `run --inbox` process per
// agent; cmdOf gives each agent's command.
func startPush(t *testing.T, nTasks int, agents []string, nSched int, cmdOf func(agent string) string) *pushRun {
	t.Helper()
	lines, info := pushTasks(nTasks)
	root := seedTree(t, lines)
	cfg := `{"scheduling":"push","review_gate":true,"stale_after":"5s","beat_interval":"1s"}`
	if err := os.WriteFile(filepath.Join(root, ".rotd", "coordination", "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &pushRun{root: root, info: info, procs: map[string]*exec.Cmd{}, errs: map[string]*bytes.Buffer{}}
	for id := range info {
		r.ids = append(r.ids, id)
	}
	for i, a := range agents {
		role := "implementer"
		if i == len(agents)-1 {
			role = "reviewer"
		}
		mustCoord(t, "--root", root, "--agent", a, "agents", "register", "--role", role)
	}
	for i := range nSched {
		name := fmt.Sprintf("scheduler%d", i)
		cmd, _, errb := startCoordProcess(t, "--root", root, "schedule", "--depth", "2")
		r.procs[name], r.errs[name] = cmd, errb
	}
	for _, a := range agents {
		cmd, _, errb := startCoordProcess(t, "--root", root, "--agent", a, "run", "--inbox", "--wait", "60s", "--beat", "1s", "--", "sh", "-c", cmdOf(a))
		r.procs[a], r.errs[a] = cmd, errb
	}
	return r
}

// registry reads the tasks as `ls --json` prints them.
func (r *pushRun) registry(t *testing.T) []map[string]any {
	t.Helper()
	var tasks []map[string]any
	if err := json.Unmarshal([]byte(mustCoord(t, "--root", r.root, "ls", "--json")), &tasks); err != nil {
		t.Fatal(err)
	}
	return tasks
}

// finish waits for the agents' loops to drain (exit 0), stops the
// schedulers, and checks every task done and the log's replay.
func (r *pushRun) finish(t *testing.T, agents []string, skip string) (map[string]string, []map[string]any) {
	t.Helper()
	for _, a := range agents {
		if a == skip {
			continue
		}
		done := make(chan error, 1)
		go func() { done <- r.procs[a].Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s's run --inbox: %v\n%s", a, err, r.errs[a])
			}
		case <-time.After(90 * time.Second):
			t.Fatalf("%s's run --inbox did not drain in 90 s\n%s\nlog:\n%s", a, r.errs[a], mustCoord(t, "--root", r.root, "log", "-n", "40"))
		}
	}
	for name, cmd := range r.procs {
		if strings.HasPrefix(name, "scheduler") {
			cmd.Process.Signal(os.Interrupt)
			cmd.Wait()
		}
	}
	tasks := r.registry(t)
	for _, task := range tasks {
		if task["status"] != "done" {
			t.Errorf("task %v ended %v", task["id"], task["status"])
		}
		if task["reviewer_id"] == task["claimed_by"] {
			t.Errorf("task %v reviewed by its claimer %v", task["id"], task["claimed_by"])
		}
	}
	lines := strings.Split(strings.TrimSpace(mustCoord(t, "--root", r.root, "log", "-n", "0")), "\n")
	return replayPush(t, lines, r.info), tasks
}

// TestPushScenario: a scheduler, 6 registered agents (one reviewer)
// working through 60 tasks (20 in the default loop) with conflict groups and files by `run
// --inbox`, the review gate on; one agent is SIGKILLed while it holds a
// task and has another waiting. Every task ends done, approved by someone
// other than its claimer; the log shows no two conflicting tasks out at
// once and no task assigned twice; the killed agent's held and waiting
// tasks were finished by others.
//
// Broken builds this fails against: holders() not counting assigned
// tasks (conflicting tasks out at once in the replay); Schedule not
// dropping a stale agent from the pool (its waiting task never done, the
// loops never drain).
func TestPushScenario(t *testing.T) {
	t.Parallel()
	agents := []string{"victim", "a1", "a2", "a3", "a4", "rev"}
	// 60 tasks in the long tier; the default loop's smoke has 20 (the
	// scenario at full size runs on the injected clock in coord/app).
	r := startPush(t, tierScale(20, 60, 60), agents, 1, func(a string) string {
		if a == "victim" {
			return "sleep 120" // holds its first task until killed
		}
		return "sleep 0.0$(($$ % 5))"
	})
	// Kill the victim once it holds a task and has work waiting.
	var held string
	var waiting []string
	if !backendtest.WaitFor(func() bool {
		held, waiting = "", nil
		for _, task := range r.registry(t) {
			if task["claimed_by"] == "victim" && task["status"] == "claimed" {
				held = task["id"].(string)
			}
			if task["assigned_to"] == "victim" && task["status"] == "unclaimed" {
				waiting = append(waiting, task["id"].(string))
			}
		}
		// Its claim's log line is written after the claim's commit: a
		// kill in between would leave the log (which the replay reads)
		// without it. Kill it once the line is there.
		return held != "" && len(waiting) > 0 && strings.Contains(mustCoord(t, "--root", r.root, "log", "-n", "0"), "victim ▶ claimed task "+held+" ")
	}) {
		t.Fatalf("the victim never held a task with work waiting\n%s", mustCoord(t, "--root", r.root, "log", "-n", "40"))
	}
	r.procs["victim"].Process.Kill()
	r.procs["victim"].Wait()
	claimer, _ := r.finish(t, agents, "victim")
	for _, id := range append(waiting, held) {
		if c := claimer[id]; c == "" || c == "victim" {
			t.Errorf("the victim's task %s was last claimed by %q; want another agent", id, c)
		}
	}
	log := mustCoord(t, "--root", r.root, "log", "-n", "0")
	for _, want := range []string{"agent victim left the pool: its heartbeat is stale", "freed stale lock task " + held + " (agent victim)"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q", want)
		}
	}
	t.Logf("victim held %s and had %v waiting; both finished by others", held, waiting)
}

// TestPushTwoSchedulers: two schedulers run at once by mistake; no task is
// ever assigned twice (each round re-reads, under the registry's
// exclusion, what the other committed) and the work still drains.
func TestPushTwoSchedulers(t *testing.T) {
	t.Parallel()
	agents := []string{"a1", "a2", "a3", "a4", "rev"}
	r := startPush(t, tierScale(12, 40, 40), agents, 2, func(string) string { return "true" })
	_, tasks := r.finish(t, agents, "")
	log := mustCoord(t, "--root", r.root, "log", "-n", "0")
	if n := strings.Count(log, "▶ assigned task "); n < len(tasks) {
		t.Fatalf("%d assignments logged for %d tasks", n, len(tasks))
	}
}
