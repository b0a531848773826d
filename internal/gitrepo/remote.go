package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// A shared remote (config "remote"): many clones, one target. Fetch
// brings branches into their remote-tracking refs
// (refs/remotes/<remote>/<branch>) and keeps the local target branch a
// fast-forward mirror of the remote's; Push sets a task's branch there;
// PushTarget moves the remote's target by compare-and-swap
// (--force-with-lease on the exact commit expected): a refused push is
// the target moved, never overwritten. Every fetch and push is bounded
// by RemoteTimeout and tried again after short waits (remoteWaits)
// while the remote cannot be reached; credentials are git's own (its
// credential helpers, ssh agent), never prompted for.

// RemoteTimeout bounds one fetch or push.
const RemoteTimeout = 30 * time.Second

// remoteWaits are the pauses between tries of a fetch or push that did
// not reach the remote: about 2 s in all, enough for a server that
// restarts, short enough that a caller says soon that it is down.
var remoteWaits = []time.Duration{200 * time.Millisecond, 600 * time.Millisecond, 1200 * time.Millisecond}

// remoteConfig keeps a fetch or push from hanging on a stalled
// transfer or asking anyone anything.
var remoteConfig = []string{"-c", "http.lowSpeedLimit=1000", "-c", "http.lowSpeedTime=20", "-c", "core.askPass=", "-c", "credential.interactive=false"}

// ErrRejected is what PushTarget wraps when the remote refused the move
// because its target is no longer at the commit expected.
var ErrRejected = errors.New("gitrepo: the remote refused the push")

// RemoteURL is remote's URL as git resolves it, with any password
// masked ("" when git cannot say).
func (r *Repo) RemoteURL(ctx context.Context, remote string) string {
	out, err := r.run(ctx, r.dir, "remote", "get-url", "--end-of-options", remote)
	if err != nil {
		return ""
	}
	u := line(out)
	if p, err := url.Parse(u); err == nil && p.User != nil {
		return p.Redacted()
	}
	return u
}

// unreachable is the one error of a remote that did not answer:
// CodeIO, naming the remote, its URL and the fix, wrapping
// app.ErrRemoteUnreachable.
func (r *Repo) unreachable(ctx context.Context, remote string, err error) error {
	where := remote
	if u := r.RemoteURL(context.WithoutCancel(ctx), remote); u != "" {
		where = fmt.Sprintf("%s (%s)", remote, u)
	}
	why := err.Error()
	var ge *Error
	if errors.As(err, &ge) {
		why = ge.Err.Error()
		if ge.Stderr != "" {
			why = ge.Stderr
		}
	}
	return coord.Wrap(coord.CodeIO, fmt.Errorf("%w: %s", app.ErrRemoteUnreachable, coord.OneLine(why)), "remote %s cannot be reached", where).
		WithHint("check that it is up and that 'git fetch %s' works here; nothing was lost (coord land --watch tries again by itself)", remote)
}

// remote runs git for a fetch or push with the remote settings and
// RemoteTimeout, trying again after remoteWaits while the run fails
// without an answer from the remote (retry says which failures are
// worth another try; a run that timed out is not tried again).
func (r *Repo) remote(ctx context.Context, retry func(gitRun, error) bool, args ...string) (gitRun, error) {
	args = append(append([]string{}, remoteConfig...), args...)
	timeout := max(r.Timeout, RemoteTimeout)
	for i := 0; ; i++ {
		run, err := r.runRemote(ctx, timeout, args...)
		if err == nil && run.code == 0 {
			return run, nil
		}
		if i == len(remoteWaits) || ctx.Err() != nil || !retry(run, err) {
			return run, err
		}
		select {
		case <-time.After(remoteWaits[i]):
		case <-ctx.Done():
			return run, err
		}
	}
}

// runRemote is runInput for a fetch or push, with its message made of
// git's fatal lines joined (git names the host on one line and the
// reason, "Connection refused", on the next).
func (r *Repo) runRemote(ctx context.Context, timeout time.Duration, args ...string) (gitRun, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", r.dir, "-c", "core.quotePath=false", "--no-pager"}, args...)...)
	cmd.Env = append(os.Environ(), gitEnv...)
	cmd.WaitDelay = time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var msg []string
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if l = strings.TrimSpace(l); l != "" && len(msg) < 3 {
			msg = append(msg, l)
		}
	}
	run := gitRun{stdout: stdout.Bytes(), msg: strings.Join(msg, " ")}
	if err == nil {
		return run, nil
	}
	if errors.Is(err, exec.ErrNotFound) {
		return gitRun{}, errNoGit(err)
	}
	var ee *exec.ExitError
	if ctx.Err() == nil && errors.As(err, &ee) && ee.ExitCode() >= 0 {
		run.code = ee.ExitCode()
		return run, nil
	}
	ge := &Error{Args: args, Dir: r.dir, Code: -1, Err: err, Stderr: run.msg}
	if ctx.Err() == context.DeadlineExceeded {
		ge.Err = fmt.Errorf("no answer within %v", timeout)
	}
	return gitRun{}, ge
}

// missingRef is the ref a fetch named and the remote lacks, from git's
// "couldn't find remote ref REF" ("" for another failure).
func missingRef(msg string) string {
	const says = "couldn't find remote ref "
	if i := strings.Index(msg, says); i >= 0 {
		if f := strings.Fields(msg[i+len(says):]); len(f) > 0 {
			return f[0]
		}
	}
	return ""
}

// Fetch brings target and branches (short or full names) from remote
// into their remote-tracking refs in one git fetch, and returns the
// remote's target tip. A branch the remote lacks is left out (its
// remote-tracking ref stays as it was); a target the remote lacks is
// ErrNoRef. The local target branch follows the remote's when it can
// by a fast-forward (MirrorTarget). A remote that does not answer is
// an error wrapping app.ErrRemoteUnreachable.
func (r *Repo) Fetch(ctx context.Context, remote, target string, branches []string) (string, error) {
	want := []string{coord.BranchRef(target)}
	for _, b := range branches {
		if b = coord.BranchRef(b); b != "" && !contains(want, b) {
			want = append(want, b)
		}
	}
	for {
		args := []string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--end-of-options", remote}
		for _, b := range want {
			args = append(args, "+"+b+":"+coord.RemoteRef(remote, b))
		}
		run, err := r.remote(ctx, func(run gitRun, err error) bool { return err == nil && missingRef(run.msg) == "" }, args...)
		if err == nil && run.code == 0 {
			break
		}
		if err == nil {
			if m := missingRef(run.msg); m != "" {
				m = coord.BranchRef(m)
				if m == want[0] {
					return "", fmt.Errorf("%w: remote %s has no branch %s", ErrNoRef, remote, target)
				}
				if i := indexOf(want, m); i > 0 {
					want = append(want[:i], want[i+1:]...)
					continue
				}
			}
			err = &Error{Args: args, Dir: r.dir, Code: run.code, Stderr: run.msg, Err: fmt.Errorf("exit status %d", run.code)}
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", r.unreachable(ctx, remote, err)
	}
	tip, err := r.Head(ctx, coord.RemoteRef(remote, target))
	if err != nil {
		return "", err
	}
	r.MirrorTarget(ctx, target, tip)
	return tip, nil
}

// MirrorTarget moves the local branch target to tip when that is a
// fast-forward (or creates it), bringing its checkouts along
// (SyncCheckouts): people and agents who look at the local target see
// what the remote holds. A local target with commits of its own is left
// as it is (coord reads the remote's through its remote-tracking ref).
func (r *Repo) MirrorTarget(ctx context.Context, target, tip string) []string {
	ref := coord.BranchRef(target)
	local, err := r.Head(ctx, ref)
	if errors.Is(err, ErrNoRef) {
		r.run(ctx, r.dir, "update-ref", "-m", "coord: the remote's target", ref, tip, strings.Repeat("0", len(tip)))
		return nil
	}
	if err != nil || local == tip {
		return nil
	}
	if ok, err := r.IsAncestor(ctx, local, tip); err != nil || !ok {
		return nil
	}
	if err := r.MoveRef(ctx, coord.ShortBranch(ref), tip, local, "coord: fast-forward to the remote's target"); err != nil {
		return nil // moved meanwhile (another coord did it): that one brings the checkouts
	}
	return r.SyncCheckouts(ctx, coord.ShortBranch(ref), local, tip)
}

// Push sets branch (short or full name) on remote to commit, whatever
// it held (the branch of a task belongs to whoever holds the task), and
// its remote-tracking ref with it.
func (r *Repo) Push(ctx context.Context, remote, branch, commit string) error {
	if !isCommitID(commit) {
		return fmt.Errorf("gitrepo: push: %q is not a commit id", commit)
	}
	ref := coord.BranchRef(branch)
	args := []string{"push", "--quiet", "--porcelain", "--no-verify", "--end-of-options", remote, "+" + commit + ":" + ref}
	run, err := r.remote(ctx, func(run gitRun, err error) bool { return err == nil && !rejected(run) }, args...)
	if err == nil && run.code == 0 {
		r.run(ctx, r.dir, "update-ref", "-m", "coord: pushed", coord.RemoteRef(remote, ref), commit)
		return nil
	}
	if err == nil {
		if rejected(run) {
			return fmt.Errorf("%w: %s on %s: %s", ErrRejected, coord.ShortBranch(ref), remote, pushStatus(run))
		}
		err = &Error{Args: args, Dir: r.dir, Code: run.code, Stderr: run.msg, Err: fmt.Errorf("exit status %d", run.code)}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return r.unreachable(ctx, remote, err)
}

// PushTarget moves target on remote from old to new in one
// compare-and-swap (git push --force-with-lease=refs/heads/T:old
// new:refs/heads/T): an error wrapping ErrRejected when the remote's
// target is no longer at old (nothing changed there). On success the
// remote-tracking ref and the local target follow (MirrorTarget); the
// lines are MirrorTarget's.
func (r *Repo) PushTarget(ctx context.Context, remote, target, new, old string) ([]string, error) {
	if !isCommitID(new) || !isCommitID(old) {
		return nil, fmt.Errorf("gitrepo: push: %q and %q are not both commit ids", new, old)
	}
	ref := coord.BranchRef(target)
	args := []string{"push", "--quiet", "--porcelain", "--no-verify", "--force-with-lease=" + ref + ":" + old,
		"--end-of-options", remote, new + ":" + ref}
	run, err := r.remote(ctx, func(run gitRun, err error) bool { return err == nil && !rejected(run) }, args...)
	if err == nil && run.code == 0 {
		r.run(ctx, r.dir, "update-ref", "-m", "coord: landed", coord.RemoteRef(remote, ref), new)
		return r.MirrorTarget(ctx, target, new), nil
	}
	if err == nil {
		if rejected(run) {
			return nil, fmt.Errorf("%w: %s on %s: %s", ErrRejected, target, remote, pushStatus(run))
		}
		err = &Error{Args: args, Dir: r.dir, Code: run.code, Stderr: run.msg, Err: fmt.Errorf("exit status %d", run.code)}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, r.unreachable(ctx, remote, err)
}

// rejected reports whether a push's porcelain output says the remote
// answered and refused a ref ("!" lines: stale info, non-fast-forward,
// a hook's refusal).
func rejected(run gitRun) bool {
	for _, l := range strings.Split(string(run.stdout), "\n") {
		if strings.HasPrefix(l, "!\t") {
			return true
		}
	}
	return false
}

// pushStatus is the first refused ref's summary in a push's porcelain
// output ("[rejected] (stale info)").
func pushStatus(run gitRun) string {
	for _, l := range strings.Split(string(run.stdout), "\n") {
		if f := strings.SplitN(l, "\t", 4); len(f) >= 3 && f[0] == "!" {
			return strings.Join(f[2:], " ")
		}
	}
	return run.msg
}

func contains(list []string, s string) bool { return indexOf(list, s) >= 0 }

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// Fetch is Repo.Fetch: Project is an app.Remote.
func (p *Project) Fetch(ctx context.Context, remote, target string, branches []string) (string, error) {
	return p.r.Fetch(ctx, remote, target, branches)
}

// Push is Repo.Push.
func (p *Project) Push(ctx context.Context, remote, branch, commit string) error {
	return p.r.Push(ctx, remote, branch, commit)
}

var _ app.Remote = (*Project)(nil)

// RemoteLanding is Landing over a shared remote (app.Lander and
// app.Remote): the target read is the remote's, fetched at each read
// (Head of a branch), and moved on the remote by compare-and-swap
// (PushTarget); the merges, checks and temporary worktrees are the
// local clone's.
type RemoteLanding struct {
	*Landing
	remote string
}

var (
	_ app.Lander = (*RemoteLanding)(nil)
	_ app.Remote = (*RemoteLanding)(nil)
)

// NewRemoteLanding returns l landing on remote's branches.
func NewRemoteLanding(l *Landing, remote string) *RemoteLanding {
	return &RemoteLanding{Landing: l, remote: remote}
}

// Head of a branch (refs/heads/B, or its remote-tracking ref) fetches
// it and is the remote's tip; of anything else, the local commit.
func (l *RemoteLanding) Head(ctx context.Context, ref string) (string, error) {
	branch := ""
	switch {
	case strings.HasPrefix(ref, "refs/heads/"):
		branch = ref
	case strings.HasPrefix(ref, "refs/remotes/"+l.remote+"/"):
		branch = coord.BranchRef(strings.TrimPrefix(ref, "refs/remotes/"+l.remote+"/"))
	default:
		return l.Landing.Head(ctx, ref)
	}
	return l.r.Fetch(ctx, l.remote, branch, nil)
}

// Fetch is Repo.Fetch.
func (l *RemoteLanding) Fetch(ctx context.Context, remote, target string, branches []string) (string, error) {
	return l.r.Fetch(ctx, remote, target, branches)
}

// Push is Repo.Push.
func (l *RemoteLanding) Push(ctx context.Context, remote, branch, commit string) error {
	return l.r.Push(ctx, remote, branch, commit)
}

// MoveTarget moves the remote's branch from old to new
// (PushTarget), its refusal as app.ErrTargetMoved; the local target
// follows when it can.
func (l *RemoteLanding) MoveTarget(ctx context.Context, branch, new, old, reason string) error {
	lines, err := l.r.PushTarget(ctx, l.remote, branch, new, old)
	if errors.Is(err, ErrRejected) {
		return fmt.Errorf("%w: %w", app.ErrTargetMoved, err)
	}
	l.warn(lines)
	return err
}
