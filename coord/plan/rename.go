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
// The same conversion split over two commits near each other (one
// deletes CHANGES.rst, the other, at most ConvertSpan commits away, adds
// CHANGES.md: a branch that converted in steps) is read the same way,
// when the added file is the only candidate.
//
// out[i] lists the tree ids of commit i's files (no duplicates; a rename
// counts once, under the file's current name).
func resolve(commits []Commit, tree map[string]int) [][]int {
	cur := make(map[string]int, len(tree))
	for p, id := range tree {
		cur[p] = id
	}
	adds := addsByStem(commits)
	addedID := map[addedAt]int{} // an addition -> the file of the tree it made
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
				if ok {
					addedID[addedAt{i, ch.Path}] = id
				}
			case 'D':
				delete(cur, ch.Path)
				if converted(conv, ch.Path) {
					break
				}
				if id, ok := convertedLater(adds, addedID, cur, ch.Path, i); ok {
					renames = append(renames, moved{ch.Path, id, true})
				}
			case 'C':
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

// ConvertSpan is how many commits apart a deletion and an addition may
// be to be read as one conversion (CHANGES.rst deleted, CHANGES.md
// added).
const ConvertSpan = 20

// An addedAt is a commit (by index) adding a path.
type addedAt struct {
	i    int
	path string
}

// stemOf is a path without its extension: the key of a conversion.
func stemOf(p string) string { return strings.TrimSuffix(p, path.Ext(p)) }

// addsByStem indexes the additions of the history by stem.
func addsByStem(commits []Commit) map[string][]addedAt {
	out := map[string][]addedAt{}
	for i := range commits {
		for _, ch := range commits[i].Changes {
			if ch.Status == 'A' && path.Ext(ch.Path) != "" {
				out[stemOf(ch.Path)] = append(out[stemOf(ch.Path)], addedAt{i, ch.Path})
			}
		}
	}
	return out
}

// converted reports whether the one-commit conversions convert p.
func converted(conv map[string]string, p string) bool {
	for _, from := range conv {
		if from == p {
			return true
		}
	}
	return false
}

// convertedLater finds the file a deletion of p at commit i was
// converted to in another commit: the only path of p's stem but another
// extension added at most ConvertSpan commits from i, which still names
// a file of the tree (cur, for an addition before i; the file the
// addition made, recorded in addedID as the walk passed it, for one
// after).
func convertedLater(adds map[string][]addedAt, addedID map[addedAt]int, cur map[string]int, p string, i int) (int, bool) {
	if path.Ext(p) == "" {
		return 0, false
	}
	found, id := "", 0
	for _, a := range adds[stemOf(p)] {
		if a.path == p || a.i == i || a.i < i-ConvertSpan || a.i > i+ConvertSpan {
			continue
		}
		var x int
		var ok bool
		if a.i > i {
			x, ok = addedID[a]
		} else {
			x, ok = cur[a.path]
		}
		if !ok {
			continue
		}
		if found != "" && found != a.path {
			return 0, false // two candidates: neither is sure
		}
		found, id = a.path, x
	}
	return id, found != ""
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
