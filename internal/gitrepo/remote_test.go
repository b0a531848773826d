package gitrepo

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

func TestPushOutcome(t *testing.T) {
	refused := gitRun{stdout: []byte("To git://h/r.git\n!\tabc:refs/heads/main\t[rejected] (stale info)\nDone\n"), code: 1}
	if !rejected(refused) || pushStatus(refused) != "[rejected] (stale info)" {
		t.Fatalf("a refused push: rejected %v, status %q", rejected(refused), pushStatus(refused))
	}
	if rejected(gitRun{stdout: []byte("To git://h/r.git\n \tabc:refs/heads/main\t[up to date]\nDone\n")}) {
		t.Fatal("an accepted push read as refused")
	}
	if got := missingRef("fatal: couldn't find remote ref refs/heads/task/7"); got != "refs/heads/task/7" {
		t.Fatalf("missingRef = %q", got)
	}
	if missingRef("fatal: unable to connect to 127.0.0.1:") != "" {
		t.Fatal("a connection failure read as a missing ref")
	}
}

// TestFetchPushFileRemote: over a file:// remote, a fetch leaves out a
// branch the remote lacks, a push sets a branch, the target moves by
// compare-and-swap only from the commit expected, and a remote that is
// gone is one CodeIO error naming it.
func TestFetchPushFileRemote(t *testing.T) {
	needGit(t)
	ctx := context.Background()
	src := newRepo(t)
	base := t.TempDir()
	gitT(t, base, "clone", "-q", "--bare", src, "r.git")
	dir := filepath.Join(t.TempDir(), "c")
	gitT(t, filepath.Dir(dir), "clone", "-q", "file://"+filepath.Join(base, "r.git"), dir)
	r := New(dir)
	tip, err := r.Fetch(ctx, "origin", "main", []string{"refs/heads/task/none"})
	if err != nil || tip != gitT(t, src, "rev-parse", "main") {
		t.Fatalf("Fetch = %q, %v", tip, err)
	}
	head := taskCommit(t, dir, tip, 1)
	if err := r.Push(ctx, "origin", "task/1", head); err != nil {
		t.Fatal(err)
	}
	if _, err := r.PushTarget(ctx, "origin", "main", head, head); !errors.Is(err, ErrRejected) {
		t.Fatalf("a push from a commit main is not at: %v, want ErrRejected", err)
	}
	if _, err := r.PushTarget(ctx, "origin", "main", head, tip); err != nil {
		t.Fatal(err)
	}
	if got := gitT(t, filepath.Join(base, "r.git"), "rev-parse", "main"); got != head {
		t.Fatalf("the remote's main is %s, want %s", got, head)
	}
	if got := gitT(t, dir, "rev-parse", "main"); got != head {
		t.Fatalf("the local main did not follow: %s", got)
	}
	gitT(t, dir, "remote", "set-url", "origin", "file://"+filepath.Join(base, "gone.git"))
	_, err = r.Fetch(ctx, "origin", "main", nil)
	if !errors.Is(err, app.ErrRemoteUnreachable) || coord.CodeOf(err) != coord.CodeIO {
		t.Fatalf("a remote gone: %v, want CodeIO wrapping ErrRemoteUnreachable", err)
	}
}
