package file

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/registry/format"
)

// The TTL key-value space: small values for agent protocols (task status
// keys, questions and answers, QA signals). Every key has a TTL (keys
// without one are how such protocols rot) and a revision; cas makes
// "write, then re-read to see if I won" one atomic step. Keys live inside
// kv.json, never as file names, so no key can reach outside the tree.

const (
	KVFile  = "kv.json"
	kvLock  = LockDir + "/kv.lock"
	MaxKV   = 64 << 10 // bytes per value
	maxKey  = 256
	maxKeys = 10000
)

// KVEntry is one key.
type KVEntry struct {
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	Rev       int64           `json:"rev"`
	ExpiresAt string          `json:"expires_at"`
	UpdatedBy string          `json:"updated_by,omitempty"`
	UpdatedAt string          `json:"updated_at"`
}

// Live reports whether the key is still in force at now.
func (e KVEntry) Live(now time.Time) bool {
	t, err := coord.ParseTime(e.ExpiresAt)
	return err == nil && now.Before(t)
}

// Text is the value as text: a JSON string unquoted, anything else as JSON.
func (e KVEntry) Text() string {
	var s string
	if len(e.Value) > 0 && e.Value[0] == '"' && json.Unmarshal(e.Value, &s) == nil {
		return s
	}
	return string(e.Value)
}

type kvDoc struct {
	Version int       `json:"version"`
	LastRev int64     `json:"last_rev"`
	Keys    []KVEntry `json:"keys"`
}

func (d *kvDoc) drop(now time.Time) bool {
	n := len(d.Keys)
	d.Keys = slices.DeleteFunc(d.Keys, func(e KVEntry) bool { return !e.Live(now) })
	return len(d.Keys) != n
}

func (d *kvDoc) find(key string) int {
	i := sort.Search(len(d.Keys), func(i int) bool { return d.Keys[i].Key >= key })
	if i < len(d.Keys) && d.Keys[i].Key == key {
		return i
	}
	return -1
}

// ValidKey checks a key: 1 to 256 bytes of UTF-8 without control
// characters.
func ValidKey(key string) error {
	if key == "" || len(key) > maxKey || !utf8.ValidString(key) || strings.IndexFunc(key, unicode.IsControl) >= 0 {
		return coord.Errorf(coord.CodeUsage, "invalid key %q: 1 to %d bytes of text without control characters", clipKey(key), maxKey)
	}
	return nil
}

func clipKey(k string) string {
	if len(k) > 40 {
		return k[:40] + "…"
	}
	return k
}

// KVValue turns a command-line value into what is stored: valid JSON as
// it is, anything else as a JSON string.
func KVValue(v string) (json.RawMessage, error) {
	if len(v) > MaxKV {
		return nil, coord.Errorf(coord.CodeUsage, "value is %d bytes; the limit is %d", len(v), MaxKV)
	}
	b := []byte(strings.TrimSpace(v))
	if len(b) > 0 && format.CheckStrict("value", b) == nil {
		var c bytes.Buffer
		if json.Compact(&c, b) == nil {
			return c.Bytes(), nil
		}
	}
	s, err := json.Marshal(v)
	if err != nil {
		return nil, coord.Errorf(coord.CodeUsage, "value is not valid text")
	}
	return s, nil
}

// KVGet returns a key in force.
func (s *Store) KVGet(key string) (KVEntry, bool, error) {
	if err := ValidKey(key); err != nil {
		return KVEntry{}, false, err
	}
	d, err := readDoc[kvDoc](s, KVFile)
	if err != nil {
		return KVEntry{}, false, err
	}
	if i := d.find(key); i >= 0 && d.Keys[i].Live(s.Clock()) {
		return d.Keys[i], true, nil
	}
	return KVEntry{}, false, nil
}

// KVList returns the keys in force with the prefix, sorted.
func (s *Store) KVList(prefix string) ([]KVEntry, error) {
	d, err := readDoc[kvDoc](s, KVFile)
	if err != nil {
		return nil, err
	}
	now := s.Clock()
	var out []KVEntry
	for _, e := range d.Keys {
		if strings.HasPrefix(e.Key, prefix) && e.Live(now) {
			out = append(out, e)
		}
	}
	return out, nil
}

// KVCond is the condition of a write: none (set), a revision, or absence.
type KVCond struct {
	ExpectRev    int64 // > 0: the key must be at this revision
	ExpectAbsent bool
}

// KVSet writes key = value for ttl if cond holds (exit 3 otherwise,
// naming the current revision). Revisions grow across the whole space.
func (s *Store) KVSet(ctx context.Context, key string, value json.RawMessage, ttl time.Duration, by string, cond KVCond) (KVEntry, error) {
	var got KVEntry
	if err := ValidKey(key); err != nil {
		return got, err
	}
	if ttl <= 0 {
		return got, coord.Errorf(coord.CodeUsage, "every key needs a positive --ttl (keys without one are how protocols rot)")
	}
	err := updateDoc(ctx, s, KVFile, kvLock, func(d *kvDoc) (bool, error) {
		now := s.Clock()
		dropped := d.drop(now)
		i := d.find(key)
		switch {
		case cond.ExpectAbsent && i >= 0:
			return dropped, coord.Errorf(coord.CodeConflict, "key %s exists (rev %d)", clipKey(key), d.Keys[i].Rev)
		case cond.ExpectRev > 0 && i < 0:
			return dropped, coord.Errorf(coord.CodeConflict, "key %s does not exist (expected rev %d)", clipKey(key), cond.ExpectRev)
		case cond.ExpectRev > 0 && d.Keys[i].Rev != cond.ExpectRev:
			return dropped, coord.Errorf(coord.CodeConflict, "key %s is at rev %d, not %d", clipKey(key), d.Keys[i].Rev, cond.ExpectRev)
		}
		if i < 0 && len(d.Keys) >= maxKeys {
			return dropped, coord.Errorf(coord.CodeConflict, "the key space is full (%d keys); delete some or let them expire", maxKeys)
		}
		d.Version = 1
		d.LastRev++
		got = KVEntry{Key: key, Value: value, Rev: d.LastRev, ExpiresAt: coord.FormatTime(now.Add(ttl)), UpdatedBy: by, UpdatedAt: coord.FormatTime(now)}
		if i >= 0 {
			d.Keys[i] = got
		} else {
			j := sort.Search(len(d.Keys), func(j int) bool { return d.Keys[j].Key >= key })
			d.Keys = append(d.Keys, KVEntry{})
			copy(d.Keys[j+1:], d.Keys[j:])
			d.Keys[j] = got
		}
		return true, nil
	})
	return got, err
}

// KVDel deletes a key; it reports whether the key was in force.
func (s *Store) KVDel(ctx context.Context, key string) (bool, error) {
	if err := ValidKey(key); err != nil {
		return false, err
	}
	found := false
	err := updateDoc(ctx, s, KVFile, kvLock, func(d *kvDoc) (bool, error) {
		dropped := d.drop(s.Clock())
		if i := d.find(key); i >= 0 {
			d.Keys = append(d.Keys[:i], d.Keys[i+1:]...)
			found = true
			d.LastRev++
			return true, nil
		}
		return dropped, nil
	})
	return found, err
}

// SweepKV drops expired keys from the file; it returns how many.
func (s *Store) SweepKV(ctx context.Context) (int, error) {
	n := 0
	err := updateDoc(ctx, s, KVFile, kvLock, func(d *kvDoc) (bool, error) {
		before := len(d.Keys)
		d.drop(s.Clock())
		n = before - len(d.Keys)
		return n > 0, nil
	})
	return n, err
}
