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

	"github.com/rotd/coordination/cmd/coord/workspace"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// Default bounds of the wait tool.
const (
	DefaultWait   = 2 * time.Minute  // when the caller gives no timeout
	MaxWait       = 10 * time.Minute // Gemini CLI's default MCP timeout; setup raises Codex's to cover it
	ProgressEvery = 10 * time.Second // between progress notifications
)

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

	// Bounds of wait (0: the defaults above).
	DefaultWait, MaxWait, ProgressEvery time.Duration
	// MaxFrame bounds one inbound message, in bytes (0: MaxFrame).
	MaxFrame int
}

// server is one session's state: the options, the tools, the epochs it
// claimed, and the keeper of the tasks it holds.
type server struct {
	opt    Options
	tools  []*tool
	mu     sync.Mutex
	epochs map[string]int64 // task -> the epoch this session claimed it at
	keep   *app.Keeper
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
		opt.DefaultWait = DefaultWait
	}
	if opt.MaxWait <= 0 {
		opt.MaxWait = MaxWait
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
	s := &server{opt: opt, epochs: map[string]int64{}}
	// While the session holds a task it claimed, its claim is kept alive
	// in the background and fenced when it can no longer be (docs/CHOICES.md,
	// "Self-fencing"): every later call on the task answers code 6
	// until the session claims it again.
	s.keep = opt.Service.Keep(opt.Agent, app.KeepOptions{Verify: true, OnLost: func(ref app.TaskRef, why string) {
		s.warnf("task %s: %s; calls on it answer code 6 (lost) until it is claimed again", ref.TaskID, why)
	}})
	if s.opt.Version == "" {
		s.opt.Version = "dev"
	}
	s.addTools()
	return s, nil
}

// instructions is what the server says of itself in the handshake; clients
// put it before the tool list, so it stays one sentence.
const instructions = "coord shares this repository's tasks between agents: claim a task before editing, " +
	"release it when done or block it with a reason; wait when nothing is ready."

// Run serves one session on in and out until the client goes or ctx ends.
// The input is framed (framer): a line that is not a message this server
// takes is answered with a JSON-RPC error (-32700 for one that is not
// JSON, -32600 for a batch, a message that is not JSON-RPC, or a line
// over opt.MaxFrame bytes) and the session goes on. When ctx ends, the
// calls in flight (a wait among them) are cancelled and Run returns at
// once.
func Run(ctx context.Context, opt Options, in io.ReadCloser, out io.WriteCloser) error {
	s, err := newServer(opt)
	if err != nil {
		return err
	}
	defer s.keep.Close()
	w := &syncWriter{w: out}
	f := newFramer(ctx, in, w, opt.MaxFrame, s.warnf)
	defer f.Close()
	return s.serve(ctx, f, w)
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
	return err
}

// warnf reports a diagnostic on the server's stderr.
func (s *server) warnf(format string, args ...any) {
	if s.opt.Warn != nil {
		s.opt.Warn(coord.OneLine(fmt.Sprintf(format, args...)))
	}
}

// --- refusals -----------------------------------------------------------

// Refusal is the structured content of a tool error: the exit code and
// its name (docs/COMMANDS.md), the one-line message, and the holder when the
// refusal names one.
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
