package main

import (
	"github.com/rotd/coordination/cmd/coord/internal/workspace"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/internal/gitrepo"
)

// newProjectRepo is the caller's git repository as the application asks
// for it (app.Repo): git runs where the caller stands, and the paths it
// names become project paths (paths: the caller's mapping, asked for
// only when needed). nil when cwd is in no git working tree, or in
// another repository than the project root's (a caller naming a project
// elsewhere with --root: its own checkout says nothing of that
// project's work). Decided from the files git keeps: no process.
func newProjectRepo(cwd, root string, paths func() *workspace.Paths) app.Repo {
	if !gitrepo.SameRepository(cwd, root) {
		return nil
	}
	return gitrepo.ForProject(cwd, func(top string, list []string) []string { return paths().FromGit(top, list) })
}
