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
// Limits: merges contribute no paths of their own (their changes arrive
// with the commits they merged); renames are those git's rename detection
// (-M, 50% similarity) finds; a commit message is kept up to
// plan's bound on a body.
package gitlog
