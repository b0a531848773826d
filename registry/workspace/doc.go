// Package workspace finds where a caller stands: the project root that
// holds the coordination tree (from --root, COORD_ROOT, or the nearest
// ancestor, across linked git worktrees), the directory an agent names as
// its session's project (ProjectDir), the caller's own worktree, the
// repository path of every path it names (Paths: the file it names, with
// symbolic links inside the repository resolved and never followed out
// of it; task files patterns likewise), its identity (--agent,
// COORD_AGENT, ROTD_AGENT_ID, else the UUID kept in .rotd/agent_id of its
// worktree), and what git says of its change (Staged, Summary).
//
// It reads git's own pointer files (.git, commondir, worktrees/*/gitdir)
// without a git binary, never blocking on a special file; the git commands
// it runs are bounded by a timeout. It keeps no coordination state.
package workspace
