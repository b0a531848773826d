package setup

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

func run(t *testing.T, dir, agent string, dry, remove bool) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := Run(Options{Agent: agent, Dir: dir, DryRun: dry, Remove: remove, Stdout: &out})
	return out.String(), err
}

func mustRun(t *testing.T, dir, agent string, dry, remove bool) string {
	t.Helper()
	out, err := run(t, dir, agent, dry, remove)
	if err != nil {
		t.Fatalf("setup %s (dry %v remove %v): %v", agent, dry, remove, err)
	}
	return out
}

// snapshot reads every file under dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			m[rel] = string(b)
		}
		return nil
	})
	return m
}

func write(t *testing.T, dir, rel, data string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readJSON(t *testing.T, dir, rel string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v\n%s", rel, err, b)
	}
	return m
}

// hookCommands lists event -> matcher -> commands of a hooks object.
func hookCommands(t *testing.T, doc map[string]any) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	hooks, _ := doc["hooks"].(map[string]any)
	for event, v := range hooks {
		groups, ok := v.([]any)
		if !ok {
			continue
		}
		for _, g := range groups {
			grp := g.(map[string]any)
			m, _ := grp["matcher"].(string)
			for _, h := range grp["hooks"].([]any) {
				out[event] = append(out[event], m+"=>"+h.(map[string]any)["command"].(string))
			}
		}
	}
	return out
}

// TestSetupFresh: in a repository with no agent configuration, setup
// writes exactly the documented files and entries; a second run changes
// nothing; --remove takes the files away again.
func TestSetupFresh(t *testing.T) {
	for _, agent := range Agents {
		t.Run(agent, func(t *testing.T) {
			dir := t.TempDir()
			out := mustRun(t, dir, agent, false, false)
			files := snapshot(t, dir)
			if len(files) != len(Files(agent)) {
				t.Fatalf("files %v, want %v", keys(files), Files(agent))
			}
			for _, f := range Files(agent) {
				if _, ok := files[f]; !ok || !strings.Contains(out, "created "+f) {
					t.Fatalf("%s not created (output %q)", f, out)
				}
			}
			switch agent {
			case "claude":
				mcp := readJSON(t, dir, claudeMCP)
				want := map[string]any{"mcpServers": map[string]any{"coord": map[string]any{"type": "stdio", "command": "coord", "args": []any{"mcp"}}}}
				if !reflect.DeepEqual(mcp, want) {
					t.Fatalf(".mcp.json %v", mcp)
				}
				hc := hookCommands(t, readJSON(t, dir, claudeSettings))
				want2 := map[string][]string{
					"SessionStart":       {"=>coord hook claude SessionStart"},
					"PreToolUse":         {"Edit|Write|MultiEdit|NotebookEdit=>coord hook claude PreToolUse"},
					"PostToolUse":        {"=>coord hook claude PostToolUse"},
					"PostToolUseFailure": {"=>coord hook claude PostToolUseFailure"},
					"Stop":               {"=>coord hook claude Stop"},
					"SessionEnd":         {"=>coord hook claude SessionEnd"},
				}
				if !reflect.DeepEqual(hc, want2) {
					t.Fatalf("claude hooks %v", hc)
				}
			case "codex":
				var cfg map[string]any
				if err := toml.Unmarshal([]byte(files[codexConfig]), &cfg); err != nil {
					t.Fatal(err)
				}
				srv := cfg["mcp_servers"].(map[string]any)["coord"].(map[string]any)
				// No feature flag: Codex's hooks are on by default, and the
				// old codex_hooks key prints a deprecation on every run.
				if srv["command"] != "coord" || !reflect.DeepEqual(srv["args"], []any{"mcp"}) || srv["tool_timeout_sec"] != int64(660) ||
					len(srv["env_vars"].([]any)) != len(codexEnvVars) || cfg["features"] != nil {
					t.Fatalf("config.toml:\n%s", files[codexConfig])
				}
				hc := hookCommands(t, readJSON(t, dir, codexHooks))
				if len(hc) != 5 || hc["PreToolUse"][0] != "apply_patch=>coord hook codex PreToolUse" || hc["SessionEnd"][0] != "=>coord hook codex SessionEnd" {
					t.Fatalf("codex hooks %v", hc)
				}
			case "gemini":
				doc := readJSON(t, dir, geminiSettings)
				srv := doc["mcpServers"].(map[string]any)["coord"].(map[string]any)
				if srv["command"] != "coord" || srv["timeout"] != float64(660000) {
					t.Fatalf("gemini server %v", srv)
				}
				hc := hookCommands(t, doc)
				if len(hc) != 5 || hc["BeforeTool"][0] != "write_file|replace=>coord hook gemini BeforeTool" || hc["AfterAgent"][0] != "=>coord hook gemini AfterAgent" {
					t.Fatalf("gemini hooks %v", hc)
				}
			}
			if out := mustRun(t, dir, agent, false, false); !strings.Contains(out, "nothing to change") {
				t.Fatalf("second run: %q", out)
			}
			if !reflect.DeepEqual(snapshot(t, dir), files) {
				t.Fatal("a second run changed the files")
			}
			mustRun(t, dir, agent, false, true)
			if left := snapshot(t, dir); len(left) != 0 {
				t.Fatalf("--remove left %v", left)
			}
		})
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// The unrelated settings of a repository, per file.
var existing = map[string]string{
	claudeMCP: `{
    "mcpServers": {
        "github": {"command": "gh-mcp", "args": ["--stdio"], "env": {"TOKEN": "x<&>"}}
    },
    "zz_last": true
}`,
	claudeSettings: `{
  "permissions": {"allow": ["Bash(go test:*)"], "deny": []},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/check-bash.sh", "timeout": 5}]},
      {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "prettier-check"}]}
    ],
    "Notification": [{"hooks": [{"type": "command", "command": "notify-send claude"}]}]
  },
  "model": "opus"
}
`,
	codexConfig: `# my codex settings
model = "gpt-5-codex" # the model

[mcp_servers.docs]
command = "docs-mcp"
args = ["serve"]

# comments before a table stay with it
[features]
web_search = true

[profiles.fast]
model = "gpt-5-mini"
`,
	codexHooks: `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}`,
	geminiSettings: `{
  "theme": "GitHub",
  "mcpServers": {"fs": {"command": "fs-mcp", "timeout": 30000}},
  "hooks": {
    "disabled": ["old-hook"],
    "BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"name": "guard-shell", "type": "command", "command": "guard.sh"}]}]
  }
}
`,
}

// TestSetupKeepsOthers: in a repository with unrelated settings, setup
// keeps every one of them (order included), a second run changes
// nothing, and --remove brings every file back byte for byte.
func TestSetupKeepsOthers(t *testing.T) {
	for _, agent := range Agents {
		t.Run(agent, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range Files(agent) {
				write(t, dir, f, existing[f])
			}
			before := snapshot(t, dir)
			mustRun(t, dir, agent, false, false)
			after := snapshot(t, dir)
			for _, f := range Files(agent) {
				if strings.HasSuffix(f, ".json") {
					checkKept(t, f, before[f], after[f])
				} else {
					for _, line := range strings.Split(before[f], "\n") {
						if !strings.Contains(after[f], line) {
							t.Errorf("%s lost the line %q:\n%s", f, line, after[f])
						}
					}
				}
			}
			if agent == "claude" {
				// coord's PreToolUse group comes after the user's, which stay as they were.
				hc := hookCommands(t, readJSON(t, dir, claudeSettings))
				if got := hc["PreToolUse"]; len(got) != 3 || got[0] != "Bash=>./scripts/check-bash.sh" || got[1] != "Edit|Write=>prettier-check" {
					t.Fatalf("PreToolUse %v", got)
				}
				if !strings.Contains(after[claudeMCP], `"TOKEN": "x<&>"`) {
					t.Fatalf("a string was re-escaped:\n%s", after[claudeMCP])
				}
			}
			if agent == "codex" && (!strings.Contains(after[codexConfig], "[features]\nweb_search = true\n") || strings.Contains(after[codexConfig], "codex_hooks")) {
				t.Fatalf("the user's [features] changed:\n%s", after[codexConfig])
			}
			mustRun(t, dir, agent, false, false)
			if !reflect.DeepEqual(snapshot(t, dir), after) {
				t.Fatal("a second run changed the files")
			}
			mustRun(t, dir, agent, false, true)
			removed := snapshot(t, dir)
			for _, f := range Files(agent) {
				if removed[f] != before[f] {
					t.Errorf("--remove did not restore %s byte for byte:\n%q\nwant\n%q", f, removed[f], before[f])
				}
			}
		})
	}
}

// checkKept fails unless every key path of before holds the same value in
// after (arrays: every element of before is still there, in order).
func checkKept(t *testing.T, name, before, after string) {
	t.Helper()
	var b, a any
	json.Unmarshal([]byte(before), &b)
	if err := json.Unmarshal([]byte(after), &a); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var walk func(path string, b, a any)
	walk = func(path string, b, a any) {
		switch bv := b.(type) {
		case map[string]any:
			av, ok := a.(map[string]any)
			if !ok {
				t.Errorf("%s%s: object became %v", name, path, a)
				return
			}
			for k, v := range bv {
				walk(path+"."+k, v, av[k])
			}
		case []any:
			av, _ := a.([]any)
			i := 0
			for _, e := range bv {
				for i < len(av) && !reflect.DeepEqual(av[i], e) {
					i++
				}
				if i == len(av) {
					t.Errorf("%s%s: lost %v", name, path, e)
					return
				}
			}
		default:
			if !reflect.DeepEqual(b, a) {
				t.Errorf("%s%s: %v became %v", name, path, b, a)
			}
		}
	}
	walk("", b, a)
	// Key order kept at the top level.
	var bk, ak []string
	for _, l := range strings.Split(before, "\n") {
		if k, _, ok := strings.Cut(strings.TrimSpace(l), ":"); ok && strings.HasPrefix(l, "  \"") {
			bk = append(bk, k)
		}
	}
	for _, l := range strings.Split(after, "\n") {
		if k, _, ok := strings.Cut(strings.TrimSpace(l), ":"); ok && strings.HasPrefix(l, "  \"") && !strings.HasPrefix(l, "   ") {
			for _, x := range bk {
				if x == k {
					ak = append(ak, k)
				}
			}
		}
	}
	if !reflect.DeepEqual(bk, ak) && len(bk) > 0 {
		t.Errorf("%s: top-level key order %v became %v", name, bk, ak)
	}
}

// TestSetupDryRun: --dry-run prints a diff of every change and writes
// nothing; with nothing to change it says so.
func TestSetupDryRun(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, claudeMCP, existing[claudeMCP])
	before := snapshot(t, dir)
	out := mustRun(t, dir, "claude", true, false)
	if !reflect.DeepEqual(snapshot(t, dir), before) {
		t.Fatal("--dry-run wrote")
	}
	for _, want := range []string{"--- a/.mcp.json\n+++ b/.mcp.json\n", "+        \"coord\": {", "--- /dev/null\n+++ b/.claude/settings.json\n", "\"command\": \"coord hook claude PreToolUse\"\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	mustRun(t, dir, "claude", false, false)
	if out := mustRun(t, dir, "claude", true, false); !strings.Contains(out, "nothing to change") {
		t.Fatalf("dry run after setup: %q", out)
	}
	out = mustRun(t, dir, "claude", true, true)
	if !strings.Contains(out, "--- a/.claude/settings.json\n+++ /dev/null\n") || !strings.Contains(out, "-        \"coord\": {") {
		t.Fatalf("dry run of --remove:\n%s", out)
	}
}

// TestSetupRefuses: what setup cannot merge without losing something is
// refused (exit 3) and left as it was.
func TestSetupRefuses(t *testing.T) {
	for _, c := range []struct{ agent, rel, data, want string }{
		{"claude", claudeMCP, `{"mcpServers": {"coord": {"command": "python", "args": ["other.py"]}}}`, "does not run coord mcp"},
		{"claude", claudeSettings, "{\n  // my theme\n  \"theme\": \"x\"\n}\n", "has comments"},
		{"gemini", geminiSettings, "{\n  /* never closed\n  \"theme\": \"x\"\n}\n", "unterminated comment"},
		{"claude", claudeSettings, `{"hooks": {}, "hooks": {}}`, "duplicate key"},
		{"claude", claudeSettings, `[1, 2]`, "not a JSON object"},
		{"codex", codexConfig, "model = \n", "not valid TOML"},
		{"codex", codexConfig, "[mcp_servers.coord]\ncommand = \"node\"\nargs = [\"x.js\"]\n", "does not run coord mcp"},
		{"codex", codexConfig, "mcp_servers = { coord = { command = \"coord\", args = [\"mcp\"] } }\n", "inline"},
	} {
		dir := t.TempDir()
		write(t, dir, c.rel, c.data)
		before := snapshot(t, dir)
		_, err := run(t, dir, c.agent, false, false)
		if err == nil || coord.CodeOf(err) != coord.CodeConflict || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: %v, want exit 3 saying %q", c.rel, c.data, err, c.want)
		}
		if !reflect.DeepEqual(snapshot(t, dir), before) {
			t.Errorf("%s: refused, yet files changed", c.rel)
		}
	}
	if _, err := run(t, t.TempDir(), "cursor", false, false); coord.CodeOf(err) != coord.CodeUsage {
		t.Errorf("unknown agent: %v", err)
	}
}

// TestSetupUpdatesItsOwn: coord's own entries are brought up to date in
// place, keeping what the user added to them; another coord command
// (--command) is recognised as coord's.
func TestSetupUpdatesItsOwn(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, claudeMCP, `{"mcpServers": {"coord": {"command": "/old/bin/coord", "args": ["mcp", "--tools", "all"], "env": {"COORD_AGENT": "me"}}, "b": {"command": "b"}}}`)
	write(t, dir, claudeSettings, `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/old/bin/coord hook claude Stop", "timeout": 9}]}, {"hooks": [{"type": "command", "command": "mine"}]}]}}`)
	mustRun(t, dir, "claude", false, false)
	mcp := readJSON(t, dir, claudeMCP)
	srv := mcp["mcpServers"].(map[string]any)["coord"].(map[string]any)
	if srv["command"] != "coord" || srv["env"].(map[string]any)["COORD_AGENT"] != "me" {
		t.Fatalf("coord entry %v", srv)
	}
	if keysOf(mcp["mcpServers"].(map[string]any)) != 2 {
		t.Fatalf("servers %v", mcp)
	}
	doc := readJSON(t, dir, claudeSettings)
	stop := doc["hooks"].(map[string]any)["Stop"].([]any)
	first := stop[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)
	if len(stop) != 2 || first["command"] != "coord hook claude Stop" || first["timeout"] != float64(9) {
		t.Fatalf("Stop %v", stop)
	}
	var out bytes.Buffer
	if err := Run(Options{Agent: "claude", Dir: dir, Command: "/opt/coord/bin/coord", Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	if hc := hookCommands(t, readJSON(t, dir, claudeSettings)); hc["Stop"][0] != "=>/opt/coord/bin/coord hook claude Stop" || len(hc["Stop"]) != 2 {
		t.Fatalf("with --command: %v", hc)
	}
}

func keysOf(m map[string]any) int { return len(m) }

func TestUnifiedDiff(t *testing.T) {
	old := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
	neu := "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\n"
	got := unifiedDiff("f", []byte(old), []byte(neu), true, true)
	want := "--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n d\n e\n@@ -8,3 +8,4 @@\n h\n i\n j\n+k\n"
	if got != want {
		t.Fatalf("diff:\n%s\nwant:\n%s", got, want)
	}
	if got := unifiedDiff("f", nil, []byte("x\n"), false, true); got != "--- /dev/null\n+++ b/f\n@@ -0,0 +1,1 @@\n+x\n" {
		t.Fatalf("new file diff:\n%s", got)
	}
	if got := unifiedDiff("f", []byte("x\n"), nil, true, false); got != "--- a/f\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-x\n" {
		t.Fatalf("removed file diff:\n%s", got)
	}
}

// TestUnifiedDiffFinalNewline: a change that only adds the final newline
// is shown as one (the hand-written diff split lines after trimming the
// last newline and printed a header with no hunk: a dry run said a file
// changed and showed nothing).
func TestUnifiedDiffFinalNewline(t *testing.T) {
	got := unifiedDiff("f", []byte("a\nb"), []byte("a\nb\n"), true, true)
	want := "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
	if got != want {
		t.Fatalf("diff:\n%s\nwant:\n%s", got, want)
	}
}

// TestCodexNoFeatureFlag: setup writes no [features] flag (Codex's hooks
// are on by default; codex_hooks prints a deprecation on every run). The
// codex_hooks lines an earlier setup wrote go, whether it appended its
// own [features] table or put the line into the user's; the user's own
// flags stay, with a note when they are deprecated or turn hooks off.
func TestCodexNoFeatureFlag(t *testing.T) {
	const block = "[mcp_servers.coord] # coord setup\ncommand = \"coord\"\nargs = [\"mcp\"]\ntool_timeout_sec = 660\nenv_vars = [\"COORD_AGENT\", \"COORD_AGENT_CAPS\", \"COORD_ROOT\", \"COORD_BACKEND\", \"ROTD_AGENT_ID\", \"ROTD_AGENT_CAPS\"]\n"
	for _, c := range []struct {
		name, before, after, note string
	}{
		{"an earlier setup's own table",
			"model = \"o3\"\n\n" + block + "\n[features] # coord setup\ncodex_hooks = true # coord setup\n",
			"model = \"o3\"\n\n" + block, "took out [features] codex_hooks"},
		{"an earlier setup's line in the user's table",
			"[features]\ncodex_hooks = true # coord setup\nweb_search = true\n\n" + block,
			"[features]\nweb_search = true\n\n" + block, "took out [features] codex_hooks"},
		{"the user's own deprecated flag",
			"[features]\ncodex_hooks = true\n",
			"[features]\ncodex_hooks = true\n\n" + block, "rename it to hooks"},
		{"hooks turned off",
			"[features]\nhooks = false\n",
			"[features]\nhooks = false\n\n" + block, "turned off"},
		{"TOML hooks as well",
			"[[hooks.Stop]]\nhooks = [{ type = \"command\", command = \"say\" }]\n",
			"[[hooks.Stop]]\nhooks = [{ type = \"command\", command = \"say\" }]\n\n" + block, "Codex warns"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, codexConfig, c.before)
			out := mustRun(t, dir, "codex", false, false)
			if got := snapshot(t, dir)[codexConfig]; got != c.after {
				t.Fatalf("config.toml:\n%s\nwant\n%s", got, c.after)
			}
			if !strings.Contains(out, c.note) {
				t.Fatalf("output lacks %q:\n%s", c.note, out)
			}
		})
	}
}

// TestNextStep: setup ends by saying the one step each agent still needs
// before it runs coord; --remove does not.
func TestNextStep(t *testing.T) {
	for agent, want := range map[string]string{
		"claude": `"enabledMcpjsonServers": ["coord"]`,
		"codex":  `"Trust all and continue"`,
		"gemini": `"Trust folder"`,
	} {
		dir := t.TempDir()
		out := mustRun(t, dir, agent, false, false)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		last := lines[len(lines)-1]
		if !strings.HasPrefix(last, "next: start "+agent+" in "+dir) || !strings.Contains(last, want) {
			t.Errorf("%s: last line %q", agent, last)
		}
		if out := mustRun(t, dir, agent, false, true); strings.Contains(out, "next:") {
			t.Errorf("%s --remove: %q", agent, out)
		}
	}
}

// TestToolTimeoutCoversTheLongestWait: the tool timeout setup writes for
// Codex and Gemini is computed from the MCP wait's bound
// (app.MaxToolWait) and outlasts it, so a wait always ends with its own
// answer; today 660 s.
func TestToolTimeoutCoversTheLongestWait(t *testing.T) {
	want := app.MaxToolWait + time.Minute
	if got := time.Duration(toolTimeoutSec) * time.Second; got != want || got <= app.MaxToolWait {
		t.Fatalf("tool timeout %v, want %v (the longest wait, %v, and a minute)", got, want, app.MaxToolWait)
	}
	dir := t.TempDir()
	mustRun(t, dir, "codex", false, false)
	var cfg map[string]any
	b, _ := os.ReadFile(filepath.Join(dir, codexConfig))
	if err := toml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	if got := cfg["mcp_servers"].(map[string]any)["coord"].(map[string]any)["tool_timeout_sec"]; got != int64(want/time.Second) {
		t.Errorf("codex tool_timeout_sec %v, want %d", got, int64(want/time.Second))
	}
	mustRun(t, dir, "gemini", false, false)
	srv := readJSON(t, dir, geminiSettings)["mcpServers"].(map[string]any)["coord"].(map[string]any)
	if got := srv["timeout"]; got != float64(want/time.Millisecond) {
		t.Errorf("gemini timeout %v, want %d ms", got, want/time.Millisecond)
	}
}
