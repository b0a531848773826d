package nats

import (
	"context"
	"encoding/json"
	"time"

	"github.com/rotd/coordination/coord"
)

// Exclusive locks (coord.Exclusive): a key "excl.<name>" written with a
// short server-side TTL and renewed by this process while it holds it.
// Released by the holder at once; a holder that dies without releasing
// (SIGKILL, a lost machine) lets it go when the TTL runs out.

// ExclusiveTTL is how long a dead holder keeps an exclusive lock.
const ExclusiveTTL = 15 * time.Second

const preExcl = "excl."

var _ coord.Exclusive = (*Backend)(nil)

// HoldExclusive takes the named lock, or refuses at once with
// CodeConflict naming the holder that has it.
func (b *Backend) HoldExclusive(ctx context.Context, name string, holder []byte) (func(), error) {
	key := preExcl + enc(name)
	if len(holder) == 0 || !json.Valid(holder) {
		holder, _ = json.Marshal(string(holder))
	}
	seq, err := b.updateKey(ctx, key, name+" lock", func(m *msg, _ time.Time) (change, error) {
		// Renewed by a real-time ticker, the lock is judged on the server's
		// own clock, never shifted by an injected one.
		if m != nil && !m.deleted() && b.srv.server().Sub(m.at) < ExclusiveTTL {
			return change{}, coord.Errorf(coord.CodeConflict, "%s: %s is held by %s", b.url, name, coord.OneLine(string(m.data))).
				WithHint("one is enough; stop the other first (a holder that died lets go within %s)", ExclusiveTTL)
		}
		return change{write: true, data: holder, ttl: ExclusiveTTL}, nil
	})
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(ExclusiveTTL / 4)
		defer t.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-t.C:
				var err error
				seq, err = b.renewExclusive(rctx, key, seq, holder)
				if err != nil && rctx.Err() == nil {
					b.warn(err)
				}
			}
		}
	}()
	return func() {
		cancel()
		<-done
		ctx, c := context.WithTimeout(context.Background(), RequestTimeout)
		defer c()
		b.commit(ctx, &doc{key: key, seq: seq}, nil, markerTTL, deleteHeader())
	}, nil
}

// renewExclusive writes the lock again at its revision.
func (b *Backend) renewExclusive(ctx context.Context, key string, seq uint64, holder []byte) (uint64, error) {
	n, err := b.commit(ctx, &doc{key: key, seq: seq}, holder, ExclusiveTTL, nil)
	if err == errConflict {
		return seq, coord.Errorf(coord.CodeLost, "%s: the lock %s was taken over", b.url, key)
	}
	return n, err
}
