package nats

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/rotd/coordination/coord"
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

// List returns the keys in force under prefix, sorted.
func (k kvStore) List(ctx context.Context, prefix string) ([]coord.KVEntry, error) {
	all, now, err := kvSpace.all(ctx, k.b)
	if err != nil {
		return nil, err
	}
	var out []coord.KVEntry
	for _, e := range all {
		if strings.HasPrefix(e.Key, prefix) && e.Live(now) {
			out = append(out, *e)
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
	if err := coord.CheckKVTTL(ttl); err != nil {
		return coord.KVEntry{}, err
	}
	if err := coord.CheckKVValue(value); err != nil {
		return coord.KVEntry{}, err
	}
	b := k.b
	if err := b.checkBase(); err != nil {
		return coord.KVEntry{}, err
	}
	// The key space is one part, as kv.json is on files: a damaged key
	// refuses every write until doctor --repair removes it.
	if _, _, err := kvSpace.all(ctx, b); err != nil {
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
	if _, _, err := kvSpace.all(ctx, b); err != nil {
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
func (k kvStore) Sweep(ctx context.Context) (int, error) { return kvSpace.sweep(ctx, k.b) }
