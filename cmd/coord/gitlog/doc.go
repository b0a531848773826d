// Package gitlog reads what coord's planner learns from a git repository:
// the commits (message, date, and the paths each changed, with their
// status and renames) and the paths of the current tree. It runs git as a
// child process, each run bounded by a timeout, and parses its output
// with Parse, which accepts any input without panicking (FuzzParse).
//
// Refresh keeps a plan.Index up to date: it reads only the commits made
// since the index's head, and reads the history again from scratch when
// that head is no longer an ancestor of HEAD (a rewritten branch).
//
// Source is the history as coord's application asks for it
// (app.History): the index kept in <common git dir>/coord/
// plan-index.json (IndexFile), shared by every worktree, brought up to
// HEAD at each Load by reading only the new commits, replaced atomically
// through fsops when it changed. The file is a cache: a damaged or
// foreign one is rebuilt from the history with a one-line warning, and
// a failure to save it is a warning, never an error.
//
// Source also implements app.Contents (Holders): the tracked files of
// the work tree whose contents hold the identifiers a batch of tasks
// names, found by one git grep (fixed strings, whole words, text files)
// bounded by a timeout and by the bytes read.
//
// Diffs reads the changed line ranges of the newest commits (git log
// -U0, bounded by a timeout and by the bytes read), for the replay that
// measures the planner on this repository's own history (coordbench).
//
// Limits: merges contribute no paths of their own (their changes arrive
// with the commits they merged); renames are those git's rename detection
// (-M, 50% similarity) finds; a commit message is kept up to
// plan's bound on a body.
package gitlog
