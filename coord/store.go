package coord

import (
	"context"
	"encoding/json"
	"time"
)

// The storage seam. Everything coord keeps lives behind these interfaces,
// defined here beside the rules they serve; each engine (the file tree in
// registry/file, NATS JetStream in registry/nats) implements all of them,
// and the application layer (coord/app) is their only caller. Rules stay
// out of the stores: a store loads, keeps exclusive what must be, and
// commits atomically; what a change means is decided by this package.
//
// Every method that can wait honours ctx: cancelled before a commit, it
// returns an error matching ErrInterrupted and has changed nothing; a
// commit already under way finishes first.

// TreeDir is where a project keeps its coordination tree, relative to
// the project root (docs/FORMATS.md): the file engine keeps its state there,
// and a caller finds its project by it.
const TreeDir = ".rotd/coordination"

// Backend is one storage engine opened on one project.
type Backend interface {
	// Name is the engine's name as the conformance suite and
	// `make conformance` print it: "file", "nats".
	Name() string
	// Where names the project for people: a directory or a URL with its
	// password masked.
	Where() string
	Tasks() TaskStore
	Beats() BeatStore
	Leases() LeaseStore
	KV() KVStore
	Quota() QuotaStore
	Log() LogStore
	Changes() Notifier
	// Artifacts is the locked writer of ROTD artifacts under the local
	// repository's .rotd/ (whatever engine keeps the coordination state,
	// artifacts are files of the caller's checkout); nil when the project
	// has no local root.
	Artifacts() ArtifactStore
	// Config is the project's settings (config.json on files).
	Config(ctx context.Context) (Config, error)
	// ConfigData is the stored settings document, config.json's content
	// (nil: none is stored).
	ConfigData(ctx context.Context) ([]byte, error)
	// SetConfig sets one setting to value (JSON; nil removes it) under
	// the engine's exclusion, every other key kept as stored. The result
	// is read as the strict reader reads config.json before it replaces
	// the stored settings atomically: a key that is not a setting or a
	// value it does not accept is CodeUsage, stored settings that do not
	// read are CodeIO, and then nothing is written. It returns the
	// settings now stored. Commands already running keep what they read.
	SetConfig(ctx context.Context, key string, value json.RawMessage) (Config, error)
	// Doctor checks the engine's own invariants (files parse, locks agree
	// with the registry, durability settings) and with repair fixes what it
	// safely can. Rules of the domain (dependency cycles) are checked by the
	// application on top.
	Doctor(ctx context.Context, repair bool) ([]Problem, error)
	Close() error
}

// TaskStore keeps the registry: tasks, the dependency map, the fencing
// counter and path locks, changed only through transactions.
type TaskStore interface {
	// Update runs fn on the registry under exclusion (a flock, or a
	// compare-and-set retried until Config's lock wait): it loads a
	// consistent state, repairs what a crash may have left (reconcile),
	// runs fn, and if fn succeeded and changed anything commits it
	// atomically: tasks, path locks, the epoch counter and the archive
	// outbox in one commit, then appends the Txn's events to the log. An
	// error from fn leaves everything as it was.
	Update(ctx context.Context, fn func(*Txn) error) error
	// View runs fn on a consistent snapshot. It takes no lock a writer
	// waits on, so a slow reader never slows an agent. fn must not change
	// the Txn.
	View(ctx context.Context, fn func(*Txn) error) error
	// ArchivedTasks returns every archived task, oldest first, an id once.
	ArchivedTasks(ctx context.Context) ([]*Task, error)
}

// BeatStore keeps heartbeats: an agent's last sign of life, judged on the
// store's own clock (a file's mtime against the local clock; on NATS the
// server's timestamps), never by comparing two hosts' clocks.
type BeatStore interface {
	// Beat marks agent alive now. With info, the agent's description is
	// replaced when its status, task, capabilities or registration
	// changed; without, a missing description is created idle.
	Beat(ctx context.Context, agent string, info *BeatInfo) error
	// List returns every agent with a heartbeat, by agent id, and the
	// store's current time.
	List(ctx context.Context) (beats []Beat, now time.Time, err error)
	// LastSeen returns the instants the given agents last beat (an agent
	// without a heartbeat is absent) and the store's current time. An
	// instant in the future is clamped to now, in the store too, so it
	// ages from now on and cannot pin a lock.
	LastSeen(ctx context.Context, agents []string) (map[string]time.Time, time.Time, error)
	// SeenAll is LastSeen for every agent with a heartbeat. A sweep reads
	// it before its commit and re-reads under the commit's exclusion only
	// the holders it shows silent (coord/app), so that a commit does not
	// wait on every holder's heartbeat.
	SeenAll(ctx context.Context) (map[string]time.Time, time.Time, error)
}

// LeaseStore keeps named auto-expiring locks with fencing epochs.
type LeaseStore interface {
	// Acquire grants req.Name to req.Holder for req.TTL with a new epoch,
	// or fails with CodeConflict naming the holder of a lease in force.
	Acquire(ctx context.Context, req LeaseRequest) (Lease, error)
	// Renew extends holder's lease (at epoch, or any with NoEpoch) by ttl
	// from now (0: by its own TTL); CodeLost if holder no longer holds it.
	Renew(ctx context.Context, name, holder string, epoch int64, ttl time.Duration) (Lease, error)
	// Release ends holder's lease; CodeLost if holder no longer holds it.
	Release(ctx context.Context, name, holder string, epoch int64) error
	// List returns the leases in force, by name.
	List(ctx context.Context) ([]Lease, error)
	// Sweep drops expired leases from storage; readers already ignore them.
	Sweep(ctx context.Context) (int, error)
}

// KVStore keeps the TTL key-value space.
type KVStore interface {
	Get(ctx context.Context, key string) (KVEntry, bool, error)
	// List returns the keys in force under prefix, sorted.
	List(ctx context.Context, prefix string) ([]KVEntry, error)
	// Set writes key = value for ttl if cond holds (CodeConflict
	// otherwise, naming the current revision).
	Set(ctx context.Context, key string, value json.RawMessage, ttl time.Duration, by string, cond KVCond) (KVEntry, error)
	// Delete removes key; it reports whether the key was in force.
	Delete(ctx context.Context, key string) (bool, error)
	Sweep(ctx context.Context) (int, error)
}

// QuotaStore keeps the shared usage counters.
type QuotaStore interface {
	Load(ctx context.Context) (*Quota, error)
	// Update runs fn on the counters under exclusion and commits them if
	// fn succeeds.
	Update(ctx context.Context, fn func(*Quota) error) (*Quota, error)
}

// LogStore keeps the append-only coordination log.
type LogStore interface {
	// Append appends events, each one whole line, never interleaved with
	// another writer's.
	Append(ctx context.Context, events ...Event) error
	// Read calls fn with the last n lines, oldest first (n <= 0: every
	// line), across rotations; its cost does not grow with the log's size
	// for n > 0. Torn and foreign lines are skipped and counted.
	Read(ctx context.Context, n int, fn func(line string) error) (skipped int, err error)
	// Follow returns a follower positioned at the end of the log.
	Follow(ctx context.Context) (LogFollower, error)
	// Rotate starts a new log when the current one holds an earlier UTC
	// day than now; it returns the name of the rotated log or "".
	Rotate(ctx context.Context, now time.Time) (string, error)
}

// LogFollower reads what is appended to the log, across rotations.
type LogFollower interface {
	// Poll returns the complete lines appended since the last call
	// without waiting.
	Poll(ctx context.Context) ([]string, error)
	Close() error
}

// Notifier tells waiters that shared state may have changed.
type Notifier interface {
	// Watch sends on the returned channel after changes (coalesced: one
	// value may stand for many) until ctx ends, when it is closed.
	// Notification is a hint: callers re-read state and keep a slow poll
	// as well. An error means notification is unavailable (inotify
	// limits, a network file system); callers then poll.
	Watch(ctx context.Context) (<-chan Change, error)
}

// Change is one notification. Missed says that notifications were lost
// (a queue overflowed, a connection dropped): anything may have changed,
// so a watcher rescans everything it tracks.
type Change struct{ Missed bool }

// Exclusive is an optional engine capability: a named lock held for the
// life of one process and released when the process ends, however it
// ends (a flock on the file engine). The watcher takes one so that a
// project has one watcher. A lock another process holds is refused at
// once with CodeConflict naming it.
type Exclusive interface {
	HoldExclusive(ctx context.Context, name string, holder []byte) (release func(), err error)
}

// Tidier is an engine that can drop what writers killed mid-write left
// behind and no live writer holds (the file engine's temp files; it
// also drops them in every Update). Maintenance calls it when the
// engine has it; it returns what it removed.
type Tidier interface {
	Tidy(ctx context.Context) ([]string, error)
}

// ArtifactStore writes ROTD artifacts (.rotd/tasks.jsonl,
// session_state.json, …) under their own locks.
type ArtifactStore interface {
	// Append appends one line (a JSON object for .jsonl).
	Append(ctx context.Context, name string, line []byte) error
	// Write replaces the artifact atomically (valid JSON for .json).
	Write(ctx context.Context, name string, data []byte) error
}

// Porter is an optional engine capability: a whole project read out and
// written in, for 'coord backend copy' (docs/MANY-MACHINES.md). Heartbeats are not
// part of a project's state to move: agents beat again on the new
// backend.
type Porter interface {
	// Export reads the whole project: the registry under the engine's
	// exclusion (a consistent state of tasks, path locks and the epoch
	// counter), the rest just after it.
	Export(ctx context.Context) (*Snapshot, error)
	// Import writes s into this project, which must hold no task, lease
	// or key in force (CodeConflict otherwise, and nothing is written).
	// The registry is written last: a failure before it leaves no task.
	Import(ctx context.Context, s *Snapshot) error
}

// Snapshot is a whole project as 'coord backend copy' moves it.
type Snapshot struct {
	// Registry is the registry document (registry/format) with its tasks,
	// claims and their epochs, path locks, and a last_epoch at least every
	// epoch the project issued.
	Registry []byte
	// DepMap, Config and Quota are dependency_map.json, config.json and
	// quota.json as stored (nil: none).
	DepMap, Config, Quota []byte
	// Leases and KV are those in force, with their epochs and revisions;
	// LeaseEpoch and KVRev are the highest issued (a destination issues
	// only larger ones).
	Leases     []Lease
	LeaseEpoch int64
	KV         []KVEntry
	KVRev      int64
	// Log is every log line, oldest first; Archive every archived task.
	Log     []string
	Archive []*Task
}
