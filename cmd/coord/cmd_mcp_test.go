package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// runCoord runs the coord binary (the test binary under the name coord, on
// PATH through testscript.Main) in dir with env and returns its stdout.
func runCoord(t testing.TB, dir string, env []string, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("coord", args...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("coord %v: %v\n%s", args, err, errb.String())
	}
	return out.String()
}

// cleanEnv is the test's environment without coord's identity and root.
func cleanEnv() []string {
	return dropEnv(append([]string(nil), os.Environ()...), "COORD_AGENT", "COORD_ROOT", "COORD_AGENT_CAPS", "ROTD_AGENT_ID", "ROTD_AGENT_CAPS", "COORD_BACKEND", "CLAUDE_PROJECT_DIR")
}

// counted is a reader that counts what it passes on: the bytes an agent
// reads from the server.
type counted struct {
	mu sync.Mutex
	r  io.ReadCloser
	n  int
}

func (c *counted) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.mu.Lock()
	c.n += n
	c.mu.Unlock()
	return n, err
}
func (c *counted) Close() error { return c.r.Close() }
func (c *counted) take() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = 0
	return n
}

// mcpSession starts `coord mcp args…` in dir with env and connects the
// SDK's client to it over the process's stdio.
func mcpSession(t testing.TB, dir string, env []string, args ...string) (*mcp.ClientSession, *counted, func() error) {
	t.Helper()
	return startMCP(t, dir, env, nil, append([]string{"mcp"}, args...)...)
}

// startMCP starts `coord args…` (args include mcp, after any global flag)
// and connects the SDK's client, with copt, to it.
func startMCP(t testing.TB, dir string, env []string, copt *mcp.ClientOptions, args ...string) (*mcp.ClientSession, *counted, func() error) {
	t.Helper()
	cmd := exec.Command("coord", args...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), env...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	in := &counted{r: stdout}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, copt).
		Connect(context.Background(), &mcp.IOTransport{Reader: in, Writer: stdin}, nil)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("connect: %v\n%s", err, errb.String())
	}
	wait := func() error {
		cs.Close()
		err := cmd.Wait()
		if err != nil {
			t.Logf("server stderr: %s", errb.String())
		}
		return err
	}
	t.Cleanup(func() { cs.Close(); cmd.Process.Kill(); cmd.Wait() })
	return cs, in, wait
}

// callTool calls a tool; it returns the structured content as JSON and
// whether it was a tool error.
func callTool(t testing.TB, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	return string(b), res.IsError
}

func sameJSONValue(t testing.TB, what, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%s: got %q: %v", what, got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: want %q: %v", what, want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if !bytes.Equal(gb, wb) {
		t.Fatalf("%s:\n got  %s\n want %s", what, gb, wb)
	}
}

// lsEntry is one task as `coord ls --json` prints it.
func lsEntry(t testing.TB, dir string, env []string, id string) string {
	t.Helper()
	var list []json.RawMessage
	if err := json.Unmarshal([]byte(runCoord(t, dir, env, "", "ls", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	for _, raw := range list {
		var x struct{ ID string }
		json.Unmarshal(raw, &x)
		if x.ID == id {
			return string(raw)
		}
	}
	t.Fatalf("no task %s in ls --json", id)
	return ""
}

// TestMCPMatchesCLI drives `coord mcp` (a real process) with the SDK's
// client and checks every default tool's structured result against what
// the matching CLI command prints with --json on the same registry; the
// server takes CLAUDE_PROJECT_DIR as its working directory.
func TestMCPMatchesCLI(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	env := []string{"COORD_AGENT=mcp-a"}
	runCoord(t, root, env, "", "init")
	runCoord(t, root, env, `{"id":"4.1","title":"first","priority":"high","files":["src/a/**"],"description":"shown by both"}
{"id":"4.2","title":"second","deps":["4.1"]}
{"id":"4.3","title":"third"}
`, "seed-tasks", "--stdin")
	os.MkdirAll(filepath.Join(root, "src"), 0o755)
	elsewhere := t.TempDir() // the server starts elsewhere: CLAUDE_PROJECT_DIR names the project
	cs, _, wait := mcpSession(t, elsewhere, append(env, "CLAUDE_PROJECT_DIR="+filepath.Join(root, "src")))

	got, isErr := callTool(t, cs, "claim", nil)
	if isErr {
		t.Fatalf("claim refused: %s", got)
	}
	sameJSONValue(t, "claim vs ls --json", got, lsEntry(t, root, env, "4.1"))
	got, _ = callTool(t, cs, "status", nil)
	sameJSONValue(t, "status vs status --json", got, runCoord(t, root, env, "", "status", "--json"))
	got, _ = callTool(t, cs, "ready", map[string]any{"explain": true})
	sameJSONValue(t, "ready vs ready --json --explain", got, runCoord(t, root, env, "", "ready", "--json", "--explain"))
	got, _ = callTool(t, cs, "files", map[string]any{"lock": []string{"b/x.go"}}) // relative to CLAUDE_PROJECT_DIR
	sameJSONValue(t, "files lock", got, `{"locked":["src/b/x.go"],"holder":"mcp-a"}`)
	got, _ = callTool(t, cs, "files", nil)
	sameJSONValue(t, "files vs locks --json", got, `{"locks":`+runCoord(t, root, env, "", "locks", "--json")+
		`,"claims":`+runCoord(t, root, env, "", "locks", "--claims", "--json")+`}`)
	got, _ = callTool(t, cs, "progress", map[string]any{"task": "4.1", "percent": 50})
	sameJSONValue(t, "progress vs ls --json", got, lsEntry(t, root, env, "4.1"))
	got, _ = callTool(t, cs, "block", map[string]any{"task": "4.1", "reason": "r"})
	sameJSONValue(t, "block vs ls --json", got, lsEntry(t, root, env, "4.1"))
	runCoord(t, root, env, "", "unblock", "4.1")
	if got, isErr := callTool(t, cs, "claim", map[string]any{"task": "4.1"}); isErr {
		t.Fatalf("claim after unblock: %s", got)
	}
	got, _ = callTool(t, cs, "release", map[string]any{"task": "4.1", "summary": "done"})
	sameJSONValue(t, "release vs ls --json", got, lsEntry(t, root, env, "4.1"))
	got, _ = callTool(t, cs, "wait", map[string]any{"timeout": "5s"})
	sameJSONValue(t, "wait", got, runCoord(t, root, env, "", "wait", "--timeout", "5s"))
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(runCoord(t, root, env, "", "log", "--json", "-n", "5")), "\n") {
		lines = append(lines, l)
	}
	got, _ = callTool(t, cs, "log", map[string]any{"lines": 5})
	sameJSONValue(t, "log vs log --json", got, `{"log":[`+strings.Join(lines, ",")+`]}`)
	got, isErr = callTool(t, cs, "release", map[string]any{"task": "4.1"})
	if !isErr {
		t.Fatalf("second release: %s", got)
	}
	sameJSONValue(t, "refusal", got, `{"code":6,"name":"lost","message":"task \"4.1\" is done: nobody holds it (last held by mcp-a); nothing to do: it was already released"}`)
	if err := wait(); err != nil { // the client closing stdin ends the server, exit 0
		t.Fatalf("server exit: %v", err)
	}
}

// TestMCPToolsAll: --tools all serves the seven more tools.
func TestMCPToolsAll(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	runCoord(t, root, nil, "", "init")
	cs, _, _ := mcpSession(t, root, []string{"COORD_AGENT=x"}, "--tools", "all")
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 16 {
		t.Fatalf("tools: %d %v", len(res.Tools), err)
	}
	// A call that succeeds beats after it (a refused one leaves no trace):
	// one call first, so that both views show the session's agent.
	callTool(t, cs, "status", nil)
	got, _ := callTool(t, cs, "agents", nil)
	// The two are read a moment apart: an age may have ticked a second
	// between them (make test failed on 0 against 1), so ages are not
	// compared; the rest must match.
	want := `{"agents":` + runCoord(t, root, []string{"COORD_AGENT=x"}, "", "agents", "--json") + `}`
	sameJSONValue(t, "agents vs agents --json", withoutAges(got), withoutAges(want))
}

// withoutAges blanks every "age_seconds" number of a JSON text.
func withoutAges(s string) string {
	return regexp.MustCompile(`"age_seconds":\s*[0-9]+`).ReplaceAllString(s, `"age_seconds":0`)
}

// TestAgentCost measures the bytes an agent reads for one cycle (learn the
// interface, claim, release) through MCP (tools/list, claim, release, as
// JSON-RPC on the wire) and through the CLI (coord prime, claim,
// release): the README's figures.
func TestAgentCost(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	env := []string{"COORD_AGENT=agent-a"}
	seed := `{"id":"4.2","title":"Preamble Editor Modal","priority":"high","files":["src/editor/*.ts"]}` + "\n"
	runCoord(t, root, env, "", "init")
	runCoord(t, root, env, seed, "seed-tasks", "--stdin")
	cs, in, _ := mcpSession(t, root, env)
	in.take()
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	list := in.take()
	callTool(t, cs, "claim", nil)
	claim := in.take()
	callTool(t, cs, "release", map[string]any{"task": "4.2", "summary": "done"})
	release := in.take()

	root2 := t.TempDir()
	runCoord(t, root2, env, "", "init")
	runCoord(t, root2, env, seed, "seed-tasks", "--stdin")
	prime := len(runCoord(t, root2, env, "", "prime"))
	cclaim := len(runCoord(t, root2, env, "", "claim"))
	crelease := len(runCoord(t, root2, env, "", "release", "4.2", "--summary", "done"))
	t.Logf("MCP: tools/list %d + claim %d + release %d = %d bytes; CLI: prime %d + claim %d + release %d = %d bytes",
		list, claim, release, list+claim+release, prime, cclaim, crelease, prime+cclaim+crelease)
	if list >= 6000 {
		t.Fatalf("tools/list is %d bytes on the wire", list)
	}
}
