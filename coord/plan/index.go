package plan

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// DefaultMaxCommits is how many of the newest commits an index keeps when
// no other limit is given: enough history for a project's habits, and a
// bound on the index's size and on the time a model takes to build.
const DefaultMaxCommits = 5000

// An Index is the part of a repository's history the predictor learns
// from, kept between runs so that only the commits made since need to be
// read: the commits (oldest first, at most Max) and the commit it was
// built at. It holds plain data; reading git is the caller's business
// (package gitrepo does it).
type Index struct {
	// Head is the commit the index was built at ("" for none).
	Head string
	// Max is the most commits kept (the newest); 0 means DefaultMaxCommits.
	Max int
	// Commits are oldest first.
	Commits []Commit
}

// NewIndex returns an index of the given commits (oldest first) built at
// head, keeping at most max of the newest (0: DefaultMaxCommits).
func NewIndex(head string, max int, commits []Commit) *Index {
	ix := &Index{Max: max}
	ix.Update(head, commits)
	return ix
}

// Update appends the commits made after the index's head (oldest first)
// and moves the head; the oldest commits beyond Max are dropped. The
// result equals NewIndex over the whole history.
func (ix *Index) Update(head string, newer []Commit) {
	for _, c := range newer {
		c.Body = trimBody(c.Body)
		c.Changes = append([]Change(nil), c.Changes...)
		ix.Commits = append(ix.Commits, c)
	}
	if max := ix.Limit(); len(ix.Commits) > max {
		ix.Commits = append([]Commit(nil), ix.Commits[len(ix.Commits)-max:]...)
	}
	ix.Head = head
}

// Limit is the most commits the index keeps.
func (ix *Index) Limit() int {
	if ix.Max > 0 {
		return ix.Max
	}
	return DefaultMaxCommits
}

// indexVersion is the version of the saved form; Load refuses others.
const indexVersion = 1

// The saved form: JSON with every path written once (commits name paths
// by their position in Paths), so an index of a few thousand commits
// takes a few hundred kilobytes.
type savedIndex struct {
	Version int           `json:"version"`
	Head    string        `json:"head"`
	Max     int           `json:"max,omitempty"`
	Paths   []string      `json:"paths"`
	Commits []savedCommit `json:"commits"`
}

type savedCommit struct {
	Hash    string `json:"h"`
	Time    int64  `json:"t"`
	Subject string `json:"s"`
	Body    string `json:"b,omitempty"`
	// Changes: [status, path] or [status, path, from], status as its
	// letter's code point.
	Changes [][]int `json:"c"`
}

// Save writes the index to w.
func (ix *Index) Save(w io.Writer) error {
	s := savedIndex{Version: indexVersion, Head: ix.Head, Max: ix.Max, Commits: make([]savedCommit, len(ix.Commits))}
	ids := map[string]int{}
	id := func(p string) int {
		if i, ok := ids[p]; ok {
			return i
		}
		ids[p] = len(s.Paths)
		s.Paths = append(s.Paths, p)
		return len(s.Paths) - 1
	}
	for i, c := range ix.Commits {
		sc := savedCommit{Hash: c.Hash, Time: c.Time.Unix(), Subject: c.Subject, Body: c.Body, Changes: make([][]int, len(c.Changes))}
		for j, ch := range c.Changes {
			if ch.From != "" {
				sc.Changes[j] = []int{int(ch.Status), id(ch.Path), id(ch.From)}
			} else {
				sc.Changes[j] = []int{int(ch.Status), id(ch.Path)}
			}
		}
		s.Commits[i] = sc
	}
	enc := json.NewEncoder(w)
	return enc.Encode(&s)
}

// Load reads an index written by Save. A damaged or foreign file is an
// error (the caller rebuilds the index from the repository).
func Load(r io.Reader) (*Index, error) {
	var s savedIndex
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("plan: index: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("plan: index: data after the index")
	}
	if s.Version != indexVersion {
		return nil, fmt.Errorf("plan: index: version %d, want %d", s.Version, indexVersion)
	}
	if s.Max < 0 {
		return nil, fmt.Errorf("plan: index: max %d is negative", s.Max)
	}
	ix := &Index{Head: s.Head, Max: s.Max, Commits: make([]Commit, len(s.Commits))}
	path := func(i int) (string, error) {
		if i < 0 || i >= len(s.Paths) || s.Paths[i] == "" {
			return "", fmt.Errorf("plan: index: path %d out of range", i)
		}
		return s.Paths[i], nil
	}
	for i, sc := range s.Commits {
		c := Commit{Hash: sc.Hash, Time: time.Unix(sc.Time, 0).UTC(), Subject: sc.Subject, Body: sc.Body, Changes: make([]Change, len(sc.Changes))}
		for j, v := range sc.Changes {
			if len(v) != 2 && len(v) != 3 {
				return nil, fmt.Errorf("plan: index: commit %s: a change has %d fields", sc.Hash, len(v))
			}
			if !validStatus(v[0]) {
				return nil, fmt.Errorf("plan: index: commit %s: unknown status %d", sc.Hash, v[0])
			}
			ch := Change{Status: byte(v[0])}
			var err error
			if ch.Path, err = path(v[1]); err != nil {
				return nil, err
			}
			if len(v) == 3 {
				if ch.From, err = path(v[2]); err != nil {
					return nil, err
				}
			}
			c.Changes[j] = ch
		}
		ix.Commits[i] = c
	}
	return ix, nil
}

func validStatus(s int) bool {
	switch s {
	case 'A', 'M', 'D', 'R', 'C', 'T':
		return true
	}
	return false
}
