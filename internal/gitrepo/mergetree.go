package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rotd/coordination/coord"
)

// Trial merges (docs/GIT.md, "conflicts found while work is in
// flight"): two commits are merged with `git merge-tree --write-tree`
// (git 2.38 or later), which computes the merge in the object database
// only: nothing is checked out, no index and no worktree is read or
// written, so the result never depends on what any worktree holds.
//
// Many pairs are merged by one git process (`--stdin`, one merge per
// line); a batch git refuses as a whole (a commit it cannot find,
// unrelated histories) is merged again pair by pair, so that one bad
// pair costs only its own result. A MergeCache remembers each pair's
// result by its two commit ids, so a pair is merged once in the life of
// the cache.

// MinMergeTreeVersion is the oldest git whose merge-tree has
// --write-tree.
var MinMergeTreeVersion = [2]int{2, 38}

// A MergeResult is the outcome of one trial merge.
type MergeResult struct {
	// Conflict reports that the merge would stop with conflicts; Files
	// are the conflicted paths (repository paths from the top, sorted,
	// each once).
	Conflict bool
	Files    []string
	// Cached reports that the result came from the cache.
	Cached bool
	// Err is why this pair could not be merged (a commit the repository
	// lacks, unrelated histories); Conflict and Files are then unset.
	Err error
}

// mergeTimeout bounds one merge; a batch gets it per pair on top of a
// fixed part, so a large batch is not cut short while each merge stays
// bounded.
const (
	mergeTimeout      = 10 * time.Second
	mergeBatchTimeout = 30 * time.Second
)

// mergeArgs are the arguments of every trial merge: the tree written to
// the object database, conflicted paths by name, NUL-separated, without
// the informational messages.
var mergeArgs = []string{"merge-tree", "--write-tree", "-z", "--name-only", "--no-messages"}

// ErrOldGit is returned when git is older than MinMergeTreeVersion.
var ErrOldGit = errors.New("gitrepo: git is too old for merge-tree --write-tree")

// OldGitError names the git found and what merge-tree needs.
type OldGitError struct{ Version string }

func (e *OldGitError) Error() string {
	return fmt.Sprintf("git %s has no 'merge-tree --write-tree'", e.Version)
}

func (e *OldGitError) Unwrap() error { return ErrOldGit }

var versionOnce struct {
	sync.Once
	err error
}

// CheckMergeTree checks, once per process, that the git on PATH has
// merge-tree --write-tree: a CodeIO error wrapping an *OldGitError when
// it is older, or naming the fix when there is no git.
func CheckMergeTree(ctx context.Context) error {
	versionOnce.Do(func() {
		ctx, cancel := context.WithTimeout(ctx, mergeTimeout)
		defer cancel()
		out, err := Command(ctx, ".", nil, "version").Output()
		if errors.Is(err, exec.ErrNotFound) {
			versionOnce.err = errNoGit(err)
			return
		}
		if err != nil {
			versionOnce.err = fmt.Errorf("gitrepo: git version: %w", err)
			return
		}
		v := strings.TrimSpace(string(out))
		maj, min, ok := ParseGitVersion(v)
		if !ok {
			return // a git that names itself oddly: let merge-tree speak for itself
		}
		if maj < MinMergeTreeVersion[0] || maj == MinMergeTreeVersion[0] && min < MinMergeTreeVersion[1] {
			versionOnce.err = coord.Wrap(coord.CodeIO, &OldGitError{Version: strings.TrimPrefix(v, "git version ")},
				"gitrepo: trial merges need git %d.%d or later", MinMergeTreeVersion[0], MinMergeTreeVersion[1]).
				WithHint("install a newer git (Debian: bookworm's 2.39; git-scm.com/downloads)")
		}
	})
	return versionOnce.err
}

// ParseGitVersion reads the major and minor number of `git version`'s
// output ("git version 2.39.5", "git version 2.37.1 (Apple Git-137.1)",
// "git version 2.41.0.windows.1").
func ParseGitVersion(s string) (major, minor int, ok bool) {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "git version"))
	s, _, _ = strings.Cut(s, " ")
	parts := strings.SplitN(s, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	maj, err1 := strconv.Atoi(parts[0])
	mn, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || maj < 0 || mn < 0 {
		return 0, 0, false
	}
	return maj, mn, true
}

// PairKey is the cache's name for a pair: the two commit ids in order,
// so (a, b) and (b, a) are one pair.
func PairKey(a, b string) string {
	if b < a {
		a, b = b, a
	}
	return a + " " + b
}

// MergeTrees trial-merges each pair of commit ids (full ids, as
// BranchTips and Head return them) in the repository, and returns one result
// per pair, in order. A pair whose result is in cache (nil: no cache) is
// not merged again; new results are added to it (saved by the caller).
// Each pair is merged in the order of its ids, so a pair's result does
// not depend on the order it is asked in. A pair of one commit is clean.
// The error is for what stops every merge (no git, a git too old, a
// cancelled ctx); a pair git cannot merge has its own Err.
func (r *Repo) MergeTrees(ctx context.Context, pairs [][2]string, cache *MergeCache) ([]MergeResult, error) {
	out := make([]MergeResult, len(pairs))
	got := map[string]MergeResult{}
	var todo [][2]string // one per distinct key not in the cache
	for _, p := range pairs {
		if p[0] == p[1] {
			continue // clean
		}
		k := PairKey(p[0], p[1])
		if _, ok := got[k]; ok {
			continue
		}
		if r, ok := cache.get(k); ok {
			r.Cached = true
			got[k] = r
			continue
		}
		got[k] = MergeResult{}
		todo = append(todo, p)
	}
	if len(todo) > 0 {
		if err := CheckMergeTree(ctx); err != nil {
			return nil, err
		}
		res, err := r.mergeBatch(ctx, todo)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// One pair may have spoilt the batch: each on its own.
			res = make([]MergeResult, len(todo))
			for j, p := range todo {
				res[j] = r.mergeOne(ctx, p)
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
			}
		}
		for j, p := range todo {
			k := PairKey(p[0], p[1])
			got[k] = res[j]
			if res[j].Err == nil {
				cache.put(k, res[j])
			}
		}
	}
	for i, p := range pairs {
		if p[0] != p[1] {
			out[i] = got[PairKey(p[0], p[1])]
		}
	}
	return out, nil
}

// ordered is the pair with its ids sorted.
func ordered(p [2]string) (string, string) {
	if p[1] < p[0] {
		return p[1], p[0]
	}
	return p[0], p[1]
}

// mergeBatch merges the pairs todo names in one `git merge-tree --stdin`.
// Any failure of git (which stops at a pair it cannot merge) is returned
// whole.
func (r *Repo) mergeBatch(ctx context.Context, todo [][2]string) ([]MergeResult, error) {
	if len(todo) == 1 {
		return []MergeResult{r.mergeOne(ctx, todo[0])}, nil
	}
	var in bytes.Buffer
	for _, p := range todo {
		a, b := ordered(p)
		if !isCommitID(a) || !isCommitID(b) {
			return nil, fmt.Errorf("gitrepo: merge-tree: %q and %q are not both commit ids", a, b)
		}
		fmt.Fprintf(&in, "%s %s\n", a, b)
	}
	timeout := mergeBatchTimeout + time.Duration(len(todo))*mergeTimeout/10
	run, err := r.runInput(ctx, timeout, &in, append(mergeArgs, "--stdin")...)
	if err != nil {
		return nil, err
	}
	if run.code != 0 {
		return nil, fmt.Errorf("gitrepo: git merge-tree --stdin exited %d: %s", run.code, run.msg)
	}
	return ParseMergeTreeBatch(run.stdout, len(todo))
}

// mergeOne merges one pair.
func (r *Repo) mergeOne(ctx context.Context, p [2]string) MergeResult {
	a, b := ordered(p)
	if !isCommitID(a) || !isCommitID(b) {
		return MergeResult{Err: fmt.Errorf("gitrepo: merge-tree: %q and %q are not both commit ids", a, b)}
	}
	run, err := r.runInput(ctx, mergeTimeout, nil, append(mergeArgs, a, b)...)
	if err != nil {
		return MergeResult{Err: err}
	}
	res, err := ParseMergeTree(run.stdout, run.code)
	if err != nil {
		if run.msg != "" {
			err = fmt.Errorf("%w: %s", err, run.msg)
		}
		return MergeResult{Err: fmt.Errorf("gitrepo: merging %.12s with %.12s: %w", a, b, err)}
	}
	return res
}

// ParseMergeTree reads the output of one `git merge-tree --write-tree -z
// --name-only --no-messages A B` that exited with code: the tree id,
// then, when the merge has conflicts (exit 1), each conflicted path. Any
// other exit status, or output that is not of that shape, is an error:
// exit 1 also means "not something we can merge", with nothing on
// stdout.
func ParseMergeTree(out []byte, code int) (MergeResult, error) {
	if code != 0 && code != 1 {
		return MergeResult{}, fmt.Errorf("git merge-tree exited %d", code)
	}
	f := splitNUL(out)
	if len(f) == 0 || !isObjectID(f[0]) {
		return MergeResult{}, fmt.Errorf("git merge-tree exited %d without a tree id", code)
	}
	var r MergeResult
	for _, p := range f[1:] {
		if p == "" {
			break // the end of the conflicted files
		}
		r.Files = append(r.Files, p)
	}
	r.Conflict = code == 1
	if !r.Conflict && len(r.Files) > 0 {
		return MergeResult{}, fmt.Errorf("git merge-tree exited 0 naming %d conflicted files", len(r.Files))
	}
	r.Files = sortedSet(r.Files)
	return r, nil
}

// ParseMergeTreeBatch reads the output of `git merge-tree --write-tree
// -z --name-only --no-messages --stdin` for n merges: for each, its
// status (1 clean, 0 conflicts), the tree id, the conflicted paths, and
// an empty field.
func ParseMergeTreeBatch(out []byte, n int) ([]MergeResult, error) {
	f := splitNUL(out)
	res := make([]MergeResult, 0, n)
	i := 0
	for len(res) < n {
		if i+1 >= len(f) {
			return nil, fmt.Errorf("git merge-tree --stdin gave %d results for %d merges", len(res), n)
		}
		status, tree := f[i], f[i+1]
		if (status != "0" && status != "1") || !isObjectID(tree) {
			return nil, fmt.Errorf("git merge-tree --stdin: result %d does not start with a status and a tree id", len(res)+1)
		}
		i += 2
		var r MergeResult
		for ; i < len(f) && f[i] != ""; i++ {
			r.Files = append(r.Files, f[i])
		}
		if i >= len(f) {
			return nil, fmt.Errorf("git merge-tree --stdin: result %d is cut short", len(res)+1)
		}
		i++ // the empty field
		r.Conflict = status == "0"
		if !r.Conflict && len(r.Files) > 0 {
			return nil, fmt.Errorf("git merge-tree --stdin: clean result %d names %d conflicted files", len(res)+1, len(r.Files))
		}
		r.Files = sortedSet(r.Files)
		res = append(res, r)
	}
	if i != len(f) {
		return nil, fmt.Errorf("git merge-tree --stdin gave more than %d results", n)
	}
	return res, nil
}

// splitNUL splits NUL-terminated fields; a last field without its NUL
// counts too.
func splitNUL(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	s := strings.TrimSuffix(string(b), "\x00")
	return strings.Split(s, "\x00")
}

func sortedSet(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	slices.Sort(s)
	return slices.Compact(s)
}

// isObjectID reports whether s is a full object id (SHA-1 or SHA-256,
// lowercase hex).
func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// isCommitID is isObjectID for what is given to merge-tree: a full id
// cannot be read as an option or a revision expression.
func isCommitID(s string) bool { return isObjectID(s) }

// errNoGit is the error for a git that is not installed.
func errNoGit(err error) error {
	return coord.Wrap(coord.CodeIO, err, "git is not installed or not on PATH").
		WithHint("coord reads where work lives with git: install git or put it on PATH")
}

// gitRun is what one git run gave: its stdout, exit status and the
// first line of its stderr.
type gitRun struct {
	stdout []byte
	code   int
	msg    string
}

// runInput runs git in the Repo's directory with stdin (nil: none) and a
// timeout, as run does; any exit status is in the result, and err is
// for a git that could not run or did not end in time.
func (r *Repo) runInput(ctx context.Context, timeout time.Duration, stdin io.Reader, args ...string) (gitRun, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := Command(ctx, r.dir, nil, args...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
	run := gitRun{stdout: stdout.Bytes(), msg: msg}
	if err == nil {
		return run, nil
	}
	if errors.Is(err, exec.ErrNotFound) {
		return gitRun{}, errNoGit(err)
	}
	ge := &Error{Args: args, Dir: r.dir, Code: -1, Err: err, Stderr: msg}
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		ge.Err = fmt.Errorf("no answer within %v", timeout)
		return gitRun{}, ge
	case ctx.Err() != nil:
		ge.Err = ctx.Err()
		return gitRun{}, ge
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() >= 0 {
		run.code = ee.ExitCode()
		return run, nil
	}
	return gitRun{}, ge
}

// BranchTips returns the commit each local branch points at (by full
// name: "main", "coord/alice"), in one git run: the cheap check of which
// branches moved.
func (r *Repo) BranchTips(ctx context.Context) (map[string]string, error) {
	stdout, err := r.run(ctx, r.dir, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(stdout), "\n") {
		id, name, ok := strings.Cut(line, " ")
		if ok && isObjectID(id) && name != "" {
			out[name] = id
		}
	}
	return out, nil
}

// HasCommits reports which of ids (full commit ids) the repository
// holds as commits, in one git run.
func (r *Repo) HasCommits(ctx context.Context, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	var in bytes.Buffer
	var asked []string
	for _, id := range ids {
		if isObjectID(id) && !slices.Contains(asked, id) {
			asked = append(asked, id)
			fmt.Fprintln(&in, id)
		}
	}
	if len(asked) == 0 {
		return out, nil
	}
	run, err := r.runInput(ctx, mergeTimeout, &in, "cat-file", "--batch-check=%(objectname) %(objecttype)")
	if err != nil {
		return nil, err
	}
	if run.code != 0 {
		return nil, &Error{Args: []string{"cat-file"}, Dir: r.dir, Code: run.code, Stderr: run.msg, Err: fmt.Errorf("exit status %d", run.code)}
	}
	for _, line := range strings.Split(string(run.stdout), "\n") {
		if id, typ, ok := strings.Cut(line, " "); ok && typ == "commit" {
			out[id] = true
		}
	}
	return out, nil
}
