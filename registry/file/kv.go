package file

import (
	"context"
	"encoding/json"
	"time"

	"github.com/rotd/coordination/coord"
)

// The TTL key-value space lives in kv.json (a coord.KVSpace) under
// .lock/kv.lock; the rules of a conditional write are coord's. Keys are
// data inside the file, never file names, so no key can reach outside the
// tree. Revisions are issued once in the tree's life (counters.go).

type kvStore struct{ b *Backend }

// Get returns key in force.
func (k kvStore) Get(ctx context.Context, key string) (coord.KVEntry, bool, error) {
	if err := coord.ValidKey(key); err != nil {
		return coord.KVEntry{}, false, err
	}
	d, err := readDoc[coord.KVSpace](k.b, KVFile)
	if err != nil {
		return coord.KVEntry{}, false, err
	}
	e, ok := d.Get(key, k.b.clock())
	return e, ok, nil
}

// List returns the keys in force under prefix, sorted.
func (k kvStore) List(ctx context.Context, prefix string) ([]coord.KVEntry, error) {
	d, err := readDoc[coord.KVSpace](k.b, KVFile)
	if err != nil {
		return nil, err
	}
	return d.List(prefix, k.b.clock()), nil
}

// Set writes key = value for ttl if cond holds (CodeConflict otherwise,
// naming the current revision). Revisions grow across the whole space.
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
	var got coord.KVEntry
	err := k.update(ctx, func(d *coord.KVSpace, now time.Time) (bool, error) {
		var changed bool
		var err error
		got, changed, err = d.Set(key, value, ttl, by, cond, now)
		return changed, err
	})
	return got, err
}

// Delete removes key; it reports whether the key was in force.
func (k kvStore) Delete(ctx context.Context, key string) (bool, error) {
	if err := coord.ValidKey(key); err != nil {
		return false, err
	}
	found := false
	err := k.update(ctx, func(d *coord.KVSpace, now time.Time) (bool, error) {
		var changed bool
		found, changed = d.Delete(key, now)
		return changed, nil
	})
	return found, err
}

// Sweep drops expired keys from the file; it returns how many.
func (k kvStore) Sweep(ctx context.Context) (int, error) {
	n := 0
	err := k.update(ctx, func(d *coord.KVSpace, now time.Time) (bool, error) {
		before := len(d.Keys)
		d.Drop(now)
		n = before - len(d.Keys)
		return n > 0, nil
	})
	return n, err
}
