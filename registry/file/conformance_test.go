package file_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/backend"
	"github.com/rotd/coordination/registry/conformance"
	"github.com/rotd/coordination/registry/file"
)

// The test binary doubles as the suite's worker processes.
func TestMain(m *testing.M) { conformance.Main(m) }

// TestConformance runs the shared suite against the file engine (its
// checks with real processes run in TestConformanceProcesses).
func TestConformance(t *testing.T) { conformance.Run(t, fileHarness) }

// fileHarness: a project is a temporary directory with a coordination
// tree laid down by registry/backend.Init, opened by its file:// URL.
var fileHarness = conformance.Harness{
	Name: "file",
	New: func(t *testing.T) conformance.Project {
		root := t.TempDir()
		if _, _, err := backend.Init(context.Background(), backend.Options{Root: root}); err != nil {
			t.Fatalf("init: %v", err)
		}
		url := "file://" + root
		dir := filepath.Join(root, file.RelDir)
		return conformance.Project{
			URL:        url,
			Clocked:    true,
			LogRotates: true,
			Open: func(t *testing.T, clock coord.Clock) coord.Backend {
				b, err := backend.Open(context.Background(), backend.Options{URL: url, Clock: clock})
				if err != nil {
					t.Fatalf("open %s: %v", url, err)
				}
				return b
			},
			Corrupt: func(t *testing.T, part conformance.Part) string {
				name := map[conformance.Part]string{
					conformance.Registry: file.RegistryFile,
					conformance.KV:       file.KVFile,
					conformance.Leases:   file.LeasesFile,
					conformance.Quota:    file.QuotaFile,
				}[part]
				p := filepath.Join(dir, name)
				// Cut short mid-document, as a broken tool leaves it that
				// writes a new file and renames it into place (a registry
				// written over in place restores one commit further back:
				// registry/file's TestRestoreWrittenInPlace).
				data, err := os.ReadFile(p)
				if err != nil || len(data) < 4 {
					t.Fatalf("corrupt %s: %v (%d bytes)", p, err, len(data))
				}
				if err := os.WriteFile(p+".new", data[:len(data)/2], 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(p+".new", p); err != nil {
					t.Fatal(err)
				}
				return p
			},
			Keep: func(t *testing.T, part conformance.Part) func() {
				p := filepath.Join(dir, map[conformance.Part]string{conformance.Leases: file.LeasesFile, conformance.KV: file.KVFile}[part])
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatalf("keep %s: %v", p, err)
				}
				return func() {
					if err := os.WriteFile(p, data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			},
			Edit: func(t *testing.T, edit func([]byte) []byte) {
				p := filepath.Join(dir, file.RegistryFile)
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, edit(data), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			Raw: func(t *testing.T) map[string]string {
				out := map[string]string{}
				err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
					if err != nil {
						return err
					}
					rel, _ := filepath.Rel(dir, p)
					switch {
					case d.IsDir() && rel == file.HeartbeatDir:
						return filepath.SkipDir // beat instants (mtimes) and descriptions
					case d.IsDir():
						return nil
					case strings.HasPrefix(rel, file.LockDir+"/") && rel != file.EpochFile && rel != file.LeaseEpochFile && rel != file.KVRevFile:
						return nil // flock sidecars: who last held them
					}
					data, err := os.ReadFile(p)
					out[rel] = string(data)
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				return out
			},
		}
	},
}
