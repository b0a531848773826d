// Package mcpserver is `coord mcp`: coord's operations as Model Context
// Protocol tools for one agent session, served over stdio. The protocol
// is its own small core (rpc.go: JSON-RPC 2.0 one message a line, the
// initialize handshake, ping, tools/list, tools/call with progress and
// cancellation, prompts), not an SDK: every coord process links what
// this package imports, and the official Go SDK with its JSON Schema and
// OAuth packages cost each one about 0.25 ms of package initialisation
// at start (the edit hook among them). The tests drive it with the
// official Go SDK's client, and scripts/mcp-smoke.sh with the MCP
// Inspector.
//
// It is a front end like the CLI: every tool parses its typed input
// (schema.go infers the input schema from the Go struct and checks the
// arguments against it), calls
// one app.Service method as the session's agent, and returns the JSON the
// matching CLI command prints with --json as the tool's structured result
// (and the same JSON as its text). A command whose --json is a list or
// JSON lines is wrapped in an object named after it ({"tasks": […]},
// {"locks": […]}, {"log": […]}, …): MCP clients accept only an object
// as structured content. A refusal is a tool error (isError) whose
// structured content is {"code", "name", "message"} from coord's exit-code
// table, plus "holder" when the refusal names the agent holding what was
// refused; arguments that do not fit the input schema are refusals with
// code 1.
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
//   - every tool call that succeeds is a sign of life (the agent's
//     heartbeat moves); a refused one leaves no trace;
//   - while the session holds a task it claimed, it beats in the
//     background (app.Keeper), so a long think is not a silence; when no
//     beat has succeeded for half of stale_after (the backend
//     unreachable, the disk full), the task is fenced: every later call on
//     it answers code 6 (lost) until the session claims it again, and it
//     is handed back as soon as a beat succeeds. The session stops before
//     its claim can go stale and be given to another agent;
//   - a bad line never ends a session: one that is not JSON is answered
//     with a parse error (-32700, id null); a batch, or JSON that is not
//     a JSON-RPC message, with an invalid request (-32600, with its id
//     when it has a valid one); a line over MaxFrame bytes (16 MiB) is
//     read past without being kept and answered
//     with -32600 by the id found in it, wherever it stands; the
//     requests before and after it are served;
//   - the session ends when its context ends (coord mcp: SIGINT or
//     SIGTERM), at once: the calls in flight, a wait among them, are
//     cancelled, not waited out, and go unanswered; so is a call its
//     client cancels (notifications/cancelled).
//
// Limits: MCP revisions 2024-11-05 to 2025-11-25 (an initialize naming
// another is answered with 2025-11-25); tools and one prompt, no
// resources (resources/list is empty), nothing of sampling, roots or
// completion (-32601, method not found).
// JSON-RPC batches are refused (the protocol dropped them in 2025-06-18;
// no agent sends them). A client that closes its input ends
// the session and the calls still in flight are cancelled unanswered.
// Tools publish no output schema. The structured results carry
// the registry's own task encoding, unknown fields included (docs/FORMATS.md
// keeps them), which a closed inferred schema would refuse, and every
// byte of tools/list is read by every agent on every session (the
// default set stays under 6,000 bytes). The shapes are documented in
// docs/AGENTS.md and tested against the CLI's output.
package mcpserver
