// Package nats is coord's engine on NATS JetStream (server 2.12 or
// later): every store of coord.Backend for one namespace of one server or
// cluster, named by nats://[user:pass@]host:port[,host:port…][/NAMESPACE]
// (docs/MANY-MACHINES.md).
//
// What lives where (NS is the namespace):
//
//   - KV bucket coord_NS (stream KV_coord_NS, per-key TTL on from its
//     creation): "registry", the registry document in exactly the file
//     engine's format (registry/format: tasks, "last_epoch", "path_locks"),
//     compressed with S2 above 32 KiB; "depmap", the dependency map;
//     "config", config.json's content (SetConfig changes one key with a
//     compare-and-set; "backend" is refused there: it names where a
//     project lives); "quota", quota.json's; "meta", the
//     namespace's own record; "lease.<name>" and "kv.<key>", each with
//     the server-side TTL of the lease or key. Names and keys are
//     base64url in the subject, so any agent id, lease name or key is safe
//     there.
//   - stream coord_NS_log: the coordination log, one message per commit's
//     lines; stream coord_NS_archive: archived tasks, one message per
//     archive run; stream coord_NS_backup: the registry's last revisions,
//     copied there by the server (a source on the bucket), which 'coord
//     doctor --repair' restores from when the registry cannot be read
//     (backup.go).
//   - memory streams (not synced, lost when a single server restarts; the
//     engine makes them again when it finds them missing): coord_NS_mutex,
//     the advisory commit mutex; coord_NS_beats, the heartbeats,
//     "beat.<agent>" (a liveness tick) and "agent.<agent>" (the agent's
//     description), and "boot", which says since when they are complete.
//     An agent asked about that lost its heartbeat in a restart counts as
//     seen when the loss was noticed, so a live holder is judged stale no
//     sooner than stale_after after the restart (beats.go).
//
// A commit of the registry is a compare-and-set on the key's revision
// (Nats-Expected-Last-Subject-Sequence): it applies only if nothing
// changed since the transaction read it, so a claim is atomic without a
// lock; a commit that loses retries with jitter up to the lock wait, then
// fails with coord.CodeLockTimeout. Path locks, the fencing counter and a
// task's release are one document, hence one commit. The archive outbox is
// stored before the commit that removes its tasks. A commit whose
// acknowledgement is lost (a timeout, a leader failing over) is resolved,
// never guessed: each commit names itself and the ones it follows in its
// headers (Coord-Txn, Coord-Recent), and the writer reads them back to
// learn whether it landed before it retries.
//
// Time: liveness (heartbeats), lease and key expiry and every instant
// written into the registry are the server's clock: the engine learns it
// from a stream info (which carries the server's time) and advances it
// with the local monotonic clock, so no two hosts' wall clocks are ever
// compared. A lease or key past the expiry its value records is absent to
// every reader at once, and replaced by compare-and-set on its revision,
// whether or not the server's TTL timer has dropped it yet. A lease's
// epoch and a key's revision are the stream sequence of their write plus
// the namespace's base (meta, at most 2^52), strictly increasing.
//
// A test's clock (Options.Clock other than nil or coord.SystemClock,
// which every production caller passes) shifts the engine's now by its
// offset from this host's wall clock, read at each use, and each
// heartbeat notes the offset at its write (header Coord-Skew) so that
// its server timestamp is read back on the same timeline: advancing the
// clock ages beats, claims, leases, keys and path locks exactly as on
// files, and the conformance suite moves time here as there. The shift
// is the test's own view: on the system clock the engine neither shifts
// nor honours a note, so no client's clock decides what a production
// reader judges. Exclusive locks (renewed in real time) are judged on the
// server's clock even then. Instants a shifted client writes into the
// registry are on its timeline: never open a shared namespace with one.
//
// Limits: the registry is one document, so every commit moves all of it
// (a claim at 1,000 tasks sends about 230 KB each way) and concurrent
// committers serialise on one key; archive done tasks to keep it small. A
// document must fit the server's max_payload (1 MB by default; the hub
// sets 8 MB) after compression, and 64 MiB before it (what a reader
// decompresses): a commit that would not, or whose document (or log or
// archive line) a reader would refuse, is refused before anything is
// sent, exit 1 (readback.go). Durability is the server's: only a
// server that syncs every write (coord hub does; sync_interval: always)
// keeps an acknowledged commit through a power cut, and only a replicated
// (R3) stream survives the loss of a node. Doctor says what it can see of
// both.
package nats
