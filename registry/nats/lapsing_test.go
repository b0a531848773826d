package nats_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	gonats "github.com/nats-io/nats.go"

	"github.com/rotd/coordination/coord"
	coordnats "github.com/rotd/coordination/registry/nats"
)

// The leases' and the keys' sweeps drop from storage exactly those past
// their expiry that the server has not dropped yet (the test's clock runs
// ahead of the server's TTL timers), each once, and leave those in force;
// a value damaged by hand stops the sweep with one line naming it.
func TestSweepDropsLapsed(t *testing.T) {
	h := startHub(t)
	url := newNamespace(t, h, "lapse")
	var ahead atomic.Int64
	b := open(t, url, coordnats.Options{Clock: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }})
	ctx := context.Background()
	lease := func(name string) {
		t.Helper()
		if _, err := b.Leases().Acquire(ctx, coord.LeaseRequest{Name: name, Holder: "h", TTL: time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	key := func(k string) {
		t.Helper()
		if _, err := b.KV().Set(ctx, k, json.RawMessage(`"v"`), time.Minute, "h", coord.KVCond{}); err != nil {
			t.Fatal(err)
		}
	}
	lease("a")
	lease("b")
	key("x")
	key("y")
	ahead.Store(int64(2 * time.Minute))
	lease("c")
	key("z")
	sweep := func(what string, s interface {
		Sweep(context.Context) (int, error)
	}, want int) {
		t.Helper()
		if n, err := s.Sweep(ctx); err != nil || n != want {
			t.Fatalf("%s sweep: %d dropped (%v), want %d", what, n, err, want)
		}
	}
	sweep("lease", b.Leases(), 2)
	sweep("key", b.KV(), 2)
	sweep("lease", b.Leases(), 0) // dropped from storage, not only hidden
	sweep("key", b.KV(), 0)
	if ls, err := b.Leases().List(ctx); err != nil || len(ls) != 1 || ls[0].Name != "c" {
		t.Fatalf("leases after the sweep: %+v %v", ls, err)
	}
	if ks, err := b.KV().List(ctx, ""); err != nil || len(ks) != 1 || ks[0].Key != "z" {
		t.Fatalf("keys after the sweep: %+v %v", ks, err)
	}

	nc, err := gonats.Connect(h.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := nc.Request("$KV.coord_lapse.lease."+base64.RawURLEncoding.EncodeToString([]byte("d")), []byte("not json"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	_, err = b.Leases().Sweep(ctx)
	wantOneLine(t, err, coord.CodeIO, "not a lease")
	if ls, err := b.Leases().List(ctx); err == nil {
		t.Fatalf("a damaged lease listed without error: %+v", ls)
	}
}
