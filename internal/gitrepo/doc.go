// Package gitrepo owns every call coord makes to git: one runner (run,
// Run) with one environment (no prompt, no optional locks, untranslated
// output), a timeout on every run and a typed Error; what the planner
// reads from history; and the operations on work in flight (docs/GIT.md):
// the branch checked out
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
// History (history.go, logparse.go, logsource.go, loggrep.go,
// logdiff.go) is what coord's planner learns from the repository: the
// commits (message, date, the paths each changed, with their status and
// renames) parsed by Parse, which accepts any input without panicking
// (FuzzParse), and the paths of the current tree. Refresh keeps a
// plan.Index up to date, reading only the commits since the index's
// head (from scratch when that head is no longer an ancestor of HEAD).
// Source is the history as the application asks for it (app.History):
// the index kept in <common git dir>/coord/plan-index.json (IndexFile),
// shared by every worktree, replaced atomically through fsops; a cache,
// rebuilt with a one-line warning when damaged. Source also answers
// app.Contents (Holders) with one bounded git grep. Diffs reads the
// changed line ranges of the newest commits (git log -U0) for the
// replay that measures the planner on a repository's own history.
// Merges contribute no paths of their own; renames are those git's
// rename detection (-M, 50% similarity) finds.
//
// Limits: the porcelain formats read here are git's stable ones (git
// 2.20 and later); merge-tree --write-tree needs git 2.38 or later
// (CheckMergeTree says so once, as a CodeIO error naming the version).
package gitrepo
