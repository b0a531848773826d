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

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/format"
)

// rawSession is a session driven line by line, as a client the SDK's does
// not imitate would: Run on pipes, the server's lines read as they come.
type rawSession struct {
	in   *io.PipeWriter
	got  chan string   // the server's lines
	done chan struct{} // closed when Run has returned err
	err  error
}

// openRaw serves opt on pipes; the client has not said anything yet.
func openRaw(t *testing.T, ctx context.Context, opt Options) *rawSession {
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
	return s
}

// startRaw is openRaw after the handshake (revision 2025-06-18).
func startRaw(t *testing.T, ctx context.Context, opt Options) *rawSession {
	t.Helper()
	s := openRaw(t, ctx, opt)
	s.send(t, initialize("init", "2025-06-18")+`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	s.answers(t, 1)
	return s
}

// initialize is an initialize request naming revision.
func initialize(id, revision string) string {
	return `{"jsonrpc":"2.0","id":"` + id + `","method":"initialize","params":{"protocolVersion":"` + revision +
		`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}` + "\n"
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

// TestToolSchemas: the input schemas inferred from the tools' input
// structs are those the official Go SDK inferred from the same structs
// (testdata/tools.json, its tools/list of --tools all): the same
// properties, types, descriptions and required lists, and no other
// properties allowed.
func TestToolSchemas(t *testing.T) {
	p := seeded(t, "")
	s, err := newServer(Options{Service: p.Service, Agent: agentAt("a"), All: true, TaskJSON: func(*coord.Task) []byte { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.keep.Close()
	want, err := os.ReadFile("testdata/tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var tools []json.RawMessage
	if err := json.Unmarshal(want, &tools); err != nil {
		t.Fatal(err)
	}
	if len(tools) != len(s.tools) {
		t.Fatalf("%d tools, testdata/tools.json has %d", len(s.tools), len(tools))
	}
	for _, w := range tools {
		var name struct{ Name string }
		json.Unmarshal(w, &name)
		for _, tl := range s.tools {
			if tl.Name == name.Name {
				got, err := json.Marshal(tl)
				if err != nil {
					t.Fatal(err)
				}
				jsonEqual(t, string(got), string(w))
			}
		}
	}
}

// TestWaitDescription: the wait tool's timeout description names the
// bounds the tool applies (app.DefaultToolWait, app.MaxToolWait).
func TestWaitDescription(t *testing.T) {
	want := fmt.Sprintf("(default %dm, at most %dm)", int(app.DefaultToolWait.Minutes()), int(app.MaxToolWait.Minutes()))
	if got := schemaOf[waitIn]().props[1].desc; !strings.Contains(got, want) {
		t.Fatalf("wait's timeout is described as %q, want it to say %q", got, want)
	}
}

// TestProtocol: the parts of the protocol no SDK client sends here. A
// method coord does not serve (server/discover without the revision that
// has it, which newer clients try first, among them) is -32601 and the
// session goes on; resources/list is an empty list; initialize answers
// with the client's revision when coord speaks it, else with the newest
// revision that has an initialize; an unknown tool is -32602; arguments
// that do not fit the schema are a usage refusal (code 1); absent or null
// arguments are an empty object; a call the client cancels is not
// answered, and the session goes on.
func TestProtocol(t *testing.T) {
	p := seeded(t, tasks(1))
	for revision, want := range map[string]string{"2025-03-26": "2025-03-26", "2024-11-05": "2024-11-05", "2099-01-01": "2025-11-25"} {
		s := openRaw(t, context.Background(), Options{Service: p.Service, Agent: agentAt("raw")})
		s.send(t, initialize("init", revision))
		var r struct {
			ProtocolVersion string
			ServerInfo      struct{ Name string }
		}
		a := s.answers(t, 1)[0]
		json.Unmarshal(a.Result, &r)
		if r.ProtocolVersion != want || r.ServerInfo.Name != "coord" {
			t.Errorf("initialize %s: %s, want protocol %s", revision, a.Result, want)
		}
	}

	s := startRaw(t, context.Background(), Options{Service: p.Service, Agent: agentAt("raw")})
	req := func(id, method, params string) string {
		return `{"jsonrpc":"2.0","id":"` + id + `","method":"` + method + `","params":` + params + "}\n"
	}
	s.send(t, req("discover", "server/discover", "{}")+req("nosuch", "completion/complete", `{"ref":{"type":"ref/prompt","name":"prime"},"argument":{"name":"x","value":""}}`)+
		req("resources", "resources/list", "{}")+
		req("tool", "tools/call", `{"name":"nosuch"}`)+
		req("bogus", "tools/call", `{"name":"claim","arguments":{"bogus":1}}`)+
		req("null", "tools/call", `{"name":"claim","arguments":{"task":null}}`)+
		req("frac", "tools/call", `{"name":"log","arguments":{"lines":1.5}}`)+
		req("missing", "tools/call", `{"name":"block","arguments":{"task":"t1"}}`)+
		req("items", "tools/call", `{"name":"files","arguments":{"lock":[1]}}`)+
		req("noargs", "tools/call", `{"name":"status"}`)+
		req("nullargs", "tools/call", `{"name":"status","arguments":null}`))
	got := map[string]answer{}
	for _, a := range s.answers(t, 11) {
		got[string(a.ID)] = a
	}
	for _, id := range []string{"discover", "nosuch"} {
		if a := got[`"`+id+`"`]; a.Error == nil || a.Error.Code != -32601 {
			t.Errorf("%s: %+v %+v, want -32601", id, a, a.Error)
		}
	}
	var res struct{ Resources *[]any }
	if err := json.Unmarshal(got[`"resources"`].Result, &res); err != nil || res.Resources == nil || len(*res.Resources) != 0 {
		t.Errorf("resources/list: %s", got[`"resources"`].Result)
	}
	if a := got[`"tool"`]; a.Error == nil || a.Error.Code != -32602 {
		t.Errorf("unknown tool: %+v", a)
	}
	for _, id := range []string{"bogus", "null", "frac", "missing", "items"} {
		var r struct {
			IsError           bool
			StructuredContent Refusal
		}
		json.Unmarshal(got[`"`+id+`"`].Result, &r)
		if !r.IsError || r.StructuredContent.Code != 1 || !strings.Contains(r.StructuredContent.Message, "invalid arguments") {
			t.Errorf("%s: %s, want a usage refusal", id, got[`"`+id+`"`].Result)
		}
	}
	for _, id := range []string{"noargs", "nullargs"} {
		if r := string(got[`"`+id+`"`].Result); !strings.Contains(r, `"agent":"raw"`) || strings.Contains(r, "isError") {
			t.Errorf("%s: %s", id, r)
		}
	}

	// A cancelled wait is not answered; the next request is.
	if _, err := p.Service.Claim(context.Background(), app.ClaimRequest{Agent: agentAt("holder"), TaskID: "t1"}); err != nil {
		t.Fatal(err)
	}
	s.send(t, req("w", "tools/call", `{"name":"wait","arguments":{"timeout":"10m"}}`))
	waitingOn(t, p, "raw")
	s.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w","reason":"test"}}`+"\n"+req("after", "ping", "{}"))
	if a := s.answers(t, 1)[0]; string(a.ID) != `"after"` {
		t.Fatalf("after the cancelled wait: %s %s, want the ping's answer", a.ID, a.Result)
	}
	// Run waits for the calls it cancelled before it returns: every line
	// it ever writes is read once the output ends.
	s.in.Close()
	for l := range s.got {
		var a answer
		if json.Unmarshal([]byte(l), &a) == nil && string(a.ID) == `"w"` {
			t.Fatalf("the cancelled call was answered: %s", l)
		}
	}
}

// TestSessionEndsWithItsContext: when the session's context ends (coord
// mcp got SIGINT or SIGTERM), Run returns at once even with a wait in
// flight: the SDK alone waits for every handler, here up to ten minutes.
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
	for l := range s.got {
		if strings.Contains(l, `"id":"w"`) {
			t.Fatalf("the wait cut short by the session's end was answered: %s", l)
		}
	}
}

// TestSubprocessBadLine: `coord mcp` as a real process on stdio answers
// the requests before a line that is not a JSON-RPC message, then ends
// the session there (the SDK's transport reads no further) with an
// error on stderr and exit status 2, never hanging; nothing but protocol
// reaches stdout.
func TestSubprocessBadLine(t *testing.T) {
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
	io.WriteString(stdin, initialize("1", "2025-06-18")+`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"claim","arguments":{}}}`+"\n")
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
	io.WriteString(stdin, "{not json\n")
	for l := range lines {
		out.WriteString(l)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(stderr.Bytes()), "coord: mcp: ") {
			t.Fatalf("server exit %v, want status 2 with the error on stderr\n%s", err, stderr.Bytes())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the server did not end within 60s of the bad line\n%s", stderr.Bytes())
	}
	protocolOnly(t, out.Bytes())
	if !strings.Contains(out.String(), `"id":4,"result":{`) {
		t.Errorf("stdout lacks the claim's answer:\n%s", out.String())
	}
	if !strings.Contains(p.registryTask(t, "t1"), `"claimed_by":"sub"`) {
		t.Fatal("the claim was not made")
	}
}
