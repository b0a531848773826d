package main

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rotd/coordination/cmd/coord/internal/mcpserver"
	"github.com/rotd/coordination/registry/backend/backendtest"
	"github.com/rotd/coordination/registry/nats/hubtest"
)

// natsProject creates namespace ns on a hub started for the test (in this
// process, on a free loopback port) with `coord init` and returns its URL.
func natsProject(t *testing.T, ns string) string {
	t.Helper()
	url := hubtest.Start(t) + "/" + ns
	runCoord(t, t.TempDir(), []string{"COORD_BACKEND=" + url}, "", "init")
	return url
}

// TestMCPOnNATS: `coord mcp --backend nats://…/NS` (real processes, the
// SDK's client over stdio) serves the same tools on a NATS backend as on
// files: tools/list, a claim, a claim refused with its code, status, a
// wait woken by a task another process seeds, a release; the CLI (other
// processes, COORD_BACKEND) sees what the tools did.
func TestMCPOnNATS(t *testing.T) {
	t.Parallel()
	url := natsProject(t, "mcp")
	env := []string{"COORD_BACKEND=" + url}
	dir := t.TempDir() // no coordination tree: the URL names the project
	runCoord(t, dir, env, `{"id":"a","title":"first","files":["src/a/**"]}
{"id":"b","title":"after a","deps":["a"]}
{"id":"c","title":"taken"}
`, "seed-tasks", "--stdin")
	runCoord(t, dir, env, "", "--agent", "other", "claim", "--task", "c")
	cs, _, wait := startMCP(t, dir, []string{"COORD_AGENT=m"}, nil, "--backend", url, "mcp")

	t.Run("tools/list", func(t *testing.T) {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		want := slices.Sorted(slices.Values(mcpserver.DefaultTools))
		if !slices.Equal(names, want) {
			t.Fatalf("tools %v, want %v", names, want)
		}
	})
	t.Run("claim", func(t *testing.T) {
		got, isErr := callTool(t, cs, "claim", nil)
		if isErr {
			t.Fatalf("claim refused: %s", got)
		}
		sameJSONValue(t, "claim vs ls --json", got, lsEntry(t, dir, env, "a"))
	})
	t.Run("claim refused", func(t *testing.T) {
		got, isErr := callTool(t, cs, "claim", map[string]any{"task": "c"})
		var ref mcpserver.Refusal
		json.Unmarshal([]byte(got), &ref)
		if !isErr || ref.Code != 3 || ref.Name != "conflict" || ref.Holder != "other" {
			t.Fatalf("claim of a held task: %s (error %v), want code 3 held by other", got, isErr)
		}
	})
	t.Run("status", func(t *testing.T) {
		got, _ := callTool(t, cs, "status", nil)
		sameJSONValue(t, "status vs status --json", got, runCoord(t, dir, append(env, "COORD_AGENT=m"), "", "status", "--json"))
	})
	t.Run("wait", func(t *testing.T) {
		// Another session, agent w, waits: a is claimed, b waits for it, c
		// is held: nothing is eligible until another process seeds d.
		progress := &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {}}
		ws, _, _ := startMCP(t, dir, []string{"COORD_AGENT=w"}, progress, "--backend", url, "mcp")
		done := make(chan string, 1)
		go func() {
			p := &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{"timeout": "60s"}}
			p.SetProgressToken("w1")
			res, err := ws.CallTool(context.Background(), p)
			if err != nil {
				done <- "error: " + err.Error()
				return
			}
			b, _ := json.Marshal(res.StructuredContent)
			done <- string(b)
		}()
		waitBeat(t, url, "w") // the wait has begun (it beats once it has looked)
		select {
		case got := <-done:
			t.Fatalf("wait returned with nothing eligible: %s", got)
		default:
		}
		runCoord(t, dir, env, `{"id":"d","title":"new"}`+"\n", "seed-tasks", "--stdin")
		select {
		case got := <-done:
			sameJSONValue(t, "wait", got, `{"status":"eligible","task":"d"}`)
		case <-time.After(60 * time.Second):
			t.Fatal("wait did not return within 60s of d being seeded")
		}
	})
	t.Run("release", func(t *testing.T) {
		got, isErr := callTool(t, cs, "release", map[string]any{"task": "a", "summary": "done"})
		if isErr {
			t.Fatalf("release refused: %s", got)
		}
		sameJSONValue(t, "release vs ls --json", got, lsEntry(t, dir, env, "a"))
		got, isErr = callTool(t, cs, "release", map[string]any{"task": "a"})
		var ref mcpserver.Refusal
		json.Unmarshal([]byte(got), &ref)
		if !isErr || ref.Code != 6 {
			t.Fatalf("second release: %s, want code 6", got)
		}
	})
	if err := wait(); err != nil {
		t.Fatalf("server exit: %v", err)
	}
}

// waitBeat waits (up to 60 s) until agent has beaten on the backend at
// url.
func waitBeat(t *testing.T, url, agent string) {
	t.Helper()
	ctx := context.Background()
	svc := backendtest.NewProject(t, backendtest.Options{URL: url}).Service
	backendtest.Wait(t, "agent "+agent+" to beat on "+url, func() bool {
		rows, err := svc.Agents(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Agent == agent && r.LastBeat != nil {
				return true
			}
		}
		return false
	})
}
