package nats

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/rotd/coord/coord"
)

// The TTL key-value space: one key per key, "kv.<key>", written with the
// key's TTL as the message's server-side TTL. A conditional write is a
// compare-and-set on the key's revision with coord's rule (CheckKVCond).
// A key's revision is the stream sequence of its write plus the
// namespace's base: revisions grow across the whole space, as on files.

type kvStore struct{ b *Backend }

// kvValue is a kv key's value. Rev is 0 for a write made here (the
// revision is then the write's own plus the base); a copy records it.
type kvValue struct {
	Value     json.RawMessage `json:"value"`
	Rev       int64           `json:"rev,omitempty"`
	ExpiresAt string          `json:"expires_at"`
	UpdatedBy string          `json:"updated_by,omitempty"`
	UpdatedAt string          `json:"updated_at"`
}

// entryFrom reads the entry a message holds; nil for a marker.
func (b *Backend) entryFrom(key string, m *msg) (*coord.KVEntry, error) {
	if m == nil || m.deleted() {
		return nil, nil
	}
	var v kvValue
	if err := json.Unmarshal(m.data, &v); err != nil || len(v.Value) == 0 {
		return nil, coord.Errorf(coord.CodeIO, "%s: not a kv entry", b.where(preKV+enc(key))).
			WithHint("'coord doctor --repair' removes it")
	}
	e := &coord.KVEntry{Key: key, Value: v.Value, Rev: v.Rev, ExpiresAt: v.ExpiresAt, UpdatedBy: v.UpdatedBy, UpdatedAt: v.UpdatedAt}
	if e.Rev == 0 {
		e.Rev = int64(m.seq) + b.meta.Base
	}
	return e, nil
}

func (k kvStore) Get(ctx context.Context, key string) (coord.KVEntry, bool, error) {
	if err := coord.ValidKey(key); err != nil {
		return coord.KVEntry{}, false, err
	}
	b := k.b
	clock := b.srv.start(ctx, b)
	var m *msg
	_, err := b.retryRead(ctx, func(ctx context.Context) ([]*msg, error) {
		var err error
		m, err = b.readLast(ctx, b.names.pre+preKV+enc(key))
		return nil, err
	})
	cerr := clock()
	if err != nil {
		return coord.KVEntry{}, false, b.ioErr(err, "")
	}
	if cerr != nil {
		return coord.KVEntry{}, false, b.ioErr(cerr, "")
	}
	e, err := b.entryFrom(key, m)
	if err != nil || e == nil || !e.Live(b.srv.now()) {
		return coord.KVEntry{}, false, err
	}
	return *e, true, nil
}

type entryAt struct {
	e *coord.KVEntry
	m *msg
}

// allEntries reads every kv key (expired ones too), sorted, and the
// server's now.
func (b *Backend) allEntries(ctx context.Context) ([]entryAt, time.Time, error) {
	clock := b.srv.start(ctx, b)
	msgs, err := b.lastAll(ctx, b.names.kv, []string{b.names.pre + preKV + ">"})
	cerr := clock()
	if err != nil {
		return nil, time.Time{}, err
	}
	if cerr != nil {
		return nil, time.Time{}, b.ioErr(cerr, "")
	}
	var out []entryAt
	for _, m := range msgs {
		key, ok := dec(strings.TrimPrefix(m.subject, b.names.pre+preKV))
		if !ok || m.deleted() {
			continue
		}
		e, err := b.entryFrom(key, m)
		if err != nil {
			return nil, time.Time{}, err
		}
		out = append(out, entryAt{e, m})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].e.Key < out[j].e.Key })
	return out, b.srv.now(), nil
}

// List returns the keys in force under prefix, sorted.
func (k kvStore) List(ctx context.Context, prefix string) ([]coord.KVEntry, error) {
	all, now, err := k.b.allEntries(ctx)
	if err != nil {
		return nil, err
	}
	var out []coord.KVEntry
	for _, x := range all {
		if strings.HasPrefix(x.e.Key, prefix) && x.e.Live(now) {
			out = append(out, *x.e)
		}
	}
	return out, nil
}

// Set writes key = value for ttl if cond holds (CodeConflict otherwise,
// naming the current revision).
func (k kvStore) Set(ctx context.Context, key string, value json.RawMessage, ttl time.Duration, by string, cond coord.KVCond) (coord.KVEntry, error) {
	if err := coord.ValidKey(key); err != nil {
		return coord.KVEntry{}, err
	}
	if ttl <= 0 {
		return coord.KVEntry{}, coord.Errorf(coord.CodeUsage, "every key needs a positive TTL (keys without one are how protocols rot)")
	}
	if len(value) > coord.MaxKVValue {
		return coord.KVEntry{}, coord.Errorf(coord.CodeUsage, "value is %d bytes; the limit is %d", len(value), coord.MaxKVValue)
	}
	b := k.b
	// The key space is one part, as kv.json is on files: a damaged key
	// refuses every write until doctor --repair removes it.
	if _, _, err := b.allEntries(ctx); err != nil {
		return coord.KVEntry{}, err
	}
	var got coord.KVEntry
	seq, err := b.updateKey(ctx, preKV+enc(key), "key "+key, func(m *msg, now time.Time) (change, error) {
		cur, err := b.entryFrom(key, m)
		if err != nil {
			return change{}, err
		}
		if cur != nil && !cur.Live(now) {
			cur = nil
		}
		if err := coord.CheckKVCond(key, cur, cond); err != nil {
			return change{}, err
		}
		got = coord.KVEntry{Key: key, Value: value, ExpiresAt: coord.FormatTime(now.Add(ttl)), UpdatedBy: by, UpdatedAt: coord.FormatTime(now)}
		data, _ := json.Marshal(kvValue{Value: value, ExpiresAt: got.ExpiresAt, UpdatedBy: by, UpdatedAt: got.UpdatedAt})
		return change{write: true, data: data, ttl: ttl}, nil
	})
	if err != nil {
		return coord.KVEntry{}, err
	}
	got.Rev = int64(seq) + b.meta.Base
	return got, nil
}

// Delete removes key; it reports whether the key was in force.
func (k kvStore) Delete(ctx context.Context, key string) (bool, error) {
	if err := coord.ValidKey(key); err != nil {
		return false, err
	}
	b := k.b
	if _, _, err := b.allEntries(ctx); err != nil {
		return false, err
	}
	found := false
	_, err := b.updateKey(ctx, preKV+enc(key), "key "+key, func(m *msg, now time.Time) (change, error) {
		found = false
		if m == nil || m.deleted() {
			return change{}, nil
		}
		cur, err := b.entryFrom(key, m)
		if err != nil {
			return change{}, err
		}
		found = cur != nil && cur.Live(now)
		return change{write: true, del: true, ttl: markerTTL}, nil
	})
	return found, err
}

// Sweep removes keys past their expiry that the server has not dropped
// yet; readers ignore them already.
func (k kvStore) Sweep(ctx context.Context) (int, error) {
	b := k.b
	all, now, err := b.allEntries(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, x := range all {
		if x.e.Live(now) {
			continue
		}
		seq, err := b.updateKey(ctx, preKV+enc(x.e.Key), "key "+x.e.Key, func(m *msg, now time.Time) (change, error) {
			cur, err := b.entryFrom(x.e.Key, m)
			if err != nil || cur == nil || cur.Live(now) {
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
