package nats_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend/backendtest"
	coordnats "github.com/rotd/coordination/registry/nats"
	"github.com/rotd/coordination/registry/nats/hub"
	"github.com/rotd/coordination/registry/nats/hubtest"
)

// startHub runs a single-node hub on a free loopback port in a temporary
// directory for the test.
func startHub(t testing.TB) *hub.Hub { return hubtest.StartHub(t) }

// newNamespace lays a project down in namespace ns of the hub and
// returns its URL.
func newNamespace(t testing.TB, h *hub.Hub, ns string) string {
	t.Helper()
	return backendtest.Init(t, backendtest.Options{URL: h.URL() + "/" + ns}).URL
}

func open(t testing.TB, url string, opt coordnats.Options) *coordnats.Backend {
	t.Helper()
	b, err := coordnats.Open(context.Background(), url, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func service(t testing.TB, b coord.Backend) *app.Service {
	t.Helper()
	s, err := app.New(context.Background(), b, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func seed(t testing.TB, s *app.Service, ids ...string) {
	t.Helper()
	var batch []coord.SeedLine
	for _, id := range ids {
		batch = append(batch, coord.SeedLine{Task: &coord.Task{ID: id, Title: "task " + id, Status: coord.Unclaimed}})
	}
	if _, err := s.Seed(context.Background(), app.SeedRequest{Name: "test", Batch: batch}); err != nil {
		t.Fatal(err)
	}
}

// claimTask is Service.Claim's task (nil: nothing eligible).
func claimTask(s *app.Service, ctx context.Context, r app.ClaimRequest) (*coord.Task, error) {
	res, err := s.Claim(ctx, r)
	return res.Task, err
}

// hostPort is the HOST:PORT a hub listens on, to restart it there.
func hostPort(h *hub.Hub) string { return strings.TrimPrefix(h.URL(), "nats://") }
