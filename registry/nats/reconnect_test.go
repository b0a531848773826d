package nats_test

import (
	"context"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend/backendtest"
	coordnats "github.com/rotd/coordination/registry/nats"
	"github.com/rotd/coordination/registry/nats/hubtest"
)

// A process that opened the project long ago (watch, schedule, the
// dashboard, coord mcp) reaches the hub again after it restarts. The
// first connection is bounded by ConnectTimeout; that bound once stayed
// on the dialer as an absolute deadline, so every reconnection after it
// failed at once and the process answered "no answer within 4s" forever
// (TestHubCrash hung in make test on a loaded machine, where a third of
// its run took longer than the bound).
func TestReconnectAfterConnectTimeout(t *testing.T) {
	dir := t.TempDir()
	h := hubtest.StartAt(t, dir, "127.0.0.1:0")
	url := newNamespace(t, h, "re")
	s := service(t, open(t, url, coordnats.Options{ConnectTimeout: 200 * time.Millisecond}))
	seed(t, s, "a", "b")
	time.Sleep(400 * time.Millisecond) // the first connection's bound has passed
	h.Shutdown()
	hubtest.StartAt(t, dir, hostPort(h))
	var last error
	defer func() {
		if t.Failed() {
			t.Logf("the last attempt: %v", last)
		}
	}()
	backendtest.Wait(t, "a claim through the old connection after the restart", func() bool {
		tk, err := claimTask(s, context.Background(), app.ClaimRequest{Agent: coord.Agent{ID: "x"}})
		last = err
		return err == nil && tk != nil
	})
}
