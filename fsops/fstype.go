package fsops

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// ErrUnsafeFS reports a file system on which flock and rename cannot be
// trusted to be exclusive and atomic across machines.
var ErrUnsafeFS = errors.New("network or user-space file system")

// unsafeFS maps statfs f_type magic numbers to names. On these, flock is
// emulated, local-only or silently a no-op (NFS without working lockd,
// 9p as used by WSL2 drvfs, FUSE backends, SMB/CIFS), and rename or
// fsync may not be atomic or durable the way local file systems promise.
var unsafeFS = map[int64]string{
	0x6969:     "nfs",
	0x01021997: "9p (v9fs, WSL2 drvfs)",
	0x65735546: "fuse",
	0x517b:     "smb",
	0xff534d42: "cifs",
	0xfe534d42: "smb2",
	0x00c36400: "ceph",
	0x5346414f: "afs",
	0x6b414653: "kafs",
	0x0bd00bd0: "lustre",
	0x01161970: "gfs2",
	0x7461636f: "ocfs2",
	0x013111a8: "ibrix",
	0x47504653: "gpfs",
	0x53464846: "wslfs (WSL1 drvfs)",
}

// FSType names dir's file system type and reports whether it is safe.
// statfs is a variable so tests can feed it any magic number.
func FSType(dir string) (name string, safe bool, err error) {
	var st unix.Statfs_t
	if err := statfs(dir, &st); err != nil {
		return "", false, err
	}
	return classifyFS(int64(st.Type))
}

var statfs = unix.Statfs

func classifyFS(magic int64) (string, bool, error) {
	magic &= 0xffffffff
	if n, ok := unsafeFS[magic]; ok {
		return n, false, nil
	}
	return fmt.Sprintf("0x%x", magic), true, nil
}

// CheckLocalFS returns an error wrapping ErrUnsafeFS if dir lives on a
// file system where coord's locks and atomic renames are not trustworthy.
func CheckLocalFS(dir string) error {
	name, safe, err := FSType(dir)
	if err != nil || safe {
		return err
	}
	return fmt.Errorf("%s is on %s: %w", dir, name, ErrUnsafeFS)
}
