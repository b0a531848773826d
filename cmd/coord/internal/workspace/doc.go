// Package workspace finds where a caller stands: the project root that
// holds the coordination tree (from --root, COORD_ROOT, or the nearest
// ancestor, across linked git worktrees), the caller's own worktree, the
// repository path of every path it names (Paths: the file it names, with
// symbolic links inside the repository resolved and never followed out
// of it; task files patterns likewise), its identity (--agent,
// COORD_AGENT, ROTD_AGENT_ID, else the UUID kept in .rotd/agent_id of its
// worktree), what git says of its change (Staged, Summary, Branch; and
// FromGit, git's paths as project paths), and
// the agents' configuration files in its repository (ReadProjectFile,
// WriteProjectFile: never through a symlink, replaced atomically).
//
// It serves the front ends (the CLI, the hooks, the MCP server, setup),
// which resolve the caller's position once and hand the application
// plain values (a root, an agent id, repository paths). It is not
// storage: it keeps no coordination state (it finds a project by the
// contract's coord.TreeDir, which the storage engines lay down).
// Nor is it the application's view of git: work that coord does on a
// repository on a caller's behalf (worktrees, branches, merges) belongs
// behind an interface of the application, not here.
//
// It reads git's own pointer files (.git, commondir, worktrees/*/gitdir)
// without a git binary, never blocking on a special file; the git commands
// it runs are bounded by a timeout.
package workspace
