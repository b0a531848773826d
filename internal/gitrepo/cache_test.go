package gitrepo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func id(n int) string { return fmt.Sprintf("%040x", n) }

func TestMergeCache(t *testing.T) {
	ctx := context.Background()
	t.Run("MissingIsEmpty", func(t *testing.T) {
		c, err := LoadMergeCache(t.TempDir(), nil)
		if err != nil || c.Len() != 0 {
			t.Fatalf("%d pairs, %v", c.Len(), err)
		}
		if err := c.Save(ctx); err != nil { // nothing new: nothing written
			t.Fatal(err)
		}
	})
	t.Run("RoundTrip", func(t *testing.T) {
		dir := t.TempDir()
		c, _ := LoadMergeCache(dir, nil)
		c.put(PairKey(id(2), id(1)), MergeResult{Conflict: true, Files: []string{"a", "b"}})
		c.put(PairKey(id(3), id(1)), MergeResult{})
		if err := c.Save(ctx); err != nil {
			t.Fatal(err)
		}
		c2, err := LoadMergeCache(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		r, ok := c2.get(PairKey(id(1), id(2)))
		if !ok || !r.Conflict || strings.Join(r.Files, ",") != "a,b" {
			t.Errorf("got %+v, %v", r, ok)
		}
		if r, ok := c2.get(PairKey(id(1), id(3))); !ok || r.Conflict {
			t.Errorf("clean pair: %+v, %v", r, ok)
		}
	})
	t.Run("Unreadable", func(t *testing.T) {
		for _, content := range []string{"{", `{"version":2,"pairs":{}}`, "\x00\x01", `[]`} {
			dir := t.TempDir()
			writeT(t, dir, MergeCacheFile, content)
			c, err := LoadMergeCache(dir, nil)
			if err == nil || c.Len() != 0 {
				t.Errorf("%q: %d pairs, error %v; want an empty cache and an error", content, c.Len(), err)
			}
			c.put(PairKey(id(1), id(2)), MergeResult{})
			if err := c.Save(ctx); err != nil {
				t.Fatalf("%q: saving over it: %v", content, err)
			}
			if c2, err := LoadMergeCache(dir, nil); err != nil || c2.Len() != 1 {
				t.Errorf("%q replaced: %d pairs, %v", content, c2.Len(), err)
			}
		}
	})
	t.Run("ForeignEntriesDropped", func(t *testing.T) {
		dir := t.TempDir()
		good := PairKey(id(1), id(2))
		writeT(t, dir, MergeCacheFile, fmt.Sprintf(`{"version":1,"pairs":{
			%q: {"conflict":true,"files":["x"],"used":1},
			%q: {"used":1},
			"main b": {"used":1},
			%q: {"files":["clean but files"],"used":1},
			%q: {"conflict":true,"files":[""],"used":1}}}`,
			good, id(3)+" "+id(2), PairKey(id(4), id(5)), PairKey(id(6), id(7))))
		c, err := LoadMergeCache(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.Len() != 1 {
			t.Errorf("%d pairs kept, want only %s", c.Len(), good)
		}
	})
	t.Run("Bounded", func(t *testing.T) {
		dir := t.TempDir()
		now := time.Unix(1000, 0)
		c, _ := LoadMergeCache(dir, func() time.Time { return now })
		for i := 0; i < MaxMergeCache+10; i++ {
			now = time.Unix(int64(1000+i), 0)
			c.put(PairKey(id(0), id(i+1)), MergeResult{})
		}
		// The oldest pair was used again: it stays.
		now = time.Unix(1_000_000, 0)
		if _, ok := c.get(PairKey(id(0), id(1))); !ok {
			t.Fatal("pair 1 missing before the save")
		}
		if err := c.Save(ctx); err != nil {
			t.Fatal(err)
		}
		c2, _ := LoadMergeCache(dir, nil)
		if c2.Len() != MaxMergeCache {
			t.Fatalf("%d pairs kept, want %d", c2.Len(), MaxMergeCache)
		}
		if _, ok := c2.get(PairKey(id(0), id(1))); !ok {
			t.Error("the pair used last was dropped")
		}
		for i := 2; i <= 11; i++ {
			if _, ok := c2.get(PairKey(id(0), id(i))); ok {
				t.Errorf("pair %d (among the least recently used) kept", i)
			}
		}
	})
	t.Run("SavesMerge", func(t *testing.T) {
		// Two processes' caches loaded before either saved: the second
		// save keeps the first one's pairs.
		dir := t.TempDir()
		c1, _ := LoadMergeCache(dir, nil)
		c2, _ := LoadMergeCache(dir, nil)
		c1.put(PairKey(id(1), id(2)), MergeResult{})
		c2.put(PairKey(id(3), id(4)), MergeResult{Conflict: true, Files: []string{"f"}})
		if err := c1.Save(ctx); err != nil {
			t.Fatal(err)
		}
		if err := c2.Save(ctx); err != nil {
			t.Fatal(err)
		}
		c3, _ := LoadMergeCache(dir, nil)
		if c3.Len() != 2 {
			t.Errorf("%d pairs after two saves, want 2", c3.Len())
		}
	})
	t.Run("NilCache", func(t *testing.T) {
		var c *MergeCache
		c.put("x", MergeResult{})
		if _, ok := c.get("x"); ok || c.Len() != 0 || c.Save(ctx) != nil {
			t.Error("a nil cache kept something")
		}
	})
	t.Run("SymlinkRefused", func(t *testing.T) {
		dir := t.TempDir()
		other := filepath.Join(t.TempDir(), "elsewhere.json")
		writeT(t, filepath.Dir(other), "elsewhere.json", "{}")
		if err := os.MkdirAll(filepath.Join(dir, "coord"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(other, filepath.Join(dir, MergeCacheFile)); err != nil {
			t.Fatal(err)
		}
		c, _ := LoadMergeCache(dir, nil)
		c.put(PairKey(id(1), id(2)), MergeResult{})
		if err := c.Save(ctx); err == nil {
			t.Error("saved through a symlink")
		}
		if data, _ := os.ReadFile(other); string(data) != "{}" {
			t.Errorf("the symlink's target was written: %q", data)
		}
	})
}
