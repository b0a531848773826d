package gitrepo

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rotd/coordination/fsops"
)

// The merge cache: a trial merge's result is a function of its two
// commits alone, so it is kept by their ids in the repository's common
// git directory (shared by every worktree: <common dir>/coord/
// merge-cache.json) and a pair is merged once. The file is a cache, not
// a record: an unreadable or foreign one is ignored and replaced, and a
// save that cannot take its lock within mergeCacheLockWait (2 s) is
// skipped (the next run merges those pairs again).

// MergeCacheFile is the cache's name under the common git directory.
const MergeCacheFile = "coord/merge-cache.json"

const mergeCacheLock = "coord/merge-cache.lock"

// MaxMergeCache bounds the entries kept; the least recently used go
// first. At 16 branches in flight a full round asks 136 pairs.
const MaxMergeCache = 4096

// maxMergeCacheBytes bounds what is read of the file.
const maxMergeCacheBytes = 32 << 20

// mergeCacheLockWait is how long a save waits for another one.
const mergeCacheLockWait = 2 * time.Second

// MergeCache holds trial merges by pair (PairKey). A nil *MergeCache is
// an empty cache that keeps nothing. Safe for concurrent use.
type MergeCache struct {
	dir string // the common git directory
	now func() time.Time

	mu      sync.Mutex
	entries map[string]*cacheEntry
	dirty   bool
}

type cacheEntry struct {
	Conflict bool     `json:"conflict,omitempty"`
	Files    []string `json:"files,omitempty"`
	Used     int64    `json:"used"` // Unix seconds of the last use
}

type cacheFile struct {
	Version int                    `json:"version"`
	Pairs   map[string]*cacheEntry `json:"pairs"`
}

// LoadMergeCache reads the cache of the repository whose common git
// directory is commonDir (CommonDir). A missing file is an empty cache;
// an unreadable one is an empty cache too, and the error says why (for
// a warning: the cache is replaced on the next Save). now is the clock
// of last uses (nil: time.Now).
func LoadMergeCache(commonDir string, now func() time.Time) (*MergeCache, error) {
	if now == nil {
		now = time.Now
	}
	c := &MergeCache{dir: commonDir, now: now, entries: map[string]*cacheEntry{}}
	t, err := fsops.OpenTree(commonDir)
	if err != nil {
		return c, err
	}
	defer t.Close()
	got, err := readMergeCache(t)
	if err != nil {
		return c, err
	}
	c.entries = got
	return c, nil
}

func readMergeCache(t *fsops.Tree) (map[string]*cacheEntry, error) {
	data, err := t.ReadFile(MergeCacheFile, maxMergeCacheBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]*cacheEntry{}, nil
	}
	if err != nil {
		return map[string]*cacheEntry{}, err
	}
	var f cacheFile
	if err := json.Unmarshal(data, &f); err != nil || f.Version != 1 {
		return map[string]*cacheEntry{}, &fs.PathError{Op: "read", Path: t.Path(MergeCacheFile), Err: errors.New("not a merge cache of this coord; it will be replaced")}
	}
	out := make(map[string]*cacheEntry, len(f.Pairs))
	for k, e := range f.Pairs {
		if e != nil && validKey(k) && validFiles(e) {
			out[k] = e
		}
	}
	return out, nil
}

// validKey reports whether k is a PairKey of two commit ids.
func validKey(k string) bool {
	a, b, ok := strings.Cut(k, " ")
	return ok && isObjectID(a) && isObjectID(b) && a < b
}

func validFiles(e *cacheEntry) bool {
	if !e.Conflict && len(e.Files) > 0 {
		return false
	}
	for _, f := range e.Files {
		if f == "" || strings.ContainsRune(f, 0) {
			return false
		}
	}
	return true
}

func (c *MergeCache) get(k string) (MergeResult, bool) {
	if c == nil {
		return MergeResult{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok {
		return MergeResult{}, false
	}
	e.Used = c.now().Unix()
	return MergeResult{Conflict: e.Conflict, Files: append([]string(nil), e.Files...)}, true
}

func (c *MergeCache) put(k string, r MergeResult) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[k] = &cacheEntry{Conflict: r.Conflict, Files: append([]string(nil), r.Files...), Used: c.now().Unix()}
	c.dirty = true
}

// Len is the number of pairs held.
func (c *MergeCache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Save writes the cache back when it gained pairs: under its lock file
// it reads the file again (another process may have saved pairs since),
// keeps the union (the later use of a pair both hold), drops the least
// recently used beyond MaxMergeCache, and replaces the file atomically.
// When another save holds the lock beyond mergeCacheLockWait, it gives up
// and saves nothing (a cache, not a record).
func (c *MergeCache) Save(ctx context.Context) error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty {
		return nil
	}
	t, err := fsops.OpenTree(c.dir)
	if err != nil {
		return err
	}
	defer t.Close()
	if err := t.MkdirAll(filepath.Dir(MergeCacheFile), 0o755); err != nil {
		return err
	}
	unlock, err := t.Lock(ctx, mergeCacheLock, mergeCacheLockWait, nil)
	if err != nil {
		return err
	}
	defer unlock()
	disk, _ := readMergeCache(t) // an unreadable file is replaced
	for k, e := range disk {
		if mine, ok := c.entries[k]; !ok || mine.Used < e.Used {
			c.entries[k] = e
		}
	}
	trimCache(c.entries, MaxMergeCache)
	data, err := json.Marshal(cacheFile{Version: 1, Pairs: c.entries})
	if err != nil {
		return err
	}
	if err := t.WriteFile(MergeCacheFile, append(data, '\n'), 0o644); err != nil {
		return err
	}
	c.dirty = false
	return nil
}

// trimCache drops the least recently used entries beyond max (ties: by
// key, so the result is deterministic).
func trimCache(m map[string]*cacheEntry, max int) {
	if len(m) <= max {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]].Used != m[keys[j]].Used {
			return m[keys[i]].Used < m[keys[j]].Used
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys[:len(m)-max] {
		delete(m, k)
	}
}
