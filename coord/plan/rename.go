package plan

import "slices"

// resolve maps the paths of each commit to the paths of the current tree:
// a file renamed since is found under its current name, and a path that
// no longer names the same file (deleted since, or deleted and later
// added again as another file) maps to nothing. The walk goes from the
// newest commit to the oldest, keeping for every path the current file it
// names at that point of the history.
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
		for _, ch := range c.Changes {
			switch ch.Status {
			case 'A', 'C', 'D':
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

// appendNew appends v to s unless s holds it.
func appendNew(s []int, v int) []int {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}
