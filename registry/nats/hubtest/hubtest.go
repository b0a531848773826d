// Package hubtest starts hubs for tests: a single node on a free
// loopback port in a temporary directory, stopped when the test ends.
package hubtest

import (
	"testing"
	"time"

	"github.com/rotd/coordination/registry/nats/hub"
)

// Start runs a single-node hub for t and returns its URL.
func Start(t testing.TB) string { return StartHub(t).URL() }

// StartHub runs a single-node hub for t.
func StartHub(t testing.TB) *hub.Hub {
	t.Helper()
	return StartAt(t, t.TempDir(), "127.0.0.1:0")
}

// StartAt runs a single-node hub for t keeping its data in dir and
// listening on listen (HOST:PORT; port 0: a free one): a test restarts a
// hub on the same directory and address with it.
func StartAt(t testing.TB, dir, listen string) *hub.Hub {
	t.Helper()
	h, err := hub.Start(hub.Options{Dir: dir, Listen: listen})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Shutdown)
	if err := h.WaitJetStream(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	return h
}
