package fsops

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

func TestClassifyFS(t *testing.T) {
	for _, tc := range []struct {
		magic int64
		safe  bool
	}{
		{0xef53, true},      // ext4
		{0x01021994, true},  // tmpfs
		{0x58465342, true},  // xfs
		{0x9123683e, true},  // btrfs
		{0x6969, false},     // nfs
		{0x01021997, false}, // 9p
		{0x65735546, false}, // fuse
		{0xff534d42, false}, // cifs
		{-0xacb2be, false},  // cifs magic as a negative int32 on some arches
	} {
		name, safe, err := classifyFS(tc.magic)
		if err != nil || safe != tc.safe {
			t.Errorf("classifyFS(%#x) = %q, %v, %v; want safe=%v", tc.magic, name, safe, err, tc.safe)
		}
	}
}

func TestCheckLocalFS(t *testing.T) {
	dir := t.TempDir()
	if err := CheckLocalFS(dir); err != nil {
		t.Fatalf("local temp dir refused: %v", err)
	}
	old := statfs
	defer func() { statfs = old }()
	statfs = func(_ string, st *unix.Statfs_t) error { st.Type = 0x6969; return nil }
	if err := CheckLocalFS(dir); !errors.Is(err, ErrUnsafeFS) {
		t.Fatalf("nfs magic accepted: %v", err)
	}
}
