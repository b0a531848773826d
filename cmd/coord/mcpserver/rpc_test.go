package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// TestToolSchemas: the input schemas inferred from the tools' input
// structs are those the official Go SDK inferred from the same structs
// (testdata/tools.json, its tools/list of --tools all, recorded before
// the SDK left the binary): the same properties, types, descriptions and
// required lists, and no other properties allowed.
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

// TestProtocol: the parts of the protocol no SDK client sends here. A
// method coord does not serve (server/discover, which newer clients try
// first, among them) is -32601 and the session goes on; resources/list
// is an empty list; initialize
// answers with the client's revision when coord speaks it, else with its
// newest; an unknown tool is -32602; arguments that do not fit the
// schema are a usage refusal (code 1); absent or null arguments are an
// empty object; a call the client cancels is not answered, and the
// session goes on.
func TestProtocol(t *testing.T) {
	p := seeded(t, tasks(1))
	s := startRaw(t, context.Background(), Options{Service: p.Service, Agent: agentAt("raw")})
	req := func(id, method, params string) string {
		return `{"jsonrpc":"2.0","id":"` + id + `","method":"` + method + `","params":` + params + "}\n"
	}
	s.send(t, req("discover", "server/discover", "{}")+req("nosuch", "completion/complete", "{}")+
		req("resources", "resources/list", "{}")+
		req("old", "initialize", `{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"x","version":"1"}}`)+
		req("future", "initialize", `{"protocolVersion":"2099-01-01","capabilities":{},"clientInfo":{"name":"x","version":"1"}}`)+
		req("tool", "tools/call", `{"name":"nosuch"}`)+
		req("bogus", "tools/call", `{"name":"claim","arguments":{"bogus":1}}`)+
		req("null", "tools/call", `{"name":"claim","arguments":{"task":null}}`)+
		req("frac", "tools/call", `{"name":"log","arguments":{"lines":1.5}}`)+
		req("missing", "tools/call", `{"name":"block","arguments":{"task":"t1"}}`)+
		req("items", "tools/call", `{"name":"files","arguments":{"lock":[1]}}`)+
		req("noargs", "tools/call", `{"name":"status"}`)+
		req("nullargs", "tools/call", `{"name":"status","arguments":null}`))
	got := map[string]answer{}
	for _, a := range s.answers(t, 13) {
		got[string(a.ID)] = a
	}
	for _, id := range []string{"discover", "nosuch"} {
		if a := got[`"`+id+`"`]; a.Error == nil || a.Error.Code != -32601 {
			t.Errorf("%s: %+v %+v, want -32601", id, a, a.Error)
		}
	}
	for id, want := range map[string]string{"old": "2025-03-26", "future": protocolVersions[0]} {
		var r struct {
			ProtocolVersion string
			ServerInfo      struct{ Name string }
		}
		json.Unmarshal(got[`"`+id+`"`].Result, &r)
		if r.ProtocolVersion != want || r.ServerInfo.Name != "coord" {
			t.Errorf("initialize %s: %s, want protocol %s", id, got[`"`+id+`"`].Result, want)
		}
	}
	if r := string(got[`"resources"`].Result); r != `{"resources":[]}` {
		t.Errorf("resources/list: %s", r)
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

// TestNoSDKInTheBinary: the server links no MCP SDK, JSON Schema or
// OAuth package (their package initialisation cost every coord process
// about 0.25 ms at start; tests may use the SDK's client).
func TestNoSDKInTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Skipf("go list: %v: %s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/modelcontextprotocol/", "github.com/google/jsonschema-go", "golang.org/x/oauth2"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("the server imports %s", dep)
			}
		}
	}
}
