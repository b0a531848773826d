package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/internal/gitrepo"
)

// Conflicts found while work is in flight (docs/GIT.md): `coord
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
	// Said up front, even with nothing in flight to merge: a git too old
	// for trial merges is a fact about the machine the caller asked about.
	if err := gitrepo.CheckMergeTree(e.ctx); err != nil {
		return err
	}
	res, err := s.Conflicts(e.ctx, m)
	if err != nil {
		return err
	}
	for _, sk := range res.Skipped {
		fmt.Fprintf(e.stderr, "coord: task %s not checked: %s\n", sk.Task, coord.OneLine(sk.Why))
	}
	for _, p := range res.Problems {
		fmt.Fprintf(e.stderr, "coord: warning: cannot merge %s\n", coord.OneLine(fmt.Sprint(p)))
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
// checkout), with conflicted paths mapped to project paths as every
// command maps them. Outside a git working tree it is a conflict (exit
// 3) naming the directory. A git too old for trial merges is said by the
// first merge (the edit hook and the watchers, which often have none to
// make, start no `git version` for it).
func (e *env) merger() (app.Merger, error) {
	dir := e.root
	if dir == "" {
		dir = e.cwd
	}
	top, _ := gitrepo.GitTop(dir)
	if top == "" {
		return nil, coord.Wrap(coord.CodeConflict, errNoRepo, "%s is not in a git repository: there is no work in flight to merge", dir).
			WithHint("run coord in the project's repository (any of its worktrees), or point --root at it")
	}
	return gitrepo.NewMerger(gitrepo.New(dir), e.paths().FromGit), nil
}

// errNoRepo marks a project outside any git repository: no work there
// has a branch to merge.
var errNoRepo = errors.New("no git repository")

// conflictWatch is the conflict scan of a long-running command (watch,
// schedule): each call scans only when a branch tip or a task in flight
// moved (app.ConflictScanner), says each new conflict once, and says a
// failure once until it changes. It does nothing for a project outside
// any git repository (silently: nothing there can conflict), or with a
// git too old (said once).
type conflictWatch struct {
	sc      *app.ConflictScanner
	lastErr string
}

func (e *env) newConflictWatch(s *app.Service, say func(format string, args ...any)) *conflictWatch {
	m, err := e.merger()
	if err != nil {
		if !errors.Is(err, errNoRepo) {
			say("conflicts in flight not checked: %v", err)
		}
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
