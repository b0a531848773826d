package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// The protocol: JSON-RPC 2.0, one message a line (frame.go), and the part
// of MCP coord serves: the initialize handshake, ping, tools/list,
// tools/call (with progress notifications and cancellation), prompts/list
// and prompts/get, logging/setLevel (accepted; coord logs to stderr),
// and empty resources/list and resources/templates/list (no resources:
// not advertised, but some clients list them anyway).
// Requests for anything else are answered with -32601 (method not
// found); notifications coord does not use are ignored. Tool calls run
// concurrently, each under its own context, which notifications/cancelled
// and the end of the session cancel; a cancelled call is not answered.

// protocolVersions are the MCP revisions this server speaks, newest
// first. An initialize naming one of them is answered with it; any other
// with the newest (the client then decides whether it can go on).
var protocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// JSON-RPC error codes of answers (besides the framer's).
const (
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
)

// message is one JSON-RPC message: a request (method and id), a
// notification (method, no id) or a response (id, result or error).
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  *string         `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// decodeMessage decodes one line that is one JSON value. A message must
// be an object with "jsonrpc": "2.0", an id (when it has one) that is a
// string or a number, and a method, or else be a response (an id and a
// result or an error).
func decodeMessage(line []byte) (message, error) {
	var m message
	if line[0] != '{' {
		return m, errors.New("a message is a JSON object")
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return m, err
	}
	if m.JSONRPC != "2.0" {
		return m, fmt.Errorf(`"jsonrpc" is %q, not "2.0"`, m.JSONRPC)
	}
	if m.ID != nil && string(m.ID) != "null" && !validID(m.ID) {
		return m, errors.New(`"id" is neither a string nor a number`)
	}
	if string(m.ID) == "null" {
		m.ID = nil
	}
	if m.Method == nil && (m.ID == nil || m.Result == nil && m.Error == nil) {
		return m, errors.New(`neither a request (no "method") nor a response`)
	}
	return m, nil
}

// rpcError is a JSON-RPC error answer.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// conn is one client's connection: the answers it is owed and the
// tool calls in flight.
type conn struct {
	s   *server
	out *syncWriter

	mu       sync.Mutex
	inflight map[string]context.CancelFunc // by the request's id (idKey)
	werr     error                         // the first write that failed
	calls    sync.WaitGroup
}

// serve answers the messages f passes until the input ends (nil), a write
// fails (its error) or ctx ends (its error). The calls still in flight
// are then cancelled, unanswered, and waited for.
func (s *server) serve(ctx context.Context, f *framer, out *syncWriter) error {
	ctx, cancel := context.WithCancel(ctx)
	ss := &conn{s: s, out: out, inflight: map[string]context.CancelFunc{}}
	defer ss.calls.Wait()
	defer cancel()
	for {
		select {
		case m, ok := <-f.lines:
			if !ok {
				return f.err
			}
			ss.handle(ctx, m)
			if err := ss.writeErr(); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// send writes one message.
func (ss *conn) send(v any) {
	b, err := json.Marshal(v)
	if err == nil {
		_, err = ss.out.Write(append(b, '\n'))
	}
	if err != nil {
		ss.mu.Lock()
		if ss.werr == nil {
			ss.werr = fmt.Errorf("mcp: writing an answer: %w", err)
		}
		ss.mu.Unlock()
	}
}

func (ss *conn) writeErr() error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.werr
}

func (ss *conn) reply(id json.RawMessage, result any) {
	ss.send(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{"2.0", id, result})
}

func (ss *conn) fail(id json.RawMessage, code int, msg string) {
	ss.send(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{code, msg}})
}

func (ss *conn) notify(method string, params any) {
	ss.send(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", method, params})
}

// handle serves one message; a tool call goes on in its own goroutine.
func (ss *conn) handle(ctx context.Context, m message) {
	if m.Method == nil {
		return // a response: this server sends no requests
	}
	method, id := *m.Method, m.ID
	if id == nil { // a notification
		if method == "notifications/cancelled" {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			if json.Unmarshal(m.Params, &p) == nil && p.RequestID != nil {
				ss.cancel(p.RequestID)
			}
		}
		return
	}
	switch method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if err := json.Unmarshal(orEmpty(m.Params), &p); err != nil {
			ss.fail(id, codeInvalidParams, "invalid params: "+err.Error())
			return
		}
		version := protocolVersions[0]
		if slices.Contains(protocolVersions, p.ProtocolVersion) {
			version = p.ProtocolVersion
		}
		ss.reply(id, map[string]any{
			"protocolVersion": version,
			"capabilities":    map[string]any{"logging": struct{}{}, "prompts": struct{}{}, "tools": struct{}{}},
			"serverInfo":      map[string]string{"name": "coord", "version": ss.s.opt.Version},
			"instructions":    instructions,
		})
	case "ping", "logging/setLevel":
		ss.reply(id, struct{}{})
	case "tools/list":
		ss.reply(id, map[string]any{"tools": ss.s.tools})
	case "resources/list": // none; answered as the SDK did, for clients that ask anyway
		ss.reply(id, map[string]any{"resources": []any{}})
	case "resources/templates/list":
		ss.reply(id, map[string]any{"resourceTemplates": []any{}})
	case "prompts/list":
		ss.reply(id, map[string]any{"prompts": []map[string]string{{"name": "prime", "description": primeDescription}}})
	case "prompts/get":
		var p struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(orEmpty(m.Params), &p); p.Name != "prime" {
			ss.fail(id, codeInvalidParams, fmt.Sprintf("unknown prompt %q", p.Name))
			return
		}
		ss.reply(id, map[string]any{
			"description": "coord prime",
			"messages": []map[string]any{{"role": "user",
				"content": map[string]string{"type": "text", "text": ss.s.opt.Prime}}},
		})
	case "tools/call":
		ss.call(ctx, id, m.Params)
	default:
		ss.fail(id, codeMethodNotFound, fmt.Sprintf("method %q not found", method))
	}
}

func orEmpty(params json.RawMessage) json.RawMessage {
	if len(params) == 0 || string(params) == "null" {
		return json.RawMessage("{}")
	}
	return params
}

// primeDescription describes the prime prompt in prompts/list.
const primeDescription = "How an agent uses coord in this repository."

// tool is one tool as tools/list gives it, with its handler.
type tool struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	InputSchema *schema `json:"inputSchema"`
	run         func(ctx context.Context, c *call, args json.RawMessage) (any, error)
}

// call is what a tool handler may use of its request: the progress token
// the client gave (nil: none) and the way to notify progress.
type call struct {
	progressToken json.RawMessage
	ss            *conn
}

// notifyProgress sends notifications/progress for the call's token.
func (c *call) notifyProgress(progress, total float64, msg string) error {
	c.ss.notify("notifications/progress", map[string]any{
		"progressToken": c.progressToken, "progress": progress, "total": total, "message": msg,
	})
	return c.ss.writeErr()
}

// call starts a tools/call request.
func (ss *conn) call(ctx context.Context, id json.RawMessage, params json.RawMessage) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(orEmpty(params), &p); err != nil {
		ss.fail(id, codeInvalidParams, "invalid params: "+err.Error())
		return
	}
	i := slices.IndexFunc(ss.s.tools, func(t *tool) bool { return t.Name == p.Name })
	if i < 0 {
		ss.fail(id, codeInvalidParams, fmt.Sprintf("unknown tool %q", p.Name))
		return
	}
	t := ss.s.tools[i]
	tok := p.Meta.ProgressToken
	if string(tok) == "null" {
		tok = nil
	}
	ctx, cancel := context.WithCancel(ctx)
	key := idKey(id)
	ss.mu.Lock()
	ss.inflight[key] = cancel
	ss.mu.Unlock()
	ss.calls.Add(1)
	go func() {
		defer ss.calls.Done()
		out, err := t.run(ctx, &call{progressToken: tok, ss: ss}, p.Arguments)
		ss.mu.Lock()
		_, live := ss.inflight[key]
		delete(ss.inflight, key)
		ss.mu.Unlock()
		cancelled := !live || ctx.Err() != nil && err != nil
		cancel()
		if cancelled {
			return // by the client or by the session's end: not answered
		}
		ss.reply(id, toolResult(out, err))
	}()
}

// cancel cancels the call in flight with this id (notifications/cancelled).
func (ss *conn) cancel(id json.RawMessage) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if c, ok := ss.inflight[idKey(id)]; ok {
		delete(ss.inflight, idKey(id))
		c()
	}
}

// idKey is an id's canonical text: "7", 7.0 and 7 name one request.
func idKey(id json.RawMessage) string {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return string(id)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// toolResult is a tools/call result: the structured content and the same
// JSON as text; an error is a refusal (isError) with structured content.
func toolResult(out any, err error) map[string]any {
	isError := false
	if err != nil {
		out, isError = RefusalOf(err), true
	}
	b, merr := json.Marshal(out)
	if merr != nil {
		out, isError = RefusalOf(fail(merr)), true
		b, _ = json.Marshal(out)
	}
	res := map[string]any{
		"content":           []map[string]string{{"type": "text", "text": string(b)}},
		"structuredContent": json.RawMessage(b),
	}
	if isError {
		res["isError"] = true
	}
	return res
}
