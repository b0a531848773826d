//go:build !race

package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend/backendtest"
)

// TestLandLeaseOtherNamespace, on files and on a hub: a land lease held
// by a lander in another pid namespace on this host (its meta as
// landerMeta records it there: this hostname and boot, another pid
// namespace, a pid this process cannot see) is not freed by the next
// `coord land`: it exits 3 naming the holder, lands nothing and leaves
// the lease in place. The same lease recorded from this namespace, its
// pid gone, is freed at once ("that lander is gone") and the task lands.
// Against the build that judged by the hostname and the pid alone, the
// other namespace's lease is freed and the task lands beside its live
// lander.
func TestLandLeaseOtherNamespace(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	if !procIdentity().ok() {
		t.Skip("/proc does not show this process's pid namespace")
	}
	for _, engine := range []string{"file", "nats"} {
		t.Run(engine, func(t *testing.T) {
			base := t.TempDir()
			env := append(append(cleanEnv(), backendtest.GitEnv...), "HOME="+base)
			o := backendtest.Options{Root: filepath.Join(base, "repo")}
			if engine == "nats" {
				url := natsProject(t, "land")
				env = append(env, "COORD_BACKEND="+url)
				o = backendtest.Options{URL: url}
			}
			repo := doneTaskRepo(t, base, env)
			p := backendtest.NewProject(t, o)
			ctx := context.Background()
			leases := p.Backend.Leases()
			hold := func(meta map[string]string) coord.Lease {
				t.Helper()
				l, err := leases.Acquire(ctx, coord.LeaseRequest{Name: coord.LandLease, Holder: "ghost", TTL: app.LandLeaseTTL, Meta: meta})
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			meta := landerMeta()
			meta["pid"] = strconv.Itoa(deadPid(t))
			other := map[string]string{}
			for k, v := range meta {
				other[k] = v
			}
			other["pidns"] = "pid:[4026599999]"

			l := hold(other)
			cmd := exec.Command("coord", "--agent", "lander2", "land", "--check", "true")
			cmd.Dir, cmd.Env = repo, env
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); !exitedWith(err, 3) || !strings.Contains(errb.String(), "ghost") {
				t.Fatalf("land beside another namespace's lander: %v\n%s%s", err, out.String(), errb.String())
			}
			if strings.Contains(out.String(), "landed") {
				t.Fatalf("landed beside a live lander: %s", out.String())
			}
			ls, err := leases.List(ctx)
			if err != nil || len(ls) != 1 || ls[0].Holder != "ghost" {
				t.Fatalf("the other namespace's lease: %+v, %v", ls, err)
			}
			for _, tk := range lsTasks(t, runCoord(t, repo, env, "", "ls", "--json")) {
				if tk.LandedCommit != "" {
					t.Fatalf("task %s recorded landed", tk.ID)
				}
			}

			if err := leases.Release(ctx, l.Name, l.Holder, l.Epoch); err != nil {
				t.Fatal(err)
			}
			hold(meta)
			if got := runCoord(t, repo, env, "", "--agent", "lander2", "land", "--check", "true"); !strings.Contains(got, "landed t1 on main") {
				t.Fatalf("land after a lander of this namespace died: %s", got)
			}
			if log := runCoord(t, repo, env, "", "log", "-n", "0"); !strings.Contains(log, "freed lease "+coord.LandLease+" of ghost") || !strings.Contains(log, "that lander is gone") {
				t.Fatalf("the log does not say the dead lander's lease was freed:\n%s", log)
			}
		})
	}
}
