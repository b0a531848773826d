package file

import (
	"strconv"
	"strings"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/fsops"
	"github.com/rotd/coordination/heartbeat"
)

// Names inside the coordination directory (docs/FORMATS.md), defined here
// once.
const (
	RegistryFile = "active_work_registry.json"
	DepMapFile   = "dependency_map.json"
	ConfigFile   = "config.json"
	QuotaFile    = "quota.json"
	KVFile       = "kv.json"
	LeasesFile   = "leases.json"
	LogFile      = "coordination.log"
	LocksDir     = "agent_locks"
	FileLocksDir = "file_locks"
	HeartbeatDir = heartbeat.DirName
	LockDir      = ".lock"
	ArchiveDir   = "archive"
	// BackupDir keeps the registries that commits replaced (BackupName).
	BackupDir = ".backup"

	// EpochFile is the epoch high-water mark (see epoch.go);
	// LeaseEpochFile and KVRevFile are the lease epochs' and the kv
	// revisions' (see counters.go).
	EpochFile      = LockDir + "/epoch"
	LeaseEpochFile = LockDir + "/lease_epoch"
	KVRevFile      = LockDir + "/kv_rev"

	// The flock sidecars in .lock/, one per mutable artifact, never
	// renamed or replaced.
	registryLock  = LockDir + "/registry.lock"
	logLock       = LockDir + "/log.lock"
	leasesLock    = LockDir + "/leases.lock"
	kvLock        = LockDir + "/kv.lock"
	quotaLock     = LockDir + "/quota.lock"
	configLock    = LockDir + "/config.lock"
	archiveLock   = LockDir + "/archive.lock"
	fileLocksLock = LockDir + "/file_locks.lock"
)

// Read bounds: a larger file is refused with a clear error instead of
// exhausting memory.
const (
	// MaxRegistrySize bounds the registry (and an archive file): 64 MiB
	// holds well over 100,000 tasks; archiving keeps finished work out of
	// the active registry.
	MaxRegistrySize = 64 << 20
	// MaxArtifact bounds an artifact written through coord.
	MaxArtifact = coord.MaxArtifact
	// maxSmallFile bounds config.json and a lock file (the dependency map
	// and quota.json may be 16 times larger, leases and kv 64 times).
	maxSmallFile = 1 << 20
)

// Backups is how many registries before the current one .backup/ keeps.
const Backups = 3

// BackupName is the registry backup of generation n: 0 is a link to the
// registry as the last commit wrote it, 1 the registry it replaced, and
// so on up to Backups.
func BackupName(n int) string { return BackupDir + "/" + RegistryFile + "." + strconv.Itoa(n) }

// Subdirs are the directories that must be real directories, never
// symlinks; init makes them. BackupDir is among them, but a tree made
// before it existed works without it (the first commit makes it).
var Subdirs = []string{LocksDir, FileLocksDir, HeartbeatDir, LockDir, ArchiveDir, BackupDir}

// RelDir is the coordination directory relative to the project root
// (coord.TreeDir: the contract's place, where callers find projects by it).
const RelDir = coord.TreeDir

// LockName is the lock file name of task held by agent.
func LockName(task, agent string) string { return task + "." + agent + ".lock" }

// SplitLockName splits "<task>.<agent>.lock" at its last dot before
// ".lock"; ok is false when either id is invalid.
func SplitLockName(name string) (task, agent string, ok bool) {
	base, found := strings.CutSuffix(name, ".lock")
	if !found {
		return "", "", false
	}
	i := strings.LastIndexByte(base, '.')
	if i <= 0 {
		return "", "", false
	}
	task, agent = base[:i], base[i+1:]
	if coord.ValidTaskID(task) != nil || coord.ValidAgentID(agent) != nil {
		return "", "", false
	}
	return task, agent, true
}

// IsTempName reports whether a directory entry is an atomic-write temp
// file (fsops.IsTempName: "." + a base name + digits).
func IsTempName(name string) bool { return fsops.IsTempName(name) }
