package nats

import (
	"context"
	"errors"
	"testing"
	"time"

	gonats "github.com/nats-io/nats.go"

	"github.com/rotd/coordination/registry/nats/hubtest"
)

// A request in flight when the connection is lost ends then, as
// ambiguous (errConnLost), not at its timeout: a commit whose answer was
// lost in a hub crash reads back whether it landed as soon as the hub is
// back, while the commits that followed it are still few enough to name
// it. (TestHubCrash failed in make test when a worker's lost commit
// waited out its 4 s timeout while the others, reconnected, committed
// more than the 128 names a document carries.)
func TestRequestEndsWhenConnectionLost(t *testing.T) {
	h := hubtest.StartHub(t)
	b := initOpen(t, h.URL()+"/lost")
	ctx := context.Background()
	// A responder that takes the request and never answers.
	silent, err := gonats.Connect(h.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	taken := make(chan struct{}, 1)
	if _, err := silent.Subscribe("coord.test.silent", func(*gonats.Msg) { taken <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
	silent.Flush()
	done := make(chan error, 1)
	go func() { done <- b.w.request(ctx, "coord.test.silent", nil, nil) }()
	select {
	case <-taken:
	case <-time.After(time.Minute):
		t.Fatal("the request never reached the responder")
	}
	h.Shutdown()
	select {
	case err := <-done:
		if !errors.Is(err, errConnLost) || !ambiguous(err) {
			t.Fatalf("the request ended with %v, want the connection's loss (ambiguous)", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the request outlived its connection")
	}
}
