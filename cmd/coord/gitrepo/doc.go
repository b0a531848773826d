// Package gitrepo runs the git operations coord needs on the caller's
// repository for work in flight (contract §10): the branch checked out
// and the commits it and the target name, merge bases and ancestry, the
// paths a range of commits changed, linked worktrees (add, list,
// remove), what a worktree holds that no commit does (Dirty), and the
// commits of a branch the target lacks (Unmerged).
//
// A Repo is made from a directory and runs nothing until a method is
// called: making one costs no process. Every method runs git as a child
// process bounded by a timeout (a repository on a dead mount costs a
// bounded wait, never a hang), with the user's configuration kept out of
// what coord parses (no pager, paths not quoted, -z output where paths
// are listed) and without taking git's optional locks (a status never
// competes with the agent's own git for the index lock). A missing git is
// one error naming the fix (CodeIO).
//
// Paths are as git names them: relative to the top of the working tree,
// with '/' separators. Project is a Repo as coord's application asks for
// it (app.Repo), mapping them to the project's repository paths with the
// mapping its caller gives (a project rooted in a subdirectory).
//
// Limits: the porcelain formats read here are git's stable ones (git
// 2.20 and later); merge-tree's (git 2.38 and later) is read by the
// files of this package that use it.
package gitrepo
