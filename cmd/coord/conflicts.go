package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coord/cmd/coord/gitrepo"
	"github.com/rotd/coord/cmd/coord/workspace"
	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/coord/app"
)

// Conflicts found while work is in flight (contract §10): `coord
// conflicts`, and the scans watch and schedule run as branches move. The
// merging is package gitrepo's (git merge-tree, never a worktree), what
// is recorded and told app.Service's.

func conflictsCommand(e *env) *cli.Command {
	return &cli.Command{Name: "conflicts", Usage: "trial-merge the work in flight with the target and with each other (nothing checked out) and list the pairs that would conflict",
		Action: e.cmdConflicts}
}

func (e *env) cmdConflicts(_ context.Context, c *cli.Command) error {
	if c.NArg() > 0 {
		return strErr("conflicts takes no arguments")
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	m, err := e.merger()
	if err != nil {
		return err
	}
	res, err := s.Conflicts(e.ctx, m)
	if err != nil {
		return err
	}
	for _, sk := range res.Skipped {
		fmt.Fprintf(e.stderr, "coord: task %s not checked: %s\n", sk.Task, sk.Why)
	}
	for _, p := range res.Problems {
		fmt.Fprintf(e.stderr, "coord: warning: cannot merge %s\n", p)
	}
	if e.json {
		return e.printJSON(res.Pairs)
	}
	for _, p := range res.Pairs {
		e.printf("%s\n", conflictLine(p, e.cfg.Target))
	}
	if len(res.Pairs) == 0 {
		e.printf("no conflicts in flight\n")
	}
	return nil
}

// conflictLine is a pair for people: "4.2 conflicts with task 4.3 in
// z.txt", "4.2 conflicts with main (the target) in a.go and b.go".
func conflictLine(p coord.ConflictPair, target string) string {
	with := "task " + p.With
	if target == "" {
		target = coord.DefaultTarget
	}
	if p.With == target {
		with = p.With + " (the target)"
	}
	return fmt.Sprintf("%s conflicts with %s in %s", p.Task, with, coord.FilesPhrase(p.Files, 5))
}

// merger is the caller's repository as conflict scans need it (after
// open: the project root is known): the repository around the project
// root (every worktree of it shares its branches, so a caller in a
// linked worktree sees the same; on a hub the root is the caller's own
// checkout). Outside a git working tree it is a conflict (exit 3)
// naming the directory.
func (e *env) merger() (*projectMerger, error) {
	dir := e.root
	if dir == "" {
		dir = e.cwd
	}
	top, _ := workspace.GitTop(dir)
	if top == "" {
		return nil, coord.Errorf(coord.CodeConflict, "%s is not in a git repository: there is no work in flight to merge", dir).
			WithHint("run coord in the project's repository (any of its worktrees), or point --root at it")
	}
	if err := gitrepo.CheckMergeTree(e.ctx); err != nil {
		return nil, err
	}
	return &projectMerger{g: gitrepo.New(dir), paths: e.paths()}, nil
}

// projectMerger is the caller's repository as app.Merger: gitrepo with
// the merge cache of its common git directory (loaded once, saved after
// every scan that merged), conflicted paths mapped to the project's
// repository paths (a project rooted below the repository's top names
// its own files only).
type projectMerger struct {
	g     *gitrepo.Repo
	paths *workspace.Paths

	once  sync.Once
	cache *gitrepo.MergeCache
	top   string // the top of the caller's worktree
	err   error
}

func (m *projectMerger) load(ctx context.Context) error {
	m.once.Do(func() {
		if m.top, m.err = m.g.Top(ctx); m.err != nil {
			return
		}
		common, err := m.g.CommonDir(ctx)
		if err != nil {
			m.err = err
			return
		}
		// An unreadable cache is replaced at the next save: merges are
		// only run again.
		m.cache, _ = gitrepo.LoadMergeCache(common, nil)
	})
	return m.err
}

func (m *projectMerger) BranchTips(ctx context.Context) (map[string]string, error) {
	return m.g.BranchTips(ctx)
}

func (m *projectMerger) Head(ctx context.Context, ref string) (string, error) {
	return m.g.Head(ctx, ref)
}

func (m *projectMerger) HasCommits(ctx context.Context, ids []string) (map[string]bool, error) {
	return m.g.HasCommits(ctx, ids)
}

func (m *projectMerger) TrialMerges(ctx context.Context, pairs [][2]string) ([]app.TrialMerge, error) {
	if err := m.load(ctx); err != nil {
		return nil, err
	}
	rs, err := m.g.MergeTrees(ctx, pairs, m.cache)
	if err != nil {
		return nil, err
	}
	out := make([]app.TrialMerge, len(rs))
	for i, r := range rs {
		t := app.TrialMerge{Conflict: r.Conflict, Cached: r.Cached, Err: r.Err, Files: m.paths.FromGit(m.top, r.Files)}
		// A conflict only outside the project is none of its own.
		t.Conflict = t.Conflict && len(t.Files) > 0
		out[i] = t
	}
	// The cache is a cache: a save that fails costs merges next time.
	m.cache.Save(ctx)
	return out, nil
}

// conflictWatch is the conflict scan of a long-running command (watch,
// schedule): each call scans only when a branch tip or a task in flight
// moved (app.ConflictScanner), says each new conflict once, and says a
// failure once until it changes. It does nothing where the caller
// stands in no git repository, or with a git too old (said once).
type conflictWatch struct {
	sc      *app.ConflictScanner
	lastErr string
}

func (e *env) newConflictWatch(s *app.Service, say func(format string, args ...any)) *conflictWatch {
	m, err := e.merger()
	if err != nil {
		say("conflicts in flight not checked: %v", err)
		return nil
	}
	return &conflictWatch{sc: s.ConflictScanner(m)}
}

// scan runs one scan and reports what is new through say.
func (w *conflictWatch) scan(ctx context.Context, target string, say func(format string, args ...any)) []coord.ConflictPair {
	if w == nil {
		return nil
	}
	res, err := w.sc.Scan(ctx)
	if err != nil {
		if msg := coord.OneLine(err.Error()); msg != w.lastErr && ctx.Err() == nil {
			w.lastErr = msg
			say("conflict scan failed: %s", msg)
		}
		return nil
	}
	w.lastErr = ""
	for _, p := range res.New {
		say("conflict: %s", conflictLine(p, target))
	}
	return res.New
}
