package main

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rotd/coord/registry/nats/hub"
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

var hubs int

// cmdHubStart runs a hub for the script and sets VAR to its URL.
func cmdHubStart(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: hubstart VAR")
	}
	hubs++
	h, err := hub.Start(hub.Options{Dir: filepath.Join(ts.Getenv("WORK"), fmt.Sprintf(".hub%d", hubs)), Listen: "127.0.0.1:0"})
	ts.Check(err)
	ts.Defer(h.Shutdown)
	ts.Check(h.WaitJetStream(60 * time.Second))
	ts.Setenv(args[0], h.URL())
}
