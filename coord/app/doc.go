// Package app is coord's application API: every operation a front end
// offers (the CLI, the MCP server, the hooks, the dashboard, the
// scheduler) as one Go call with typed requests and results, over any
// storage engine that implements the interfaces of package coord.
//
// It owns the order of things (beat, sweep, claim, log), never the rules
// (those are coord's) and never the storage (the engine's). Front ends
// parse their input, call a Service method, and format the result; they
// hold no rule and name no storage package. Input in one of the formats
// of docs/FORMATS.md (a seed batch, a setting as a person types it, a task as
// the registry holds it) is read through Options.Formats, which the
// storage layer provides (registry/backend.Formats): front ends pass the
// bytes.
//
// Promises: a method that returns an error has changed nothing, not even
// the caller's heartbeat: an agent beats inside the commit that needs it
// (claim, inbox, register), so a refusal leaves no trace and a sweep that
// sees the commit sees the beat (an error after a commit is reported
// through Warn, and the method succeeds); every id and text is validated
// before any store is touched; every wait honours its context and returns
// an error matching coord.ErrInterrupted when it ends by cancellation.
//
// Git-aware operations (docs/GIT.md: where a task's work lives, write
// claims that hold until its work has landed, agents' worktrees) ask the
// caller's repository through Options.Repo (Repo), which the front end
// wires; the application never runs git itself and never holds the
// registry's exclusion while git runs. Without a repository nothing
// git-aware is recorded, and a write claim lasts until its task is
// released. Proof of checks (StartVerify, RecordReceipt, and Release
// under require_verified) names the tree of the caller's worktree, so
// without a repository it refuses (CodeConflict); VoidMovedReviews
// sends back reviewed work whose branch moved after the review.
//
// A front end that must not reach every write is given a narrow part of
// the Service instead: a Reader (reads only: the dashboard without a
// token) or a Supervisor (the acts on work the caller does not hold,
// see docs/COMMANDS.md#supervising: requeue, assign, unblock, approve and reject as a
// person), each act checked against the project's supervisors.
//
// Three pieces hold state across calls: a Worker (what an agent looping
// over tasks takes next, and when it waits), a Keeper (the claims a
// holder works on, kept alive in the background and fenced when they no
// longer can be: the holder stops before its claim can go stale), and a
// ConflictScanner (the work in flight as a long-running front end last
// merged it: it scans again only when a branch tip or a task moved).
//
// Git is the front end's: conflict scans (Conflicts) merge through the
// Merger they are given, the lander (Land) through the Lander it is
// given, planning (Plan, Replan: docs/PLANNING.md) learns from the History of
// Options.History, and the application never runs git itself.
//
// Landing (Land, docs/GIT.md) is one task at a time under the
// coord-land lease: a landing is recorded only after the target's ref
// moved by compare-and-swap, and work the target already holds is
// recorded, never merged again, so a lander killed at any instant leaves
// the target before or after one whole landing and the next lander
// finishes the record. A failed merge or check sends the task back to
// its owner (coord.Txn.SendBack); what the lander checks is recorded on
// the task (landing_at) for the displays (State.Landing).
package app
