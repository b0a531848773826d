package backend_test

import (
	"github.com/rotd/coordination/registry/backend"
	_ "github.com/rotd/coordination/registry/engines"

	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/nats/hubtest"
)

// views is what docs/MANY-MACHINES.md says reads the same on both sides of a copy,
// as JSON.
func views(t *testing.T, s *app.Service) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	add := func(name string, v any, err error) {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, _ := json.Marshal(v)
		out[name] = string(b)
	}
	tasks, err := s.Tasks(ctx, app.ListRequest{All: true})
	add("ls", tasks, err)
	deps, err := s.Deps(ctx)
	add("deps", deps, err)
	locks, err := s.PathLocks(ctx)
	add("locks", locks, err)
	leases, err := s.Leases(ctx)
	add("lease list", leases, err)
	keys, err := s.KVList(ctx, "")
	add("kv ls", keys, err)
	q, err := s.QuotaShow(ctx)
	add("quota", q, err)
	var lines []string
	_, err = s.LogRead(ctx, 0, func(l string) error { lines = append(lines, l); return nil })
	add("log", lines, err)
	return out
}

func openService(t *testing.T, o backend.Options) (coord.Backend, *app.Service) {
	t.Helper()
	b, err := backend.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	s, err := app.New(context.Background(), b, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return b, s
}

// A project moves from files onto a hub and back losslessly: tasks,
// dependency map, claims with their epochs, path locks, leases, kv,
// quota, log and archive read the same on every side; epochs go on from
// where they were; a destination that holds tasks is refused (exit 3)
// and nothing is written there.
func TestCopyFileNATSFile(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	if _, _, err := backend.Init(ctx, backend.Options{Root: root}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, ".rotd/coordination/dependency_map.json"), []byte(`{"3":["1"]}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(root, ".rotd/coordination/config.json"), []byte(`{"stale_after":"20m","review_gate":false}`+"\n"), 0o644)
	src, s := openService(t, backend.Options{Root: root})
	var batch []coord.SeedLine
	for _, id := range []string{"1", "2", "3", "4", "5"} {
		batch = append(batch, coord.SeedLine{Task: &coord.Task{ID: id, Status: coord.Unclaimed, Title: "task " + id, Files: []string{"src/" + id + "/**"}}})
	}
	if _, err := s.Seed(ctx, app.SeedRequest{Name: "test", Batch: batch}); err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"a", "b", "c"} {
		if _, err := s.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: a}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Release(ctx, app.TaskRef{Agent: coord.Agent{ID: "a"}, TaskID: "1", Epoch: coord.NoEpoch}, "ok"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Archive(ctx, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LockPaths(ctx, "b", []string{"docs/x.md"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AcquireLease(ctx, coord.LeaseRequest{Name: "deploy", Holder: "b", TTL: time.Hour, Meta: map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.KVSet(ctx, "q/1", json.RawMessage(`{"ask":"why"}`), time.Hour, "c", coord.KVCond{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.QuotaAdd(ctx, "a", 1000, 2); err != nil {
		t.Fatal(err)
	}
	want := views(t, s)
	for k, sub := range map[string]string{"locks": "docs/x.md", "lease list": `"deploy"`, "kv ls": `"q/1"`, "deps": `"1"`, "quota": `1000`, "log": "claimed task 4", "ls": `"Status":"done"`} {
		if !strings.Contains(want[k], sub) {
			t.Fatalf("the source's %s lacks %s: %s", k, sub, want[k])
		}
	}

	hub := hubtest.Start(t) + "/moved"
	if _, _, err := backend.Init(ctx, backend.Options{URL: hub}); err != nil {
		t.Fatal(err)
	}
	dst, ds := openService(t, backend.Options{URL: hub})
	res, err := app.Copy(ctx, src, dst)
	if err != nil || res.Tasks != 4 || res.Leases != 1 || res.Keys != 1 || res.Archived != 1 {
		t.Fatalf("copy onto the hub: %+v %v", res, err)
	}
	_, ds = openService(t, backend.Options{URL: hub}) // a fresh process's view
	got := views(t, ds)
	for k := range want {
		if got[k] != want[k] {
			t.Errorf("%s differs after the copy onto the hub:\n file %s\n nats %s", k, want[k], got[k])
		}
	}
	// A second copy into the same namespace: refused, nothing written.
	if _, err := app.Copy(ctx, src, dst); coord.CodeOf(err) != coord.CodeConflict {
		t.Fatalf("copy onto a namespace with tasks: %v", err)
	}
	if again := views(t, ds); again["log"] != got["log"] || again["ls"] != got["ls"] {
		t.Fatal("the refused copy wrote something")
	}
	// Epochs go on from the source's.
	l, err := ds.AcquireLease(ctx, coord.LeaseRequest{Name: "other", Holder: "d", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var srcLeases []coord.Lease
	json.Unmarshal([]byte(want["lease list"]), &srcLeases)
	if l.Epoch <= srcLeases[0].Epoch {
		t.Fatalf("a new lease on the hub got epoch %d, the copied one has %d", l.Epoch, srcLeases[0].Epoch)
	}
	ds.ReleaseLease(ctx, "other", "d", l.Epoch)

	// And back onto files, in a new tree.
	back := t.TempDir()
	if _, _, err := backend.Init(ctx, backend.Options{Root: back}); err != nil {
		t.Fatal(err)
	}
	bb, bs := openService(t, backend.Options{Root: back})
	if _, err := app.Copy(ctx, dst, bb); err != nil {
		t.Fatal(err)
	}
	_, bs = openService(t, backend.Options{Root: back})
	final := views(t, bs)
	got = views(t, ds)
	for k := range got {
		if final[k] != got[k] {
			t.Errorf("%s differs after the copy back:\n nats %s\n file %s", k, got[k], final[k])
		}
	}
	res2, err := bs.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: "e"}})
	var tasks []coord.Task
	json.Unmarshal([]byte(want["ls"]), &tasks)
	for _, tk := range tasks {
		if err != nil || res2.Task == nil || res2.Task.Epoch <= tk.Epoch {
			t.Fatalf("claim after the round trip: %+v %v", res2, err)
		}
	}
}
