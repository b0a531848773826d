package setup

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestLocate: the agents run coord by name only when PATH's coord is this
// binary; otherwise by this binary's absolute path, through the symbolic
// link it was started by when that link names it.
func TestLocate(t *testing.T) {
	dir := t.TempDir()
	mk := func(rel string) string {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(rel), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	link := func(target, rel string) string {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	exe := mk("opt/coord-1.2/coord")
	other := mk("usr/bin/coord")
	onPathLink := link(exe, "path1/coord")
	userLink := link(exe, "home/bin/coord") // not on PATH
	rotd := mk("opt/rotd-1.2/rotd")
	rotdOnPath := link(rotd, "path3/rotd")
	wd, _ := os.Getwd()
	relExe, _ := filepath.Rel(wd, exe)

	for _, c := range []struct {
		name      string
		exe, arg0 string
		path      map[string]string // name -> what PATH finds
		want      Location
	}{
		{"PATH's coord is this binary", exe, "coord", map[string]string{"coord": exe}, Location{Command: "coord", OnPath: true}},
		{"PATH's coord links to this binary", exe, "coord", map[string]string{"coord": onPathLink}, Location{Command: "coord", OnPath: true}},
		{"PATH's coord is another binary", exe, exe, map[string]string{"coord": other}, Location{Command: exe, Other: other}},
		{"not on PATH, started by a link", exe, userLink, nil, Location{Command: userLink}},
		{"not on PATH, started by a relative path", exe, relExe, nil, Location{Command: exe}},
		{"started by another name PATH finds", exe, "coord-dev", map[string]string{"coord-dev": onPathLink}, Location{Command: onPathLink}},
		{"the executable is a link, no arg0", userLink, "", nil, Location{Command: exe}},
		{"arg0 names something else", exe, other, nil, Location{Command: exe}},
		{"rotd on PATH", rotd, "rotd", map[string]string{"rotd": rotdOnPath}, Location{Command: "rotd", OnPath: true}},
		{"rotd not on PATH", rotd, rotd, nil, Location{Command: rotd}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Locate(Self{
				Arg0:       c.arg0,
				Executable: func() (string, error) { return c.exe, nil },
				LookPath: func(name string) (string, error) {
					if p, ok := c.path[name]; ok {
						return p, nil
					}
					return "", errors.New("not found")
				},
			})
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("Locate = %+v, %v; want %+v", got, err, c.want)
			}
			if (got.Note() == "") != got.OnPath {
				t.Fatalf("note %q for %+v", got.Note(), got)
			}
		})
	}
}

// TestSetupCommandPaths: an absolute path (spaces and quotes included) or
// rotd is written so that a shell runs it, recognised as coord's on the
// next run (updated in place, never doubled) and taken out by --remove.
func TestSetupCommandPaths(t *testing.T) {
	for _, c := range []struct {
		command, hook string
		mcpArgs       []any
	}{
		{"/opt/my tools/coord", `'/opt/my tools/coord' hook claude Stop`, []any{"mcp"}},
		{"/opt/it's/coord", `'/opt/it'\''s/coord' hook claude Stop`, []any{"mcp"}},
		{"/usr/local/bin/rotd", "/usr/local/bin/rotd coord hook claude Stop", []any{"coord", "mcp"}},
		{"rotd", "rotd coord hook claude Stop", []any{"coord", "mcp"}},
	} {
		t.Run(c.command, func(t *testing.T) {
			dir := t.TempDir()
			if err := Run(Options{Agent: "claude", Dir: dir, Command: "coord", Stdout: &strings.Builder{}}); err != nil {
				t.Fatal(err)
			}
			if err := Run(Options{Agent: "claude", Dir: dir, Command: c.command, Stdout: &strings.Builder{}}); err != nil {
				t.Fatal(err)
			}
			hc := hookCommands(t, readJSON(t, dir, claudeSettings))
			if len(hc["Stop"]) != 1 || hc["Stop"][0] != "=>"+c.hook {
				t.Fatalf("Stop hooks %q, want one %q", hc["Stop"], c.hook)
			}
			if got := shellWords(c.hook); got[len(got)-3] != "hook" {
				t.Fatalf("a shell splits %q into %q", c.hook, got)
			}
			srv := readJSON(t, dir, claudeMCP)["mcpServers"].(map[string]any)["coord"].(map[string]any)
			if srv["command"] != c.command || !reflect.DeepEqual(srv["args"], c.mcpArgs) {
				t.Fatalf("server %v", srv)
			}
			before := snapshot(t, dir)
			if err := Run(Options{Agent: "claude", Dir: dir, Command: c.command, Stdout: &strings.Builder{}}); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(snapshot(t, dir), before) {
				t.Fatal("a second run changed the files")
			}
			// --remove from a coord started otherwise still knows them.
			if err := Run(Options{Agent: "claude", Dir: dir, Command: "coord", Remove: true, Stdout: &strings.Builder{}}); err != nil {
				t.Fatal(err)
			}
			if left := snapshot(t, dir); len(left) != 0 {
				t.Fatalf("--remove left %v", left)
			}
		})
	}
	// Codex's TOML takes the same command and arguments.
	dir := t.TempDir()
	if err := Run(Options{Agent: "codex", Dir: dir, Command: "/x y/rotd", Stdout: &strings.Builder{}}); err != nil {
		t.Fatal(err)
	}
	cfg := snapshot(t, dir)[codexConfig]
	if !strings.Contains(cfg, "command = \"/x y/rotd\"\nargs = [\"coord\", \"mcp\"]\n") {
		t.Fatalf("config.toml:\n%s", cfg)
	}
}

func TestShellWords(t *testing.T) {
	for in, want := range map[string][]string{
		`coord hook claude Stop`: {"coord", "hook", "claude", "Stop"},
		`'/a b/coord'  hook`:     {"/a b/coord", "hook"},
		`"/a \"b\"/coord" hook`:  {`/a "b"/coord`, "hook"},
		`/a\ b/coord hook`:       {"/a b/coord", "hook"},
		`'/it'\''s/coord' hook`:  {"/it's/coord", "hook"},
		``:                       nil,
		`x''y`:                   {"xy"},
	} {
		if got := shellWords(in); !reflect.DeepEqual(got, want) {
			t.Errorf("shellWords(%q) = %q, want %q", in, got, want)
		}
	}
}
