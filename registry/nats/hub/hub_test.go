package hub_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/nats/hub"
)

// A port another process listens on: Start refuses with one line naming
// the address and the flag that chooses another (not a wait for its 30 s
// bound ending in a guess), and the directory is left usable.
func TestPortTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		opts hub.Options
		flag string
	}{
		{"clients", hub.Options{Dir: dir, Listen: addr}, "--listen"},
		{"routes", hub.Options{Dir: dir, Listen: "127.0.0.1:0", Cluster: "c", ClusterListen: addr}, "--cluster-listen"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, err := hub.Start(c.opts)
			if err == nil {
				h.Shutdown()
				t.Fatalf("started on a taken port %s", addr)
			}
			msg := err.Error()
			if coord.CodeOf(err) != coord.CodeIO || strings.ContainsAny(msg, "\n\r") ||
				!strings.Contains(msg, "address already in use") || !strings.Contains(msg, strings.Split(addr, ":")[1]) || !strings.Contains(msg, c.flag) {
				t.Fatalf("exit %d, %q: want one line naming the port, the cause and %s", coord.CodeOf(err), msg, c.flag)
			}
		})
	}
	h, err := hub.Start(hub.Options{Dir: dir, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatalf("the directory after the refusals: %v", err)
	}
	h.Shutdown()
}

// A store the server cannot use (a file where its directory goes): Start
// refuses at once with the server's reason and the directory to check,
// and the file is left as it was.
func TestStoreUnusable(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "jetstream")
	if err := os.WriteFile(store, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := hub.Start(hub.Options{Dir: dir, Listen: "127.0.0.1:0"})
	if err == nil {
		h.Shutdown()
		t.Fatal("started on a store that is a file")
	}
	msg := err.Error()
	if coord.CodeOf(err) != coord.CodeIO || strings.ContainsAny(msg, "\n\r") ||
		!strings.Contains(msg, "Can't start JetStream") || !strings.Contains(msg, dir) {
		t.Fatalf("exit %d, %q: want one line with the server's reason and %s", coord.CodeOf(err), msg, dir)
	}
	if data, err := os.ReadFile(store); err != nil || string(data) != "mine" {
		t.Fatalf("the file in the way: %q %v", data, err)
	}
}

// One directory serves one hub: a second hub on it is refused at once
// (exit 2) naming the first one's pid and host, and starts once the
// first has stopped. (The CLI's two-process case: TestHubDirLocked in
// cmd/coord.)
func TestOneHubPerDir(t *testing.T) {
	dir := t.TempDir()
	first, err := hub.Start(hub.Options{Dir: dir, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := hub.Start(hub.Options{Dir: dir, Listen: "127.0.0.1:0"})
	if err == nil {
		second.Shutdown()
		first.Shutdown()
		t.Fatal("a second hub started on the same directory")
	}
	msg := err.Error()
	host, _ := os.Hostname()
	if coord.CodeOf(err) != coord.CodeIO || strings.ContainsAny(msg, "\n\r") || !strings.Contains(msg, dir) ||
		!strings.Contains(msg, fmt.Sprintf("pid %d on %s", os.Getpid(), host)) {
		t.Fatalf("exit %d, %q: want one line naming %s and pid %d", coord.CodeOf(err), msg, dir, os.Getpid())
	}
	first.Shutdown()
	first.Shutdown() // safe twice
	again, err := hub.Start(hub.Options{Dir: dir, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatalf("after the first hub stopped: %v", err)
	}
	again.Shutdown()
}
