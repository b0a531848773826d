package nats_test

import (
	"context"
	"testing"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	coordnats "github.com/rotd/coordination/registry/nats"
)

func TestClaimRelease(t *testing.T) {
	h := startHub(t)
	url := newNamespace(t, h, "p1")
	b := open(t, url, coordnats.Options{})
	s := service(t, b)
	ctx := context.Background()
	seed(t, s, "1", "2")
	got, err := claimTask(s, ctx, app.ClaimRequest{Agent: coord.Agent{ID: "a"}})
	if err != nil || got == nil || got.ID != "1" || got.Epoch != 1 {
		t.Fatalf("claim: %+v %v", got, err)
	}
	got2, err := claimTask(s, ctx, app.ClaimRequest{Agent: coord.Agent{ID: "b"}})
	if err != nil || got2 == nil || got2.ID != "2" || got2.Epoch != 2 {
		t.Fatalf("claim: %+v %v", got2, err)
	}
	if _, err := s.Release(ctx, app.TaskRef{Agent: coord.Agent{ID: "a"}, TaskID: "1", Epoch: 1}, "done"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Release(ctx, app.TaskRef{Agent: coord.Agent{ID: "a"}, TaskID: "1", Epoch: 1}, "done"); coord.CodeOf(err) != coord.CodeLost {
		t.Fatalf("second release: %v", err)
	}
	var lines []string
	if _, err := s.LogRead(ctx, 10, func(l string) error { lines = append(lines, l); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 4 {
		t.Fatalf("log: %q", lines)
	}
	ags, err := s.Agents(ctx, 0)
	if err != nil || len(ags) != 2 || !ags[0].Alive {
		t.Fatalf("agents: %+v %v", ags, err)
	}
}
