package file

import (
	"strings"

	"github.com/rotd/coord/coord"
)

// Names inside the coordination directory (contract §1).
const (
	RegistryFile = "active_work_registry.json"
	DepMapFile   = "dependency_map.json"
	ConfigFile   = "config.json"
	QuotaFile    = "quota.json"
	LogFile      = "coordination.log"
	LocksDir     = "agent_locks"
	FileLocksDir = "file_locks"
	HeartbeatDir = "heartbeat"
	LockDir      = ".lock"
	ArchiveDir   = "archive"

	registryLock = LockDir + "/registry.lock"
	logLock      = LockDir + "/log.lock"
)

// Subdirs are the directories that must be real directories, never
// symlinks.
var Subdirs = []string{LocksDir, FileLocksDir, HeartbeatDir, LockDir, ArchiveDir}

// RelDir is the coordination directory relative to the project root.
const RelDir = ".rotd/coordination"

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
// file left by a crash: renameio names them "." + target base + digits.
func IsTempName(name string) bool {
	if !strings.HasPrefix(name, ".") || len(name) < 3 {
		return false
	}
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	return i < len(name) && i > 1 && len(name)-i >= 5
}
