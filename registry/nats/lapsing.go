package nats

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/rotd/coordination/coord"
)

// lapsing is the keys under one prefix of the kv stream whose values lapse
// at a time of their own: the kv entries (T coord.KVEntry) and the leases
// (T coord.Lease). Reading all of them and sweeping the lapsed ones is the
// same for both, and written once here.
type lapsing[T any] struct {
	pre   string                                            // preKV, preLease
	what  string                                            // "key", "lease": a key as errors name it
	parse func(b *Backend, name string, m *msg) (*T, error) // nil for a delete marker
	name  func(*T) string
	live  func(*T, time.Time) bool
}

var (
	kvSpace = lapsing[coord.KVEntry]{pre: preKV, what: "key", parse: (*Backend).entryFrom,
		name: func(e *coord.KVEntry) string { return e.Key }, live: (*coord.KVEntry).Live}
	leaseSpace = lapsing[coord.Lease]{pre: preLease, what: "lease", parse: (*Backend).leaseFrom,
		name: func(l *coord.Lease) string { return l.Name }, live: (*coord.Lease).Live}
)

// all reads every key of the space (lapsed ones too), sorted by name, and
// the server's now. A value that does not parse is an error naming its
// key.
func (s lapsing[T]) all(ctx context.Context, b *Backend) ([]*T, time.Time, error) {
	clock := b.srv.start(ctx, b)
	msgs, err := b.lastAll(ctx, b.names.kv, []string{b.names.pre + s.pre + ">"})
	cerr := clock()
	if err != nil {
		return nil, time.Time{}, err
	}
	if cerr != nil {
		return nil, time.Time{}, b.ioErr(cerr, "")
	}
	var out []*T
	for _, m := range msgs {
		name, ok := dec(strings.TrimPrefix(m.subject, b.names.pre+s.pre))
		if !ok || m.deleted() {
			continue
		}
		v, err := s.parse(b, name, m)
		if err != nil {
			return nil, time.Time{}, err
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return s.name(out[i]) < s.name(out[j]) })
	return out, b.srv.now(), nil
}

// sweep removes the keys past their expiry that the server has not
// dropped yet (its TTL timer runs about once a second); readers ignore
// them already. Each is read again under compare-and-set: one renewed in
// between stays.
func (s lapsing[T]) sweep(ctx context.Context, b *Backend) (int, error) {
	all, now, err := s.all(ctx, b)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, v := range all {
		if s.live(v, now) {
			continue
		}
		name := s.name(v)
		seq, err := b.updateKey(ctx, s.pre+enc(name), s.what+" "+name, func(m *msg, now time.Time) (change, error) {
			cur, err := s.parse(b, name, m)
			if err != nil || cur == nil || s.live(cur, now) {
				return change{}, err
			}
			return change{write: true, del: true, ttl: markerTTL}, nil
		})
		if err != nil {
			return n, err
		}
		if seq > 0 {
			n++
		}
	}
	return n, nil
}
