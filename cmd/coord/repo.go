package main

import (
	"github.com/rotd/coord/cmd/coord/gitrepo"
	"github.com/rotd/coord/cmd/coord/workspace"
	"github.com/rotd/coord/coord/app"
)

// newProjectRepo is the caller's git repository as the application asks
// for it (app.Repo): git runs where the caller stands, and the paths it
// names become project paths (paths: the caller's mapping, asked for
// only when needed). nil when cwd is in no git working tree (read from
// the files git keeps: no process).
func newProjectRepo(cwd string, paths func() *workspace.Paths) app.Repo {
	if top, _ := workspace.GitTop(cwd); top == "" {
		return nil
	}
	return gitrepo.ForProject(cwd, func(top string, list []string) []string { return paths().FromGit(top, list) })
}
