package main

import (
	"context"
	"io"

	"github.com/rotd/coordination/coord"
)

// readErr is the error of a read from the caller's input (stdin, a seed
// file): exit 130 when a signal cut it short, else an I/O error naming it.
func (e *env) readErr(what string, err error) error {
	if e.ctx.Err() != nil {
		return interrupted(e.ctx)
	}
	return coord.Wrap(coord.CodeIO, err, "cannot read %s", what)
}

// ctxReader is the commands' stdin: a read that waits (a terminal, a pipe
// nobody writes to) ends with the interrupted error when a signal comes,
// instead of holding the process. The read itself goes on in a goroutine
// until the process exits; its data is kept for a later Read.
type ctxReader struct {
	ctx  context.Context
	r    io.Reader
	res  chan readResult // the read in flight, or nil
	rest []byte          // read but not yet returned
	err  error           // the reader's error, after rest
}

type readResult struct {
	b   []byte
	err error
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if len(c.rest) == 0 && c.err != nil {
		return 0, c.err
	}
	if len(c.rest) == 0 {
		if c.res == nil {
			c.res = make(chan readResult, 1)
			go func(res chan<- readResult) {
				buf := make([]byte, 64<<10)
				n, err := c.r.Read(buf)
				res <- readResult{buf[:n], err}
			}(c.res)
		}
		select {
		case r := <-c.res:
			c.res, c.rest, c.err = nil, r.b, r.err
		case <-c.ctx.Done():
			return 0, interrupted(c.ctx)
		}
	}
	n := copy(p, c.rest)
	c.rest = c.rest[n:]
	if len(c.rest) == 0 && c.err != nil {
		return n, c.err
	}
	return n, nil
}

// rawStdin is the stdin a child process gets (coord run's CMD): the
// process's own, not the interruptible wrapper.
func rawStdin(r io.Reader) io.Reader {
	if c, ok := r.(*ctxReader); ok {
		return c.r
	}
	return r
}
