// Package heartbeat is the file engine's heartbeat store (coord.BeatStore):
// heartbeat/<agent>.beat files in the coordination tree, whose mtime is
// the agent's last sign of life. Package registry/file serves it as its
// Beats(); nothing else uses it.
//
// A beat moves the mtime (Chtimes, no data written); the file's content
// (ROTD's heartbeat schema, coord.BeatInfo) is rewritten atomically only
// when the agent's status, task, capabilities or skill level change, and
// without fsync: after a power loss it may be the previous description or
// empty, which readers treat as no description.
//
// Liveness is judged on this machine's clock: a file's mtime against the
// Dir's Clock. LastSeen clamps an mtime in the future to now, on disk too,
// so a skewed or hostile clock cannot pin a lock: the heartbeat ages from
// now on. Only a regular file is a heartbeat: a FIFO, socket, device or
// directory at an agent's name is never opened in a way that blocks, and
// never counts (the agent's lock then ages from its claim).
//
// Limits: mtimes are only as good as the file system's clock and
// resolution; the tree must be on a local file system (see fsops). The
// stale sweep that reads the heartbeats is the application's
// (coord/app.Service.Sweep), judged by the domain's rules
// (coord.Txn.JudgeStale).
package heartbeat
