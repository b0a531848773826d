package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// opener is the one storage package a front end may name: it opens a
// backend (and a hub) by URL and hands over the formats the application
// reads (docs/ARCHITECTURE.md: cmd/coord names no storage package but
// the backend opener).
const opener = "github.com/rotd/coordination/registry/backend"

// TestFrontEndNamesOnlyTheOpener scans the non-test Go files of
// cmd/coord and of every package under it (the CLI, the hooks, the MCP
// server, setup, the dashboard, workspace) and fails on any import of a
// storage package other than the opener: a front end parses, wires and
// prints; task decoding, seed lines, ROTD's dialect and settings are
// reached through coord/app and registry/backend, and only the hub's own
// command names the hub. It names the file, the line and the import.
func TestFrontEndNamesOnlyTheOpener(t *testing.T) {
	t.Parallel()
	const storage = "github.com/rotd/coordination/registry"
	var found []string
	scanned := 0
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		scanned++
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			// engines.go links the engines (each registers itself with
			// the opener) and names nothing of theirs; cmd_hub.go is the
			// hub's command and runs the hub's server.
			linker := p == "engines.go" && ip == storage+"/engines"
			hubCmd := p == "cmd_hub.go" && ip == storage+"/nats/hub"
			if (ip == storage || strings.HasPrefix(ip, storage+"/")) && ip != opener && !linker && !hubCmd {
				found = append(found, filepath.ToSlash(filepath.Join("cmd/coord", p))+": imports "+ip)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 40 {
		t.Fatalf("scanned %d files: is this cmd/coord?", scanned)
	}
	sort.Strings(found)
	for _, f := range found {
		t.Errorf("%s: a front end reaches storage only through %s (formats through coord/app)", f, opener)
	}
}
