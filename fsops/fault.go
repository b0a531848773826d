package fsops

import "sync/atomic"

// Op names a mutating file-system step, for the fault seam.
type Op string

// The steps the seam sees, in the order a durable write makes them.
const (
	OpCreate  Op = "create"  // open with O_CREAT (temp files, lock files, appends)
	OpWrite   Op = "write"   // write(2) of file data
	OpSync    Op = "fsync"   // fsync(2) of a file
	OpRename  Op = "rename"  // rename(2) / link(2) into place
	OpRemove  Op = "unlink"  // unlink(2)
	OpSyncDir Op = "dirsync" // fsync(2) of a directory
	OpChtimes Op = "chtimes" // utimensat(2)
	OpMkdir   Op = "mkdir"
)

// FaultHook is called before every mutating step with the step and the
// path it concerns (relative to the tree). A non-nil error is returned
// from the operation as if the system call had failed, before the step
// is made. Tests use it to crash at the N-th step, to inject EIO or
// ENOSPC, and to record what was made durable; the production binary
// never sets it.
type FaultHook func(op Op, path string) error

var hook atomic.Pointer[FaultHook]

// SetFaultHook installs h (nil removes it). Test code only.
func SetFaultHook(h FaultHook) {
	if h == nil {
		hook.Store(nil)
		return
	}
	hook.Store(&h)
}

func step(op Op, path string) error {
	if h := hook.Load(); h != nil {
		return (*h)(op, path)
	}
	return nil
}
