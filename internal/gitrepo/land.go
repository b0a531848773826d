package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/fsops"
	"github.com/rotd/coordination/internal/check"
)

// Landing (docs/GIT.md, "Landing"): the git side of coord land. A
// merge is computed in the object database (merge-tree --write-tree), a
// merge commit made without any worktree (commit-tree), the target moved
// by a compare-and-swap of its ref (update-ref NEW OLD), and the check
// run in a temporary detached worktree under <common git dir>/coord-land/
// that is removed after it (and, at the next start, when a crash left it
// behind). No branch is ever created.

// LandDir is the directory, in the repository's common git directory,
// that holds the lander's temporary worktrees: nothing else lives there.
const LandDir = "coord-land"

// ErrRefMoved is what MoveRef returns when the ref no longer points at
// the commit expected: someone else moved it.
var ErrRefMoved = errors.New("gitrepo: the ref moved")

// MergeWrite merges commits a and b in the object database (git
// merge-tree --write-tree a b) and returns the merged tree, or, when the
// merge conflicts, the conflicted paths (repository paths from the top,
// sorted) and conflict true.
func (r *Repo) MergeWrite(ctx context.Context, a, b string) (tree string, files []string, conflict bool, err error) {
	if !isCommitID(a) || !isCommitID(b) {
		return "", nil, false, fmt.Errorf("gitrepo: merge-tree: %q and %q are not both commit ids", a, b)
	}
	if err := CheckMergeTree(ctx); err != nil {
		return "", nil, false, err
	}
	run, err := r.runInput(ctx, mergeTimeout, nil, append(mergeArgs, a, b)...)
	if err != nil {
		return "", nil, false, err
	}
	res, err := ParseMergeTree(run.stdout, run.code)
	if err != nil {
		if run.msg != "" {
			err = fmt.Errorf("%w: %s", err, run.msg)
		}
		return "", nil, false, fmt.Errorf("gitrepo: merging %.12s with %.12s: %w", a, b, err)
	}
	tree = strings.SplitN(string(run.stdout), "\x00", 2)[0]
	return tree, res.Files, res.Conflict, nil
}

// OnFirstParents reports whether tip is on head's first-parent chain
// (head itself included): moving a branch from tip to head keeps tip's
// first-parent history as the branch's, the commits in between each
// following the last. A head that merged tip in as a second parent
// (a branch that merged main) is not.
func (r *Repo) OnFirstParents(ctx context.Context, tip, head string) (bool, error) {
	if !isCommitID(tip) || !isCommitID(head) {
		return false, fmt.Errorf("gitrepo: %q and %q are not both commit ids", tip, head)
	}
	if tip == head {
		return true, nil
	}
	out, err := r.run(ctx, r.dir, "rev-list", "--first-parent", head, "^"+tip, "--")
	if err != nil {
		return false, err
	}
	list := strings.Fields(string(out))
	if len(list) == 0 {
		return false, nil // head is an ancestor of tip
	}
	parent, err := r.Head(ctx, list[len(list)-1]+"^1")
	if errors.Is(err, ErrNoRef) {
		return false, nil // a root commit
	}
	return parent == tip, err
}

// CommitTree makes a commit of tree with parents and message (git
// commit-tree), touching no worktree, index or ref, and returns its id.
// Author and committer are the user's git identity.
func (r *Repo) CommitTree(ctx context.Context, tree string, parents []string, msg string) (string, error) {
	if !isObjectID(tree) {
		return "", fmt.Errorf("gitrepo: commit-tree: %q is not a tree id", tree)
	}
	args := []string{"commit-tree", tree}
	for _, p := range parents {
		if !isCommitID(p) {
			return "", fmt.Errorf("gitrepo: commit-tree: %q is not a commit id", p)
		}
		args = append(args, "-p", p)
	}
	run, err := r.runInput(ctx, Timeout, strings.NewReader(msg), args...)
	if err != nil {
		return "", err
	}
	if run.code != 0 {
		return "", &Error{Args: args, Dir: r.dir, Code: run.code, Stderr: run.msg, Err: fmt.Errorf("exit status %d", run.code)}
	}
	id := line(run.stdout)
	if !isObjectID(id) {
		return "", fmt.Errorf("gitrepo: commit-tree gave %q, not a commit id", id)
	}
	return id, nil
}

// MoveRef moves branch from old to new in one compare-and-swap (git
// update-ref refs/heads/branch new old): ErrRefMoved when the branch no
// longer points at old (nothing changed). reason goes to the reflog.
func (r *Repo) MoveRef(ctx context.Context, branch, new, old, reason string) error {
	if !isCommitID(new) || !isCommitID(old) {
		return fmt.Errorf("gitrepo: update-ref: %q and %q are not both commit ids", new, old)
	}
	ref := "refs/heads/" + branch
	_, err := r.run(ctx, r.dir, "update-ref", "-m", reason, ref, new, old)
	if err == nil {
		return nil
	}
	if exitCode(err) < 0 {
		return err // no answer: the caller must read the ref to know
	}
	now, herr := r.Head(ctx, ref)
	if herr == nil && now != old {
		return fmt.Errorf("%w: %s is at %.12s, not %.12s", ErrRefMoved, branch, now, old)
	}
	return err
}

// SyncCheckouts brings every worktree that has branch checked out from
// old to new after the branch moved there (git read-tree -m -u old
// new: its index and files move as a fast-forward would move them,
// local changes to other paths kept), as git does for a push with
// receive.denyCurrentBranch=updateInstead; without it the checkout would
// show the landing undone as staged changes. It returns, one line each,
// the checkouts it could not bring (a local change in the way: they
// keep old's files and their local changes; the line says how to
// bring them: save the changes against old, reset, apply them again).
func (r *Repo) SyncCheckouts(ctx context.Context, branch, old, new string) []string {
	list, err := r.Worktrees(ctx)
	if err != nil {
		return []string{fmt.Sprintf("cannot list the worktrees to update the checkouts of %s: %v", branch, err)}
	}
	var out []string
	for _, w := range list {
		if w.Bare || w.Branch != branch || w.Prunable {
			continue
		}
		// read-tree trusts the index's stat cache and calls a file whose
		// stat changed (a copied or touched checkout) "not uptodate":
		// refresh it first (exit 1 only says some files differ, which
		// read-tree then judges by content).
		if err := r.bringAlong(ctx, w.Path, old, new); err != nil {
			out = append(out, fmt.Sprintf("the checkout of %s at %s keeps the files of %.12s (a local change is in the way: %v); "+
				"there, keep your changes with 'git diff %s > mine.patch', then 'git reset --hard && git apply --3way mine.patch'",
				branch, w.Path, old, coord.OneLine(err.Error()), old))
		}
	}
	return out
}

// lockWaits are the pauses between tries of a checkout whose index
// another git process holds (index.lock): about 5 s in all, longer than
// any ordinary git command holds it.
var lockWaits = []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond,
	800 * time.Millisecond, 1600 * time.Millisecond, 1600 * time.Millisecond}

// bringAlong moves the checkout at dir from old's files to new's (git
// read-tree -m -u old new), trying again while another git process
// holds its index (index.lock), for about 5 s.
func (r *Repo) bringAlong(ctx context.Context, dir, old, new string) error {
	for i := 0; ; i++ {
		// read-tree trusts the index's stat cache and calls a file whose
		// stat changed (a copied or touched checkout) "not uptodate":
		// refresh it first (exit 1 only says some files differ, which
		// read-tree then judges by content).
		r.run(ctx, dir, "update-index", "-q", "--refresh")
		_, err := r.run(ctx, dir, "read-tree", "-m", "-u", "--end-of-options", old, new)
		if err == nil || i == len(lockWaits) || !lockHeld(err) {
			return err
		}
		select {
		case <-time.After(lockWaits[i]):
		case <-ctx.Done():
			return err
		}
	}
}

// lockHeld reports whether git failed because another git process holds
// a lock it needs (index.lock).
func lockHeld(err error) bool {
	var ge *Error
	return errors.As(err, &ge) && strings.Contains(ge.Stderr, ".lock")
}

// landDir is <common git dir>/coord-land.
func (r *Repo) landDir(ctx context.Context) (string, error) {
	common, err := r.CommonDir(ctx)
	if err != nil {
		return "", err
	}
	return filepath.Join(common, LandDir), nil
}

// AddCheckout makes a temporary detached worktree holding commit under
// <common git dir>/coord-land/, named after name and this process, and
// returns its directory.
func (r *Repo) AddCheckout(ctx context.Context, name, commit string) (string, error) {
	if !isCommitID(commit) {
		return "", fmt.Errorf("gitrepo: worktree add: %q is not a commit id", commit)
	}
	dir, err := r.landDir(ctx)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", coord.Wrap(coord.CodeIO, err, "cannot make %s", dir)
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%d", safeName(name), os.Getpid()))
	if _, err := os.Stat(path); err == nil {
		r.RemoveCheckout(ctx, path)
	}
	if _, err := r.run(ctx, r.dir, "worktree", "add", "--quiet", "--detach", "--end-of-options", path, commit); err != nil {
		return "", err
	}
	return path, nil
}

// RemoveCheckout removes a temporary worktree AddCheckout made (its
// directory and git's record of it).
func (r *Repo) RemoveCheckout(ctx context.Context, path string) error {
	err := r.RemoveWorktree(ctx, path, true)
	if _, serr := os.Stat(path); serr == nil {
		// git did not know it (a crash before its record was written):
		// the directory goes, and any record of it with it.
		if rerr := os.RemoveAll(path); rerr != nil {
			return coord.Wrap(coord.CodeIO, rerr, "cannot remove %s", path)
		}
		err = nil
	}
	if _, perr := r.pruneLandRecords(ctx, false); perr != nil && err == nil {
		err = perr
	}
	return err
}

// pruneLandRecords drops git's records of the lander's temporary
// worktrees whose directories are gone (what git worktree prune does,
// kept to <common git dir>/coord-land/: a person's worktree on a disk
// not mounted now keeps its record). It returns how many it dropped.
// Unless all, a record git still locks is kept: another check's
// worktree being made beside this one.
func (r *Repo) pruneLandRecords(ctx context.Context, all bool) (int, error) {
	common, err := r.CommonDir(ctx)
	if err != nil {
		return 0, err
	}
	land := filepath.Join(common, LandDir) + string(filepath.Separator)
	ents, err := fsops.ReadDir(filepath.Join(common, "worktrees"))
	if err != nil {
		return 0, nil // no linked worktree at all
	}
	n := 0
	for _, e := range ents {
		rec := filepath.Join(common, "worktrees", e.Name())
		b, err := fsops.ReadFile(filepath.Join(rec, "gitdir"), 64<<10)
		if err != nil {
			continue
		}
		wt := filepath.Dir(strings.TrimSpace(string(b))) // gitdir names <worktree>/.git
		if !strings.HasPrefix(wt+string(filepath.Separator), land) {
			continue
		}
		if _, err := os.Stat(wt); err == nil {
			continue // still there: git worktree remove is for it
		}
		if _, err := os.Stat(filepath.Join(rec, "locked")); err == nil && !all {
			continue // being made (git locks it until it is): a check beside this one
		}
		if err := os.RemoveAll(rec); err != nil {
			return n, coord.Wrap(coord.CodeIO, err, "cannot remove git's record %s", rec)
		}
		n++
	}
	return n, nil
}

// CleanCheckouts removes every temporary worktree left under
// <common git dir>/coord-land/ (a lander that crashed), and git's
// records of those whose directories are gone (pruneLandRecords: no
// other worktree's record is touched). It returns how many it removed.
func (r *Repo) CleanCheckouts(ctx context.Context) (int, error) {
	dir, err := r.landDir(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	list, err := r.Worktrees(ctx)
	if err != nil {
		return 0, err
	}
	for _, w := range list {
		if strings.HasPrefix(w.Path, dir+string(filepath.Separator)) {
			if err := r.RemoveWorktree(ctx, w.Path, true); err == nil {
				n++
			}
		}
	}
	ents, _ := fsops.ReadDir(dir)
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if err := os.RemoveAll(p); err != nil {
			return n, coord.Wrap(coord.CodeIO, err, "cannot remove %s", p)
		}
		n++
	}
	if _, err := r.pruneLandRecords(ctx, true); err != nil {
		return n, err
	}
	return n, nil
}

// safeName keeps letters, digits, '.', '_' and '-' of s (others: '_').
func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

// checkTail bounds the output a land check keeps: its last lines, at
// most this many bytes (a note's bound).
const checkTail = 2 << 10

// RunCheck runs the shell command line cmd (sh -c) in dir with env added
// to the environment, as package check runs a check (its own process
// group, killed whole at the timeout), keeping its last lines. A check
// started so survives its caller's death; the lander starts its checks
// through Landing.Start.
func RunCheck(ctx context.Context, dir, cmd string, env []string, timeout time.Duration) (check.Result, error) {
	return runCheck(ctx, nil, dir, cmd, env, timeout)
}

func runCheck(ctx context.Context, start check.Starter, dir, cmd string, env []string, timeout time.Duration) (check.Result, error) {
	r, err := check.Run(ctx, start, dir, []string{"sh", "-c", cmd}, append(os.Environ(), env...), timeout, checkTail)
	r.Tail = strings.TrimRight(r.Tail, "\n\r\t ")
	if err != nil && ctx.Err() == nil {
		return r, coord.Wrap(coord.CodeIO, err, "cannot run the land check %q", cmd)
	}
	return r, err
}

// Landing is a Repo as the application's lander asks for it
// (app.Lander), with conflicted paths mapped to the caller's.
type Landing struct {
	r *Repo
	// Start starts the checks (nil: RunCheck's own start, which a
	// check survives its lander by); the CLI gives coord's run
	// supervisor, so a check dies with its lander.
	Start check.Starter
	// Warn receives what went wrong after the target moved (a checkout
	// of it that could not be brought along); nil drops it.
	Warn func(string)
	// paths maps the paths git names from the top of r's worktree to
	// the caller's (nil: as they are).
	paths func(top string, paths []string) []string
	// merges keeps the merges made, by their two commits: a landing asks
	// whether the target already holds a task's work (Contains) and then
	// merges it (Merge), the same merge of the same two commits, which
	// git makes once. A merge of two commits is the same merge whenever
	// it is made, so the answers are kept until maxMerges, then dropped.
	merges struct {
		sync.Mutex
		m map[[2]string]merged
	}
}

// merged is what MergeWrite said of a merge.
type merged struct {
	tree     string
	files    []string
	conflict bool
}

// maxMerges bounds the merges a Landing keeps (land --watch runs for
// days): a landing needs the last one.
const maxMerges = 64

// merge is MergeWrite(a, b), made once per pair of commits.
func (l *Landing) merge(ctx context.Context, a, b string) (merged, error) {
	key := [2]string{a, b}
	l.merges.Lock()
	m, ok := l.merges.m[key]
	l.merges.Unlock()
	if ok {
		return m, nil
	}
	tree, files, conflict, err := l.r.MergeWrite(ctx, a, b)
	if err != nil {
		return merged{}, err
	}
	m = merged{tree: tree, files: files, conflict: conflict}
	l.merges.Lock()
	if l.merges.m == nil || len(l.merges.m) >= maxMerges {
		l.merges.m = map[[2]string]merged{}
	}
	l.merges.m[key] = m
	l.merges.Unlock()
	return m, nil
}

var _ app.Lander = (*Landing)(nil)

// NewLanding returns r as app.Lander; paths (nil: none) maps conflicted
// paths as NewMerger's does.
func NewLanding(r *Repo, paths func(top string, paths []string) []string) *Landing {
	return &Landing{r: r, paths: paths}
}

// Head is Repo.Head.
func (l *Landing) Head(ctx context.Context, ref string) (string, error) { return l.r.Head(ctx, ref) }

// IsAncestor is Repo.IsAncestor.
func (l *Landing) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	return l.r.IsAncestor(ctx, a, b)
}

// OnFirstParents is Repo.OnFirstParents.
func (l *Landing) OnFirstParents(ctx context.Context, tip, head string) (bool, error) {
	return l.r.OnFirstParents(ctx, tip, head)
}

// Contains is Repo.Contains; between two commit ids the merge it makes
// is kept for Merge.
func (l *Landing) Contains(ctx context.Context, into, commit string) (bool, error) {
	if !isCommitID(into) || !isCommitID(commit) {
		return l.r.Contains(ctx, into, commit)
	}
	m, err := l.merge(ctx, into, commit)
	if err != nil || m.conflict {
		return false, err
	}
	return l.r.isTreeOf(ctx, m.tree, into)
}

// Merge is Repo.MergeWrite, the conflicted paths mapped (a conflict
// only outside the caller's paths still conflicts: the merge cannot be
// made).
func (l *Landing) Merge(ctx context.Context, target, head string) (app.LandMerge, error) {
	m, err := l.merge(ctx, target, head)
	if err != nil {
		return app.LandMerge{}, err
	}
	tree, conflict := m.tree, m.conflict
	files := slices.Clone(m.files)
	if conflict && l.paths != nil {
		if top, terr := l.r.Top(ctx); terr == nil {
			if mapped := l.paths(top, files); len(mapped) > 0 {
				files = mapped
			}
		}
	}
	return app.LandMerge{Tree: tree, Conflict: conflict, Files: files}, nil
}

// CommitMerge is Repo.CommitTree.
func (l *Landing) CommitMerge(ctx context.Context, tree string, parents []string, msg string) (string, error) {
	return l.r.CommitTree(ctx, tree, parents, msg)
}

// MoveTarget is Repo.MoveRef, its ErrRefMoved as app.ErrTargetMoved;
// once the target moved, its checkouts are brought along
// (SyncCheckouts).
//
// A journal (<common git dir>/coord/land-move: "branch old new") is
// written before the move and removed once the checkouts were brought:
// a lander killed between the two leaves it, and the next lander's
// CleanCheckouts brings the checkouts then (RecoverMove).
func (l *Landing) MoveTarget(ctx context.Context, branch, new, old, reason string) error {
	if err := l.r.writeMoveJournal(ctx, branch, old, new); err != nil {
		return err
	}
	err := l.r.MoveRef(ctx, branch, new, old, reason)
	if errors.Is(err, ErrRefMoved) {
		l.r.removeMoveJournal(ctx)
		return fmt.Errorf("%w: %w", app.ErrTargetMoved, err)
	}
	if err == nil {
		// The journal stays while a checkout of the target has not
		// followed: the next lander (and every command run there) says
		// so until it has.
		if lines := l.r.SyncCheckouts(ctx, branch, old, new); len(lines) > 0 {
			l.warn(lines)
		} else {
			l.r.removeMoveJournal(ctx)
		}
	}
	return err
}

func (l *Landing) warn(lines []string) {
	for _, w := range lines {
		if l.Warn != nil {
			l.Warn(w)
		}
	}
}

// MoveJournal is where MoveTarget notes a move in progress, relative to
// the common git directory (coord.MoveJournal's format).
const MoveJournal = coord.MoveJournalPath

func (r *Repo) writeMoveJournal(ctx context.Context, branch, old, new string) error {
	common, err := r.CommonDir(ctx)
	if err != nil {
		return err
	}
	t, err := fsops.OpenTree(common)
	if err != nil {
		return err
	}
	defer t.Close()
	if err := t.MkdirAll(filepath.Dir(MoveJournal), 0o755); err != nil {
		return err
	}
	return t.WriteFile(MoveJournal, coord.MoveJournal{Branch: branch, Old: old, New: new}.Bytes(), 0o644)
}

func (r *Repo) removeMoveJournal(ctx context.Context) {
	common, err := r.CommonDir(ctx)
	if err != nil {
		return
	}
	if t, err := fsops.OpenTree(common); err == nil {
		t.Remove(MoveJournal)
		t.Close()
	}
}

// RecoverMove finishes a move a killed lander left noted (MoveJournal):
// when the branch is at the move's new commit, its checkouts still at the
// old one are brought along (SyncCheckouts; one already brought stays);
// when it is not, the move never happened. The journal is removed either
// way. It returns the lines SyncCheckouts returns, and one for a journal
// it cannot read (removed too: it is only a note).
func (r *Repo) RecoverMove(ctx context.Context) []string {
	common, err := r.CommonDir(ctx)
	if err != nil {
		return nil
	}
	t, err := fsops.OpenTree(common)
	if err != nil {
		return nil
	}
	defer t.Close()
	data, err := t.ReadFile(MoveJournal, 4<<10)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		t.Remove(MoveJournal)
		return []string{fmt.Sprintf("the landing journal %s was unreadable (%v): removed", t.Path(MoveJournal), err)}
	}
	m, ok := coord.ParseMoveJournal(data)
	if !ok {
		t.Remove(MoveJournal)
		return []string{fmt.Sprintf("the landing journal %s did not say \"branch old new\": removed", t.Path(MoveJournal))}
	}
	if tip, err := r.Head(ctx, coord.BranchRef(m.Branch)); err != nil || tip != m.New {
		t.Remove(MoveJournal)
		return nil // the move never happened, or the branch moved on since
	}
	lines := r.SyncCheckouts(ctx, m.Branch, m.Old, m.New)
	if len(lines) == 0 {
		t.Remove(MoveJournal) // every checkout followed
	}
	return lines
}

// Checkout is Repo.AddCheckout.
func (l *Landing) Checkout(ctx context.Context, name, commit string) (string, error) {
	return l.r.AddCheckout(ctx, name, commit)
}

// RemoveCheckout is Repo.RemoveCheckout.
func (l *Landing) RemoveCheckout(ctx context.Context, dir string) error {
	return l.r.RemoveCheckout(ctx, dir)
}

// CleanCheckouts is Repo.CleanCheckouts.
//
// First it finishes a move a killed lander left noted (RecoverMove).
func (l *Landing) CleanCheckouts(ctx context.Context) (int, error) {
	l.warn(l.r.RecoverMove(ctx))
	return l.r.CleanCheckouts(ctx)
}

// Check runs a check as RunCheck does, started by l.Start.
func (l *Landing) Check(ctx context.Context, dir, cmd string, env []string, timeout time.Duration) (check.Result, error) {
	return runCheck(ctx, l.Start, dir, cmd, env, timeout)
}
