package conformance

import (
	"slices"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// checkPathLocks: directory and glob locks exclude what they cover, a
// request is granted all or nothing, a task's locks go with it in the
// release's one commit, a stale agent's go with the sweep, and an expired
// lock is free.
func checkPathLocks(t *testing.T, e *env) {
	d := decorate(e.open())
	s := e.service(d)
	held := func() []string {
		list, err := s.PathLocks(e.ctx)
		ok(t, "path locks", err)
		var out []string
		for _, l := range list {
			out = append(out, l.Path+"@"+l.Holder)
		}
		return out
	}
	lock := func(agent string, ttl time.Duration, paths ...string) error {
		_, err := s.LockPaths(e.ctx, agent, paths, ttl)
		return err
	}

	ok(t, "lock a directory", lock("a", 0, "src/pkg"))
	ok(t, "lock a glob", lock("a", 0, "lib/*.go"))
	for _, c := range []struct{ path, names string }{
		{"src/pkg/a.go", "src/pkg"},      // under the directory
		{"src", "src/pkg"},               // a parent of it
		{"src/pkg/deep/er/x", "src/pkg"}, // deep under it
		{"lib/x.go", "lib/*.go"},         // matched by the glob
		{"lib/**", "lib/*.go"},           // a glob overlapping the glob
	} {
		wantCode(t, "b locks "+c.path, lock("b", 0, c.path), coord.CodeConflict, c.names, "a")
	}
	// All or nothing: one refused path refuses the request.
	wantCode(t, "a request with one covered path", lock("b", 0, "docs/x.md", "src/pkg/b.go"), coord.CodeConflict, "src/pkg")
	if got := held(); !slices.Equal(got, []string{"lib/*.go@a", "src/pkg@a"}) {
		t.Fatalf("after refusals: %v", got)
	}
	ok(t, "a neighbour directory", lock("b", 0, "src/pkgx/a.go", "lib/x.md"))
	hits, err := s.Guard(e.ctx, "b", []string{"src/pkg/z.go", "lib/y.go", "README.md"})
	ok(t, "guard", err)
	if len(hits) != 2 || hits[0].Holder != "a" || hits[1].Holder != "a" {
		t.Errorf("guard for b: %+v", hits)
	}
	_, err = s.UnlockPaths(e.ctx, "b", []string{"src/pkg"})
	wantCode(t, "b unlocks a's lock", err, coord.CodeConflict, "src/pkg")
	gone, err := s.UnlockPaths(e.ctx, "a", []string{"lib/*.go"})
	ok(t, "unlock", err)
	if !slices.Equal(gone, []string{"lib/*.go"}) {
		t.Errorf("unlocked %v", gone)
	}
	ok(t, "b locks what a freed", lock("b", 0, "lib/x.go"))

	// A task's locks go with its release, in that one commit.
	e.seed(s, &coord.Task{ID: "t1"}, &coord.Task{ID: "t2"}, &coord.Task{ID: "t3"})
	e1 := e.claim(s, "c", "t1")
	ok(t, "lock for t1", lock("c", 0, "app"))
	e2 := e.claim(s, "c", "t2")
	_, err = s.Release(e.ctx, app.TaskRef{Agent: coord.Agent{ID: "c"}, TaskID: "t2", Epoch: e2}, "")
	ok(t, "release t2", err)
	if !slices.Contains(held(), "app@c") {
		t.Fatalf("releasing t2 freed t1's lock: %v", held())
	}
	before := d.Updates()
	_, err = s.Release(e.ctx, app.TaskRef{Agent: coord.Agent{ID: "c"}, TaskID: "t1", Epoch: e1}, "")
	ok(t, "release t1", err)
	if n := d.Updates() - before; n != 1 {
		t.Errorf("releasing a task took %d transactions, want one", n)
	}
	if slices.Contains(held(), "app@c") {
		t.Errorf("the released task's lock is held: %v", held())
	}

	// A stale agent's locks go with the sweep; an expired lock is free to
	// others at once and dropped by maintenance.
	e.claim(s, "dead", "t3")
	ok(t, "lock for t3", lock("dead", 0, "web"))
	ok(t, "lock with a TTL", lock("brief", time.Minute, "tmp"))
	e.clock.Advance(past)
	freed, err := s.Sweep(e.ctx, app.SweepRequest{Timeout: staleAfter})
	ok(t, "sweep", err)
	if len(freed) != 1 || slices.Contains(held(), "web@dead") {
		t.Errorf("after sweeping dead (%+v): %v", freed, held())
	}
	if slices.Contains(held(), "tmp@brief") {
		t.Errorf("an expired lock is listed: %v", held())
	}
	res, err := s.Maintain(e.ctx, app.MaintainRequest{})
	ok(t, "maintain", err)
	if !slices.Equal(res.Unlocked, []string{"tmp"}) {
		t.Errorf("maintenance dropped %v, want the expired tmp", res.Unlocked)
	}
	ok(t, "lock an expired lock's path", lock("b", 0, "tmp"))
	if got := held(); !slices.Equal(got, []string{"lib/x.go@b", "lib/x.md@b", "src/pkg@a", "src/pkgx/a.go@b", "tmp@b"}) {
		t.Errorf("at the end: %v", got)
	}
}
