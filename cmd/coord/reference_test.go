package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/format"
)

// The reference in docs/ is checked against the code, so it cannot drift:
// the commands and their flags (COMMANDS.md), the exit codes (COMMANDS.md,
// as `coord help exit-codes` prints them), the settings of config.json
// (FORMATS.md) and the MCP tools (AGENTS.md). Each test names what one
// side has and the other lacks.

// readDoc reads docs/NAME from the repository root.
func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// section is the text of the "## title" section of md, up to the next
// heading of the same level.
func section(t *testing.T, md, title string) string {
	t.Helper()
	_, rest, ok := strings.Cut(md, "\n## "+title+"\n")
	if !ok {
		t.Fatalf("no section %q", title)
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// tableFirstColumn returns the first cell of each row of the Markdown
// tables in text, header and rule rows left out.
func tableFirstColumn(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "| ") {
			continue
		}
		cell := strings.TrimSpace(strings.Split(l, "|")[1])
		if cell == "" || strings.HasPrefix(cell, "---") {
			continue
		}
		out = append(out, cell)
	}
	return out
}

// TestReferenceExitCodes: the table of COMMANDS.md is coord.ExitCodes,
// code for code and name for name.
func TestReferenceExitCodes(t *testing.T) {
	t.Parallel()
	sec := section(t, readDoc(t, "COMMANDS.md"), "Exit codes and errors")
	doc := map[int]string{}
	for _, l := range strings.Split(sec, "\n") {
		f := strings.Split(l, "|")
		if len(f) < 4 {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(f[1]))
		if err != nil {
			continue
		}
		doc[n] = strings.TrimSpace(f[2])
	}
	for _, c := range coord.ExitCodes {
		if name, ok := doc[int(c.Code)]; !ok {
			t.Errorf("docs/COMMANDS.md: exit code %d (%s) is missing", c.Code, c.Name)
		} else if name != c.Name {
			t.Errorf("docs/COMMANDS.md: exit code %d is %q there, %q in coord help exit-codes", c.Code, name, c.Name)
		}
		delete(doc, int(c.Code))
	}
	for n, name := range doc {
		t.Errorf("docs/COMMANDS.md: exit code %d (%s) is not one coord uses", n, name)
	}
}

// TestReferenceSettings: the table of FORMATS.md names every key
// config.json may hold (format.ConfigKeys) and no other.
func TestReferenceSettings(t *testing.T) {
	t.Parallel()
	sec := section(t, readDoc(t, "FORMATS.md"), "config.json")
	var doc []string
	for _, cell := range tableFirstColumn(sec) {
		for _, k := range strings.Split(cell, ",") {
			k = strings.Trim(strings.TrimSpace(k), "`")
			if k != "key" {
				doc = append(doc, k)
			}
		}
	}
	for _, k := range format.ConfigKeys {
		if !slices.Contains(doc, k) {
			t.Errorf("docs/FORMATS.md: setting %q is missing from the config.json table", k)
		}
	}
	for _, k := range doc {
		if !slices.Contains(format.ConfigKeys, k) {
			t.Errorf("docs/FORMATS.md: %q is in the config.json table but is not a setting", k)
		}
	}
}

// allDocs is every page of docs/, joined: the commands are documented by
// topic (COMMANDS.md, SCHEDULING.md, DASHBOARD.md, …).
func allDocs(t *testing.T) string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(names) < 5 {
		t.Fatalf("docs: %v %v", names, err)
	}
	var b strings.Builder
	for _, n := range names {
		b.WriteString(readDoc(t, filepath.Base(n)) + "\n")
	}
	return b.String()
}

// TestReferenceCommands: every command coord has is shown in the docs as
// a line or a code span that starts "coord NAME", and every flag of a
// command is named (--flag, or its one-letter form). The docs are read
// once: the command words shown and the flags named are collected, then
// looked up.
func TestReferenceCommands(t *testing.T) {
	t.Parallel()
	doc := allDocs(t)
	shown := map[string]bool{} // "kv", "kv set", "kv set task:x", … as shown after coord
	invocation := regexp.MustCompile("(?m)(?:^|`|\\$ |\\| )(?:rotd )?coord (?:--?[a-z-]+(?:=| )[^ `]+ )*([a-z][a-z-]*(?: [a-z][a-z-]*){0,2})")
	for _, m := range invocation.FindAllStringSubmatch(doc, -1) {
		words := strings.Fields(m[1])
		for k := 1; k <= len(words); k++ {
			shown[strings.Join(words[:k], " ")] = true
		}
	}
	flags := map[string]bool{} // "lines", "n", … as named --lines, -n
	for _, m := range regexp.MustCompile(`(?:^|[^-\w])--([a-z0-9][a-z0-9-]*)`).FindAllStringSubmatch(doc, -1) {
		flags[m[1]] = true
	}
	for _, m := range regexp.MustCompile("(?m)(?:^|[\\s`\\[])-([a-zA-Z])\\b").FindAllStringSubmatch(doc, -1) {
		flags[m[1]] = true
	}
	named := func(f cli.Flag) bool {
		for _, n := range f.Names() {
			if flags[n] {
				return true
			}
		}
		return false
	}
	app := newApp(&env{})
	n := 0
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			p := append(append([]string(nil), path...), c.Name)
			name := strings.Join(p, " ")
			n++
			if !shown[name] {
				t.Errorf("docs: no line or code span shows `coord %s …`", name)
			}
			for _, f := range c.Flags {
				if !named(f) {
					t.Errorf("docs: coord %s --%s is not named", name, f.Names()[0])
				}
			}
			walk(p, c.Commands)
		}
	}
	walk(nil, app.Commands)
	if n < 40 {
		t.Fatalf("walked only %d commands", n)
	}
	for _, f := range app.Flags {
		if !named(f) {
			t.Errorf("docs: the global flag --%s is not named", f.Names()[0])
		}
	}
}

// TestReferenceMCPTools: the tools table of AGENTS.md names every tool
// `coord mcp --tools all` lists, and no other.
func TestReferenceMCPTools(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	runCoord(t, root, nil, "", "init")
	cs, _, _ := mcpSession(t, root, []string{"COORD_AGENT=x"}, "--tools", "all")
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var doc []string
	for _, cell := range tableFirstColumn(readDoc(t, "AGENTS.md")) {
		if m := regexp.MustCompile("^`([a-z_]+)`(\\\\\\*)?$").FindStringSubmatch(cell); m != nil {
			doc = append(doc, m[1])
		}
	}
	var tools []string
	for _, tool := range res.Tools {
		tools = append(tools, tool.Name)
		if !slices.Contains(doc, tool.Name) {
			t.Errorf("docs/AGENTS.md: the MCP tool %q is missing from the tools table", tool.Name)
		}
	}
	for _, name := range doc {
		if !slices.Contains(tools, name) {
			t.Errorf("docs/AGENTS.md: %q is in the tools table but coord mcp has no such tool", name)
		}
	}
}
