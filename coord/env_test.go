package coord_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEnvNamesHaveOneHome: no product source file but env.go spells an
// environment variable's name; every other file uses the constants.
// Tests may spell them (a test says what a user types).
func TestEnvNamesHaveOneHome(t *testing.T) {
	name := regexp.MustCompile(`"(COORD|ROTD)_[A-Z]`)
	root := ".."
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != root || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || p == filepath.Join(root, "coord", "env.go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			if name.MatchString(line) {
				t.Errorf("%s:%d spells an environment variable's name: use the constant in coord/env.go\n\t%s", p, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
