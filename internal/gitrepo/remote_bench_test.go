package gitrepo

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gitDaemon serves the bare repositories under base over git:// on a
// free loopback port (pushes allowed) until the test ends, and returns
// its base URL.
func gitDaemon(tb testing.TB, base string) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
		"--base-path="+base, "--listen=127.0.0.1", fmt.Sprintf("--port=%d", port))
	if err := cmd.Start(); err != nil {
		tb.Skip("no git daemon:", err)
	}
	tb.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url := fmt.Sprintf("git://127.0.0.1:%d", port)
	for i := 0; ; i++ {
		if exec.Command("git", "ls-remote", url+"/r.git").Run() == nil {
			return url
		}
		if i == 600 { // a minute: generous on a loaded machine
			tb.Fatal("git daemon did not answer in a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// remoteClone makes a bare repository r.git under a temporary base (from
// a fresh repository), serves it (git daemon), and returns a clone of it
// with origin pointing there.
func remoteClone(tb testing.TB) (clone string) {
	src := newRepo(tb)
	base := tb.TempDir()
	gitT(tb, base, "clone", "-q", "--bare", src, "r.git")
	url := gitDaemon(tb, base)
	clone = filepath.Join(tb.TempDir(), "c")
	gitT(tb, filepath.Dir(clone), "clone", "-q", url+"/r.git", clone)
	gitT(tb, clone, "config", "user.email", "t@example.com")
	gitT(tb, clone, "config", "user.name", "t")
	return clone
}

// taskCommit makes a commit on top of parent adding one file of its
// own (through a temporary index: no worktree touched), and returns it.
func taskCommit(tb testing.TB, dir, parent string, i int) string {
	tb.Helper()
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(tb.TempDir(), "index")}
	blob := gitEnvIn(tb, dir, env, fmt.Sprintf("task %d\n", i), "hash-object", "-w", "--stdin")
	gitEnvIn(tb, dir, env, "", "read-tree", parent)
	gitEnvIn(tb, dir, env, "", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+fmt.Sprintf("task%d.txt", i))
	tree := gitEnvIn(tb, dir, env, "", "write-tree")
	return gitEnvIn(tb, dir, env, "", "commit-tree", tree, "-p", parent, "-m", fmt.Sprintf("task %d", i))
}

func gitEnvIn(tb testing.TB, dir string, env []string, stdin string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// BenchmarkLanding measures one landing's git side, a fast-forward of
// a released task's commit: in one repository (read the target, check
// ancestry, update-ref by compare-and-swap) and over a git daemon on
// loopback (fetch the target and the task's branch, check ancestry,
// push --force-with-lease, the local target following). ms/landing is
// the latency; landings/s the throughput of one lander in a row.
func BenchmarkLanding(b *testing.B) {
	needGit(b)
	ctx := context.Background()
	b.Run("one-repository", func(b *testing.B) {
		dir := newRepo(b)
		r := New(dir)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			tip, _ := r.Head(ctx, "refs/heads/main")
			head := taskCommit(b, dir, tip, i)
			b.StartTimer()
			tip, err := r.Head(ctx, "refs/heads/main")
			if err != nil {
				b.Fatal(err)
			}
			if ok, err := r.IsAncestor(ctx, tip, head); err != nil || !ok {
				b.Fatal(err, ok)
			}
			if err := r.MoveRef(ctx, "main", head, tip, "bench"); err != nil {
				b.Fatal(err)
			}
		}
		report(b)
	})
	b.Run("git-daemon", func(b *testing.B) {
		dir := remoteClone(b)
		r := New(dir)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			tip, _ := r.Head(ctx, "refs/remotes/origin/main")
			head := taskCommit(b, dir, tip, i)
			branch := fmt.Sprintf("task/%d", i)
			if err := r.Push(ctx, "origin", branch, head); err != nil { // the release
				b.Fatal(err)
			}
			b.StartTimer()
			tip, err := r.Fetch(ctx, "origin", "main", []string{branch})
			if err != nil {
				b.Fatal(err)
			}
			if ok, err := r.IsAncestor(ctx, tip, head); err != nil || !ok {
				b.Fatal(err, ok)
			}
			if _, err := r.PushTarget(ctx, "origin", "main", head, tip); err != nil {
				b.Fatal(err)
			}
		}
		report(b)
	})
}

func report(b *testing.B) {
	if b.N == 0 || b.Elapsed() == 0 {
		return
	}
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(per.Microseconds())/1000, "ms/landing")
	b.ReportMetric(float64(time.Second)/float64(per), "landings/s")
}

// BenchmarkFetch16 measures the fetch the lander and conflicts make
// at 16 task branches released on the remote: when nothing moved
// (the steady state: every watch pass), and when all 16 moved since the
// last fetch (a new commit on each, pushed from another clone).
func BenchmarkFetch16(b *testing.B) {
	needGit(b)
	ctx := context.Background()
	dir := remoteClone(b)
	other := filepath.Join(b.TempDir(), "o")
	url := gitT(b, dir, "remote", "get-url", "origin")
	gitT(b, filepath.Dir(other), "clone", "-q", url, other)
	o := New(other)
	tip, _ := o.Head(ctx, "refs/heads/main")
	var branches []string
	heads := make([]string, 16)
	for i := range 16 {
		branches = append(branches, fmt.Sprintf("refs/heads/task/%d", i))
		heads[i] = taskCommit(b, other, tip, i)
		if err := o.Push(ctx, "origin", branches[i], heads[i]); err != nil {
			b.Fatal(err)
		}
	}
	r := New(dir)
	if _, err := r.Fetch(ctx, "origin", "main", branches); err != nil {
		b.Fatal(err)
	}
	b.Run("nothing-moved", func(b *testing.B) {
		for range b.N {
			if _, err := r.Fetch(ctx, "origin", "main", branches); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/fetch")
	})
	b.Run("16-moved", func(b *testing.B) {
		for n := range b.N {
			b.StopTimer()
			for i := range 16 {
				heads[i] = taskCommit(b, other, heads[i], 100*(n+1)+i)
				if err := o.Push(ctx, "origin", branches[i], heads[i]); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
			if _, err := r.Fetch(ctx, "origin", "main", branches); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/fetch")
	})
}
