// Package setup is `coord setup claude|codex|gemini [--dry-run]
// [--remove]`: it registers `coord mcp` with an agent in the project's own
// configuration and installs coord's hooks (package hooks) there.
//
//	claude  .mcp.json (mcpServers.coord), .claude/settings.json (hooks)
//	codex   .codex/config.toml ([mcp_servers.coord], [features] codex_hooks), .codex/hooks.json (hooks)
//	gemini  .gemini/settings.json (mcpServers.coord and hooks)
//
// Promises: setup merges with what is there and never touches another
// server, another hook, or any other key: a JSON file keeps its keys in
// their order (only its layout becomes two-space indented JSON), a TOML
// file is edited line by line (comments and layout kept). Running it
// again changes nothing. --dry-run prints the change as a unified diff and
// writes nothing. --remove takes out exactly what setup adds: the coord
// server entry (when it runs coord mcp), the hook entries whose command
// is coord's hook for that agent (a group or event left empty by that
// goes too), the TOML lines marked "# coord setup"; a file left empty is
// removed. Files are replaced atomically, never through a symlink.
//
// Limits: a file setup cannot read without losing something (JSON with
// comments, invalid JSON or TOML, a server named coord that runs
// something else) is refused with exit 3 and left as it is.
package setup
