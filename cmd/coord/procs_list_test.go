package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestProcsListComplete keeps make's non-race pass honest. `make test`
// runs every test under -race (`unit`), where the tests that start many
// coord processes skip themselves (manyProcesses, raceEnabled); `procs`
// then runs only those, by name, from the Makefile's PROCS_TESTS, in the
// packages of PROCS_PKGS. A test that skips under -race and is missing
// from those would run nowhere: this fails then, and when the list names a
// test that no longer exists. (The conformance suite's multi-process check
// has a target of its own, `conformance`.)
func TestProcsListComplete(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^PROCS_TESTS := (\S+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("Makefile: no line PROCS_TESTS := Name|Name|…")
	}
	listed := map[string]bool{}
	for _, n := range strings.Split(string(m[1]), "|") {
		listed[n] = true
	}
	p := regexp.MustCompile(`(?m)^PROCS_PKGS := (.+)$`).FindSubmatch(mk)
	if p == nil {
		t.Fatal("Makefile: no line PROCS_PKGS := ./pkg …")
	}
	pkgs := map[string]bool{}
	for _, d := range strings.Fields(string(p[1])) {
		pkgs[strings.TrimPrefix(d, "./")] = true
	}
	all := map[string]bool{}
	var need []string
	err = filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if n := d.Name(); path != "../.." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "bin") {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel("../..", path)
		tests, marked := raceSkippers(t, path)
		for n := range tests {
			all[n] = true
		}
		if len(marked) > 0 && !pkgs[filepath.ToSlash(rel)] {
			t.Errorf("./%s has tests that skip under -race (%v) but is not in the Makefile's PROCS_PKGS", filepath.ToSlash(rel), marked)
		}
		need = append(need, marked...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(need)
	for _, n := range need {
		if !listed[n] {
			t.Errorf("%s skips under -race but is not in the Makefile's PROCS_TESTS: it would run in no pass of make test", n)
		}
	}
	for n := range listed {
		if !all[n] {
			t.Errorf("the Makefile's PROCS_TESTS names %s, which is no test in the module", n)
		}
	}
	if len(need) < 10 {
		t.Errorf("found only %d tests that skip under -race (%v): the scan is broken", len(need), need)
	}
}

// raceSkippers returns the package's Test functions, and those that reach
// manyProcesses or raceEnabled through the package's own functions.
func raceSkippers(t *testing.T, dir string) (map[string]bool, []string) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { return strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	uses := map[string]map[string]bool{}
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Recv != nil || fd.Body == nil {
					continue
				}
				u := map[string]bool{}
				ast.Inspect(fd.Body, func(x ast.Node) bool {
					if id, ok := x.(*ast.Ident); ok {
						u[id.Name] = true
					}
					return true
				})
				uses[fd.Name.Name] = u
			}
		}
	}
	var reaches func(n string, seen map[string]bool) bool
	reaches = func(n string, seen map[string]bool) bool {
		seen[n] = true
		for id := range uses[n] {
			if id == "manyProcesses" || id == "raceEnabled" {
				return true
			}
			if _, ok := uses[id]; ok && !seen[id] && reaches(id, seen) {
				return true
			}
		}
		return false
	}
	tests := map[string]bool{}
	var marked []string
	for n := range uses {
		if !strings.HasPrefix(n, "Test") || n == "TestMain" {
			continue
		}
		tests[n] = true
		if reaches(n, map[string]bool{}) {
			marked = append(marked, n)
		}
	}
	return tests, marked
}
