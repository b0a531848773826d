package coord

import (
	"errors"
	"fmt"
)

// Code is a process exit code. The numbers are part of the contract and are
// never renumbered.
type Code int

// The documented exit codes (docs/COMMANDS.md).
const (
	CodeOK          Code = 0
	CodeUsage       Code = 1
	CodeIO          Code = 2
	CodeConflict    Code = 3
	CodeLockTimeout Code = 4
	CodeLockStale   Code = 5
	CodeLost        Code = 6
	CodeInterrupted Code = 130
)

// ExitCode describes one documented exit code.
type ExitCode struct {
	Code    Code
	Name    string
	Meaning string
}

// ExitCodes is the table printed by `coord help exit-codes`, in order.
var ExitCodes = []ExitCode{
	{CodeOK, "ok", "done; also claim with nothing eligible (prints {\"status\":\"no_eligible_task\"}, or {\"status\":\"drained\"} when no work is left at all)"},
	{CodeUsage, "usage", "bad flag, bad id, invalid input; nothing was written"},
	{CodeIO, "io", "the file system or backend failed (permission, disk full, unreadable registry); nothing half-written"},
	{CodeConflict, "conflict", "held by another agent, race lost, prerequisite not done, or not in the state the command needs"},
	{CodeLockTimeout, "E_LOCK_TIMEOUT", "an artifact lock was not acquired within --lock-wait (default 30s)"},
	{CodeLockStale, "E_LOCK_STALE", "a stale lock was cleared and the retried operation still failed"},
	{CodeLost, "lost", "the caller no longer holds what it names: its lock was swept as stale or the task was reclaimed (epoch changed); stop working on it"},
	{CodeInterrupted, "interrupted", "stopped by a signal before it changed anything"},
}

// Name is the code's name in the table ("conflict", "lost"; "io" for a
// code not in it).
func (c Code) Name() string {
	for _, e := range ExitCodes {
		if e.Code == c {
			return e.Name
		}
	}
	return "io"
}

// Error is an error with an exit code and, optionally, a hint telling the
// user what to do about it.
type Error struct {
	Code Code
	Msg  string // lowercase, names the file or object concerned
	Hint string // what to do; may be empty
	Err  error  // underlying cause; may be nil
	// Detail is shown only on request (--lock-diagnose): the holder of a
	// contended lock as it described itself.
	Detail string
	// Holder is the agent that holds what was refused (a task, a path, a
	// lease), when the refusal knows it: front ends that answer in
	// structure (the MCP server) report it beside the code.
	Holder string
}

func (e *Error) Error() string {
	s := e.Msg
	if e.Err != nil && e.Err.Error() != e.Msg { // no "interrupted: interrupted"
		s += ": " + e.Err.Error()
	}
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// WithHint returns e with its hint set.
func (e *Error) WithHint(format string, args ...any) *Error {
	e.Hint = fmt.Sprintf(format, args...)
	return e
}

// WithHolder returns e naming the agent that holds what was refused.
func (e *Error) WithHolder(agent string) *Error {
	e.Holder = agent
	return e
}

// Wrap returns an *Error of the given code around err.
func Wrap(code Code, err error, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...), Err: err}
}

// ErrUnreadable marks a write refused because coord could not read back
// what it would write (docs/FORMATS.md#reading-strictly: no commit ever writes a file coord
// cannot read back).
var ErrUnreadable = errors.New("refused: coord could not read it back; nothing was written")

// Unreadable is the refusal of a write whose result the strict reader
// would refuse: where names the file or key, why says what is wrong. It
// is CodeUsage: the change asked for is what would make it so, and
// nothing was written.
func Unreadable(where, why string) *Error {
	return &Error{Code: CodeUsage, Msg: where + ": " + why, Err: ErrUnreadable}
}

// Sentinel conditions that callers may test with errors.Is.
var (
	ErrNotFound      = errors.New("not found")
	ErrLockTimeout   = errors.New("lock wait timed out")
	ErrInterrupted   = errors.New("interrupted")
	ErrInvalidID     = errors.New("invalid id")
	ErrTooLarge      = errors.New("file too large")
	ErrUnsafeSymlink = errors.New("symlink inside the coordination tree")
)

// CodeOf maps an error to its exit code: an *Error anywhere in the chain
// decides; otherwise the sentinels; anything else is an I/O failure.
func CodeOf(err error) Code {
	if err == nil {
		return CodeOK
	}
	var ce *Error
	if errors.As(err, &ce) {
		return ce.Code
	}
	switch {
	case errors.Is(err, ErrLockTimeout):
		return CodeLockTimeout
	case errors.Is(err, ErrInterrupted):
		return CodeInterrupted
	case errors.Is(err, ErrInvalidID):
		return CodeUsage
	}
	return CodeIO
}
