package nats

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/s2"
	gonats "github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"

	"github.com/rotd/coordination/coord"
)

// Documents (the registry, the dependency map, quota) are single keys
// changed by compare-and-set. This file is the one commit path: it
// encodes, publishes with the expected revision and the transaction's
// name, and resolves a lost acknowledgement by reading the names back.

const (
	// hdrEncoding marks a compressed document ("s2").
	hdrEncoding = "Coord-Encoding"
	// compressAbove is the size above which a document is stored S2
	// compressed.
	compressAbove = 32 << 10
	// maxDocument bounds a document after decompression.
	maxDocument = 64 << 20
	// recentTxns is how many earlier commits a document names.
	recentTxns = 128
)

// doc is a document as read: its bytes (decompressed), the revision it
// was read at (0: absent), and the commit names it carries.
type doc struct {
	key  string
	data []byte
	seq  uint64
	at   time.Time
	txn  string // "id:base" of the commit that wrote it
	ring string // the commits before, newest first
}

// present reports whether the document exists.
func (d *doc) present() bool { return d.seq != 0 && d.data != nil }

// docFrom turns the last message of a key into a doc; a missing key or a
// marker is an absent doc at the marker's revision.
func (b *Backend) docFrom(key string, m *msg) (*doc, error) {
	d := &doc{key: key}
	if m == nil {
		return d, nil
	}
	d.seq, d.at = m.seq, m.at
	d.txn, d.ring = m.hdr.Get(hdrTxn), m.hdr.Get(hdrRecent)
	if m.deleted() {
		return d, nil
	}
	d.data = m.data
	if m.hdr.Get(hdrEncoding) == "s2" {
		hint := "restore it from a copy ('coord backend copy') or remove the key; 'coord doctor' names it"
		if key == keyRegistry {
			hint = repairHint
		}
		n, err := s2.DecodedLen(m.data)
		if err != nil || n > maxDocument {
			return nil, coord.Errorf(coord.CodeIO, "%s: the compressed document is damaged", b.where(key)).WithHint("%s", hint)
		}
		if d.data, err = s2.Decode(nil, m.data); err != nil {
			return nil, coord.Errorf(coord.CodeIO, "%s: the compressed document is damaged: %v", b.where(key), err).WithHint("%s", hint)
		}
	}
	if d.data == nil {
		d.data = []byte{}
	}
	return d, nil
}

// readLast reads the last message of one subject: from the stream's
// leader in a cluster (a replica may lag, or be cut off from the
// majority), with a direct get on a single node.
func (b *Backend) readLast(ctx context.Context, subject string) (*msg, error) {
	if b.clustered {
		return b.w.lastFromLeader(ctx, b.names.kv, subject)
	}
	return b.w.last(ctx, b.names.kv, subject)
}

// readDocs reads several documents in one round trip (in a cluster, one
// request per key to the stream's leader, all sent at once).
func (b *Backend) readDocs(ctx context.Context, keys ...string) (map[string]*doc, error) {
	subjects := make([]string, len(keys))
	for i, k := range keys {
		subjects[i] = b.names.pre + k
	}
	msgs, err := b.retryRead(ctx, func(ctx context.Context) ([]*msg, error) {
		if !b.clustered {
			return b.w.lastEach(ctx, b.names.kv, subjects, nil)
		}
		return b.w.lastEach(ctx, b.names.kv, subjects, b.w.lastFromLeader)
	})
	if err != nil {
		return nil, b.ioErr(err, "")
	}
	out := make(map[string]*doc, len(keys))
	for _, k := range keys {
		out[k] = &doc{key: k}
	}
	for _, m := range msgs {
		k := strings.TrimPrefix(m.subject, b.names.pre)
		d, err := b.docFrom(k, m)
		if err != nil {
			return nil, err
		}
		out[k] = d
	}
	return out, nil
}

// retryRead runs a read, trying again while no server answers (a
// cluster electing a leader, a reconnect) for at most IOBudget.
func (b *Backend) retryRead(ctx context.Context, read func(context.Context) ([]*msg, error)) ([]*msg, error) {
	p := newPacer(time.Now(), IOBudget)
	for {
		out, err := read(ctx)
		if err == nil || !transient(err) || ctx.Err() != nil || !p.wait(ctx) {
			return out, err
		}
	}
}

// retryWrite runs write, trying again while no server answers (a cluster
// electing a leader, a reconnect) for at most IOBudget in all; a missing
// stream is made again once by remake (nil: never). what names the
// write in the error.
func (b *Backend) retryWrite(ctx context.Context, what string, remake func(context.Context) error, write func() error) error {
	p := newPacer(time.Now(), IOBudget)
	for first := true; ; first = false {
		err := write()
		if err == nil {
			return nil
		}
		if remake != nil && errors.Is(err, errNoStream) && first {
			if err := remake(ctx); err != nil {
				return err
			}
		}
		if !transient(err) || ctx.Err() != nil || !p.wait(ctx) {
			return b.ioErr(err, "writing "+what)
		}
	}
}

// transient reports whether an error may go away by itself: no answer, no
// stream leader, a connection being re-established.
func transient(err error) bool {
	return isAPI(err, errCodeNotAvailable, errCodeIncomplete, errCodeSequenceNotMatch, errCodeLastSeqNotReady) ||
		errors.Is(err, errNoStream) || ambiguous(err)
}

// pacer paces a retry loop, the one every retry of the engine runs on:
// before each new attempt a pause doubling from 5 ms up to 250 ms, with
// full jitter (so that processes that lost the same race do not meet
// again), until the next pause would end past budget from start.
// A 20-line helper rather than a retry library (cenkalti/backoff and the
// like): the loops keep their own shape (a read-back after a lost
// answer, a stream made again once, their own error at the deadline,
// one budget shared by a commit and its read-back), which a library's
// Retry(operation) would force into Permanent-wrapped errors and
// callbacks; and its jitter is a band around the interval, not full.
type pacer struct {
	start  time.Time
	budget time.Duration
	tries  int
}

func newPacer(start time.Time, budget time.Duration) *pacer {
	return &pacer{start: start, budget: budget}
}

// wait pauses before the next attempt (until the pause ends or ctx is
// done) and reports true; it reports false, at once, when the pause would
// end past the budget: the loop gives up.
func (p *pacer) wait(ctx context.Context) bool {
	d := 5 * time.Millisecond << min(p.tries, 6)
	d = time.Duration(rand.Int64N(int64(min(d, 250*time.Millisecond)))) + time.Millisecond
	if time.Since(p.start)+d > p.budget {
		return false
	}
	p.tries++
	sleep(ctx, d)
	return true
}

// sleep pauses for d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// commit stores data as key's new value if key is still at base.seq. It
// returns the new revision, errConflict when the key moved, or a coded
// error. A commit is never cut short by ctx once it is sent: the change
// is made or not, and the caller learns which.
func (b *Backend) commit(ctx context.Context, base *doc, data []byte, ttl time.Duration, extra gonats.Header) (uint64, error) {
	ctx = context.WithoutCancel(ctx)
	id := nuid.Next()
	name := id + ":" + strconv.FormatUint(base.seq, 10)
	hdr := casHeader(base.seq)
	for k, v := range extra {
		hdr[k] = v
	}
	hdr.Set(hdrTxn, name)
	if ring := ringAfter(base); ring != "" {
		hdr.Set(hdrRecent, ring)
	}
	if ttl > 0 {
		hdr.Set(hdrTTL, ttlHeader(ttl))
	}
	if data != nil {
		if err := b.checkKey(base.key, data); err != nil {
			return 0, err
		}
	}
	if len(data) > compressAbove {
		data = s2.Encode(nil, data)
		hdr.Set(hdrEncoding, "s2")
	}
	if max := b.nc.MaxPayload(); int64(len(data))+8192 > max { // room for the headers (128 commit names)
		return 0, coord.Errorf(coord.CodeUsage, "%s: it would be %d bytes (compressed), more than the server's max_payload of %d; nothing was written", b.where(base.key), len(data), max).
			WithHint("%s, or raise the server's max_payload", tooLargeHint(base.key))
	}
	subject := b.names.pre + base.key
	start := time.Now()
	p := newPacer(start, IOBudget)
	unsure := false // an earlier attempt may have landed, or still may
	for {
		seq, err := b.w.publish(ctx, subject, data, hdr)
		if err == nil {
			return seq, nil
		}
		if errors.Is(err, errConflict) && !unsure {
			return 0, err
		}
		if !transient(err) && !errors.Is(err, errConflict) {
			return 0, b.ioErr(err, "writing "+base.key)
		}
		if ambiguous(err) || errors.Is(err, errConflict) {
			// The answer was lost, or the key moved after an attempt
			// whose answer was lost: the commit may have landed.
			unsure = unsure || ambiguous(err)
			landed, seq, rerr := b.landed(ctx, base, id, start)
			if rerr != nil {
				return 0, rerr
			}
			switch afterReadBack(landed) {
			case done:
				return seq, nil
			case refused:
				return 0, errConflict
			}
		}
		if !p.wait(ctx) {
			if unsure {
				return 0, coord.Errorf(coord.CodeIO, "%s: no answer from the server to a commit within %s: it may or may not have landed", b.where(base.key), coord.RoundDuration(IOBudget)).
					WithHint("run 'coord ls' when the server answers to see the state")
			}
			return 0, b.ioErr(err, "writing "+base.key)
		}
	}
}

type outcome int

const (
	notYet outcome = iota // the key is still at its base: nothing landed
	yes                   // our commit landed
	lost                  // another commit took the base: ours cannot land
)

// next is what a commit whose answer was lost does after reading back.
type next int

const (
	done    next = iota // it landed
	refused             // another commit took its base: the caller starts over
	again               // send it again (the same expected revision) and read again
)

// afterReadBack decides on what the read-back found, and on nothing else.
// Still at the base means "not yet", even when the last attempt was
// refused because the key had moved: a read behind that write (a new
// stream leader still applying its predecessor's log) must not be taken
// for a loss, or a commit that did land is abandoned and its caller
// starts over on a state that already holds it (TestCluster once ended
// with a task claimed by a worker that was never told).
func afterReadBack(o outcome) next {
	switch o {
	case yes:
		return done
	case lost:
		return refused
	}
	return again
}

// landed reads key back to learn what became of commit id made on base,
// and if it landed, its revision: the base named by the commit after it
// (or the key's revision if none followed).
func (b *Backend) landed(ctx context.Context, base *doc, id string, start time.Time) (outcome, uint64, error) {
	p := newPacer(start, IOBudget)
	for {
		m, err := b.w.lastFromLeader(ctx, b.names.kv, b.names.pre+base.key)
		if err == nil {
			var seq uint64
			var names []string
			if m != nil {
				seq = m.seq
				names = append([]string{m.hdr.Get(hdrTxn)}, strings.Fields(m.hdr.Get(hdrRecent))...)
			}
			if seq == base.seq {
				return notYet, 0, nil
			}
			prefix := id + ":"
			suffix := ":" + strconv.FormatUint(base.seq, 10)
			for j, n := range names {
				if strings.HasPrefix(n, prefix) {
					if j == 0 {
						return yes, seq, nil
					}
					_, after, _ := strings.Cut(names[j-1], ":")
					rev, _ := strconv.ParseUint(after, 10, 64)
					return yes, rev, nil
				}
				if strings.HasSuffix(n, suffix) {
					return lost, 0, nil
				}
			}
			return notYet, 0, coord.Errorf(coord.CodeIO, "%s: the server's answer to a commit was lost and more than %d commits followed it: whether it landed is unknown", b.where(base.key), recentTxns).
				WithHint("run 'coord ls' to see the state before retrying")
		}
		if !transient(err) || !p.wait(ctx) {
			return notYet, 0, coord.Errorf(coord.CodeIO, "%s: the server's answer to a commit was lost and it cannot be read back: %v", b.where(base.key), err).
				WithHint("the commit may or may not have landed; run 'coord ls' when the server answers")
		}
	}
}

// ringAfter is the Coord-Recent of a commit following base.
func ringAfter(base *doc) string {
	if base.txn == "" {
		return ""
	}
	names := append([]string{base.txn}, strings.Fields(base.ring)...)
	if len(names) > recentTxns {
		names = names[:recentTxns]
	}
	return strings.Join(names, " ")
}

// ttlHeader renders a TTL as Nats-TTL takes it (whole seconds at least 1,
// or a Go duration).
func ttlHeader(d time.Duration) string {
	if d < time.Second {
		d = time.Second
	}
	return d.Round(time.Second).String()
}

// update runs a read-change-commit loop on one document: read it, let
// change compute the new bytes (nil: nothing to write), commit, and on a
// lost race start again after a jittered pause, until the lock wait runs
// out (coord.CodeLockTimeout).
func (b *Backend) update(ctx context.Context, what string, read func(context.Context) (*doc, error), change func(*doc) ([]byte, error)) error {
	p := newPacer(time.Now(), b.lockWait)
	for {
		if err := ctx.Err(); err != nil {
			return b.ioErr(err, "")
		}
		d, err := read(ctx)
		if err != nil {
			return err
		}
		data, err := change(d)
		if err != nil || data == nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return b.ioErr(err, "") // cancelled before the commit: nothing changed
		}
		_, err = b.commit(ctx, d, data, 0, nil)
		if !errors.Is(err, errConflict) {
			return err
		}
		if !p.wait(ctx) {
			return b.keptChanging(what)
		}
	}
}

// noHeaders is an empty header set for plain publishes.
func noHeaders() gonats.Header { return gonats.Header{} }

// change is what a keyed update decides: write data (a delete marker
// with del) for ttl, or nothing.
type change struct {
	write bool
	data  []byte
	ttl   time.Duration
	del   bool
}

// updateKey runs decide on key's last message (nil: none; markers
// included) and the server's now, commits what it decides if the key is
// still where decide saw it, and on a lost race runs it again, until the
// lock wait. It returns the revision written (0: nothing written).
func (b *Backend) updateKey(ctx context.Context, key, what string, decide func(m *msg, now time.Time) (change, error)) (uint64, error) {
	p := newPacer(time.Now(), b.lockWait)
	for {
		if err := ctx.Err(); err != nil {
			return 0, b.ioErr(err, "")
		}
		clock := b.srv.start(ctx, b)
		var m *msg
		_, err := b.retryRead(ctx, func(ctx context.Context) ([]*msg, error) {
			var err error
			m, err = b.readLast(ctx, b.names.pre+key)
			return nil, err
		})
		cerr := clock()
		if err != nil {
			return 0, b.ioErr(err, "")
		}
		if cerr != nil {
			return 0, b.ioErr(cerr, "")
		}
		c, err := decide(m, b.srv.now())
		if err != nil || !c.write {
			return 0, err
		}
		base := &doc{key: key}
		if m != nil {
			base.seq, base.txn, base.ring = m.seq, m.hdr.Get(hdrTxn), m.hdr.Get(hdrRecent)
		}
		var extra gonats.Header
		if c.del {
			extra = deleteHeader()
		}
		seq, err := b.commit(ctx, base, c.data, c.ttl, extra)
		if !errors.Is(err, errConflict) {
			return seq, err
		}
		if !p.wait(ctx) {
			return 0, b.keptChanging(what)
		}
	}
}

// keptChanging is the end of a read-change-commit loop that lost every
// race for the lock wait.
func (b *Backend) keptChanging(what string) error {
	return &coord.Error{Code: coord.CodeLockTimeout, Err: coord.ErrLockTimeout,
		Msg:  fmt.Sprintf("%s: %s kept changing under concurrent writers for %s", b.url, what, coord.RoundDuration(b.lockWait)),
		Hint: "retry, or raise --lock-wait"}
}

// deleteHeader marks a write as a KV delete.
func deleteHeader() gonats.Header { return gonats.Header{hdrKVOperation: []string{"DEL"}} }
