package agentcli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// scriptedModel stands in for the model behind an agent's CLI: an HTTP
// server on loopback that answers the Anthropic Messages API (Claude
// Code), the OpenAI Responses API (Codex CLI) and the Gemini API (Gemini
// CLI), streaming as each CLI asks, and plays one script in every
// conversation whose prompt says "Do coord task ID in DIR:":
//
//  1. the edit tool writes DIR/work-ID.txt (so the CLI's edit hook runs);
//  2. the shell tool prints the COORD_AGENT and COORD_TASK it sees and
//     commits everything ("task ID: work-ID.txt");
//  3. a text answer, which ends the turn; every later turn (a stop hook
//     that asks for more) gets a text answer too.
//
// The step is read from the conversation each request carries (how many
// tool calls it already holds), so the script needs no state of its
// own and a retried request gets the same answer. A request that offers
// no edit and shell tools is a CLI's side call (a title, a routing
// choice, a check who speaks next): it gets a short text, or for Gemini
// the smallest object its response schema allows.
//
// Every request is recorded, so that a test can tell how many sessions
// each task ran in and which hook outputs reached the model.
type scriptedModel struct {
	URL string
	srv *httptest.Server

	mu       sync.Mutex
	requests []modelRequest
	ids      int
}

// modelRequest is one request the model got and what it answered.
type modelRequest struct {
	API   string // "anthropic", "responses" or "gemini"
	Path  string
	Main  bool   // the agent's own turn (edit and shell tools offered)
	Task  string // the task the prompt names ("": none)
	Step  int    // tool calls already in the conversation
	Reply string // "edit", "shell", "text" or "aside"
	Body  string
}

// Replies of the script.
const (
	replyEdit  = "edit"
	replyShell = "shell"
	replyText  = "text"
	replyAside = "aside"
)

// promptRE finds the task and the directory in the prompt the test gives
// each session.
var promptRE = regexp.MustCompile(`Do coord task ([A-Za-z0-9._-]+) in (/[^\s"\\:]+):`)

// EnvMarker starts the line the script's shell command prints: what
// the agent's shell sees of run's environment.
const envMarker = "coord env seen by the shell:"

// newScriptedModel starts the model on a loopback port; it stops with the
// test.
func newScriptedModel(t testing.TB) *scriptedModel {
	m := &scriptedModel{}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	m.URL = m.srv.URL
	t.Cleanup(m.srv.Close)
	return m
}

// move is what the script does at a step.
type move struct {
	reply   string
	task    string
	file    string // edit: the file's absolute path
	content string // edit: what it holds
	command string // shell
	text    string // text, aside
}

// WorkFile is the file the script writes for task.
func workFile(task string) string { return "work-" + task + ".txt" }

// WorkContent is what the script writes in it.
func workContent(task string) string { return "work on task " + task + "\n" }

// commitSubject is the subject of the script's commit for task.
func commitSubject(task string) string { return "task " + task + ": " + workFile(task) }

// play returns the script's move for a request of the agent's own turn
// (main) or a side call, with step tool calls already in the
// conversation and body the request as sent.
func play(main bool, step int, body string) move {
	if !main {
		return move{reply: replyAside, text: "ok"}
	}
	sub := promptRE.FindStringSubmatch(body)
	if sub == nil {
		return move{reply: replyText, text: "No coord task was named; nothing to do."}
	}
	task, dir := sub[1], sub[2]
	switch step {
	case 0:
		return move{reply: replyEdit, task: task, file: dir + "/" + workFile(task), content: workContent(task)}
	case 1:
		return move{reply: replyShell, task: task, command: fmt.Sprintf(
			`printf '%s COORD_AGENT=%%s COORD_TASK=%%s\n' "$COORD_AGENT" "$COORD_TASK" && git add -A && git commit -q -m '%s'`,
			envMarker, commitSubject(task))}
	}
	return move{reply: replyText, task: task, text: "Task " + task + " is done: " + workFile(task) + " is written and committed."}
}

func (m *scriptedModel) nextID(prefix string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ids++
	return fmt.Sprintf("%s_%d", prefix, m.ids)
}

func (m *scriptedModel) record(r modelRequest) {
	m.mu.Lock()
	m.requests = append(m.requests, r)
	m.mu.Unlock()
}

// Requests returns what the model got so far.
func (m *scriptedModel) Requests() []modelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]modelRequest(nil), m.requests...)
}

// Sessions returns, for each task, how many sessions started on it (a
// turn of the agent with no tool call yet in its conversation).
func (m *scriptedModel) Sessions() map[string]int {
	n := map[string]int{}
	for _, r := range m.Requests() {
		if r.Main && r.Task != "" && r.Step == 0 {
			n[r.Task]++
		}
	}
	return n
}

// Reached returns the agent's turns whose conversation holds text.
func (m *scriptedModel) Reached(text string) []modelRequest {
	var out []modelRequest
	for _, r := range m.Requests() {
		if r.Main && strings.Contains(r.Body, text) {
			out = append(out, r)
		}
	}
	return out
}

// Matched returns the agent's turns whose request matches re.
func (m *scriptedModel) Matched(re *regexp.Regexp) []modelRequest {
	var out []modelRequest
	for _, r := range m.Requests() {
		if r.Main && re.MatchString(r.Body) {
			out = append(out, r)
		}
	}
	return out
}

// Summary is one line per request, for a test's log.
func (m *scriptedModel) Summary() string {
	var b strings.Builder
	for i, r := range m.Requests() {
		fmt.Fprintf(&b, "%3d %-9s %-60s task=%-3s step=%d reply=%s\n", i+1, r.API, clip(r.Path, 60), r.Task, r.Step, r.Reply)
	}
	return b.String()
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n-1] + "…"
	}
	return s
}

func (m *scriptedModel) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	path := r.URL.Path
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages/count_tokens"):
		writeJSON(w, map[string]any{"input_tokens": 100})
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages"):
		m.anthropic(w, r, body)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/responses"):
		m.responses(w, r, body)
	case r.Method == http.MethodPost && strings.HasSuffix(path, ":countTokens"):
		writeJSON(w, map[string]any{"totalTokens": 100})
	case r.Method == http.MethodPost && (strings.HasSuffix(path, ":generateContent") || strings.HasSuffix(path, ":streamGenerateContent")):
		m.gemini(w, r, body)
	default:
		m.record(modelRequest{API: "other", Path: r.Method + " " + r.URL.RequestURI(), Reply: "404"})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":{"type":"not_found_error","code":404,"message":"the scripted model serves no such path"}}`)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// sse writes server-sent events; name "" writes data lines only.
type sse struct {
	w http.ResponseWriter
}

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sse{w}
}

func (s sse) send(name string, v any) {
	b, _ := json.Marshal(v)
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

func hasAll(have []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

// --- Anthropic Messages (Claude Code) --------------------------------

func (m *scriptedModel) anthropic(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Tools    []struct{ Name string }
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var tools []string
	for _, t := range req.Tools {
		tools = append(tools, t.Name)
	}
	step := 0
	for _, msg := range req.Messages {
		var blocks []struct{ Type string }
		if msg.Role == "assistant" && json.Unmarshal(msg.Content, &blocks) == nil {
			for _, b := range blocks {
				if b.Type == "tool_use" {
					step++
				}
			}
		}
	}
	main := hasAll(tools, "Write", "Bash")
	mv := play(main, step, string(body))
	m.record(modelRequest{API: "anthropic", Path: r.URL.RequestURI(), Main: main, Task: mv.task, Step: step, Reply: mv.reply, Body: string(body)})

	var block map[string]any
	stop := "end_turn"
	switch mv.reply {
	case replyEdit:
		block = map[string]any{"type": "tool_use", "id": m.nextID("toolu"), "name": "Write",
			"input": map[string]any{"file_path": mv.file, "content": mv.content}}
		stop = "tool_use"
	case replyShell:
		block = map[string]any{"type": "tool_use", "id": m.nextID("toolu"), "name": "Bash",
			"input": map[string]any{"command": mv.command, "description": "Commit the work"}}
		stop = "tool_use"
	default:
		block = map[string]any{"type": "text", "text": mv.text}
	}
	usage := map[string]any{"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	id := m.nextID("msg")
	if !req.Stream {
		writeJSON(w, map[string]any{"id": id, "type": "message", "role": "assistant", "model": req.Model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	s := newSSE(w)
	s.send("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": id, "type": "message", "role": "assistant",
		"model": req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 100, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})
	if block["type"] == "tool_use" {
		input, _ := json.Marshal(block["input"])
		start := map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}
		s.send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": start})
		s.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
	} else {
		s.send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		s.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": block["text"]}})
	}
	s.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	s.send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 20}})
	s.send("message_stop", map[string]any{"type": "message_stop"})
}

// --- OpenAI Responses (Codex CLI) ------------------------------------

func (m *scriptedModel) responses(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
		Tools  []struct{ Name string }
		Input  json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var tools []string
	for _, t := range req.Tools {
		tools = append(tools, t.Name)
	}
	var items []struct{ Type string }
	json.Unmarshal(req.Input, &items) // a string input holds no tool call
	step := 0
	for _, it := range items {
		switch it.Type {
		case "function_call", "custom_tool_call", "local_shell_call":
			step++
		}
	}
	main := hasAll(tools, "apply_patch", "exec_command")
	mv := play(main, step, string(body))
	m.record(modelRequest{API: "responses", Path: r.URL.RequestURI(), Main: main, Task: mv.task, Step: step, Reply: mv.reply, Body: string(body)})

	var item map[string]any
	switch mv.reply {
	case replyEdit:
		// A relative path, as Codex's own model writes them: the patch
		// applies in the session's working directory.
		patch := "*** Begin Patch\n*** Add File: " + workFile(mv.task) + "\n+" + strings.TrimSuffix(mv.content, "\n") + "\n*** End Patch\n"
		item = map[string]any{"type": "custom_tool_call", "id": m.nextID("ctc"), "status": "completed",
			"call_id": m.nextID("call"), "name": "apply_patch", "input": patch}
	case replyShell:
		args, _ := json.Marshal(map[string]any{"cmd": mv.command})
		item = map[string]any{"type": "function_call", "id": m.nextID("fc"), "status": "completed",
			"call_id": m.nextID("call"), "name": "exec_command", "arguments": string(args)}
	default:
		item = map[string]any{"type": "message", "id": m.nextID("msg"), "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": mv.text, "annotations": []any{}}}}
	}
	id := m.nextID("resp")
	usage := map[string]any{"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 20, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 120}
	resp := func(status string, output []any) map[string]any {
		v := map[string]any{"id": id, "object": "response", "status": status, "model": req.Model, "output": output}
		if status == "completed" {
			v["usage"] = usage
		}
		return v
	}
	if !req.Stream {
		writeJSON(w, resp("completed", []any{item}))
		return
	}
	s := newSSE(w)
	s.send("response.created", map[string]any{"type": "response.created", "sequence_number": 0, "response": resp("in_progress", []any{})})
	s.send("response.output_item.added", map[string]any{"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": item})
	if item["type"] == "message" {
		s.send("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "sequence_number": 2,
			"item_id": item["id"], "output_index": 0, "content_index": 0, "delta": mv.text})
	}
	s.send("response.output_item.done", map[string]any{"type": "response.output_item.done", "sequence_number": 3, "output_index": 0, "item": item})
	s.send("response.completed", map[string]any{"type": "response.completed", "sequence_number": 4, "response": resp("completed", []any{item})})
}

// --- Gemini API (Gemini CLI) -----------------------------------------

func (m *scriptedModel) gemini(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				FunctionCall json.RawMessage `json:"functionCall"`
			} `json:"parts"`
		} `json:"contents"`
		Tools []struct {
			FunctionDeclarations []struct{ Name string } `json:"functionDeclarations"`
		} `json:"tools"`
		GenerationConfig struct {
			ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
			ResponseSchema     json.RawMessage `json:"responseSchema"`
		} `json:"generationConfig"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var tools []string
	for _, t := range req.Tools {
		for _, d := range t.FunctionDeclarations {
			tools = append(tools, d.Name)
		}
	}
	step := 0
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if len(p.FunctionCall) > 0 && string(p.FunctionCall) != "null" {
				step++
			}
		}
	}
	main := hasAll(tools, "write_file", "run_shell_command")
	mv := play(main, step, string(body))
	m.record(modelRequest{API: "gemini", Path: r.URL.RequestURI(), Main: main, Task: mv.task, Step: step, Reply: mv.reply, Body: string(body)})

	var part map[string]any
	switch mv.reply {
	case replyEdit:
		part = map[string]any{"functionCall": map[string]any{"name": "write_file",
			"args": map[string]any{"file_path": mv.file, "content": mv.content}}}
	case replyShell:
		part = map[string]any{"functionCall": map[string]any{"name": "run_shell_command",
			"args": map[string]any{"command": mv.command, "description": "Commit the work"}}}
	case replyAside:
		schema := req.GenerationConfig.ResponseJSONSchema
		if len(schema) == 0 {
			schema = req.GenerationConfig.ResponseSchema
		}
		text := mv.text
		if len(schema) > 0 {
			var s map[string]any
			json.Unmarshal(schema, &s)
			b, _ := json.Marshal(fromSchema(s))
			text = string(b)
		}
		part = map[string]any{"text": text}
	default:
		part = map[string]any{"text": mv.text}
	}
	out := map[string]any{
		"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}},
			"finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120},
		"modelVersion":  "scripted",
	}
	if !strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
		writeJSON(w, out)
		return
	}
	newSSE(w).send("", out)
}

// fromSchema returns the smallest value a JSON schema (OpenAPI's
// upper-case types too) allows: an object with every property, the
// first of an enum ("user" when it is one: a check who speaks next
// then lets the session end), 1 for a number.
func fromSchema(s map[string]any) any {
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		for _, e := range enum {
			if e == "user" {
				return e
			}
		}
		return enum[0]
	}
	typ, _ := s["type"].(string)
	switch strings.ToLower(typ) {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		names := make([]string, 0, len(props))
		for k := range props {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			p, _ := props[k].(map[string]any)
			out[k] = fromSchema(p)
		}
		return out
	case "array":
		return []any{}
	case "integer", "number":
		return 1
	case "boolean":
		return false
	}
	return "ok"
}

// --- the server's own test ------------------------------------------

// TestScriptedModel plays the script against each API as its CLI would
// call it, without the CLIs: edit, shell, text, then text again; side
// calls answered apart.
func TestScriptedModel(t *testing.T) {
	m := newScriptedModel(t)
	post := func(path, body string) string {
		t.Helper()
		resp, err := http.Post(m.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s: %s", path, resp.Status, b)
		}
		return string(b)
	}
	prompt := `Do coord task 7 in /w/wt: write the file.`
	type call struct{ path, body, want string }
	anthropicUser := `{"role":"user","content":[{"type":"text","text":"` + prompt + `"}]}`
	toolUse := `{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"X","input":{}}]}`
	responsesUser := `{"type":"message","role":"user","content":[{"type":"input_text","text":"` + prompt + `"}]}`
	fc := `{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"c"}`
	geminiUser := `{"role":"user","parts":[{"text":"` + prompt + `"}]}`
	gfc := `{"role":"model","parts":[{"functionCall":{"name":"x","args":{}}}]}`
	aTools := `"tools":[{"name":"Write"},{"name":"Bash"}]`
	rTools := `"tools":[{"type":"custom","name":"apply_patch"},{"type":"function","name":"exec_command"}]`
	gTools := `"tools":[{"functionDeclarations":[{"name":"write_file"},{"name":"run_shell_command"}]}]`
	for _, c := range []call{
		{"/v1/messages?beta=true", `{"stream":true,` + aTools + `,"messages":[` + anthropicUser + `]}`, `"name":"Write"`},
		{"/v1/messages?beta=true", `{"stream":true,` + aTools + `,"messages":[` + anthropicUser + `,` + toolUse + `]}`, `git commit -q -m 'task 7: work-7.txt'`},
		{"/v1/messages?beta=true", `{"stream":true,` + aTools + `,"messages":[` + anthropicUser + `,` + toolUse + `,` + toolUse + `]}`, `"stop_reason":"end_turn"`},
		{"/v1/messages", `{"stream":false,"messages":[` + anthropicUser + `]}`, `"text":"ok"`},
		{"/v1/responses", `{"stream":true,` + rTools + `,"input":[` + responsesUser + `]}`, `*** Add File: work-7.txt`},
		{"/v1/responses", `{"stream":true,` + rTools + `,"input":[` + responsesUser + `,` + fc + `]}`, `"name":"exec_command"`},
		{"/v1/responses", `{"stream":true,` + rTools + `,"input":[` + responsesUser + `,` + fc + `,` + fc + `]}`, `event: response.completed`},
		{"/v1beta/models/g:streamGenerateContent?alt=sse", `{` + gTools + `,"contents":[` + geminiUser + `]}`, `"file_path":"/w/wt/work-7.txt"`},
		{"/v1beta/models/g:streamGenerateContent?alt=sse", `{` + gTools + `,"contents":[` + geminiUser + `,` + gfc + `]}`, `"name":"run_shell_command"`},
		{"/v1beta/models/g:generateContent", `{"contents":[` + geminiUser + `],"generationConfig":{"responseJsonSchema":{"type":"OBJECT","properties":{"next_speaker":{"type":"STRING","enum":["model","user"]},"n":{"type":"INTEGER"}}}}}`,
			`{\"n\":1,\"next_speaker\":\"user\"}`},
	} {
		if got := post(c.path, c.body); !strings.Contains(got, c.want) {
			t.Errorf("%s %s\n answered %s\n want it to hold %s", c.path, c.body, got, c.want)
		}
	}
	if got := m.Sessions(); len(got) != 1 || got["7"] != 3 {
		t.Errorf("sessions %v, want task 7 started 3 times (once per API)", got)
	}
	var replies []string
	for _, r := range m.Requests() {
		replies = append(replies, r.Reply)
	}
	want := "edit shell text aside edit shell text edit shell aside"
	if got := strings.Join(replies, " "); got != want {
		t.Errorf("replies %q, want %q", got, want)
	}
	// A stream parses as events whose data lines are JSON.
	for _, line := range bytes.Split([]byte(post("/v1/responses", `{"stream":true,`+rTools+`,"input":[`+responsesUser+`]}`)), []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok && !json.Valid(d) {
			t.Errorf("data line is not JSON: %s", d)
		}
	}
}
