// Package file is coord's file-system engine: one coordination tree
// (<root>/.rotd/coordination, docs/FORMATS.md) behind the interfaces of
// package coord. Open returns a *Backend, which implements coord.Backend;
// package registry/backend is the one place that opens it from a URL.
//
// What it keeps, and how:
//
//   - Tasks: the registry (active_work_registry.json, format.Registry),
//     the dependency map, the epoch counter and the path locks. Every
//     Update runs under the flock of .lock/registry.lock (a sidecar never
//     renamed or replaced): it re-reads the registry, reconciles the task
//     lock files (agent_locks/) and the path-lock mirror (file_locks/)
//     against it (the registry is the truth), runs the transaction, and
//     commits in this order: the outbox's tasks appended to the archive
//     and fsynced, the epoch high-water mark (.lock/epoch) raised, new
//     lock files (O_CREAT|O_EXCL|O_NOFOLLOW), the registry (temp, fsync,
//     the registry it replaces hard-linked into .backup/ as the newest of
//     Backups generations, rename, directory fsync: the commit point,
//     carrying tasks, path locks and the counter at once), removal of
//     lock files no longer backed, the path-lock mirror, log lines. A crash between any two
//     steps leaves a state the next Update's reconcile repairs; an error
//     before the rename means nothing changed, a failure after it is a
//     warning (Options.Warn), never an error. View reads without a lock
//     (the registry is only ever replaced by rename).
//   - Beats: heartbeat/<agent>.beat, the mtime as liveness (package
//     heartbeat), judged on this machine's clock (Options.Clock).
//   - Leases, KV, Quota: leases.json, kv.json and quota.json, each read
//     strictly and replaced atomically and durably under its own flock;
//     the rules are coord's (LeaseSet, KVSpace, Quota). Lease epochs and
//     kv revisions have high-water marks in .lock/ (lease_epoch, kv_rev),
//     so a document restored from an older copy never reissues one.
//   - Config: config.json, read strictly on every Config; SetConfig
//     changes one key under .lock/config.lock (format.SetSetting: every
//     other key kept in place, the result read back strictly before it
//     replaces the file atomically and durably).
//   - Log: coordination.log, one write(2) per batch of lines under
//     .lock/log.lock, rotated daily (UTC) by rename to
//     coordination-YYYY-MM-DD.log (a first line dated in the future
//     does not date the log); read from its end, so the cost of the
//     last n lines does not grow with the log; followed across rotations.
//   - Changes: fsnotify on the tree's directories, coalesced.
//   - Artifacts: ROTD's files under .rotd/ (Options.RotdDir), each under
//     its own flock in .rotd/.lock/.
//   - Doctor: every invariant of the tree (kinds of files, strict parses,
//     locks and mirror against the registry, dependency cycles, the epoch
//     counter, temp files), with repairs that never remove or rewrite data
//     they cannot read.
//
// Reading is strict everywhere (package format): a file that does not
// parse is an error naming it (exit 2), before anything is written. And
// writing is held to reading (readback.go): no write makes a file its
// reader would refuse (larger than its read bound, or not parsing); such
// a change is refused with exit 1 before anything is written.
// Anything but a regular file where one belongs (a FIFO, socket, device,
// directory, symlink) is refused at once, never opened in a way that
// blocks (package fsops).
//
// Limits: flock is advisory and trustworthy only on a local file system
// (registry/backend refuses others unless told every agent is on one
// machine); every coord process on the tree must take the same flocks, so
// files in the tree must not be edited by hand while agents run; mixed
// coord versions on one tree are not supported (an older coord's path lock
// files are adopted once, then the registry holds them); liveness compares
// mtimes with the local clock, so all agents must share this machine's
// clock (a heartbeat in the future is clamped to now).
package file
