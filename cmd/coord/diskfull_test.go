package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// diskFullScript runs inside a private mount namespace: a 64 KiB tmpfs
// holds the tree; it is filled to the last block, then remounted
// read-only. Each refused command must exit 2, leave the registry
// byte-identical and leave no temp file. Output lines are "KEY VALUE".
const diskFullScript = `
set -u
D=$1; C=$2
mount -t tmpfs -o size=64k tmpfs "$D" || exit 77
cd "$D"
"$C" --root . init >/dev/null || exit 10
printf '{"id":"t1","title":"a"}\n{"id":"t2","title":"b"}\n' > /tmp/coord-df-seed.$$
"$C" --root . seed-tasks /tmp/coord-df-seed.$$ >/dev/null || exit 11
"$C" --root . --agent a claim >/dev/null || exit 12
"$C" --root . --agent b beat || exit 13
reg=.rotd/coordination/active_work_registry.json
sum() { sha256sum "$reg" .rotd/coordination/agent_locks/* | sha256sum | cut -c1-16; }
temps() { find .rotd/coordination -mindepth 1 -name '.*' ! -name .lock ! -name .backup ! -path '*/.lock/*' | wc -l; }
before=$(sum)
cat /dev/zero > fill 2>/dev/null
"$C" --root . --agent b claim 2>/tmp/coord-df-err.$$; echo "full-claim $?"
echo "full-claim-err $(head -c 300 /tmp/coord-df-err.$$ | tr '\n' ' ')"
"$C" --root . --agent a release t1 --summary x 2>/dev/null; echo "full-release $?"
printf '{"id":"t3","title":"c"}\n' > /tmp/coord-df-seed.$$
"$C" --root . --agent a seed-tasks /tmp/coord-df-seed.$$ 2>/dev/null; echo "full-seed $?"
echo "full-same $([ "$before" = "$(sum)" ] && echo yes || echo no)"
echo "full-temps $(temps)"
echo "full-temp-names $(find .rotd/coordination -mindepth 1 -name '.*' ! -name .lock ! -name .backup ! -path '*/.lock/*' | tr '\n' ' ')"
rm fill
mount -o remount,ro "$D" || exit 78
"$C" --root . --agent b claim 2>/dev/null; echo "ro-claim $?"
"$C" --root . --agent a release t1 --summary x 2>/dev/null; echo "ro-release $?"
echo "ro-same $([ "$before" = "$(sum)" ] && echo yes || echo no)"
mount -o remount,rw "$D"
"$C" --root . --agent b claim >/dev/null; echo "after-claim $?"
"$C" --root . doctor >/dev/null; echo "after-doctor $?"
rm -f /tmp/coord-df-seed.$$ /tmp/coord-df-err.$$
`

// TestDiskFullAndReadOnly: scenario 9 on a real file system, not chmod
// (CI runs as root, so permissions prove nothing). Needs unshare(1); as a
// non-root user, a user namespace maps us to root.
//
// Broken build this fails against: fsops.Tree.WriteFile without the
// temp-file cleanup on a failed write (full-temps > 0).
func TestDiskFullAndReadOnly(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare not available; the fault-seam tests in registry cover ENOSPC and EROFS")
	}
	args := []string{"--mount"}
	if os.Geteuid() != 0 {
		args = []string{"--user", "--map-root-user", "--mount"}
	}
	dir := t.TempDir()
	args = append(args, "sh", "-c", diskFullScript, "sh", dir, os.Args[0])
	cmd := exec.Command("unshare", args...)
	cmd.Env = append(os.Environ(), workerEnv+"=cli")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok && (ee.ExitCode() == 77 || strings.Contains(string(out), "unshare failed")) {
		t.Skipf("cannot mount a tmpfs here: %s", out)
	}
	if err != nil {
		t.Fatalf("script: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(l, " "); ok {
			got[k] = v
		}
	}
	want := map[string]string{
		"full-claim": "2", "full-release": "2", "full-seed": "2", "full-same": "yes", "full-temps": "0",
		"ro-claim": "2", "ro-release": "2", "ro-same": "yes",
		"after-claim": "0", "after-doctor": "0",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %q, want %q", k, got[k], w)
		}
	}
	if e := got["full-claim-err"]; !strings.HasPrefix(e, "coord: ") || !strings.Contains(e, "disk is full") || !strings.Contains(e, ".rotd/coordination") {
		t.Errorf("disk-full error is not one line naming the file and the fix: %q", e)
	}
	if t.Failed() {
		t.Logf("script output:\n%s", out)
	}
}
