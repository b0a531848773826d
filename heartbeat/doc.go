// Package heartbeat keeps agent liveness: heartbeat/<agent>.beat files
// whose mtime is the agent's last sign of life, and the stale-lock sweep
// that frees the tasks of agents that stopped beating.
//
// A beat moves the mtime (Chtimes, no data written); the file's content
// (ROTD's heartbeat schema) is rewritten atomically only when the agent's
// status, task or capabilities change, and without fsync: after a power
// loss it may be the previous description or empty, which readers treat
// as no description. Liveness compares the mtime with the sweeper's clock: a future mtime is clamped to now by the sweep, so a
// skewed or hostile clock cannot pin a lock. The sweep judges candidates
// without the registry lock, then frees each only after re-checking under
// the lock that the same agent still holds the task at the same epoch and
// that its heartbeat is still old.
package heartbeat
