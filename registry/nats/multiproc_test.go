//go:build !race

// The tests that start many processes (agents racing on one hub, a hub
// SIGKILLed mid-run, a holder SIGSTOPped): the race detector cannot see
// across processes and slows each about tenfold, so they are built only
// without it, and make test's procs pass runs them (Makefile).

package nats_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	rotdtemplate "github.com/rotd/coordination"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend/backendtest"
	coordnats "github.com/rotd/coordination/registry/nats"
)

type worker struct {
	cmd *exec.Cmd
	out syncBuffer
}

// syncBuffer is a bytes.Buffer a process writes while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func startWorkers(t *testing.T, url string, n int) []*worker {
	t.Helper()
	var ws []*worker
	for i := 0; i < n; i++ {
		w := &worker{cmd: exec.Command(os.Args[0], "-test.run=^$")}
		w.cmd.Env = append(os.Environ(), helperEnv+"=worker", "COORD_NATS_URL="+url, fmt.Sprintf("COORD_AGENT=w%02d", i))
		w.cmd.Stdout, w.cmd.Stderr = &w.out, &w.out
		if err := w.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	return ws
}

// grant is one acknowledged claim.
type grant struct {
	agent, task string
	epoch       int64
	released    bool
}

// checkGrants waits for the workers and checks what they were told
// against the registry: no task granted twice, no epoch given twice,
// every acknowledged claim (and release) present.
func checkGrants(t *testing.T, ws []*worker, s *app.Service, tasks int) {
	t.Helper()
	outs := map[string]string{}
	for i, w := range ws {
		if err := w.cmd.Wait(); err != nil {
			t.Errorf("worker %d: %v\n%s", i, err, w.out.String())
		}
		outs[fmt.Sprintf("w%02d", i)] = w.out.String()
	}
	checkOutputs(t, outs, s, tasks)
}

// checkOutputs checks what each agent printed against the registry.
func checkOutputs(t *testing.T, outs map[string]string, s *app.Service, tasks int) {
	t.Helper()
	byTask := map[string]*grant{}
	epochs := map[int64]string{}
	errs := 0
	for agent, out := range outs {
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) < 3 {
				continue
			}
			switch f[0] {
			case "claimed":
				ep, _ := strconv.ParseInt(f[2], 10, 64)
				if g := byTask[f[1]]; g != nil {
					t.Errorf("task %s granted twice: to %s (epoch %d) and %s (epoch %d)", f[1], g.agent, g.epoch, agent, ep)
				}
				if other, dup := epochs[ep]; dup {
					t.Errorf("epoch %d given twice: %s and %s", ep, other, agent+"/"+f[1])
				}
				byTask[f[1]] = &grant{agent: agent, task: f[1], epoch: ep}
				epochs[ep] = agent + "/" + f[1]
			case "released":
				if g := byTask[f[1]]; g != nil {
					g.released = true
				}
			case "error":
				errs++
			}
		}
	}
	if len(byTask) != tasks {
		t.Errorf("%d tasks granted, want %d", len(byTask), tasks)
	}
	all, err := s.Tasks(context.Background(), app.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range all {
		g := byTask[tk.ID]
		switch {
		case g == nil:
			t.Errorf("task %s (%s, %s, epoch %d) was never granted by an answer", tk.ID, tk.Status, tk.ClaimedBy, tk.Epoch)
		case tk.ClaimedBy != g.agent || tk.Epoch != g.epoch:
			t.Errorf("task %s: registry says %s at epoch %d, %s was told epoch %d", tk.ID, tk.ClaimedBy, tk.Epoch, g.agent, g.epoch)
		case g.released && tk.Status != coord.Done:
			t.Errorf("task %s: released by an answer, but %s", tk.ID, tk.Status)
		}
	}
	t.Logf("%d grants, %d distinct epochs, %d errors retried", len(byTask), len(epochs), errs)
}

func seedN(t *testing.T, s *app.Service, n int) {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = strconv.Itoa(i + 1)
	}
	seed(t, s, ids...)
}

// 16 processes claim and release against one hub: no task granted twice,
// no epoch repeated, every acknowledged claim present afterwards.
func TestMultiProcessClaims(t *testing.T) {
	h := startHub(t)
	url := newNamespace(t, h, "race")
	s := service(t, open(t, url, coordnats.Options{}))
	const tasks = 160
	seedN(t, s, tasks)
	checkGrants(t, startWorkers(t, url, 16), s, tasks)
}

// hubProc is a hub in a process of its own.
type hubProc struct {
	cmd *exec.Cmd
	url string
}

func startHubProc(t *testing.T, dir, listen string) *hubProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=hub", "COORD_NATS_DIR="+dir, "COORD_NATS_LISTEN="+listen)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "URL ") {
		cmd.Process.Kill()
		t.Fatalf("hub: %q %v", line, err)
	}
	p := &hubProc{cmd: cmd, url: strings.TrimSpace(strings.TrimPrefix(line, "URL "))}
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	return p
}

// SIGKILL the hub process mid-run and restart it on the same directory:
// every claim a worker got an answer for is still there.
func TestHubCrash(t *testing.T) {
	dir := t.TempDir()
	hp := startHubProc(t, dir, "127.0.0.1:0")
	listen := strings.TrimPrefix(hp.url, "nats://")
	url := hp.url + "/crash"
	ctx := context.Background()
	{
		_, _, err := coordnats.Init(ctx, url, rotdtemplate.Coordination(), coordnats.Options{})
		if err != nil {
			t.Fatal(err)
		}
	}
	seeder := service(t, open(t, url, coordnats.Options{}))
	const tasks = 120
	seedN(t, seeder, tasks)
	ws := startWorkers(t, url, 8)
	// Kill it once a third of the work was answered.
	backendtest.Wait(t, "claims before the crash", func() bool {
		n := 0
		for _, w := range ws {
			n += strings.Count(w.out.String(), "released ")
		}
		return n >= tasks/3
	})
	hp.cmd.Process.Signal(syscall.SIGKILL)
	hp.cmd.Wait()
	startHubProc(t, dir, listen)
	checkGrants(t, ws, service(t, open(t, url, coordnats.Options{})), tasks)
}

// A holder stopped (SIGSTOP) past stale_after is swept, its task given to
// another agent at a new epoch, and its late release at its old epoch
// exits 6, changing nothing.
func TestFencedHolder(t *testing.T) {
	h := startHub(t)
	url := newNamespace(t, h, "fence")
	b := open(t, url, coordnats.Options{})
	if err := b.ReplaceConfig(context.Background(), []byte(`{"stale_after":"2s","sweep_on_claim":false}`)); err != nil {
		t.Fatal(err)
	}
	s := service(t, open(t, url, coordnats.Options{}))
	seed(t, s, "1")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=holder", "COORD_NATS_URL="+url, "COORD_AGENT=sleepy")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	r := bufio.NewReader(stdout)
	line, _ := r.ReadString('\n')
	var id string
	var epoch int64
	if _, err := fmt.Sscanf(line, "claimed %s %d", &id, &epoch); err != nil {
		t.Fatalf("holder: %q", line)
	}
	cmd.Process.Signal(syscall.SIGSTOP)
	ctx := context.Background()
	backendtest.Wait(t, "the sweep to free the stopped holder's task", func() bool {
		freed, err := s.Sweep(ctx, app.SweepRequest{})
		return err == nil && len(freed) == 1
	})
	got, err := claimTask(s, ctx, app.ClaimRequest{Agent: coord.Agent{ID: "fresh"}})
	if err != nil || got == nil || got.Epoch <= epoch {
		t.Fatalf("reclaim: %+v %v", got, err)
	}
	cmd.Process.Signal(syscall.SIGCONT)
	fmt.Fprintln(stdin, "go")
	line, _ = r.ReadString('\n')
	if !strings.HasPrefix(line, "release 6 ") {
		t.Fatalf("late release: %q", line)
	}
	cmd.Wait()
	all, _ := s.Tasks(ctx, app.ListRequest{})
	if all[0].ClaimedBy != "fresh" || all[0].Status != coord.Claimed || all[0].Epoch != got.Epoch {
		t.Fatalf("after the late release: %+v", all[0])
	}
}
