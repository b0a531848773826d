package coord

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The TTL key-value space: small values for agent protocols (task status
// keys, questions and answers, QA signals). Every key has a TTL (keys
// without one are how such protocols rot) and a revision; a conditional
// set makes "write, then re-read to see if I won" one atomic step. Keys
// are data, never file names.

// KV limits.
const (
	MaxKVValue = 64 << 10 // bytes per value
	MaxKVKey   = 256      // bytes per key
	MaxKVKeys  = 10000    // keys in force
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
	t, err := ParseTime(e.ExpiresAt)
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

// KVCond is the condition of a write: none (set), a revision, or absence.
type KVCond struct {
	ExpectRev    int64 // > 0: the key must be at this revision
	ExpectAbsent bool
}

// ValidKey checks a key: 1 to 256 bytes of UTF-8 without control
// characters.
func ValidKey(key string) error {
	if key == "" || len(key) > MaxKVKey || !utf8.ValidString(key) || strings.IndexFunc(key, unicode.IsControl) >= 0 {
		return Errorf(CodeUsage, "invalid key %q: 1 to %d bytes of text without control characters", clipKey(key), MaxKVKey)
	}
	return nil
}

func clipKey(k string) string {
	if len(k) > 40 {
		return k[:40] + "…"
	}
	return k
}

// CheckKVTTL refuses a write without a positive TTL (none given, or 0):
// keys without one are how protocols rot.
func CheckKVTTL(ttl time.Duration) error {
	if ttl <= 0 {
		return noTTL("every key").WithHint("keys without one are how protocols rot; give its lifetime, e.g. 10m")
	}
	return nil
}

// KVValue turns a value given as text (the CLI's) into a value to store:
// text that is JSON is that JSON, compacted; anything else is a JSON
// string holding the text. It judges nothing else: CheckKVValue, which
// the application asks of every value however it came, bounds it, and
// the stores refuse JSON that coord would not read back (keys that differ
// only in case, duplicate keys), on every front end alike.
func KVValue(v string) json.RawMessage {
	b := []byte(strings.TrimSpace(v))
	if len(b) > 0 && json.Valid(b) {
		var c bytes.Buffer
		if json.Compact(&c, b) == nil {
			return c.Bytes()
		}
	}
	s, _ := json.Marshal(v) // a string always marshals (invalid UTF-8 becomes U+FFFD)
	return s
}

// CheckKVValue refuses a value to store that is not one JSON value, or
// is longer than MaxKVValue bytes as stored (CodeUsage).
func CheckKVValue(v json.RawMessage) error {
	if len(v) > MaxKVValue {
		return Errorf(CodeUsage, "value is %d bytes; the limit is %d", len(v), MaxKVValue).
			WithHint("store a larger value in a file of the repository and name it")
	}
	if !json.Valid(v) {
		return Errorf(CodeUsage, "value is not JSON")
	}
	return nil
}

// NoKey is the refusal of a read of key that is not in force (absent or
// expired): CodeConflict, as for every front end that reads one key.
func NoKey(key string) *Error {
	return Errorf(CodeConflict, "no key %s (absent or expired)", clipKey(key))
}

// CheckKVCond applies a write's condition to the key's current entry (nil:
// absent or expired); the refusal is CodeConflict naming the revision.
func CheckKVCond(key string, cur *KVEntry, cond KVCond) error {
	switch {
	case cond.ExpectAbsent && cur != nil:
		return Errorf(CodeConflict, "key %s exists (rev %d)", clipKey(key), cur.Rev)
	case cond.ExpectRev > 0 && cur == nil:
		return Errorf(CodeConflict, "key %s does not exist (expected rev %d)", clipKey(key), cond.ExpectRev)
	case cond.ExpectRev > 0 && cur.Rev != cond.ExpectRev:
		return Errorf(CodeConflict, "key %s is at rev %d, not %d", clipKey(key), cur.Rev, cond.ExpectRev)
	}
	return nil
}

// KVSpace is the whole key space as one document: the rules of a
// conditional write applied to it, for engines that keep it so.
type KVSpace struct {
	Version int       `json:"version"`
	LastRev int64     `json:"last_rev"`
	Keys    []KVEntry `json:"keys"`
}

// Floor is the highest revision the space records, as far as it counts
// (Counted): its counter and every key's revision.
func (d *KVSpace) Floor() int64 {
	n := Counted(d.LastRev)
	for _, e := range d.Keys {
		n = max(n, Counted(e.Rev))
	}
	return n
}

// Raise makes the space's counter its Floor, and at least mark: a
// high-water mark the engine keeps apart from the space, so that a space
// restored from an older copy never issues a revision again.
func (d *KVSpace) Raise(mark int64) { d.LastRev = max(d.Floor(), Counted(mark)) }

// Mend puts the space's counters back in range (doctor --repair): a key
// whose revision is above MaxCounter gets a new one, and the counter
// becomes the Floor. It says what it changed; none: the space was sound.
func (d *KVSpace) Mend() []string {
	var out []string
	if !CounterOK(d.LastRev) {
		out = append(out, CounterDamage("last_rev", d.LastRev))
	}
	d.LastRev = d.Floor()
	for i, e := range d.Keys {
		if CounterOK(e.Rev) {
			continue
		}
		next, err := NextCounter("kv revision", d.LastRev)
		if err != nil {
			break
		}
		out = append(out, CounterDamage("key "+clipKey(e.Key)+"'s rev", e.Rev)+"; it gets rev "+itoa(int(next)))
		d.Keys[i].Rev, d.LastRev = next, next
	}
	return out
}

// Drop removes the keys expired at now; it reports whether any went.
func (d *KVSpace) Drop(now time.Time) bool {
	n := len(d.Keys)
	d.Keys = slices.DeleteFunc(d.Keys, func(e KVEntry) bool { return !e.Live(now) })
	return len(d.Keys) != n
}

func (d *KVSpace) find(key string) int {
	i := sort.Search(len(d.Keys), func(i int) bool { return d.Keys[i].Key >= key })
	if i < len(d.Keys) && d.Keys[i].Key == key {
		return i
	}
	return -1
}

// Get returns key in force at now.
func (d *KVSpace) Get(key string, now time.Time) (KVEntry, bool) {
	if i := d.find(key); i >= 0 && d.Keys[i].Live(now) {
		return d.Keys[i], true
	}
	return KVEntry{}, false
}

// List returns the keys in force at now under prefix, sorted.
func (d *KVSpace) List(prefix string, now time.Time) []KVEntry {
	var out []KVEntry
	for _, e := range d.Keys {
		if strings.HasPrefix(e.Key, prefix) && e.Live(now) {
			out = append(out, e)
		}
	}
	return out
}

// Set writes key = value for ttl at now if cond holds. Revisions grow
// across the whole space. It reports whether the space changed.
func (d *KVSpace) Set(key string, value json.RawMessage, ttl time.Duration, by string, cond KVCond, now time.Time) (KVEntry, bool, error) {
	dropped := d.Drop(now)
	i := d.find(key)
	var cur *KVEntry
	if i >= 0 {
		cur = &d.Keys[i]
	}
	if err := CheckKVCond(key, cur, cond); err != nil {
		return KVEntry{}, dropped, err
	}
	if i < 0 && len(d.Keys) >= MaxKVKeys {
		return KVEntry{}, dropped, Errorf(CodeConflict, "the key space is full (%d keys); delete some or let them expire", MaxKVKeys)
	}
	rev, err := NextCounter("kv revision", d.Floor())
	if err != nil {
		return KVEntry{}, dropped, err
	}
	d.Version = 1
	d.LastRev = rev
	got := KVEntry{Key: key, Value: value, Rev: d.LastRev, ExpiresAt: FormatTime(now.Add(ttl)), UpdatedBy: by, UpdatedAt: FormatTime(now)}
	if i >= 0 {
		d.Keys[i] = got
	} else {
		j := sort.Search(len(d.Keys), func(j int) bool { return d.Keys[j].Key >= key })
		d.Keys = slices.Insert(d.Keys, j, got)
	}
	return got, true, nil
}

// Delete removes key; found reports whether it was in force, changed
// whether the space changed.
func (d *KVSpace) Delete(key string, now time.Time) (found, changed bool) {
	changed = d.Drop(now)
	if i := d.find(key); i >= 0 {
		floor := d.Floor() // the deleted key's revision counts
		d.Keys = slices.Delete(d.Keys, i, i+1)
		if rev, err := NextCounter("kv revision", floor); err == nil {
			d.LastRev = rev
		} else {
			d.LastRev = floor
		}
		return true, true
	}
	return false, changed
}
