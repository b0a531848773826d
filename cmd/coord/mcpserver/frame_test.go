package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/format"
)

// rawSession is a session driven line by line, as a misbehaving client
// would: Run on pipes, the server's lines read as they come.
type rawSession struct {
	in   *io.PipeWriter
	got  chan string   // the server's lines
	done chan struct{} // closed when Run has returned err
	err  error
}

func startRaw(t *testing.T, ctx context.Context, opt Options) *rawSession {
	t.Helper()
	opt.TaskJSON = format.TaskJSON
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &rawSession{in: inW, got: make(chan string, 100), done: make(chan struct{})}
	go func() {
		s.err = Run(ctx, opt, inR, outW)
		close(s.done)
		outW.Close()
	}()
	go func() {
		defer close(s.got)
		br := bufio.NewReaderSize(outR, 1<<20)
		for {
			l, err := br.ReadString('\n')
			if l != "" {
				s.got <- l
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	s.send(t, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`+"\n"+
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	s.answers(t, 1)
	return s
}

func (s *rawSession) send(t *testing.T, text string) {
	t.Helper()
	go s.in.Write([]byte(text)) // the server may answer before it has read it all
}

// answer is one JSON-RPC response as a test reads it.
type answer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// answers reads n responses (up to 60 s); the session ending first fails
// the test.
func (s *rawSession) answers(t *testing.T, n int) []answer {
	t.Helper()
	var out []answer
	for len(out) < n {
		select {
		case l, ok := <-s.got:
			if !ok {
				<-s.done
				t.Fatalf("the session ended after %d of %d answers: %v", len(out), n, s.err)
			}
			var a answer
			if err := json.Unmarshal([]byte(l), &a); err != nil {
				t.Fatalf("not a JSON-RPC line: %q", l)
			}
			if a.Result == nil && a.Error == nil {
				continue // a notification
			}
			out = append(out, a)
		case <-s.done:
			t.Fatalf("the session ended after %d of %d answers: %v", len(out), n, s.err)
		case <-time.After(60 * time.Second):
			t.Fatalf("%d of %d answers within 60s", len(out), n)
		}
	}
	return out
}

// TestSessionGoesOnAfterBadFrames: every line the SDK's transport would
// have ended the session on (it exited 2, and the requests queued after
// the line were never answered) is answered with a JSON-RPC error, and
// the requests around it are answered too: a line that is not JSON
// (-32700, id null), a batch or JSON that is not a JSON-RPC message
// (-32600, with the id when it has one), a line over the frame limit
// (-32600, answered by its id wherever the id stands, without keeping the
// line). A line of exactly the limit is served; CRLF endings and blank
// lines are fine.
func TestSessionGoesOnAfterBadFrames(t *testing.T) {
	const max = 4096
	p := seeded(t, tasks(1))
	opt := Options{Service: p.Service, Agent: agentAt("raw"), MaxFrame: max}
	ping := func(id string) string { return `{"jsonrpc":"2.0","id":"` + id + `","method":"ping"}` + "\n" }
	pad := func(prefix, suffix string, size int) string { // a line of size bytes
		return prefix + strings.Repeat("x", size-len(prefix)-len(suffix)) + suffix
	}
	exact := pad(`{"jsonrpc":"2.0","id":"exact","method":"ping","params":{"pad":"`, `"}}`, max)
	cases := []struct {
		name, line string
		code       int
		id         string // the answer's id, as JSON
	}{
		{"not JSON", "garbage{\n", -32700, "null"},
		{"two values", `{"a":1} {"b":2}` + "\n", -32700, "null"},
		{"truncated", `{"jsonrpc":"2.0","id":"cut","method":"tools/call","params":{` + "\n", -32700, "null"},
		{"batch", `[{"jsonrpc":"2.0","id":"b1","method":"ping"}]` + "\n", -32600, "null"},
		{"no version", `{"id":7,"method":"ping"}` + "\n", -32600, "7"},
		{"not an object", `"ping"` + "\n", -32600, "null"},
		{"oversized, id last", pad(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"status","arguments":{"x":"`, `"}},"id":"big"}`, max+1) + "\n", -32600, `"big"`},
		{"oversized, id first", pad(`{"jsonrpc":"2.0","id":42,"params":{"a":["`, `"]},"method":"x"}`, 3*max) + "\r\n", -32600, "42"},
		{"oversized, no id", strings.Repeat("y", 5*max) + "\n", -32600, "null"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startRaw(t, context.Background(), opt) // each case on its own: any one used to end the session
			before, after := fmt.Sprint("before-", i), fmt.Sprint("after-", i)
			s.send(t, ping(before)+"\n"+c.line+ping(after))
			got := map[string]answer{}
			var refused []answer
			for _, a := range s.answers(t, 3) {
				if a.Error != nil {
					refused = append(refused, a)
				} else {
					got[string(a.ID)] = a
				}
			}
			if len(refused) != 1 || refused[0].Error.Code != c.code || string(refused[0].ID) != c.id {
				t.Fatalf("refusal %+v, want code %d id %s", refused, c.code, c.id)
			}
			if _, ok := got[`"`+before+`"`]; !ok {
				t.Errorf("%s not answered: %v", before, got)
			}
			if _, ok := got[`"`+after+`"`]; !ok {
				t.Errorf("%s not answered: %v", after, got)
			}
		})
	}
	// the limit itself is served; one session goes on through all of the
	// bad lines, and a tool call after them works
	s := startRaw(t, context.Background(), opt)
	var all strings.Builder
	for _, c := range cases {
		all.WriteString(c.line)
	}
	s.send(t, all.String())
	if got := s.answers(t, len(cases)); len(got) != len(cases) {
		t.Fatalf("%d answers", len(got))
	}
	s.send(t, exact+"\r\n"+`{"jsonrpc":"2.0","id":"st","method":"tools/call","params":{"name":"claim","arguments":{}}}`+"\n")
	got := map[string]answer{}
	for _, a := range s.answers(t, 2) {
		got[string(a.ID)] = a
	}
	if a := got[`"exact"`]; a.Error != nil || a.Result == nil {
		t.Fatalf("a line of exactly %d bytes: %+v %+v", max, a, a.Error)
	}
	if a := got[`"st"`]; a.Error != nil || !strings.Contains(string(a.Result), `\"id\":\"t1\"`) {
		t.Fatalf("claim after the bad frames: %s", a.Result)
	}
	s.in.Close()
	select {
	case <-s.done:
		if s.err != nil {
			t.Fatalf("session end: %v", s.err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the session did not end within 60s of its input")
	}
}

// TestSessionEndsWithItsContext: when the session's context ends (coord
// mcp got SIGINT or SIGTERM), Run returns at once even with a wait in
// flight: the SDK alone waited for every handler, here up to ten minutes.
func TestSessionEndsWithItsContext(t *testing.T) {
	p := seeded(t, `{"id":"a"}`+"\n"+`{"id":"b","deps":["a"]}`)
	if _, err := p.Service.Claim(context.Background(), app.ClaimRequest{Agent: agentAt("holder"), TaskID: "a"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := startRaw(t, ctx, Options{Service: p.Service, Agent: agentAt("w")})
	s.send(t, `{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":"wait","arguments":{"timeout":"10m"}}}`+"\n")
	waitingOn(t, p, "w")
	start := time.Now()
	cancel()
	select {
	case <-s.done:
		t.Logf("Run returned %v after its context ended", time.Since(start))
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30s of its context ending, with a wait in flight")
	}
}

// TestSubprocessBadFrames: `coord mcp` as a real process on stdio keeps
// its session through a malformed line and a line over MaxFrame (the real
// limit, 16 MiB), answers both on stdout with nothing but protocol there,
// and exits 0 when its input ends.
func TestSubprocessBadFrames(t *testing.T) {
	p := seeded(t, tasks(1))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "COORD_MCPSERVER_TEST_SERVE=1", "COORD_ROOT="+p.Root, "COORD_AGENT=sub")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	big := `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"status","arguments":{"x":"` + strings.Repeat("z", MaxFrame) + `"}},"id":3}`
	go func() {
		bw := bufio.NewWriter(stdin)
		bw.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}` + "\n")
		bw.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
		bw.WriteString("{not json\n")
		bw.WriteString(big + "\n")
		bw.WriteString(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"claim","arguments":{}}}` + "\n")
		bw.Flush()
	}()
	// Read until the claim is answered (a closed input cancels the calls
	// still in flight), then close the input: the server exits 0.
	var out bytes.Buffer
	lines := make(chan string)
	go func() {
		defer close(lines)
		br := bufio.NewReader(stdout)
		for {
			l, err := br.ReadString('\n')
			if l != "" {
				lines <- l
			}
			if err != nil {
				return
			}
		}
	}()
	for !strings.Contains(out.String(), `"id":4,`) {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the server's output ended:\n%s\nstderr: %s", out.Bytes(), stderr.Bytes())
			}
			out.WriteString(l)
		case <-time.After(60 * time.Second):
			t.Fatalf("no answer to the claim within 60s:\n%s\nstderr: %s", out.Bytes(), stderr.Bytes())
		}
	}
	stdin.Close()
	for l := range lines {
		out.WriteString(l)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("server exit: %v\n%s", err, stderr.Bytes())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the server did not end within 60s of its input\n%s", stderr.Bytes())
	}
	protocolOnly(t, out.Bytes())
	for _, want := range []string{
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,`,
		fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"message of %d bytes is over the limit of %d bytes; it was not read"}}`, len(big), MaxFrame),
		`"id":4,"result":{`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %s:\n%s", want, out.String())
		}
	}
	if !strings.Contains(p.registryTask(t, "t1"), `"claimed_by":"sub"`) {
		t.Fatal("the claim after the bad frames was not made")
	}
}
