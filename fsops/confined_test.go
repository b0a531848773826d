package fsops

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// bypasses are the calls that open, read, write, walk or lock a file
// by name without this package's checks (O_NONBLOCK, O_NOFOLLOW where
// it belongs, fstat, only regular files), by import path.
var bypasses = map[string][]string{
	"os": {"Open", "OpenFile", "ReadFile", "WriteFile", "Create", "CreateTemp", "ReadDir",
		"OpenRoot", "OpenInRoot", "DirFS", "Chtimes", "Truncate"},
	"io/ioutil":             nil, // all of it
	"path/filepath":         {"Walk", "WalkDir"},
	"syscall":               {"Open", "Openat", "Creat", "Flock", "Mkfifo"},
	"golang.org/x/sys/unix": {"Open", "Openat", "Openat2", "Creat", "Flock", "Mkfifo"},
}

// onlyHere are imports no other package of coord may use.
var onlyHere = []string{"github.com/google/renameio/v2", "io/ioutil"}

// exempt are the directories of the module whose non-test code may open
// files itself, each with its reason. Nothing that ships in coord is
// among them.
var exempt = map[string]string{
	"fsops/": "the safe file layer itself",
	"cmd/coordbench/": "a benchmark tool, not part of coord (a module of its own): it models a naive registry " +
		"on purpose (os.OpenFile with O_EXCL, a temp file and rename) and writes its own scratch trees",
	"registry/conformance/": "test support linked only into the engines' tests: " +
		"scratch files of its own under t.TempDir",
	"registry/backend/backendtest/": "the test kit, linked only into tests: " +
		"a test's config.json in the tree it lays down under t.TempDir",
}

// Every file coord opens goes through fsops: the env file an agent names
// (CLAUDE_ENV_FILE) and a seed file opened with os.OpenFile waited forever on a FIFO. This scans
// the module's non-test Go files and fails on any call that opens,
// reads, writes, walks or flocks a file by name outside fsops and the
// exempt directories, naming the file, the line and the call.
func TestFilesOpenOnlyThroughFsops(t *testing.T) {
	root := ".."
	var found []string
	scanned := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, root+string(filepath.Separator)))
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if _, ok := exempt[rel+"/"]; ok {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		scanned++
		found = append(found, scanFile(t, p, rel)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 50 {
		t.Fatalf("scanned %d files: is the module root %s?", scanned, root)
	}
	sort.Strings(found)
	for _, f := range found {
		t.Errorf("%s: go through fsops (OpenFile, ReadFile, AppendFile, ReadDir, or a Tree), or add an exemption with its reason", f)
	}
}

// scanFile lists the bypasses in one Go file.
func scanFile(t *testing.T, p, rel string) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{} // local name -> import path
	var out []string
	for _, imp := range f.Imports {
		ip, _ := strconv.Unquote(imp.Path.Value)
		for _, only := range onlyHere {
			if ip == only {
				out = append(out, rel+":"+strconv.Itoa(fset.Position(imp.Pos()).Line)+": imports "+ip)
			}
		}
		name := path.Base(ip)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = ip
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		ip, ok := names[x.Name]
		if !ok {
			return true
		}
		calls, ok := bypasses[ip]
		if !ok {
			return true
		}
		if calls == nil || contains(calls, sel.Sel.Name) {
			pos := fset.Position(sel.Pos())
			out = append(out, rel+":"+strconv.Itoa(pos.Line)+": "+x.Name+"."+sel.Sel.Name)
		}
		return true
	})
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
