// Package conformance is the suite every storage engine must pass: one set
// of checks, run against each engine by name, in the manner of
// litestream's replica-client integration tests. An engine provides a
// Harness (how to make a fresh project, open it, damage it by hand and
// read its raw state); Run runs every check against it as subtests of
// TestConformance/<engine>/<check>.
//
// The checks drive the rules through coord/app.Service wherever the
// operation exists there, so they exercise the engine exactly as the front
// ends use it:
//
//   - contention: real OS processes (the test binary re-executed as
//     workers that open the project by its URL through registry/backend)
//     claim, hold, hand back and release until the registry drains; no two
//     workers ever hold one task at once (an O_EXCL marker per held task,
//     outside the engine), every task is released exactly once, epochs are
//     unique, grow along each worker's and each task's history, and agree
//     with the log's claim lines;
//   - fencing, the stale sweep's re-check (an injected beat or reclaim
//     between its judgement and its commit), the sweep's dry run, a
//     claim's beat inside its commit (a sweep just before the beat never
//     sees the new claim with the old heartbeat; a refused claim or
//     registration does not beat), the
//     liveness view, TTL expiry and fencing of leases, kv TTLs and
//     conditional writes, path locks (directories, globs, all or nothing,
//     freed with the task in one commit, by the sweep and by TTL), change
//     notification and Wait waking on another agent's release, archive,
//     quota limits and overflow, log append and follow across a
//     rotation, strict refusal of damaged state (every operation on it
//     fails with code 2 naming it, nothing is written, and doctor reports
//     it), refusal of a change whose result the engine could not read
//     back (code 1, nothing written: a registry grown past the reader's
//     bound, a log line longer than any reader takes, a kv value the
//     strict reading refuses), doctor on a project after ordinary use,
//     and the project's settings changed one key at a time (validated,
//     nothing written when refused, no update lost between concurrent
//     writers).
//
// Run prints one line per engine, "backend NAME: N passed, M failed", which
// `make conformance` shows.
//
// Adding an engine is one Harness and one line in TestConformance
// (registry/conformance/conformance_test.go).
//
// Limits: checks that move time need an engine that honours an injected
// coord.Clock for every instant it keeps and judges (Project.Clocked); on
// an engine that cannot they are skipped, and say so. Both engines honour
// it (the NATS engine by shifting its server clock by the injected one's
// offset; registry/nats's package doc).
// The multi-process check is skipped under the race detector (it cannot
// see across processes and slows each ~10×), and so is read-back-size,
// which moves 65 MiB; make's non-race pass runs them.
// A test binary that calls Run must route its TestMain through Main, which
// turns a re-executed copy into a worker.
//
// The package imports registry/backend (workers open projects by URL, the
// way every front end does) and coord/app; no engine imports it.
package conformance
