package workspace

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rotd/coordination/coord"
)

// TestProjectFile: a project file is read, created with its directory,
// replaced keeping its mode, removed; never through a symlink.
func TestProjectFile(t *testing.T) {
	top := t.TempDir()
	if _, ok, err := ReadProjectFile(top, ".claude/settings.json"); ok || err != nil {
		t.Fatalf("missing file: ok %v err %v", ok, err)
	}
	if err := WriteProjectFile(top, ".claude/settings.json", []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(top, ".claude/settings.json"), 0o600)
	if err := WriteProjectFile(top, ".claude/settings.json", []byte("{\"a\":1}\n")); err != nil {
		t.Fatal(err)
	}
	b, ok, err := ReadProjectFile(top, ".claude/settings.json")
	if err != nil || !ok || string(b) != "{\"a\":1}\n" {
		t.Fatalf("read back %q %v %v", b, ok, err)
	}
	if fi, _ := os.Stat(filepath.Join(top, ".claude/settings.json")); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600 kept", fi.Mode().Perm())
	}
	if err := RemoveProjectFile(top, ".claude/settings.json"); err != nil {
		t.Fatal(err)
	}
	if err := RemoveProjectFile(top, ".claude/settings.json"); err != nil {
		t.Fatalf("removing a missing file: %v", err)
	}
	elsewhere := t.TempDir()
	os.WriteFile(filepath.Join(elsewhere, "x.json"), []byte("{}"), 0o644)
	os.Symlink(elsewhere, filepath.Join(top, ".gemini"))
	if _, _, err := ReadProjectFile(top, ".gemini/x.json"); coord.CodeOf(err) != coord.CodeIO {
		t.Fatalf("read through a symlinked directory: %v", err)
	}
	if err := WriteProjectFile(top, ".gemini/x.json", []byte("{\"evil\":1}")); coord.CodeOf(err) != coord.CodeIO {
		t.Fatalf("write through a symlinked directory: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(elsewhere, "x.json")); string(b) != "{}" {
		t.Fatalf("the symlink's target was written: %q", b)
	}
}
