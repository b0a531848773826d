package main

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestCompareGitMeasurements runs the measurements of -compare that make
// git fixtures (the hook's conflict scan, a landing) end to end, with a
// coord built from this checkout given twice: each fixture must come out
// as the measurement needs it (a landing by a merge, a scan with its
// merges cached), or the run is an error. The long tier's (it builds
// coord and starts a few hundred processes).
func TestCompareGitMeasurements(t *testing.T) {
	if testing.Short() {
		t.Skip("builds coord and starts a few hundred processes: the long tier's (make test-long)")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	bin := filepath.Join(t.TempDir(), "coord")
	build := exec.Command("go", "-C", filepath.Join("..", ".."), "build", "-o", bin, "./cmd/coord")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build coord: %v\n%s", err, out)
	}
	base := t.TempDir()
	if err := runCompare(bin, bin, "same", base, base, true, "hook,land", 0); err != nil {
		t.Fatal(err)
	}
}
