// Package hooks is `coord hook AGENT [EVENT]`: what coord does when an
// agent's own hook system calls it (Claude Code, Codex CLI, Gemini CLI).
// The agent sends one JSON payload on stdin; the hook answers in that
// agent's convention (exit status, stdout JSON, stderr) and exits.
//
//	event (claude / codex / gemini)                what coord does
//	SessionStart                                   the prime text, what the agent holds, as added context;
//	                                               COORD_AGENT exported through CLAUDE_ENV_FILE / CODEX_ENV_FILE
//	PreToolUse / PreToolUse / BeforeTool (edits)   take the files for the task the agent holds (write claims,
//	                                               all or nothing, app.Service.WriteClaim), or refuse (exit 2,
//	                                               the holder and the task on stderr) when another agent's
//	                                               path lock or held task's files cover a file, or another
//	                                               task in flight wrote it (write_claims: warn names it only,
//	                                               as a line of added context: no agent reads stderr at exit 0)
//	                                               a file coord plan predicted for another agent's task in
//	                                               flight is never refused: one line of added context names
//	                                               that task, at the writer's first write of the file
//	                                               (Gemini reads no added context on BeforeTool: these lines
//	                                               are its systemMessage, for the user, and wait in the
//	                                               worktree's git directory for the session's next AfterTool
//	                                               of an edit tool, which gives them to the model)
//	PostToolUse, PostToolUseFailure / PostToolUse / AfterTool
//	                                               beat (Claude sends a failed tool to PostToolUseFailure);
//	                                               a conflict of the agent's work not yet told (coord conflicts,
//	                                               watch, schedule found it): one line of added context
//	                                               (hookSpecificOutput.additionalContext, all three), once
//	Stop / Stop / AfterAgent                       a task still claimed: ask the agent to release or block it,
//	                                               once per stop (never when stop_hook_active)
//	SessionEnd / SessionEnd / SessionEnd           hand held tasks back as on_stale says, drop its path locks
//	                                               (not on /clear or /resume: the same agent goes on)
//
// Promises: a hook never fails the agent's session on coord's own errors
// (a bad payload, an unreadable registry, a lock timeout): it says so in
// one line on stderr and exits 1, which all three agents treat as a
// warning, and the tool runs; a NATS hub out of reach is reported so
// within about ConnectTimeout (2 s), shorter than a command's 8 s, as a
// hook runs before every edit. Only a real conflict on an edit exits 2. A
// project without a coordination tree is not coord's: the hooks do
// nothing there (session start says so on stderr). The edited files are
// mapped to repository paths as every command maps them
// (workspace.Paths), so a worktree's absolute path is guarded like the
// main checkout's, a path through a symlinked folder like its target's,
// and a write through a link to a file as a write of that file too.
//
// A write to files the agent's task already holds, or by an agent that
// holds no task, reads the registry once and commits nothing.
//
// Limits: only the agents' edit tools are guarded; a write through a shell
// command is not seen (coord guard, the pre-commit hook, stays the
// backstop, and coord conflicts finds what slipped past both). Gemini runs SessionEnd without waiting for it, and a session
// killed outright runs none: a held task is then freed by the stale
// sweep.
package hooks
