package plan

import (
	"path"
	"slices"
	"strings"
)

// resolve maps the paths of each commit to the paths of the current tree:
// a file renamed since is found under its current name, and a path that
// no longer names the same file (deleted since, or deleted and later
// added again as another file) maps to nothing. The walk goes from the
// newest commit to the oldest, keeping for every path the current file it
// names at that point of the history.
//
// A commit that deletes one file and adds one of the same name but its
// extension, in the same folder (CHANGES.rst to CHANGES.md: a conversion
// git's rename detection misses, its contents being new), is read as a
// rename too: the new file continues the old one's history.
//
// out[i] lists the tree ids of commit i's files (no duplicates; a rename
// counts once, under the file's current name).
func resolve(commits []Commit, tree map[string]int) [][]int {
	cur := make(map[string]int, len(tree))
	for p, id := range tree {
		cur[p] = id
	}
	out := make([][]int, len(commits))
	for i := len(commits) - 1; i >= 0; i-- {
		c := &commits[i]
		var ids []int
		for _, ch := range c.Changes {
			if id, ok := cur[ch.Path]; ok && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		out[i] = ids
		// Step back over c: what its paths named before it. The changes
		// of one commit happen at once: the new names go first, then the
		// old names of renames take the files they became.
		type moved struct {
			from string
			id   int
			ok   bool
		}
		var renames []moved
		conv := conversions(c.Changes)
		for _, ch := range c.Changes {
			switch ch.Status {
			case 'A':
				id, ok := cur[ch.Path]
				delete(cur, ch.Path)
				if from, is := conv[ch.Path]; is {
					renames = append(renames, moved{from, id, ok})
				}
			case 'C', 'D':
				delete(cur, ch.Path)
			case 'R':
				id, ok := cur[ch.Path]
				delete(cur, ch.Path)
				if ch.From != "" {
					renames = append(renames, moved{ch.From, id, ok})
				}
			}
		}
		for _, m := range renames {
			if m.ok {
				cur[m.from] = m.id
			} else {
				delete(cur, m.from)
			}
		}
	}
	return out
}

// conversions maps, in one commit's changes, each added path to the
// deleted path it converts: same folder, same name but its extension,
// the only such pair for both.
func conversions(chs []Change) map[string]string {
	var out map[string]string
	stem := func(p string) string { return strings.TrimSuffix(p, path.Ext(p)) }
	for _, a := range chs {
		if a.Status != 'A' {
			continue
		}
		from, n := "", 0
		for _, d := range chs {
			if d.Status == 'D' && stem(d.Path) == stem(a.Path) && d.Path != a.Path {
				from, n = d.Path, n+1
			}
		}
		if n != 1 {
			continue
		}
		others := 0
		for _, b := range chs {
			if b.Status == 'A' && stem(b.Path) == stem(from) {
				others++
			}
		}
		if others == 1 {
			if out == nil {
				out = map[string]string{}
			}
			out[a.Path] = from
		}
	}
	return out
}

// appendNew appends v to s unless s holds it.
func appendNew(s []int, v int) []int {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}
