// Package setup is `coord setup claude|codex|gemini [--dry-run]
// [--remove]`: it registers `coord mcp` with an agent in the project's own
// configuration and installs coord's hooks (package hooks) there, as the
// agents ship today (Claude Code 2.1.197, Codex CLI 0.171.0, Gemini CLI
// 0.61.0; formats_test.go holds what was checked).
//
//	claude  .mcp.json (mcpServers.coord), .claude/settings.json (hooks)
//	codex   .codex/config.toml ([mcp_servers.coord]), .codex/hooks.json (hooks)
//	gemini  .gemini/settings.json (mcpServers.coord and hooks)
//
// Every event an agent has for session start, before and after a tool,
// stop and session end is installed (Events). Codex's hooks need no
// feature flag: setup writes none, and takes out the deprecated
// [features] codex_hooks lines an earlier setup wrote.
//
// The command the agents run is "coord" when PATH's coord is this binary,
// else this binary's absolute path (Locate): a hook that cannot find
// coord exits 127, which every agent takes as a warning, so the edit
// guard would be off without a word.
//
// Promises: setup merges with what is there and never touches another
// server, another hook, or any other key. A file is edited as text: only
// coord's entries change, in the file's own layout (indentation, CRLF,
// one line or many), and every other byte stays (key order, comments in
// TOML and in Gemini's settings, a missing final newline). Running it
// again changes nothing. --dry-run prints the change as a unified diff
// and writes nothing. --remove takes out exactly what setup adds: the
// coord server entry (when it runs coord mcp), the hook entries whose
// command is coord's hook for that agent (a group or event left empty by
// that goes too), the TOML block marked "# coord setup". When coord's
// entries were the only change, --remove gives every file back byte for
// byte. Setup keeps no record of what was there: a container it found
// empty ("mcpServers": {}, as claude mcp remove leaves it) gets coord's
// entries in the other layout than one it creates (one line in a file of
// many lines, and the other way round), so --remove can tell which to
// leave; a file left holding nothing ({}) is removed when setup created
// it. Files are replaced atomically, never through a symlink. Setup ends
// by printing the one step the agent still needs (NextStep): approve the
// project's MCP server (Claude), trust the folder and the hooks (Codex),
// trust the folder (Gemini).
//
// Limits: a file setup cannot read without losing something (comments in
// a JSON file whose agent does not allow them, invalid JSON or TOML, a
// server named coord that runs something else) is refused with exit 3
// and left as it is. A trailing // comment after the last entry of an
// object ends up after coord's entry (still there, and back in place
// after --remove).
package setup
