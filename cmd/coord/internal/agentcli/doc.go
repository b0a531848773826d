// Package agentcli holds no code, only tests: the agents' real CLIs
// (Claude Code, Codex CLI, Gemini CLI, installed from npm) driven through
// whole sessions under `coord run --loop`, in a repository where `coord
// setup` installed coord's hooks and MCP server, with the model replaced
// by a scripted server on loopback that speaks just enough of each
// provider's API (Anthropic Messages, OpenAI Responses, Gemini
// generateContent) to play one fixed script: write a file named after
// the task with the edit tool, commit it through the shell tool, answer
// in text.
//
// The sessions run only when COORD_AGENT_CLIS is set (make test-agents
// sets it to the directory it installed the CLIs in); a CLI found
// neither there nor on PATH is skipped. Every session gets a HOME,
// CODEX_HOME and configuration of its own in a temporary directory and
// a dummy key: nothing is read from or written to the user's own
// ~/.claude, ~/.codex or ~/.gemini, and nothing leaves the machine.
package agentcli
