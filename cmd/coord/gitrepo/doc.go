// Package gitrepo runs the git operations coord needs on the caller's
// repository for work in flight (docs/GIT.md): the branch checked out
// and the commits it and the target name, merge bases and ancestry, the
// paths a range of commits changed, linked worktrees (add, list,
// remove), what a worktree holds that no commit does (Dirty), the tree
// of a worktree with its uncommitted changes (WorktreeTree: staged into
// a temporary copy of its index, the real index and files untouched),
// and the commits of a branch the target lacks (Unmerged).
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
// Trial merges (mergetree.go, cache.go, merger.go) answer "would these
// two commits conflict, and in which files" with git merge-tree
// --write-tree, which merges in the object database only: nothing is
// checked out, no index or worktree is read or written, so the answer
// never depends on what any worktree holds (git writes the merged trees
// as loose objects, which its gc prunes). Many pairs go to one git
// process (--stdin); a batch git refuses is merged pair by pair, so one
// bad pair (a missing commit, unrelated histories) costs only its own
// answer. A MergeCache keeps each pair's answer by its two commit ids in
// <common git dir>/coord/merge-cache.json (bounded to MaxMergeCache
// pairs, least recently used dropped, replaced atomically through fsops
// under a lock file), so a pair is merged once; the file is a cache, not
// a record: an unreadable one is replaced, a save that waits more than
// 2 s for another is skipped. Merger is a Repo as the application's
// conflict scans ask for it (app.Merger).
//
// Landing (land.go) is Landing, a Repo as the application's lander asks
// for it (app.Lander): a merge written to the object database
// (MergeWrite), a merge commit made with commit-tree (no worktree, index
// or ref touched), the target moved by compare-and-swap (MoveRef:
// update-ref NEW OLD, ErrRefMoved when it moved), the checkouts of the
// target brought along (SyncCheckouts, as updateInstead does), and the
// check run with sh -c (bounded, its process group killed at the end;
// started by Landing.Start, which the CLI makes coord's run supervisor
// so that the check dies with its lander) in a temporary detached
// worktree under
// <common git dir>/coord-land/ (AddCheckout, RemoveCheckout;
// CleanCheckouts removes what a killed lander left). No branch is ever
// created.
//
// Limits: the porcelain formats read here are git's stable ones (git
// 2.20 and later); merge-tree --write-tree needs git 2.38 or later
// (CheckMergeTree says so once, as a CodeIO error naming the version).
package gitrepo
