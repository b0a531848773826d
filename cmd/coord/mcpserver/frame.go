package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// The session's framing: the input is read one line at a time, bounded;
// a line that is not a message this server takes is answered with a
// JSON-RPC error on the protocol stream and the session goes on; the
// others are handed to the session (rpc.go) decoded.

// MaxFrame is the largest inbound message (one line, without its line
// ending) a session reads: 16 MiB (what the official Go SDK's stdio
// transport reads by default). A longer line is read past, never kept,
// and answered with an error.
const MaxFrame = 16 << 20

// The JSON-RPC error codes the framer answers with.
const (
	codeParseError     = -32700 // not JSON
	codeInvalidRequest = -32600 // JSON, but not a message this server takes
)

// syncWriter is the protocol stream shared by the session and the
// framer: each Write is one whole message with its newline, and writes
// never interleave.
type syncWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

func (w *syncWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Close()
}

// framer reads the session's input: a goroutine (pump) reads and judges
// the lines and passes on the messages it accepts (lines), until the
// input ends or Close is called, whatever the goroutine is blocked on.
type framer struct {
	ctx   context.Context
	in    io.ReadCloser
	out   *syncWriter
	max   int
	warn  func(format string, args ...any)
	lines chan message
	done  chan struct{} // closed by Close
	once  sync.Once

	err error // the input's last error, set before lines is closed
}

// newFramer starts reading in; answers go to out. limit <= 0 is MaxFrame.
func newFramer(ctx context.Context, in io.ReadCloser, out *syncWriter, limit int, warn func(string, ...any)) *framer {
	if limit <= 0 {
		limit = MaxFrame
	}
	f := &framer{ctx: ctx, in: in, out: out, max: limit, warn: warn, lines: make(chan message), done: make(chan struct{})}
	go f.pump()
	return f
}

// Close stops the framer and closes the input (which ends a blocked read
// where the input allows; otherwise the goroutine ends with the process).
func (f *framer) Close() error {
	var err error
	f.once.Do(func() {
		close(f.done)
		err = f.in.Close()
	})
	return err
}

// pump reads the input line by line until it ends, answering the lines
// it refuses and passing the others on.
func (f *framer) pump() {
	defer close(f.lines)
	br := bufio.NewReaderSize(f.in, 64<<10)
	for n := 1; ; n++ {
		line, size, id, err := readFrame(br, f.max)
		switch {
		case size > f.max:
			f.refuse(n, id, codeInvalidRequest, fmt.Sprintf("message of %d bytes is over the limit of %d bytes; it was not read", size, f.max))
		case len(line) > 0:
			if msg, ok := f.judge(n, line); ok {
				select {
				case f.lines <- msg:
				case <-f.done:
					return
				}
			}
		}
		if err != nil {
			if err != io.EOF {
				f.err = err
			}
			return
		}
	}
}

// judge returns the line's message, or answers the line and returns
// false: a line that is not one JSON value is a parse error; a batch, or
// JSON that is not a JSON-RPC message, is an invalid request (answered
// with its id when it has a valid one).
func (f *framer) judge(n int, line []byte) (message, bool) {
	line = bytes.TrimSpace(line)
	switch {
	case len(line) == 0:
		return message{}, false // a blank line is nothing
	case !json.Valid(line):
		f.refuse(n, nil, codeParseError, "parse error: the line is not one JSON value")
		return message{}, false
	case line[0] == '[':
		f.refuse(n, nil, codeInvalidRequest, "batches are not supported: send one JSON-RPC message per line")
		return message{}, false
	}
	m, err := decodeMessage(line)
	if err != nil {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(line, &m)
		f.refuse(n, m.ID, codeInvalidRequest, "invalid request: "+err.Error())
		return message{}, false
	}
	return m, true
}

// refuse answers line n with a JSON-RPC error: for the request whose id
// is rawID when that is a valid id (a string or a number), else with a
// null id. It writes nothing else to the protocol stream; the diagnostic
// goes to stderr.
func (f *framer) refuse(n int, rawID []byte, code int, msg string) {
	id := json.RawMessage("null")
	if validID(rawID) {
		id = json.RawMessage(rawID)
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	if err != nil {
		return
	}
	if f.warn != nil {
		f.warn("input line %d refused (%d, id %s): %s", n, code, id, msg)
	}
	if _, err := f.out.Write(append(b, '\n')); err != nil && f.warn != nil {
		f.warn("input line %d: the answer was not written: %v", n, err)
	}
}

// validID reports whether raw is a JSON-RPC id the client can match: a
// string or a number.
func validID(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v.(type) {
	case string, float64:
		return true
	}
	return false
}

// readFrame reads one line from br. A line of at most limit bytes (its line
// ending, LF or CRLF, not counted) is returned without its newline; a
// longer one is read to its end but not kept: size is its length and id
// the raw value of its top-level "id" member, found as the line streamed
// past (nil if none was found). err is io.EOF after the last line.
func readFrame(br *bufio.Reader, limit int) (line []byte, size int, id []byte, err error) {
	var sc idScanner
	over := false
	var last, prev byte // the last two bytes read
	for {
		chunk, rerr := br.ReadSlice('\n')
		size += len(chunk)
		for _, c := range chunk[max(0, len(chunk)-2):] {
			prev, last = last, c
		}
		if !over && len(line)+len(chunk) > limit+2 { // +2: room for CRLF
			over = true
			sc.feed(line)
			line = nil
		}
		if over {
			sc.feed(chunk)
		} else {
			line = append(line, chunk...)
		}
		if rerr == bufio.ErrBufferFull {
			continue
		}
		err = rerr
		break
	}
	if err == nil && last == '\n' { // the line ended with its newline
		size--
		if prev == '\r' && size > 0 {
			size--
		}
		if !over {
			line = line[:size]
		}
	}
	if !over && size > limit {
		sc.feed(line)
		over = true
	}
	if over {
		return nil, size, sc.id, err
	}
	return line, size, nil, err
}
