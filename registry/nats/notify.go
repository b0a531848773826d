package nats

import (
	"context"
	"sync"

	"github.com/rotd/coordination/coord"
)

// notifier wakes waiters through JetStream watches: ordered consumers,
// headers only (a watcher never downloads the registry), from the end of
// the namespace's bucket (the registry, leases, kv), of the heartbeats
// and of the log.
type notifier struct{ b *Backend }

// Watch returns a channel that receives a value after changes, coalesced
// (one value may stand for many; the channel holds at most one), until
// ctx ends, when it is closed. A consumer error (a connection lost and
// re-established, a consumer recreated) is reported as Missed. An error
// means watching could not start: callers poll.
func (n notifier) Watch(ctx context.Context) (<-chan coord.Change, error) {
	b := n.b
	out := make(chan coord.Change, 1)
	var mu sync.Mutex
	closed := false
	changed := func(missed bool) {
		mu.Lock()
		defer mu.Unlock()
		if closed {
			return
		}
		select {
		case out <- coord.Change{Missed: missed}:
		default: // one is pending already: it stands for this one too
			if missed { // but a loss must not hide behind a plain change
				select {
				case <-out:
				default:
				}
				select {
				case out <- coord.Change{Missed: true}:
				default:
				}
			}
		}
	}
	wctx, cancel := context.WithCancel(ctx)
	p := b.names.pre
	if err := b.watch(wctx, b.names.kv, []string{p + keyRegistry, p + keyDepMap, p + preLease + ">", p + preKV + ">"}, changed); err != nil {
		cancel()
		return nil, b.ioErr(err, "watching")
	}
	if err := b.watch(wctx, b.names.beats, []string{b.names.beatPre + preBeat + ">", b.names.beatPre + preAgent + ">"}, changed); err != nil {
		cancel()
		return nil, b.ioErr(err, "watching")
	}
	if err := b.watch(wctx, b.names.log, []string{b.names.logSubj}, changed); err != nil {
		cancel()
		return nil, b.ioErr(err, "watching")
	}
	go func() {
		<-wctx.Done()
		cancel()
		mu.Lock()
		closed = true
		close(out)
		mu.Unlock()
	}()
	return out, nil
}
