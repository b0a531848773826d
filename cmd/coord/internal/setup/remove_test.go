package setup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// userFiles are users' files in unusual layouts: tabs, CRLF, four
// spaces, one line without spaces, no final newline, blank lines at the
// end, keys in an odd order, comments where the agent allows them (TOML;
// Gemini's settings), coord's future neighbours already there.
var userFiles = []struct {
	name, agent, rel, data string
}{
	{"tabs, odd key order, no final newline", "claude", claudeSettings,
		"{\n\t\"zeta\": 1,\n\t\"hooks\": {\n\t\t\"PreToolUse\": [\n\t\t\t{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./check.sh\"}]}\n\t\t]\n\t},\n\t\"alpha\": [\"b\", \"a\"]\n}"},
	{"CRLF and four spaces", "claude", claudeSettings,
		"{\r\n    \"permissions\": {\r\n        \"allow\": [\"Bash(go test:*)\"]\r\n    },\r\n    \"model\": \"opus\"\r\n}\r\n"},
	{"one line, no spaces", "claude", claudeMCP,
		`{"mcpServers":{"github":{"command":"gh-mcp","args":["--stdio"]}}}`},
	{"blank lines after, colon without space", "claude", claudeMCP,
		"{\n  \"mcpServers\":{\n    \"github\":{\"command\":\"gh\"}\n  }\n}\n\n\n"},
	{"an empty object", "claude", claudeSettings, "{}"},
	{"an empty object, final newline", "codex", codexHooks, "{}\n"},
	{"as claude mcp remove leaves it", "claude", claudeMCP, "{\n  \"mcpServers\": {}\n}"},
	{"empty containers, one line", "claude", claudeMCP, `{"mcpServers":{}}`},
	{"empty hooks and an empty event list", "claude", claudeSettings,
		"{\n  \"hooks\": {\n    \"PreToolUse\": [],\n    \"Notification\": []\n  },\n  \"env\": {}\n}\n"},
	{"gemini: hooks {}", "gemini", geminiSettings, "{\n  \"hooks\": {},\n  \"mcpServers\": {}\n}\n"},
	{"coord's events already used by the user", "claude", claudeSettings,
		"{\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\"type\": \"command\", \"command\": \"say done\"}\n        ]\n      }\n    ],\n    \"SessionStart\": [{\"matcher\": \"startup\", \"hooks\": [{\"type\": \"command\", \"command\": \"motd\"}]}]\n  }\n}\n"},
	{"codex hooks on one line", "codex", codexHooks,
		`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}`},
	{"gemini settings with comments", "gemini", geminiSettings,
		"// my settings\n{\n  /* theme */ \"theme\": \"GitHub\", // dark later\n  \"mcpServers\": {\n    \"fs\": {\"command\": \"fs-mcp\"} // files\n  },\n  \"hooks\": {\"disabled\": []}\n}\n"},
	{"TOML with comments and no final newline", "codex", codexConfig,
		"# my codex\nmodel = \"o3\" # fast\n\n[mcp_servers.docs]\ncommand = \"docs\"\n# trailing comment"},
	{"TOML with blank lines at the end", "codex", codexConfig,
		"model = \"o3\"\n\n[features]\nweb_search = true\n\n\n"},
	{"TOML with CRLF", "codex", codexConfig,
		"model = \"o3\"\r\n\r\n[profiles.fast]\r\nmodel = \"mini\"\r\n"},
	{"TOML: coord's block followed by the user's", "codex", codexConfig,
		"[mcp_servers.a]\ncommand = \"a\"\n"},
}

// TestRemoveRestoresBytes: when coord's entries were the only change,
// setup then setup --remove gives every file back byte for byte, whatever
// its layout; a second setup in between changes nothing.
func TestRemoveRestoresBytes(t *testing.T) {
	for _, f := range userFiles {
		t.Run(f.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, f.rel, f.data)
			mustRun(t, dir, f.agent, false, false)
			after := snapshot(t, dir)
			if after[f.rel] == f.data {
				t.Fatalf("setup did not change %s", f.rel)
			}
			mustRun(t, dir, f.agent, false, false)
			if again := snapshot(t, dir); again[f.rel] != after[f.rel] {
				t.Fatalf("a second setup changed %s:\n%q\nthen\n%q", f.rel, after[f.rel], again[f.rel])
			}
			mustRun(t, dir, f.agent, false, true)
			b, err := os.ReadFile(filepath.Join(dir, f.rel))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != f.data {
				t.Fatalf("--remove did not restore %s:\n%q\nwant\n%q\n(after setup:\n%s)", f.rel, b, f.data, after[f.rel])
			}
			// The files setup created are gone.
			for rel := range snapshot(t, dir) {
				if rel != f.rel {
					t.Errorf("--remove left %s", rel)
				}
			}
		})
	}
}

// TestSetupFollowsStyle: what setup inserts into a user's file is written
// in that file's style (indent unit, newline, one line or many), and the
// user's own lines are untouched.
func TestSetupFollowsStyle(t *testing.T) {
	for _, c := range []struct {
		name, agent, rel, data string
		want                   []string // substrings of the file after setup
		notWant                []string
	}{
		{"tabs", "claude", claudeSettings, "{\n\t\"model\": \"opus\"\n}\n",
			[]string{"\t\"model\": \"opus\",\n\t\"hooks\": {\n\t\t\"SessionStart\": [\n\t\t\t{\n"}, []string{"  \""}},
		{"CRLF", "claude", claudeMCP, "{\r\n  \"mcpServers\": {\r\n    \"a\": {\"command\": \"a\"}\r\n  }\r\n}\r\n",
			[]string{"    \"a\": {\"command\": \"a\"},\r\n    \"coord\": {\r\n      \"type\": \"stdio\",\r\n"}, []string{"\"stdio\",\n"}},
		{"one line", "codex", codexHooks, `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say"}]}]}}`,
			[]string{`"say"}]}, {"hooks": [{"type": "command", "command": "coord hook codex Stop"}]}], "SessionStart": [{"hooks": [{"type": "command", "command": "coord hook codex SessionStart"}]}]`}, []string{"\n"}},
		{"comments kept", "gemini", geminiSettings, "{\n  // keep me\n  \"theme\": \"x\"\n}\n",
			[]string{"{\n  // keep me\n  \"theme\": \"x\",\n  \"mcpServers\": {\n"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, c.rel, c.data)
			mustRun(t, dir, c.agent, false, false)
			got := snapshot(t, dir)[c.rel]
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("%s lacks %q:\n%s", c.rel, w, got)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(got, w) {
					t.Errorf("%s has %q:\n%s", c.rel, w, got)
				}
			}
		})
	}
}

// TestRemoveDeletesOnlyWhatSetupCreated: a file setup created goes with
// --remove when nothing but coord's entries is in it; one the user added
// to since stays, with the user's part.
func TestRemoveDeletesOnlyWhatSetupCreated(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "gemini", false, false)
	p := filepath.Join(dir, geminiSettings)
	b, _ := os.ReadFile(p)
	// The user adds a setting (and a comment) after setup.
	edited := strings.Replace(string(b), "{\n", "{\n  // mine\n  \"theme\": \"x\",\n", 1)
	os.WriteFile(p, []byte(edited), 0o644)
	mustRun(t, dir, "gemini", false, true)
	left, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("--remove deleted a file the user added to: %v", err)
	}
	if string(left) != "{\n  // mine\n  \"theme\": \"x\"\n}\n" {
		t.Fatalf("left %q", left)
	}
}

// TestRemoveWithoutSetup: --remove where setup never ran changes nothing,
// empty containers included.
func TestRemoveWithoutSetup(t *testing.T) {
	for _, f := range []struct{ agent, rel, data string }{
		{"claude", claudeMCP, "{\n  \"mcpServers\": {}\n}"},
		{"claude", claudeSettings, `{"hooks": {}, "model": "x"}`},
		{"claude", claudeSettings, `{"hooks": {"Stop": []}}`},
		{"codex", codexHooks, `{"hooks": {}}`},
		{"gemini", geminiSettings, "{\"mcpServers\": {}, \"hooks\": {}} // x\n"},
	} {
		dir := t.TempDir()
		write(t, dir, f.rel, f.data)
		if out := mustRun(t, dir, f.agent, false, true); !strings.Contains(out, "nothing to change") {
			t.Errorf("%s %q: %s", f.rel, f.data, out)
		}
		if got := snapshot(t, dir)[f.rel]; got != f.data {
			t.Errorf("%s: %q became %q", f.rel, f.data, got)
		}
	}
}
