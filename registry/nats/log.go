package nats

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rotd/coordination/coord"
)

// The log is a stream of its own, one message per Append (the lines of
// one commit together, never interleaved with another writer's), kept
// forever: a stream has no days to rotate, so Rotate does nothing. Read
// of the last n lines fetches the last messages by sequence (its cost
// depends on n, not on the log's length); Follow is an ordered consumer
// from the end.

type logStore struct{ b *Backend }

func (l logStore) Append(ctx context.Context, events ...coord.Event) error {
	l.b.flushLog() // after the lines of earlier commits
	return l.b.appendLog(ctx, events...)
}

func (b *Backend) appendLog(ctx context.Context, events ...coord.Event) error {
	if len(events) == 0 {
		return nil
	}
	lines, err := coord.LogLines(b.url.String()+" log", events)
	if err != nil {
		return err
	}
	return b.publishAppend(ctx, b.names.logSubj, lines, "the log")
}

// linesOf splits a log message into its clean lines and counts the
// foreign ones.
func linesOf(m *msg) (lines []string, skipped int) {
	for _, raw := range strings.Split(string(m.data), "\n") {
		if raw == "" {
			continue
		}
		if l, ok := coord.CleanLogLine(raw); ok {
			lines = append(lines, l)
		} else {
			skipped++
		}
	}
	return lines, skipped
}

// Read calls fn with the last n lines, oldest first (n <= 0: every line).
func (l logStore) Read(ctx context.Context, n int, fn func(line string) error) (int, error) {
	b := l.b
	b.flushLog() // this process reads its own lines
	si, err := b.w.streamInfo(ctx, b.names.log)
	if err != nil {
		return 0, b.ioErr(err, "reading the log")
	}
	first, last := si.State.FirstSeq, si.State.LastSeq
	if last == 0 || si.State.Msgs == 0 {
		return 0, nil
	}
	skipped := 0
	if n <= 0 {
		err := b.w.batchFrom(ctx, b.names.log, first, 0, func(m *msg) error {
			lines, sk := linesOf(m)
			skipped += sk
			for _, line := range lines {
				if err := fn(line); err != nil {
					return err
				}
			}
			return nil
		})
		return skipped, b.ioErr(err, "reading the log")
	}
	// Every message holds at least one line: the last n messages hold the
	// last n lines unless some are foreign; widen backwards until enough.
	var pages [][]string // newest page first
	have := 0
	end := last
	want := n
	for have < n && end >= first {
		start := first
		if end >= first+uint64(want)-1 {
			start = end - uint64(want) + 1
		}
		var page []string
		err := b.w.batchFrom(ctx, b.names.log, start, int(end-start+1), func(m *msg) error {
			if m.seq > end {
				return errStop
			}
			lines, sk := linesOf(m)
			skipped += sk
			page = append(page, lines...)
			return nil
		})
		if err != nil && err != errStop {
			return skipped, b.ioErr(err, "reading the log")
		}
		pages = append(pages, page)
		have += len(page)
		if start == first {
			break
		}
		end = start - 1
		want = max(n-have, 16)
	}
	var all []string
	for i := len(pages) - 1; i >= 0; i-- {
		all = append(all, pages[i]...)
	}
	if len(all) > n {
		all = all[len(all)-n:]
	}
	for _, line := range all {
		if err := fn(line); err != nil {
			return skipped, err
		}
	}
	return skipped, nil
}

var errStop = errorString("stop")

type errorString string

func (e errorString) Error() string { return string(e) }

// Follow returns a follower positioned at the end of the log.
func (l logStore) Follow(ctx context.Context) (coord.LogFollower, error) {
	b := l.b
	js, err := jetstream.New(b.nc)
	if err != nil {
		return nil, b.ioErr(err, "")
	}
	cctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	cons, err := js.OrderedConsumer(cctx, b.names.log, jetstream.OrderedConsumerConfig{
		DeliverPolicy:     jetstream.DeliverNewPolicy,
		InactiveThreshold: time.Minute,
	})
	if err != nil {
		return nil, b.ioErr(err, "following the log")
	}
	f := &follower{}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		lines, sk := linesOf(&msg{data: m.Data()})
		f.mu.Lock()
		f.lines = append(f.lines, lines...)
		f.Skipped += sk
		f.mu.Unlock()
	})
	if err != nil {
		return nil, b.ioErr(err, "following the log")
	}
	f.cc = cc
	return f, nil
}

// follower gathers what the consumer delivers; Poll takes it.
type follower struct {
	mu      sync.Mutex
	lines   []string
	Skipped int
	cc      jetstream.ConsumeContext
}

func (f *follower) Poll(ctx context.Context) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.lines
	f.lines = nil
	return out, nil
}

func (f *follower) Close() error {
	f.cc.Stop()
	return nil
}

// Rotate does nothing: the log stream has no files to rotate.
func (l logStore) Rotate(ctx context.Context, now time.Time) (string, error) {
	return "", nil
}
