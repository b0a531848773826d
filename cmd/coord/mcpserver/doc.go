// Package mcpserver is `coord mcp`: coord's operations as Model Context
// Protocol tools for one agent session, served over stdio with the
// official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// It is a front end like the CLI: every tool parses its typed input
// (the SDK infers and checks the input schema from the Go struct), calls
// one app.Service method as the session's agent, and returns the JSON the
// matching CLI command prints with --json as the tool's structured result
// (and the same JSON as its text). A command whose --json is a list or
// JSON lines is wrapped in an object named after it ({"tasks": […]},
// {"locks": […]}, {"log": […]}, …): MCP clients accept only an object
// as structured content. A refusal is a tool error (isError) whose
// structured content is {"code", "name", "message"} from coord's exit-code
// table, plus "holder" when the refusal names the agent holding what was
// refused; arguments the SDK rejects are refusals with code 1.
//
// Promises:
//   - nothing but protocol is written to the process's stdout: ServeStdio
//     points file descriptor 1 and os.Stdout at stderr before serving,
//     and speaks the protocol on a copy of the original descriptor;
//   - identity is resolved once, by the caller, for the server's life;
//   - the server remembers the epoch of every task it claimed, and
//     release, progress and block use it when the caller gives none, so
//     an agent is fenced without having to carry the epoch;
//   - wait is bounded (the caller's timeout, at most MaxWait) and sends
//     progress notifications while it waits, when the caller asked for
//     them with a progress token;
//   - every tool call is a sign of life (the agent's heartbeat moves).
//
// Limits: tools publish no output schema. The structured results carry
// the registry's own task encoding, unknown fields included (contract §2
// keeps them), which a closed inferred schema would refuse, and every
// byte of tools/list is read by every agent on every session (the
// default set stays under 6,000 bytes). The shapes are documented in the
// README and tested against the CLI's output.
package mcpserver
