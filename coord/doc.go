// Package coord holds the domain of multi-agent coordination: tasks and their
// states, identifiers, eligibility and priority rules, path-pattern overlap,
// the fencing epoch, what "in flight" means and the write claims it holds
// (Task.InFlight, Txn.WriteClaim), predicted paths and how eligibility
// treats them (predict.go: predicted_files count as files unless the
// project says warn or off; never a reason to refuse a write), how many
// agents to run now (advise.go), log-line format, the error type with its
// documented exit codes, and the clock.
//
// It does no I/O. Storage lives behind the Backend interface (implemented for
// the local file system by package registry); the operations in this package
// (Claim, Release, Sweep, …) mutate an in-memory Txn that the backend loaded
// under its exclusive lock and will commit atomically.
//
// Promises: every operation validates its ids, and its free text against
// the bounds of text.go (MaxTitle, MaxDescription, MaxNote), before it
// returns a Txn change; an operation that returns an error has left the
// Txn unchanged; the epoch issued by Claim is strictly greater than every
// epoch the registry has seen; no counter (task epoch, lease epoch, kv
// revision) is ever issued above MaxCounter (2^53), and a value above it,
// never issued, raises none.
package coord
