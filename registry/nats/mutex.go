package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	gonats "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rotd/coordination/coord"
)

// The commit mutex: advisory, in front of the registry's compare-and-set.
// Optimistic commits alone collapse under contention (sixteen agents
// claiming at once each download, parse and re-upload the registry, and
// all but one lose), so a committer first takes a mutex: a message in a
// memory stream that keeps at most one per subject and refuses the next
// (discard new per subject), with a short server-side TTL so a holder that
// dies lets go. Taking it is one request, no disk write. A single server
// loses a memory stream when it restarts; the first committer to miss it
// makes it again. Correctness never
// rests on it: a holder whose mutex expired still commits only if the
// registry did not change since it read it.

// mutexTTL is how long a dead holder keeps the mutex.
const mutexTTL = 5 * time.Second

func (n names) mutexSubject(name string) string { return "coord." + n.ns + ".mutex." + name }

// lock takes the named mutex, waiting (with jittered pauses) up to the
// lock wait, then CodeLockTimeout naming the holder. A namespace whose
// mutex stream is missing gets it again; if it cannot be made, lock
// returns at once (commits stay correct without it).
func (b *Backend) lock(ctx context.Context, name, holder string) (func(), error) {
	subject := b.names.mutexSubject(name)
	payload, _ := json.Marshal(map[string]any{"holder": holder, "pid": os.Getpid(), "host": hostname()})
	hdr := gonats.Header{hdrTTL: []string{ttlHeader(mutexTTL)}}
	start := time.Now()
	remade := false
	var released *gonats.Subscription // woken when a holder lets go
	defer func() {
		if released != nil {
			released.Unsubscribe()
		}
	}()
	for i := 0; ; i++ {
		seq, err := b.w.publish(ctx, subject, payload, hdr)
		if err == nil {
			return func() { b.unlock(subject, seq) }, nil
		}
		// The server refuses a second message on the subject (DiscardNew,
		// one per subject) with a generic "store failed" code and this
		// description; nats.go names neither.
		var ae *jetstream.APIError
		held := errors.As(err, &ae) && strings.Contains(ae.Description, "maximum messages per subject")
		if !held {
			if errIsNoMutex(err) {
				// A single server keeps no memory stream over a restart:
				// make it again once, or commit optimistically.
				if remade || b.ensureMemStream(ctx, b.names.mutex) != nil {
					return func() {}, nil
				}
				remade = true
				continue
			}
			if !transient(err) || time.Since(start) > IOBudget {
				return nil, b.ioErr(err, "taking the commit mutex")
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, b.ioErr(err, "")
		}
		if time.Since(start) > b.lockWait {
			detail := ""
			if m, err := b.w.last(ctx, b.names.mutex, subject); err == nil && m != nil {
				detail = string(m.data)
			}
			return nil, &coord.Error{Code: coord.CodeLockTimeout, Err: coord.ErrLockTimeout, Detail: detail,
				Msg:  fmt.Sprintf("%s: the %s stayed busy for %s", b.url, name, coord.RoundDuration(b.lockWait)),
				Hint: "another coord process holds it; retry, or wait longer"}
		}
		if released == nil {
			// Wait for the holder's word that it let go (a plain NATS
			// message, not stored), or at most a while: a holder that died
			// says nothing, and its mutex expires by itself.
			if released, err = b.nc.QueueSubscribeSync(subject+".released", "waiters"); err != nil {
				return nil, b.ioErr(err, "")
			}
			b.nc.Flush()
			continue // it may have let go before the subscription started
		}
		wctx, cancel := context.WithTimeout(ctx, mutexPoll)
		_, werr := released.NextMsgWithContext(wctx)
		cancel()
		if werr != nil {
			// No word (the holder died, or the word went to another
			// waiter of the queue group): not all at once, the waiters
			// polling try again a moment apart. The one woken by the
			// word tries at once: the handover is the commits' critical
			// path.
			sleep(ctx, time.Duration(rand.Int64N(int64(time.Millisecond))))
		}
	}
}

// mutexPoll is how long a waiter waits for word from the holder before
// it tries again anyway.
const mutexPoll = 100 * time.Millisecond

// unlock removes the mutex message (if it still is ours: by sequence) and
// tells the waiters.
func (b *Backend) unlock(subject string, seq uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), RequestTimeout)
	defer cancel()
	b.w.request(ctx, "$JS.API.STREAM.MSG.DELETE."+b.names.mutex, map[string]any{"seq": seq, "no_erase": true}, nil)
	b.nc.Publish(subject+".released", nil)
}

// errIsNoMutex: the namespace has no mutex stream (no stream answers its
// subject).
func errIsNoMutex(err error) bool { return err == errNoStream }

func hostname() string {
	h, _ := os.Hostname()
	return h
}
