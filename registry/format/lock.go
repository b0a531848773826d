package format

import (
	"encoding/json"

	"github.com/rotd/coordination/coord"
)

// LockInfo is a task lock file's content, agent_locks/<task>.<agent>.lock
// (a superset of ROTD's lock_file schema).
type LockInfo struct {
	Holder string `json:"holder"`
	Since  string `json:"since"`
	TaskID string `json:"task_id"`
	Epoch  int64  `json:"epoch"`
	PID    int    `json:"pid"`
	Host   string `json:"host"`
}

// ParseLockInfo reads a lock file's content strictly (as every JSON coord
// reads); file names it in errors.
func ParseLockInfo(file string, data []byte) (LockInfo, error) {
	var li LockInfo
	if err := CheckStrict(file, data); err != nil {
		return li, err
	}
	if err := json.Unmarshal(data, &li); err != nil {
		return li, &ParseError{file, "not a lock file: " + err.Error()}
	}
	return li, nil
}

// EncodeLockInfo is a lock file's content: one JSON object and a newline.
func EncodeLockInfo(li LockInfo) []byte {
	b, _ := json.Marshal(li)
	return append(b, '\n')
}

// ParsePathLock reads a path lock file (file_locks/<sha1>.lock) strictly:
// one coord.PathLock as a JSON object.
func ParsePathLock(file string, data []byte) (coord.PathLock, error) {
	var l coord.PathLock
	if err := Unmarshal(file, data, &l); err != nil {
		return l, err
	}
	if err := CheckPathLock(l); err != nil {
		return l, &ParseError{file, err.Error()}
	}
	return l, nil
}

// EncodePathLock is a path lock file's content: one JSON object (as in
// the registry's "path_locks") and a newline.
func EncodePathLock(l coord.PathLock) []byte {
	return append(AppendPathLock(nil, l), '\n')
}
