package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rotd/coordination/cmd/coord/internal/workspace"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// ProgressEvery is the time between the wait tool's progress
// notifications. The wait's bounds are app.DefaultToolWait and
// app.MaxToolWait.
const ProgressEvery = 10 * time.Second

// Options configure the server of one agent session.
type Options struct {
	// Service is the application, opened on the project's backend.
	Service *app.Service
	// Agent is the session's identity and capabilities, resolved once.
	Agent coord.Agent
	// Paths maps the paths a caller names (files tool) to repository
	// paths, from the session's working directory.
	Paths *workspace.Paths
	// All adds the rest of the tools (coord mcp --tools all).
	All bool
	// Prime is the text of the "prime" prompt; "" is app.Prime (coord prime).
	Prime string
	// TaskJSON encodes a task as the registry holds it: what the CLI's
	// claim, release, ls … print.
	TaskJSON func(*coord.Task) []byte
	// Version is the server's version in the MCP handshake.
	Version string
	// Warn receives diagnostics (stderr); nil discards them.
	Warn func(string)
	// BeforeRelease, when set, runs before each release (tests: what a
	// release may do meanwhile); nil: nothing.
	BeforeRelease func(context.Context)

	// Bounds of wait (0: app.DefaultToolWait, app.MaxToolWait and
	// ProgressEvery).
	DefaultWait, MaxWait, ProgressEvery time.Duration
}

// server is one session's state: the options, the SDK's server with the
// tools, the epochs it claimed, and the keeper of the tasks it holds.
type server struct {
	opt    Options
	srv    *mcp.Server
	tools  []*mcp.Tool // in the order added
	mu     sync.Mutex
	epochs map[string]int64 // task -> the epoch this session claimed it at
	keep   *app.Keeper
	// done ends with the session: the tool calls in flight end with it.
	done context.Context
}

// newServer builds the state of one agent session (Run closes its keeper
// when the session ends).
func newServer(opt Options) (*server, error) {
	if opt.Service == nil || opt.TaskJSON == nil {
		return nil, errors.New("mcpserver: Service and TaskJSON are required")
	}
	if err := coord.ValidActingAgent(opt.Agent.ID); err != nil {
		return nil, err
	}
	if opt.DefaultWait <= 0 {
		opt.DefaultWait = app.DefaultToolWait
	}
	if opt.MaxWait <= 0 {
		opt.MaxWait = app.MaxToolWait
	}
	if opt.ProgressEvery <= 0 {
		opt.ProgressEvery = ProgressEvery
	}
	if opt.Paths == nil {
		wd, _ := os.Getwd()
		opt.Paths = workspace.NewPaths(wd, wd)
	}
	if opt.Prime == "" {
		opt.Prime = app.Prime
	}
	if opt.Version == "" {
		opt.Version = "dev"
	}
	s := &server{opt: opt, epochs: map[string]int64{}, done: context.Background()}
	// While the session holds a task it claimed, its claim is kept alive
	// in the background and fenced when it can no longer be: every later
	// call on the task answers code 6 until the session claims it again.
	s.keep = opt.Service.Keep(opt.Agent, app.KeepOptions{Verify: true, OnLost: func(ref app.TaskRef, why string) {
		s.warnf("task %s: %s; calls on it answer code 6 (lost) until it is claimed again", ref.TaskID, why)
	}})
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "coord", Version: opt.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		// The tools and the prompt are fixed for the session: no list
		// ever changes, so none is announced as changing.
		Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Prompts: &mcp.PromptCapabilities{}, Tools: &mcp.ToolCapabilities{}},
	})
	s.addTools()
	s.srv.AddPrompt(&mcp.Prompt{Name: "prime", Description: "How an agent uses coord in this repository."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{
				Description: "coord prime",
				Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: opt.Prime}}},
			}, nil
		})
	return s, nil
}

// instructions is what the server says of itself in the handshake; clients
// put it before the tool list, so it stays one sentence.
const instructions = "coord shares this repository's tasks between agents: claim a task before editing, " +
	"release it when done or block it with a reason; wait when nothing is ready."

// Run serves one session on in and out (one JSON-RPC message a line, the
// SDK's IOTransport) until the client closes its input, a line cannot be
// read as a message (its error), or ctx ends (ctx.Err()). When ctx ends,
// the calls in flight (a wait among them) are cancelled and Run returns
// at once.
func Run(ctx context.Context, opt Options, in io.ReadCloser, out io.WriteCloser) error {
	s, err := newServer(opt)
	if err != nil {
		return err
	}
	defer s.keep.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.done = ctx
	return s.srv.Run(ctx, &transport{Transport: &mcp.IOTransport{Reader: in, Writer: out}, done: ctx})
}

// ServeStdio serves on the process's stdin and stdout. Before it serves,
// the process's stdout (file descriptor 1 and os.Stdout) is pointed at
// stderr, and the protocol is spoken on a copy of the original
// descriptor: a stray print, a panic trace or a child process can never
// put a byte on the protocol stream.
func ServeStdio(ctx context.Context, opt Options) error {
	out, err := protectStdout()
	if err != nil {
		return fmt.Errorf("mcp: cannot set stdout aside for the protocol: %w", err)
	}
	defer out.Close()
	err = Run(ctx, opt, os.Stdin, out)
	if err != nil && (errors.Is(err, io.EOF) || ctx.Err() != nil) {
		return nil // the client went away, or we were told to stop
	}
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
}

// within is ctx, ended also when the session ends: the SDK does not end a
// call's context with its session, and a wait would hold the session's
// end for up to MaxWait.
func (s *server) within(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.done, cancel)
	return ctx, func() { stop(); cancel() }
}

// warnf reports a diagnostic on the server's stderr.
func (s *server) warnf(format string, args ...any) {
	if s.opt.Warn != nil {
		s.opt.Warn(coord.OneLine(fmt.Sprintf(format, args...)))
	}
}

// --- the transport ------------------------------------------------------

// transport is the SDK's transport with two rules on top. A call nobody
// will read the answer to is not answered: the SDK answers every call,
// cancelled or not; here the answer to a call its client cancelled
// (notifications/cancelled), and every answer once the session's context
// has ended or its input has, is dropped. And the end of the input (or
// a line that is not a message) ends the session only once the calls
// quick to answer (tools/list, ping, prompts …) have their answers: the
// SDK would cancel them, and a client that writes its requests and
// closes its input would get no tool list. The tool calls still in
// flight then are cancelled, unanswered.
type transport struct {
	mcp.Transport
	done context.Context
}

func (t *transport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{Connection: c, done: t.done, cancelled: map[jsonrpc.ID]bool{}, quick: map[jsonrpc.ID]bool{}}, nil
}

type conn struct {
	mcp.Connection
	done context.Context

	mu        sync.Mutex
	cancelled map[jsonrpc.ID]bool // calls the client cancelled
	quick     map[jsonrpc.ID]bool // calls in flight other than tool calls
	idle      chan struct{}       // closed when quick empties
	ended     bool                // the input ended
}

// quickWait bounds how long the end of the input waits for the quick
// calls' answers.
const quickWait = 10 * time.Second

func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err != nil {
		c.mu.Lock()
		idle := make(chan struct{})
		if len(c.quick) == 0 {
			close(idle)
		} else {
			c.idle = idle
		}
		c.mu.Unlock()
		select {
		case <-idle:
		case <-c.done.Done():
		case <-time.After(quickWait):
		}
		c.mu.Lock()
		c.ended = true
		c.mu.Unlock()
		return m, err
	}
	if r, ok := m.(*jsonrpc.Request); ok {
		c.mu.Lock()
		switch {
		case r.IsCall():
			delete(c.cancelled, r.ID) // a new call under an id once cancelled
			if r.Method != "tools/call" {
				c.quick[r.ID] = true
			}
		case r.Method == "notifications/cancelled":
			var p mcp.CancelledParams
			if json.Unmarshal(r.Params, &p) == nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil && id.IsValid() {
					c.cancelled[id] = true
				}
			}
		}
		c.mu.Unlock()
	}
	return m, nil
}

func (c *conn) Write(ctx context.Context, m jsonrpc.Message) error {
	if r, ok := m.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.quick, r.ID)
		if len(c.quick) == 0 && c.idle != nil {
			close(c.idle)
			c.idle = nil
		}
		drop := c.ended || c.done.Err() != nil || c.cancelled[r.ID]
		delete(c.cancelled, r.ID)
		c.mu.Unlock()
		if drop {
			return nil
		}
	}
	return c.Connection.Write(ctx, m)
}

// --- refusals -----------------------------------------------------------

// Refusal is the structured content of a tool error: the exit code and
// its name from coord's exit-code table, the one-line message, and the
// holder when the refusal names one.
type Refusal struct {
	Code    int    `json:"code"`
	Name    string `json:"name"`
	Message string `json:"message"`
	Holder  string `json:"holder,omitempty"`
}

// toolError marks an error a tool handler returned (as against one made
// of arguments that do not fit the tool's input schema).
type toolError struct{ err error }

func (e *toolError) Error() string { return e.err.Error() }
func (e *toolError) Unwrap() error { return e.err }

// fail wraps a handler's error (nil stays nil).
func fail(err error) error {
	if err == nil {
		return nil
	}
	return &toolError{err}
}

// RefusalOf maps an error to its refusal. An error made of the arguments
// (not a tool's) is a usage refusal.
func RefusalOf(err error) Refusal {
	code := coord.CodeUsage
	var te *toolError
	if errors.As(err, &te) {
		code = coord.CodeOf(te.err)
		if errors.Is(te.err, context.Canceled) && code == coord.CodeIO {
			code = coord.CodeInterrupted
		}
	}
	r := Refusal{Code: int(code), Name: codeName(code), Message: coord.OneLine(err.Error())}
	var ce *coord.Error
	if errors.As(err, &ce) {
		r.Holder = ce.Holder
		if r.Holder == "" && ce.Detail != "" { // a contended flock: the holder's self-description
			var d struct {
				Holder string `json:"holder"`
			}
			if json.Unmarshal([]byte(ce.Detail), &d) == nil && coord.ValidActingAgent(d.Holder) == nil {
				r.Holder = d.Holder
			}
		}
	}
	return r
}

func codeName(c coord.Code) string {
	for _, e := range coord.ExitCodes {
		if e.Code == c {
			return e.Name
		}
	}
	return "io"
}

// toolResult is a tools/call result: the structured content and the same
// JSON as text; an error is a refusal (isError) with structured content.
func toolResult(out any, err error) *mcp.CallToolResult {
	isError := false
	if err != nil {
		out, isError = RefusalOf(err), true
	}
	b, merr := json.Marshal(out)
	if merr != nil {
		out, isError = RefusalOf(fail(merr)), true
		b, _ = json.Marshal(out)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
		IsError:           isError,
	}
}

// --- epochs -------------------------------------------------------------

func (s *server) remember(task string, epoch int64) {
	s.mu.Lock()
	s.epochs[task] = epoch
	s.mu.Unlock()
}

func (s *server) forget(task string) {
	s.mu.Lock()
	delete(s.epochs, task)
	s.mu.Unlock()
}

// epochFor is the epoch a held-task call checks: the caller's (> 0), else
// the one this session claimed the task at, else none (owner only).
func (s *server) epochFor(task string, given int64) (int64, error) {
	if err := coord.CheckEpoch(given); err != nil {
		return 0, err
	}
	if given > 0 {
		return given, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.epochs[task]; ok {
		return e, nil
	}
	return coord.NoEpoch, nil
}
