package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rotd/coordination/cmd/coord/internal/workspace"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend"
	"github.com/rotd/coordination/registry/backend/backendtest"
	"github.com/rotd/coordination/registry/format"
)

// TestMain lets the test binary serve MCP on its stdio (the subprocess
// tests start it so): COORD_MCPSERVER_TEST_SERVE=1 with COORD_ROOT and
// COORD_AGENT set.
func TestMain(m *testing.M) {
	if os.Getenv("COORD_MCPSERVER_TEST_SERVE") == "1" {
		os.Exit(serveForTest())
	}
	os.Exit(m.Run())
}

// serveForTest is what `coord mcp` does, as far as this package goes: open
// the project, resolve the identity once, serve on stdio. With
// COORD_MCPSERVER_TEST_STRAY=1 the release summary writes to stdout in
// three ways (os.Stdout, descriptor 1, a child process), which must all
// land on stderr.
func serveForTest() int {
	ctx := context.Background()
	root := os.Getenv("COORD_ROOT")
	warn := func(s string) { fmt.Fprintln(os.Stderr, "coord: warning: "+s) }
	b, err := backend.Open(ctx, backend.Options{Root: root, Warn: warn})
	if err != nil {
		fmt.Fprintln(os.Stderr, "coord:", err)
		return 2
	}
	defer b.Close()
	svc, err := app.New(ctx, b, app.Options{Warn: warn})
	if err != nil {
		fmt.Fprintln(os.Stderr, "coord:", err)
		return 2
	}
	agent, err := workspace.AgentID("", false, root, root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "coord:", err)
		return 1
	}
	opt := Options{Service: svc, Agent: coord.Agent{ID: agent}, Paths: workspace.NewPaths(root, root),
		TaskJSON: format.TaskJSON, Prime: "prime text", Warn: warn}
	if os.Getenv("COORD_MCPSERVER_TEST_STRAY") == "1" {
		opt.BeforeRelease = straySummary
	}
	if err := ServeStdio(ctx, opt); err != nil {
		fmt.Fprintln(os.Stderr, "coord:", err)
		return 2
	}
	return 0
}

// project is a coordination tree in a temporary directory (backendtest).
type project struct{ *backendtest.Project }

// seeded is a fresh project with the tasks of seed (JSON Lines, each read
// as a task line: a fixture may carry fields another tool wrote into the
// registry), opened with the opener's options adjusted by opts.
func seeded(t testing.TB, seed string, opts ...func(*backend.Options)) *project {
	t.Helper()
	return reopen(t, "", seed, opts...)
}

// reopen is seeded on the project at root ("": a new one): another
// opening, as another process makes.
func reopen(t testing.TB, root, seed string, opts ...func(*backend.Options)) *project {
	t.Helper()
	return &project{backendtest.NewProject(t, backendtest.Options{Root: root, Seed: seed, Open: func(o *backend.Options) {
		for _, opt := range opts {
			opt(o)
		}
	}})}
}

// tasks seeds n tasks t1..tn, every one eligible.
func tasks(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"id":"t%d","title":"task %d"}`+"\n", i, i)
	}
	return b.String()
}

// wire counts the bytes the server writes to the client (what an agent
// reads) on an in-memory connection made of pipes.
type wire struct {
	mu sync.Mutex
	n  int
	// lines are the server's messages, one JSON-RPC message a line.
	lines []string
	buf   bytes.Buffer
}

func (w *wire) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n += len(p)
	w.buf.Write(p)
	for {
		i := bytes.IndexByte(w.buf.Bytes(), '\n')
		if i < 0 {
			break
		}
		w.lines = append(w.lines, string(w.buf.Next(i+1)))
	}
	return len(p), nil
}

// take returns the bytes counted so far and starts again from zero.
func (w *wire) take() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.n
	w.n = 0
	return n
}

// session is a client connected to a server of one agent.
type session struct {
	cs   *mcp.ClientSession
	wire *wire
}

// connect serves opt in memory (Run on pipes) and connects the official
// Go SDK's client to it: an independent implementation of the protocol.
func connect(t testing.TB, opt Options, copt *mcp.ClientOptions) *session {
	t.Helper()
	if opt.TaskJSON == nil {
		opt.TaskJSON = format.TaskJSON
	}
	if opt.Paths == nil {
		opt.Paths = workspace.NewPaths(t.TempDir(), t.TempDir())
	}
	ctx, cancel := context.WithCancel(context.Background())
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	w := &wire{}
	tee := &teeWriteCloser{w: s2cW, tee: w}
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, opt, c2sR, tee)
		s2cW.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, copt)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: s2cR, Writer: c2sW}, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("server did not stop within 30s of its client closing")
		}
	})
	return &session{cs: cs, wire: w}
}

type teeWriteCloser struct {
	w   io.WriteCloser
	tee io.Writer
}

func (t *teeWriteCloser) Write(p []byte) (int, error) {
	t.tee.Write(p)
	return t.w.Write(p)
}
func (t *teeWriteCloser) Close() error { return t.w.Close() }

// result is a tool's answer as a test reads it.
type result struct {
	isError bool
	raw     json.RawMessage // structured content
	text    string
}

func (r result) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.raw, v); err != nil {
		t.Fatalf("decode %s: %v", r.raw, err)
	}
}

func (r result) refusal(t testing.TB) Refusal {
	t.Helper()
	if !r.isError {
		t.Fatalf("got a result, want a refusal: %s", r.raw)
	}
	var ref Refusal
	r.decode(t, &ref)
	return ref
}

func (r result) ok(t testing.TB) result {
	t.Helper()
	if r.isError {
		t.Fatalf("refused: %s", r.raw)
	}
	return r
}

// call calls a tool and returns its structured content; a protocol error
// fails the test.
func (s *session) call(t testing.TB, name string, args any) result {
	t.Helper()
	return s.callCtx(context.Background(), t, name, args, nil)
}

func (s *session) callCtx(ctx context.Context, t testing.TB, name string, args any, progress any) result {
	t.Helper()
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if progress != nil {
		p.SetProgressToken(progress)
	}
	res, err := s.cs.CallTool(ctx, p)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return result{isError: res.IsError, raw: raw, text: strings.Join(text, "")}
}

// registryTask is a task as the registry holds it now, compact.
func (p *project) registryTask(t testing.TB, id string) string {
	t.Helper()
	ts, err := p.Service.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range ts {
		if task.ID == id {
			return string(app.CompactJSON(format.TaskJSON(task)))
		}
	}
	t.Fatalf("no task %s", id)
	return ""
}

// jsonEqual compares two JSON texts as values.
func jsonEqual(t testing.TB, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("got %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want %s: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if !bytes.Equal(gb, wb) {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// protocolOnly checks that every line of a captured server stdout is a
// JSON-RPC 2.0 message.
func protocolOnly(t testing.TB, out []byte) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var m struct {
			JSONRPC string `json:"jsonrpc"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.JSONRPC != "2.0" {
			t.Fatalf("stdout line %d is not a JSON-RPC message: %q", n+1, sc.Text())
		}
		n++
	}
	if n == 0 {
		t.Fatal("no protocol on stdout")
	}
}

// agentAt is an agent with no capabilities.
func agentAt(id string) coord.Agent { return coord.Agent{ID: id} }

// writeFile writes a file under root.
func writeFile(t testing.TB, root, rel, data string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
