package file

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotd/coordination/coord"
)

// Hostile registries: each is refused with an error naming the file,
// exit code 2 through the store, and nothing is written.
//
// Broken build this failed against: before the case-twin rule, a registry
// with "Status" beside a missing "status" was accepted and rewritten with
// both names (found by FuzzParse).
func TestHostileRegistries(t *testing.T) {
	deep := 20000
	cases := map[string]string{
		"20k-deep nesting":     `{"tasks":[],"x":` + strings.Repeat("[", deep) + strings.Repeat("]", deep) + `}`,
		"epoch past int64":     `{"tasks":[{"id":"a","epoch":99999999999999999999}]}`,
		"epoch fraction":       `{"tasks":[{"id":"a","epoch":1.5}]}`,
		"negative epoch":       `{"tasks":[{"id":"a","epoch":-1}]}`,
		"progress 101":         `{"tasks":[{"id":"a","progress":101}]}`,
		"NUL in id":            "{\"tasks\":[{\"id\":\"a\\u0000b\"}]}",
		"trailing garbage":     `{"tasks":[]}garbage`,
		"BOM":                  "\xef\xbb\xbf{\"tasks\":[]}",
		"case-variant in task": `{"tasks":[{"id":"a","Status":"done"}]}`,
		"number among deps":    `{"tasks":[{"id":"a","deps":["b",1]}]}`,
		"object among files":   `{"tasks":[{"id":"a","files":[{}]}]}`,
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			s := freshStore(t, crashSeed)
			if err := os.WriteFile(s.tree.Path(RegistryFile), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			err := s.update(context.Background(), func(tx *coord.Txn) error {
				t.Fatal("fn ran on a hostile registry")
				return nil
			})
			if coord.CodeOf(err) != coord.CodeIO || !strings.Contains(err.Error(), RegistryFile) {
				t.Fatalf("got %v (code %d), want exit 2 naming %s", err, coord.CodeOf(err), RegistryFile)
			}
			after, _ := os.ReadFile(s.tree.Path(RegistryFile))
			if string(after) != data {
				t.Fatal("the hostile registry was rewritten")
			}
		})
	}
}

// A 100 MB registry gets a clear error, not an out-of-memory kill: the
// read is bounded.
func TestHugeRegistryBounded(t *testing.T) {
	s := freshStore(t, crashSeed)
	f, err := os.OpenFile(s.tree.Path(RegistryFile), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(100 << 20); err != nil { // sparse: cheap to make
		t.Fatal(err)
	}
	f.Close()
	err = s.view(context.Background(), func(*coord.Txn) error { return nil })
	if coord.CodeOf(err) != coord.CodeIO || !strings.Contains(err.Error(), "too large") && !strings.Contains(err.Error(), "larger") {
		t.Fatalf("100 MB registry: %v", err)
	}
}

// Symlinks planted in place of agent_locks/ or heartbeat/, or at a lock
// path, never lead to a write outside the tree.
func TestPlantedSymlinks(t *testing.T) {
	for _, planted := range []string{LocksDir, HeartbeatDir, LocksDir + "/free.a.lock"} {
		t.Run(planted, func(t *testing.T) {
			s := freshStore(t, crashSeed)
			s.update(context.Background(), func(*coord.Txn) error { return nil })
			victim := t.TempDir()
			victimFile := filepath.Join(victim, "free.a.lock")
			os.WriteFile(victimFile, []byte("victim"), 0o644)
			path := s.tree.Path(planted)
			os.RemoveAll(path)
			target := victim
			if strings.HasSuffix(planted, ".lock") {
				target = victimFile
			}
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
			// Reopening refuses a symlinked subdirectory; a planted lock
			// link is replaced, never followed.
			s2, err := Open(s.tree.Dir(), Options{})
			if err == nil {
				s2.update(context.Background(), func(tx *coord.Txn) error {
					_, err := tx.Claim(coord.Agent{ID: "a"}, coord.ClaimOptions{TaskID: "free"})
					return err
				})
				s2.Close()
			} else if coord.CodeOf(err) != coord.CodeIO {
				t.Fatalf("open with %s planted: %v", planted, err)
			}
			ents, _ := os.ReadDir(victim)
			if len(ents) != 1 {
				t.Fatalf("files appeared outside the tree: %v", ents)
			}
			if b, _ := os.ReadFile(victimFile); string(b) != "victim" {
				t.Fatalf("victim changed: %q", b)
			}
		})
	}
}
