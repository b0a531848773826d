package plan

import (
	"bytes"
	"reflect"
	"testing"
)

// FuzzLoad: the index file is read from disk (coord plan's cache, which
// anyone may damage): Load takes any bytes without panicking, and what it
// accepts saves and loads back the same.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(`{"version":1,"head":"abc","paths":["a.go","b/c.md"],"commits":[{"h":"1","t":1,"s":"printer: x","c":[[77,0],[82,1,0]]}]}`))
	f.Add([]byte(`{"version":1,"head":"","paths":[],"commits":[]}`))
	f.Add([]byte(`{"version":1,"head":"x","paths":[],"commits":[{"c":[[77,9]]}]}`))
	f.Add([]byte(`{"version":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ix, err := Load(bytes.NewReader(data))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := ix.Save(&buf); err != nil {
			t.Fatalf("save: %v", err)
		}
		again, err := Load(&buf)
		if err != nil {
			t.Fatalf("an index Load accepted does not load back: %v\n%s", err, buf.Bytes())
		}
		if !reflect.DeepEqual(norm(ix), norm(again)) {
			t.Fatalf("round trip changed the index:\n%+v\n%+v", ix, again)
		}
	})
}

// norm makes empty and nil slices equal for comparison.
func norm(ix *Index) *Index {
	c := *ix
	c.Commits = append([]Commit{}, ix.Commits...)
	for i := range c.Commits {
		if len(c.Commits[i].Changes) == 0 {
			c.Commits[i].Changes = nil
		}
	}
	if len(c.Commits) == 0 {
		c.Commits = nil
	}
	return &c
}
