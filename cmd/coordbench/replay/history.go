package replay

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rotd/coordination/coord/plan"
	"github.com/rotd/coordination/internal/gitrepo"
)

// A FileChange is what one commit of a history did to one file, with the
// changed ranges, as the data set describes them.
type FileChange struct {
	Path   string `json:"path"`
	From   string `json:"from,omitempty"`
	Status string `json:"status"`
	Add    *int   `json:"add,omitempty"`
	Del    *int   `json:"del,omitempty"`
	// Hunks are [start, length] of each changed range on the old side of
	// the diff (git show -U0); nil when the history has none for the file
	// (a binary file, a deletion, a pure rename).
	Hunks [][2]int `json:"hunks,omitempty"`
}

// A Commit is one line of a history file.
type Commit struct {
	Sha     string       `json:"sha"`
	Parents []string     `json:"parents"`
	Date    string       `json:"date"`
	Subject string       `json:"subject"`
	Body    string       `json:"body"`
	Files   []FileChange `json:"files"`
}

// Time is the commit's date (the zero time when it does not parse).
func (c *Commit) Time() time.Time {
	t, _ := time.Parse(time.RFC3339, c.Date)
	return t
}

// Lines is the number of lines the commit added and deleted (binary
// files count nothing).
func (c *Commit) Lines() int {
	n := 0
	for _, f := range c.Files {
		if f.Add != nil {
			n += *f.Add
		}
		if f.Del != nil {
			n += *f.Del
		}
	}
	return n
}

// ForPlan is the commit as the predictor sees history: message, date and
// paths with their status.
func (c *Commit) ForPlan() plan.Commit {
	pc := plan.Commit{Hash: c.Sha, Time: c.Time(), Subject: c.Subject, Body: c.Body}
	for _, f := range c.Files {
		st := byte('M')
		if len(f.Status) > 0 {
			st = f.Status[0]
		}
		pc.Changes = append(pc.Changes, plan.Change{Status: st, Path: f.Path, From: f.From})
	}
	return pc
}

// LoadFile reads a history file (gzip-compressed JSON Lines, oldest
// first).
func LoadFile(name string) ([]Commit, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	cs, err := Read(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return cs, nil
}

// Read reads a history in JSON Lines (oldest first).
func Read(r io.Reader) ([]Commit, error) {
	var out []Commit
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		if len(sc.Bytes()) == 0 {
			continue
		}
		var c Commit
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		out = append(out, c)
	}
	return out, sc.Err()
}

// FromPlan is a commit the predictor saw (read with package gitrepo) in
// the data set's form, the inverse of ForPlan, with the line counts and
// ranges of diffs (gitrepo.Diffs, one per change in order; nil when they
// were not read: the counts are then unknown and every change occupies
// its whole file).
func FromPlan(pc plan.Commit, diffs []gitrepo.FileDiff) Commit {
	c := Commit{Sha: pc.Hash, Date: pc.Time.UTC().Format(time.RFC3339), Subject: pc.Subject, Body: pc.Body}
	if len(diffs) != len(pc.Changes) {
		diffs = nil
	}
	for i, ch := range pc.Changes {
		f := FileChange{Path: ch.Path, From: ch.From, Status: string(ch.Status)}
		if diffs != nil && !diffs[i].Binary {
			add, del := diffs[i].Add, diffs[i].Del
			f.Add, f.Del, f.Hunks = &add, &del, diffs[i].Hunks
		}
		c.Files = append(c.Files, f)
	}
	return c
}

// Own reads the history of the git repository holding dir, as the data
// set holds one: the commits that changed files, oldest first (merges
// and empty commits left out: a merge's changes arrive with the commits
// it merged), the newest withDiffs of them with their line counts and
// ranges (what a task's duration and its conflicts are judged from).
// An error matching gitrepo.ErrNoRepo says dir is in no repository.
func Own(ctx context.Context, dir string, withDiffs int) ([]Commit, error) {
	head, err := gitrepo.Head(ctx, dir)
	if err != nil {
		return nil, err
	}
	pcs, err := gitrepo.Log(ctx, dir, "", head, 0)
	if err != nil {
		return nil, err
	}
	// The newest commits (of the log's order, merges included) down to
	// the withDiffs-th that changed files.
	n, changed := 0, 0
	for i := len(pcs) - 1; i >= 0 && changed < withDiffs; i-- {
		n++
		if len(pcs[i].Changes) > 0 {
			changed++
		}
	}
	ds, err := gitrepo.Diffs(ctx, dir, head, n)
	if err != nil {
		return nil, err
	}
	var out []Commit
	for _, pc := range pcs[:len(pcs)-n] {
		if len(pc.Changes) > 0 {
			out = append(out, FromPlan(pc, nil))
		}
	}
	for _, pc := range pcs[len(pcs)-n:] {
		if len(pc.Changes) == 0 {
			continue
		}
		d, ok := ds[pc.Hash]
		if !ok || len(d) != len(pc.Changes) {
			return nil, fmt.Errorf("git log -U0 in %s: the diff of commit %s does not match its changes", dir, pc.Hash)
		}
		out = append(out, FromPlan(pc, d))
	}
	return out, nil
}

// Checkout makes dst a clone of the repository holding dir (sharing its
// objects; dst must not exist or be empty) with commit checked out: the
// files as they were at a commit, to look identifiers up in (Contents)
// without touching the repository itself.
func Checkout(ctx context.Context, dir, commit, dst string) error {
	top, err := run(ctx, dir, nil, "rev-parse", "--path-format=absolute", "--show-toplevel")
	if err != nil {
		return err
	}
	if _, err := run(ctx, dir, nil, "clone", "-q", "--shared", "--no-checkout", strings.TrimSpace(string(top)), dst); err != nil {
		return err
	}
	_, err = run(ctx, dst, nil, "checkout", "-q", "--detach", commit)
	return err
}
