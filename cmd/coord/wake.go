package main

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/rotd/coord/coord"
)

// interrupted is what a command returns when a signal ended ctx: exit
// 130, naming the signal. Every command that waits returns it, so the
// long-running ones (log -f, top, beat --every, watch, wait, kv watch)
// agree on the code.
func interrupted(ctx context.Context) error {
	msg := "interrupted"
	var sc *signalCause
	if errors.As(context.Cause(ctx), &sc) {
		msg = sc.Error()
	}
	return &coord.Error{Code: coord.CodeInterrupted, Msg: msg}
}

// waitingHook, when set, is called once a waiting command is ready to be
// signalled: its signal handler is installed and it waits. Only the test
// wrapper sets it (COORD_TEST_WAITING names a file to create), so tests
// signal after a condition, never after a sleep.
var waitingHook func()

func markWaiting() {
	if waitingHook != nil {
		waitingHook()
	}
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

// errWaitTimeout is what untilChange returns when its timeout passes.
var errWaitTimeout = errors.New("timed out")

// untilChange calls check now, then again after every change in dirs and
// at least once a second, until check reports done (or fails), ctx ends
// (interrupted: exit 130) or timeout passes (errWaitTimeout; 0 means no
// timeout). A burst of events is coalesced over settle into one check.
//
// Notification is only a hint: the directories are watched, never single
// files (an atomic rename replaces the file and loses its watch), and the
// one-second poll is the fallback when fsnotify cannot start (inotify
// limits, network file systems), overflows, or misses a change.
func untilChange(ctx context.Context, dirs []string, timeout, settle time.Duration, check func() (bool, error)) error {
	var events <-chan fsnotify.Event
	if w, err := fsnotify.NewWatcher(); err == nil {
		defer w.Close()
		for _, d := range dirs {
			if w.Add(d) == nil {
				events = w.Events
			}
		}
	}
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	poll := time.NewTicker(time.Second)
	defer poll.Stop()
	markWaiting()
	for {
		if done, err := check(); err != nil || done {
			return err
		}
		select {
		case <-events:
			time.Sleep(settle)
			for len(events) > 0 {
				<-events
			}
		case <-poll.C:
		case <-deadline:
			return errWaitTimeout
		case <-ctx.Done():
			return interrupted(ctx)
		}
	}
}
