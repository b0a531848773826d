package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rotd/coordination/coord"
)

// Timeout bounds one git run. The operations here read refs, the index
// or a diff of names: well under a second on any sane repository.
const Timeout = 10 * time.Second

// ErrNotRepo is what a method returns when the directory is not inside a
// git working tree.
var ErrNotRepo = errors.New("gitrepo: not a git repository")

// ErrNoRef is what Head returns for a name that resolves to no commit.
var ErrNoRef = errors.New("gitrepo: no such commit")

// Repo is the git repository around one directory.
type Repo struct {
	dir string
	// Timeout bounds each git run (0: Timeout).
	Timeout time.Duration

	// The top of dir's worktree and the common git dir once git has
	// named them (neither moves under a running command): Top,
	// CommonDir, Place and TopAndCommonDir answer from them or fill them.
	mu     sync.Mutex
	top    string
	common string
}

// known is what git named before ("" when not yet).
func (r *Repo) known() (top, common string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.top, r.common
}

// learn keeps what git named ("" leaves a value as it was).
func (r *Repo) learn(top, common string) {
	r.mu.Lock()
	if top != "" {
		r.top = top
	}
	if common != "" {
		r.common = common
	}
	r.mu.Unlock()
}

// New returns the repository around dir. It runs nothing.
func New(dir string) *Repo { return &Repo{dir: dir} }

// Dir is the directory the Repo was made from.
func (r *Repo) Dir() string { return r.dir }

// Error is a git run that failed: the command, where, and git's first
// line of stderr (or why it did not answer).
type Error struct {
	Args   []string
	Dir    string
	Code   int    // git's exit status; -1 when it did not exit by itself
	Stderr string // git's first line of stderr
	Err    error
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("git %s in %s: %v", strings.Join(e.Args, " "), e.Dir, e.Err)
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// run runs git in dir with args and returns its stdout.
func (r *Repo) run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return r.runWith(ctx, nil, 0, dir, args...)
}

// runWith is run with more environment and, when longer than the Repo's,
// a timeout of its own.
func (r *Repo) runWith(ctx context.Context, env []string, atLeast time.Duration, dir string, args ...string) ([]byte, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = Timeout
	}
	return runGit(ctx, env, max(timeout, atLeast), dir, args...)
}

// exitCode is git's exit status in err (-1: not an exit of git's).
func exitCode(err error) int {
	var ge *Error
	if errors.As(err, &ge) {
		return ge.Code
	}
	return -1
}

func line(out []byte) string { return strings.TrimSpace(string(out)) }

// outLines is git's output a line each (rev-parse answers one per question).
func outLines(out []byte) []string { return strings.Split(strings.TrimRight(string(out), "\n"), "\n") }

// nulList splits -z output into its non-empty entries.
func nulList(out []byte) []string {
	var list []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			list = append(list, p)
		}
	}
	return list
}

// Top is the top directory of the working tree around the Repo's
// directory (its own worktree, for a linked one).
func (r *Repo) Top(ctx context.Context) (string, error) {
	if top, _ := r.known(); top != "" {
		return top, nil
	}
	out, err := r.run(ctx, r.dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", err
	}
	r.learn(line(out), "")
	return line(out), nil
}

// TopAndCommonDir is Top and CommonDir from one git process.
func (r *Repo) TopAndCommonDir(ctx context.Context) (top, common string, err error) {
	if top, common := r.known(); top != "" && common != "" {
		return top, common, nil
	}
	out, err := r.run(ctx, r.dir, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir")
	if err != nil {
		return "", "", err
	}
	ls := outLines(out)
	if len(ls) != 2 {
		return "", "", fmt.Errorf("gitrepo: rev-parse gave %q", out)
	}
	r.learn(ls[0], ls[1])
	return ls[0], ls[1], nil
}

// CommonDir is the repository's common git directory (shared by all its
// worktrees), absolute.
func (r *Repo) CommonDir(ctx context.Context) (string, error) {
	if _, common := r.known(); common != "" {
		return common, nil
	}
	out, err := r.run(ctx, r.dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", err
	}
	r.learn("", line(out))
	return line(out), nil
}

// Branch is the branch checked out in the Repo's worktree (its short
// name), or "" on a detached HEAD.
func (r *Repo) Branch(ctx context.Context) (string, error) {
	out, err := r.run(ctx, r.dir, "symbolic-ref", "--short", "-q", "HEAD")
	if err != nil {
		if exitCode(err) == 1 { // not a symbolic ref: detached
			return "", nil
		}
		return "", err
	}
	return line(out), nil
}

// Head returns the commit id ref names (a branch, a tag, HEAD, an id),
// or ErrNoRef when it names none (an unborn branch, a branch that does
// not exist).
func (r *Repo) Head(ctx context.Context, ref string) (string, error) {
	if ref == "" || strings.HasPrefix(ref, "-") {
		return "", fmt.Errorf("%w: %q", ErrNoRef, ref)
	}
	out, err := r.run(ctx, r.dir, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil {
		if exitCode(err) == 1 {
			return "", fmt.Errorf("%w: %q", ErrNoRef, ref)
		}
		return "", err
	}
	return line(out), nil
}

// MergeBase returns the best common ancestor of a and b, or "" when they
// have none.
func (r *Repo) MergeBase(ctx context.Context, a, b string) (string, error) {
	out, err := r.run(ctx, r.dir, "merge-base", "--end-of-options", a, b)
	if err != nil {
		if exitCode(err) == 1 { // no common ancestor
			return "", nil
		}
		return "", err
	}
	return line(out), nil
}

// IsAncestor reports whether commit a is an ancestor of b (or b itself).
func (r *Repo) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	_, err := r.run(ctx, r.dir, "merge-base", "--is-ancestor", "--end-of-options", a, b)
	switch {
	case err == nil:
		return true, nil
	case exitCode(err) == 1:
		return false, nil
	}
	return false, err
}

// ChangedPaths returns the paths the commits from base to head changed
// (git diff base...head: from their merge base), sorted, each once; a
// renamed file counts under both names.
func (r *Repo) ChangedPaths(ctx context.Context, base, head string) ([]string, error) {
	out, err := r.run(ctx, r.dir, "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv",
		"--relative=", "--end-of-options", base+"..."+head, "--")
	if err != nil {
		return nil, err
	}
	return coord.NormalizeTouched(nulList(out)), nil
}

// Dirty lists what the Repo's worktree holds that no commit does:
// every path with a staged or unstaged change, and every untracked file
// (ignored files aside), as git status names them.
func (r *Repo) Dirty(ctx context.Context) ([]string, error) {
	out, err := r.run(ctx, r.dir, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=none")
	if err != nil {
		return nil, err
	}
	return parseStatus(out), nil
}

// parseStatus reads git status --porcelain=v1 -z: "XY path", and for a
// rename or copy the original path as the next entry.
func parseStatus(out []byte) []string {
	var paths []string
	entries := strings.Split(string(out), "\x00")
	for i := 0; i < len(entries); i++ {
		e := entries[i]
		if len(e) < 4 {
			continue
		}
		paths = append(paths, e[3:])
		if e[0] == 'R' || e[0] == 'C' {
			i++ // the original name
		}
	}
	return paths
}

// Unmerged returns the commits reachable from branch and not from target
// (the work that exists only on branch), newest first, at most max of
// them (0: all), each as "<short id> <subject>".
func (r *Repo) Unmerged(ctx context.Context, branch, target string, max int) ([]string, error) {
	return r.oneLines(ctx, r.dir, max, "--end-of-options", branch, "^"+target)
}

// oneLines lists the commits revs select, run in dir, at most max (0:
// all), each "<short id> <subject>", newest first.
func (r *Repo) oneLines(ctx context.Context, dir string, max int, revs ...string) ([]string, error) {
	args := []string{"log", "--format=%h %s", "--no-color"}
	if max > 0 {
		args = append(args, fmt.Sprintf("--max-count=%d", max))
	}
	out, err := r.run(ctx, dir, append(append(args, revs...), "--")...)
	if err != nil {
		return nil, err
	}
	var commits []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			commits = append(commits, l)
		}
	}
	return commits, nil
}

// DeleteBranch deletes branch when it is merged into HEAD or its
// upstream (git branch -d); force deletes it anyway.
func (r *Repo) DeleteBranch(ctx context.Context, branch string, force bool) error {
	flag := "-d"
	if force {
		flag = "-D"
	}
	_, err := r.run(ctx, r.dir, "branch", flag, "--end-of-options", branch)
	return err
}

// Place is where a worktree stands: its top directory, whether it is a
// linked worktree (not the repository's main one), the branch checked
// out (full ref name; "" on a detached HEAD) and its commit ("" on an
// unborn branch).
type Place struct {
	Top    string
	Linked bool
	Branch string
	Head   string
}

// Place reads where the Repo's worktree stands, in two git processes
// (three on an unborn branch).
func (r *Repo) Place(ctx context.Context) (Place, error) {
	where := []string{"rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir", "--git-common-dir"}
	out, err := r.run(ctx, r.dir, append(where, "--verify", "--quiet", "HEAD^{commit}")...)
	if exitCode(err) > 0 { // HEAD names no commit (yet): where it stands all the same
		out, err = r.run(ctx, r.dir, where...)
	}
	if err != nil {
		return Place{}, err
	}
	ls := outLines(out)
	if len(ls) < 3 {
		return Place{}, fmt.Errorf("gitrepo: rev-parse gave %q", out)
	}
	p := Place{Top: ls[0], Linked: ls[1] != ls[2]}
	r.learn(p.Top, ls[2])
	if len(ls) > 3 {
		p.Head = ls[3]
	}
	out, err = r.run(ctx, r.dir, "symbolic-ref", "-q", "HEAD")
	switch {
	case err == nil:
		if b := line(out); strings.HasPrefix(b, "refs/heads/") {
			p.Branch = b
		}
	case exitCode(err) != 1: // 1: detached
		return Place{}, err
	}
	return p, nil
}

// Switch checks out branch (a full ref name under refs/heads/) in the
// Repo's worktree, creating it at start when it does not exist. git
// refuses (an error) when the switch would overwrite a local change, or
// when another worktree has the branch checked out.
func (r *Repo) Switch(ctx context.Context, branch, start string) error {
	if !strings.HasPrefix(branch, "refs/heads/") {
		return fmt.Errorf("gitrepo: %q is not a branch's full name", branch)
	}
	name := strings.TrimPrefix(branch, "refs/heads/")
	if _, err := r.Head(ctx, branch); err == nil {
		_, err := r.run(ctx, r.dir, "switch", "--quiet", "--no-guess", name)
		return err
	}
	if start == "" {
		return fmt.Errorf("gitrepo: branch %s does not exist and nothing to start it from", name)
	}
	_, err := r.run(ctx, r.dir, "switch", "--quiet", "--no-guess", "--no-track", "-c", name, start)
	return err
}

// Detach leaves the Repo's worktree on a detached HEAD at the commit it
// stands on, its files and index as they are: the branch it had checked
// out is free for another worktree.
func (r *Repo) Detach(ctx context.Context) error {
	_, err := r.run(ctx, r.dir, "switch", "--quiet", "--detach")
	return err
}

// Shortstat is git's one-line summary of the changes from base to head
// ("3 files changed, 10 insertions(+), 2 deletions(-)"; "" for none) and
// how many commits head has that base lacks.
func (r *Repo) Shortstat(ctx context.Context, base, head string) (stat string, commits int, err error) {
	out, err := r.run(ctx, r.dir, "rev-list", "--count", "--end-of-options", base+".."+head, "--")
	if err != nil {
		return "", 0, err
	}
	fmt.Sscan(line(out), &commits)
	out, err = r.run(ctx, r.dir, "diff", "--shortstat", "--no-ext-diff", "--no-textconv", "--end-of-options", base+"..."+head, "--")
	if err != nil {
		return "", 0, err
	}
	return line(out), commits, nil
}

// UncommittedStat is git's one-line summary of the Repo's worktree's
// changes against HEAD, staged or not ("" for none; untracked files are
// not counted).
func (r *Repo) UncommittedStat(ctx context.Context) (string, error) {
	out, err := r.run(ctx, r.dir, "diff", "--shortstat", "--no-ext-diff", "--no-textconv", "HEAD", "--")
	if err != nil {
		return "", err
	}
	return line(out), nil
}

// TreeOf is the tree id of commit (a full commit id).
func (r *Repo) TreeOf(ctx context.Context, commit string) (string, error) {
	if !isCommitID(commit) {
		return "", fmt.Errorf("gitrepo: %q is not a commit id", commit)
	}
	out, err := r.run(ctx, r.dir, "rev-parse", "--verify", "--quiet", "--end-of-options", commit+"^{tree}")
	if err != nil {
		return "", err
	}
	return line(out), nil
}
