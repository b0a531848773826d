package mcpserver

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lockedBuffer is a buffer safe for one writer and a later reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

// readCloser tees a process's stdout into a capture.
type readCloser struct {
	io.Reader
	io.Closer
}

// startServer starts this test binary as an MCP server process for agent
// on the project at root and connects the SDK's client to its stdio. The
// returned capture holds every byte the process wrote to stdout and its
// stderr.
func startServer(t testing.TB, root, agent string, env []string) (*mcp.ClientSession, *capture, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "COORD_MCPSERVER_TEST_SERVE=1", "COORD_ROOT="+root, "COORD_AGENT="+agent)
	cmd.Env = append(cmd.Env, env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	c := &capture{}
	cmd.Stderr = &c.stderr
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	c.wait = func() error { return cmd.Wait() }
	in := &readCloser{Reader: io.TeeReader(stdout, &c.stdout), Closer: stdout}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: in, Writer: stdin}, nil)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, nil, err
	}
	return cs, c, nil
}

type capture struct {
	stdout, stderr lockedBuffer
	wait           func() error
}

// TestSubprocess: `coord mcp` as a real process on stdio: the handshake,
// tools/list, a claim and a release; stray writes to stdout during a call
// (through os.Stdout, on descriptor 1, from a child process) go to stderr,
// and stdout carries nothing but JSON-RPC.
func TestSubprocess(t *testing.T) {
	p := seeded(t, tasks(1))
	cs, c, err := startServer(t, p.Root, "sub", []string{"COORD_MCPSERVER_TEST_STRAY=1"})
	if err != nil {
		t.Fatal(err)
	}
	s := &session{cs: cs}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) != len(DefaultTools) {
		t.Fatalf("tools/list: %v %v", tools, err)
	}
	got := s.call(t, "claim", nil).ok(t)
	jsonEqual(t, string(got.raw), p.registryTask(t, "t1"))
	got = s.call(t, "release", map[string]any{"task": "t1"}).ok(t) // the summary writes stray output
	if !strings.Contains(p.registryTask(t, "t1"), `"done"`) {
		t.Fatalf("released: %s", got.raw)
	}
	if ref := s.call(t, "release", map[string]any{"task": "t1"}).refusal(t); ref.Code != 6 {
		t.Fatalf("second release: %+v", ref)
	}
	cs.Close()
	if err := c.wait(); err != nil {
		t.Fatalf("server exit: %v (stderr %s)", err, c.stderr.Bytes())
	}
	protocolOnly(t, c.stdout.Bytes())
	for _, w := range strayLines {
		if !bytes.Contains(c.stderr.Bytes(), []byte(w)) {
			t.Errorf("stderr lacks %q: %s", w, c.stderr.Bytes())
		}
	}
}
