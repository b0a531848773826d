package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rotd/coordination/coord"
)

// TestFrontEndsAgree sends the same requests through the CLI (run, in this
// process), the MCP server (a real `coord mcp --tools all` process) and,
// where a request has a hook form, the hooks (`coord hook claude
// PreToolUse`, in this process), each on its own copy of one project, and
// compares their answers: the JSON each prints (times and the project's
// own path normalised), and for a refusal the exit code (the tool error's
// code) and the message. A front end that computes a rule of its own (a
// default, a bound, a check, where the caller stands) answers differently
// and fails its row.
//
// The environment is the same for both: COORD_LEASE_TTL (the default lease
// TTL) and the project directory the agent names (GEMINI_PROJECT_DIR,
// here the project's src/; the CLI stands there, the server is started at
// the project's root), which the server must read as the hooks do.
func TestFrontEndsAgree(t *testing.T) {
	const seed = `{"id":"t1","title":"one","priority":"high"}
{"id":"t2","title":"two"}
{"id":"t3","title":"three","priority":"low"}
`
	project := func() string {
		root := t.TempDir()
		if code, _, errs := coordIn("--root", root, "init"); code != 0 {
			t.Fatalf("init: %s", errs)
		}
		os.WriteFile(filepath.Join(root, "tasks.jsonl"), []byte(seed), 0o644)
		if code, _, errs := coordIn("--root", root, "--agent", "a", "seed-tasks", filepath.Join(root, "tasks.jsonl")); code != 0 {
			t.Fatalf("seed: %s", errs)
		}
		os.MkdirAll(filepath.Join(root, "src", "b"), 0o755)
		os.MkdirAll(filepath.Join(root, "src", "held"), 0o755)
		return root
	}
	cliRoot, mcpRoot, hookRoot := project(), project(), project()

	t.Setenv("COORD_LEASE_TTL", "45m")
	t.Chdir(filepath.Join(cliRoot, "src"))
	env := []string{"COORD_AGENT=a", "COORD_LEASE_TTL=45m", "GEMINI_PROJECT_DIR=" + filepath.Join(mcpRoot, "src")}
	cs, _, _ := mcpSession(t, mcpRoot, env, "--tools", "all")

	// answer is what a front end said: its exit code (a tool error's
	// code) and its JSON, or for a refusal its message.
	type answer struct {
		Code    int    `json:"code"`
		JSON    any    `json:"json,omitempty"`
		Message string `json:"message,omitempty"`
	}
	roots := regexp.MustCompile(regexp.QuoteMeta(cliRoot) + "|" + regexp.QuoteMeta(mcpRoot) + "|" + regexp.QuoteMeta(hookRoot))
	times := regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	norm := func(s string) string { return times.ReplaceAllString(roots.ReplaceAllString(s, "ROOT"), "TIME") }
	parse := func(what, s string) any {
		var v any
		if err := json.Unmarshal([]byte(norm(s)), &v); err != nil {
			t.Fatalf("%s: not JSON: %q", what, s)
		}
		return v
	}
	cli := func(args ...string) answer {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"coord", "--agent", "a", "--json"}, args...), strings.NewReader(""), &out, &errb)
		if code != 0 {
			// A refusal that names the input names it as the front end
			// spells it: the CLI's --limit is the tool's limit.
			msg := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(errb.String()), "coord: "), "--")
			return answer{Code: code, Message: norm(msg)}
		}
		return answer{JSON: parse("coord "+strings.Join(args, " "), out.String())}
	}
	tool := func(name string, args map[string]any) answer {
		got, isErr := callTool(t, cs, name, args)
		if !isErr {
			return answer{JSON: parse(name, got)}
		}
		var r struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		json.Unmarshal([]byte(got), &r)
		return answer{Code: r.Code, Message: norm(r.Message)}
	}
	// as runs a CLI command as agent on every copy (the state a row
	// starts from); ROOT in an argument is the copy's root.
	as := func(agent string, args ...string) {
		for _, root := range []string{cliRoot, mcpRoot, hookRoot} {
			args := append([]string{"--root", root, "--agent", agent}, args...)
			for i, a := range args {
				args[i] = strings.ReplaceAll(a, "ROOT", root)
			}
			if code, _, errs := coordIn(args...); code != 0 {
				t.Fatalf("coord --agent %s %v: %s", agent, args, errs)
			}
		}
	}
	// edit is the hook's answer to agent a editing path (repository
	// relative) of the hooks' copy: allowed (code 0) or refused (the
	// agent's blocking status, 2, with the hook's message).
	edit := func(path string) answer {
		payload, _ := json.Marshal(map[string]any{"session_id": "s", "cwd": hookRoot, "hook_event_name": "PreToolUse",
			"tool_name": "Edit", "tool_input": map[string]any{"file_path": filepath.Join(hookRoot, path)}})
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"coord", "--agent", "a", "hook", "claude", "PreToolUse"}, bytes.NewReader(payload), &out, &errb)
		return answer{Code: code, Message: norm(strings.TrimSpace(errb.String()))}
	}
	over := strings.Repeat("x", coord.MaxNote+1)
	big := strings.Repeat("x", coord.MaxKVValue+1)

	rows := []struct {
		name  string
		setup []string // a command agent b runs first on every copy
		cli   []string
		tool  string
		args  map[string]any
		// hook, when set, is the request's hook form: the path agent a
		// edits. A hook refuses with exit 2 where the others refuse
		// with their code; its message must name the same holder.
		hook   string
		holder string
	}{
		{name: "ready", cli: []string{"ready"}, tool: "ready"},
		{name: "ready with a limit below 0", cli: []string{"ready", "--limit", "-1"}, tool: "ready", args: map[string]any{"limit": -1}},
		{name: "claim an unknown task", cli: []string{"claim", "--task", "nope"}, tool: "claim", args: map[string]any{"task": "nope"}},
		{name: "claim", cli: []string{"claim", "--task", "t1"}, tool: "claim", args: map[string]any{"task": "t1"}},
		{name: "status", cli: []string{"status"}, tool: "status"},
		{name: "progress 101", cli: []string{"progress", "t1", "101"}, tool: "progress", args: map[string]any{"task": "t1", "percent": 101}},
		{name: "progress -1", cli: []string{"progress", "t1", "--", "-1"}, tool: "progress", args: map[string]any{"task": "t1", "percent": -1}},
		{name: "progress 40", cli: []string{"progress", "t1", "40"}, tool: "progress", args: map[string]any{"task": "t1", "percent": 40}},
		{name: "block without a reason", cli: []string{"block", "t1", "--reason", " "}, tool: "block", args: map[string]any{"task": "t1", "reason": " "}},
		{name: "block with a reason over the limit", cli: []string{"block", "t1", "--reason", over}, tool: "block", args: map[string]any{"task": "t1", "reason": over}},
		{name: "release with a negative epoch", cli: []string{"release", "t1", "--epoch", "-3", "--summary", "x"}, tool: "release", args: map[string]any{"task": "t1", "epoch": -3, "summary": "x"}},
		{name: "release by a non-holder", setup: []string{"claim", "--task", "t2"},
			cli: []string{"release", "t2", "--summary", "x"}, tool: "release", args: map[string]any{"task": "t2", "summary": "x"}},
		{name: "release", cli: []string{"release", "t1", "--summary", "done"}, tool: "release", args: map[string]any{"task": "t1", "summary": "done"}},
		{name: "wait with a timeout", cli: []string{"wait", "--task", "t2", "--timeout", "1s"}, tool: "wait", args: map[string]any{"task": "t2", "timeout": "1s"}},
		{name: "kv set of text that is not JSON", cli: []string{"kv", "set", "k1", "{bad", "--ttl", "1h"},
			tool: "kv", args: map[string]any{"op": "set", "key": "k1", "value": "{bad", "ttl": "1h"}},
		{name: "kv set of JSON", cli: []string{"kv", "set", "k2", `{"n": [1, 2]}`, "--ttl", "1h"},
			tool: "kv", args: map[string]any{"op": "set", "key": "k2", "value": map[string]any{"n": []int{1, 2}}, "ttl": "1h"}},
		{name: "kv set of JSON coord would not read back", cli: []string{"kv", "set", "k3", `{"A":1,"a":2}`, "--ttl", "1h"},
			tool: "kv", args: map[string]any{"op": "set", "key": "k3", "value": map[string]any{"A": 1, "a": 2}, "ttl": "1h"}},
		{name: "kv set of a value over the limit", cli: []string{"kv", "set", "k4", big, "--ttl", "1h"},
			tool: "kv", args: map[string]any{"op": "set", "key": "k4", "value": big, "ttl": "1h"}},
		{name: "kv get of an absent key", cli: []string{"kv", "get", "nokey"}, tool: "kv", args: map[string]any{"op": "get", "key": "nokey"}},
		{name: "kv set with a ttl of 0", cli: []string{"kv", "set", "k6", "v", "--ttl", "0"}, tool: "kv", args: map[string]any{"op": "set", "key": "k6", "value": "v", "ttl": "0"}},
		{name: "kv set without a ttl", cli: []string{"kv", "set", "k5", "v"}, tool: "kv", args: map[string]any{"op": "set", "key": "k5", "value": "v"}},
		{name: "lease acquire with the default ttl", cli: []string{"lease", "acquire", "L"}, tool: "lease", args: map[string]any{"op": "acquire", "name": "L"}},
		{name: "lock a path relative to where the caller stands", cli: []string{"lock-file", "b/x.go"}, tool: "files", args: map[string]any{"lock": []string{"b/x.go"}}},
		{name: "lock a path another agent holds", setup: []string{"lock-file", filepath.Join("ROOT", "src", "held", "y.go")},
			cli: []string{"lock-file", "held/y.go"}, tool: "files", args: map[string]any{"lock": []string{"held/y.go"}},
			hook: "src/held/y.go", holder: "b"},
		{name: "edit a path of one's own", cli: []string{"lock-file", "b/x.go"}, tool: "files", args: map[string]any{"lock": []string{"b/x.go"}}, hook: "src/b/x.go"},
	}
	for _, r := range rows {
		if r.setup != nil {
			as("b", r.setup...)
		}
		c, m := cli(r.cli...), tool(r.tool, r.args)
		cj := must(json.Marshal(c))
		t.Logf("%s: %.300s", r.name, cj)
		if !bytes.Equal(cj, must(json.Marshal(m))) {
			t.Errorf("%s: the front ends disagree:\n coord %s: %s\n mcp %s:  %s", r.name, strings.Join(clipArgs(r.cli), " "), cj, r.tool, must(json.Marshal(m)))
		}
		if r.hook == "" {
			continue
		}
		h := edit(r.hook)
		switch {
		case (h.Code == 2) != (c.Code != 0):
			t.Errorf("%s: the hook answered %d (%s) where coord %s answered %d", r.name, h.Code, h.Message, strings.Join(r.cli, " "), c.Code)
		case r.holder != "" && (!strings.Contains(h.Message, r.holder+"'s") || !strings.Contains(c.Message, r.holder)):
			t.Errorf("%s: the holder %s is not named alike: hook %q, coord %q", r.name, r.holder, h.Message, c.Message)
		}
	}
}

func must(b []byte, _ error) []byte { return b }

// clipArgs shortens long arguments for a failure message.
func clipArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = coord.Clip(a, 40)
	}
	return out
}
