package nats_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gonats "github.com/nats-io/nats.go"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/backend"
	"github.com/rotd/coordination/registry/backend/backendtest"
	"github.com/rotd/coordination/registry/conformance"
	"github.com/rotd/coordination/registry/nats/hub"
	"github.com/rotd/coordination/registry/nats/hubtest"
)

// TestConformance runs the shared suite against the JetStream engine
// (its checks with real processes run in TestConformanceProcesses).
func TestConformance(t *testing.T) { conformance.Run(t, natsHarness(t)) }

// natsHarness: one embedded hub for the whole run (every write synced, as
// 'coord hub' runs it), a fresh namespace per project, laid down by
// registry/backend.Init and opened by its nats:// URL. Opened on the
// check's clock, the engine shifts its notion of the server's now by that
// clock's offset (registry/nats's Options.Clock), so the checks that move
// time run here as on files (Clocked). Its log is one stream (LogRotates
// false).
func natsHarness(t *testing.T) conformance.Harness {
	h := hubtest.StartHub(t)
	var n atomic.Int64
	return conformance.Harness{
		Name: "nats",
		New: func(t *testing.T) conformance.Project {
			ns := fmt.Sprintf("c%d", n.Add(1))
			url := h.URL() + "/" + ns
			if _, _, err := backend.Init(context.Background(), backend.Options{URL: url}); err != nil {
				t.Fatalf("init %s: %v", url, err)
			}
			return conformance.Project{
				URL:     url,
				Clocked: true,
				Open: func(t *testing.T, clock coord.Clock) coord.Backend {
					b, err := backend.Open(context.Background(), backend.Options{URL: url, Clock: clock})
					if err != nil {
						t.Fatalf("open %s: %v", url, err)
					}
					return b
				},
				Corrupt: func(t *testing.T, part conformance.Part) string {
					key := map[conformance.Part]string{
						conformance.Registry: "registry",
						conformance.KV:       "kv." + enc("k"),
						conformance.Leases:   "lease." + enc("l"),
						conformance.Quota:    "quota",
					}[part]
					nc := natsConn(t, h)
					if part == conformance.Registry {
						backedUp(t, nc, ns)
					}
					// Half a document, as a broken tool would leave it.
					if _, err := nc.Request("$KV.coord_"+ns+"."+key, []byte(`{"version":1,"tas`), 10*time.Second); err != nil {
						t.Fatal(err)
					}
					return url + " key " + key
				},
				Keep: func(t *testing.T, part conformance.Part) func() {
					return natsKeep(t, h, ns, map[conformance.Part]string{conformance.Leases: "lease.", conformance.KV: "kv."}[part])
				},
				Edit: func(t *testing.T, edit func([]byte) []byte) {
					kv := natsBucket(t, h, ns)
					e, err := kv.Get("registry")
					if err != nil {
						t.Fatal(err)
					}
					if _, err := kv.Put("registry", edit(e.Value())); err != nil {
						t.Fatal(err)
					}
				},
				Raw: func(t *testing.T) map[string]string {
					return natsRaw(t, h, ns)
				},
			}
		},
	}
}

func enc(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func natsConn(t *testing.T, h *hub.Hub) *gonats.Conn {
	t.Helper()
	nc, err := gonats.Connect(h.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func natsBucket(t *testing.T, h *hub.Hub, ns string) gonats.KeyValue {
	t.Helper()
	js, err := natsConn(t, h).JetStream()
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue("coord_" + ns)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// natsKeep saves the values of every key under prefix (a lease or kv
// key is a document of its own here) and returns what puts them back as
// they were, deleting the keys written since: a restore of an older copy.
func natsKeep(t *testing.T, h *hub.Hub, ns, prefix string) func() {
	t.Helper()
	kv := natsBucket(t, h, ns)
	values := func() map[string][]byte {
		out := map[string][]byte{}
		keys, err := kv.Keys()
		if err != nil && err != gonats.ErrNoKeysFound {
			t.Fatal(err)
		}
		for _, k := range keys {
			if !strings.HasPrefix(k, prefix) {
				continue
			}
			if e, err := kv.Get(k); err == nil {
				out[k] = e.Value()
			}
		}
		return out
	}
	saved := values()
	return func() {
		for k := range values() {
			if _, ok := saved[k]; !ok {
				if err := kv.Delete(k); err != nil {
					t.Fatal(err)
				}
			}
		}
		for k, v := range saved {
			if _, err := kv.Put(k, v); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// natsRaw: every key of the namespace's bucket but the beats and agent
// descriptions (liveness), with its revision, and the log's and the
// archive's last sequence.
func natsRaw(t *testing.T, h *hub.Hub, ns string) map[string]string {
	t.Helper()
	ctx := context.Background()
	nc := natsConn(t, h)
	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue("coord_" + ns)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	keys, err := kv.Keys()
	if err != nil && err != gonats.ErrNoKeysFound {
		t.Fatal(err)
	}
	for _, k := range keys {
		if strings.HasPrefix(k, "beat.") || strings.HasPrefix(k, "agent.") {
			continue
		}
		e, err := kv.Get(k)
		if err != nil {
			if err == gonats.ErrKeyNotFound {
				continue // expired meanwhile
			}
			t.Fatal(err)
		}
		out[k] = fmt.Sprintf("%d %s", e.Revision(), e.Value())
	}
	for _, s := range []string{"coord_" + ns + "_log", "coord_" + ns + "_archive"} {
		si, err := js.StreamInfo(s, gonats.Context(ctx))
		if err != nil {
			t.Fatal(err)
		}
		out[s] = fmt.Sprint(si.State.LastSeq)
	}
	return out
}

// backedUp waits (up to 60 s) until the backup stream, which the server
// fills by sourcing from the bucket, holds the registry's current
// revision: damage made after that leaves the last good one restorable.
func backedUp(t *testing.T, nc *gonats.Conn, ns string) {
	t.Helper()
	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	subject := "$KV.coord_" + ns + ".registry"
	backendtest.Wait(t, "the backup stream to catch up with the registry", func() bool {
		cur, err := js.GetLastMsg("KV_coord_"+ns, subject)
		if err != nil {
			t.Fatal(err)
		}
		got, err := js.GetLastMsg("coord_"+ns+"_backup", subject)
		return err == nil && string(got.Data) == string(cur.Data)
	})
}
