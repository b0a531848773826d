package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rotd/coordination/registry/backend/backendtest"
	"github.com/rotd/coordination/registry/nats/hub"
)

// cmdFreePort sets VAR to a free loopback port.
func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport VAR")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	ts.Setenv(args[0], strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	l.Close()
}

// cmdSilentPort listens on a free loopback port for the script and never
// answers: a connection is made (the kernel accepts it) and nothing is
// ever said, as a hung server or a firewall that accepts and drops.
func cmdSilentPort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: silentport VAR")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	ts.Defer(func() { l.Close() })
	ts.Setenv(args[0], strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
}

var (
	hubsMu  sync.Mutex
	hubs    int
	running = map[string]*hub.Hub{} // by WORK and VAR, for hubstop
)

// cmdHubStart runs a hub for the script and sets VAR to its URL.
func cmdHubStart(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: hubstart VAR")
	}
	hubsMu.Lock()
	hubs++
	n := hubs
	hubsMu.Unlock()
	h, err := hub.Start(hub.Options{Dir: filepath.Join(ts.Getenv("WORK"), fmt.Sprintf(".hub%d", n)), Listen: "127.0.0.1:0"})
	ts.Check(err)
	ts.Defer(h.Shutdown)
	ts.Check(h.WaitJetStream(60 * time.Second))
	ts.Setenv(args[0], h.URL())
	hubsMu.Lock()
	running[ts.Getenv("WORK")+"\x00"+args[0]] = h
	hubsMu.Unlock()
}

// cmdHubStop stops the hub hubstart VAR started: a backend that becomes
// unreachable under the commands using it.
func cmdHubStop(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: hubstop VAR")
	}
	key := ts.Getenv("WORK") + "\x00" + args[0]
	hubsMu.Lock()
	h := running[key]
	delete(running, key)
	hubsMu.Unlock()
	if h == nil {
		ts.Fatalf("hubstop: no hub started as %s", args[0])
	}
	h.Shutdown()
}

// TestHubDirLocked: two real 'coord hub' processes on one --dir (they
// granted one task to two agents at the same epoch): the second exits 2
// at once, stdout empty, one line naming the first one's pid; once the
// first has stopped, the directory serves a hub again.
func TestHubDirLocked(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "hub")
	ready := filepath.Join(t.TempDir(), "ready")
	first := exec.Command(os.Args[0], "hub", "--dir", dir, "--listen", "127.0.0.1:0")
	first.Env = append(os.Environ(), workerEnv+"=cli", "COORD_TEST_WAITING="+ready)
	var firstErr bytes.Buffer
	first.Stderr = &firstErr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			first.Process.Signal(syscall.SIGTERM)
			first.Wait()
		}
	}
	defer stop()
	if !backendtest.WaitFor(func() bool { _, err := os.Stat(ready); return err == nil }) {
		t.Fatalf("the first hub did not start within %s: %s", backendtest.Timeout, firstErr.String())
	}
	start := time.Now()
	code, stdout, stderr := boundedCoord(t, "", "hub", "--dir", dir, "--listen", "127.0.0.1:0")
	if code != 2 || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") > 1 ||
		!strings.Contains(stderr, fmt.Sprintf("is in use by another hub (pid %d on ", first.Process.Pid)) || !strings.Contains(stderr, dir) {
		t.Fatalf("second hub: exit %d, stdout %q, stderr %q; want exit 2 naming pid %d and %s", code, stdout, stderr, first.Process.Pid, dir)
	}
	t.Logf("refused in %s", time.Since(start))
	stop()
	h, err := hub.Start(hub.Options{Dir: dir, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatalf("after the first hub stopped: %v", err)
	}
	h.Shutdown()
}
