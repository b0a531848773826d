package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/coord/plan"
	"github.com/rotd/coordination/fsops"
)

// IndexFile is where a repository's planning index is kept, under its
// common git directory (shared by every worktree of the repository, and
// never committed).
const IndexFile = "coord/plan-index.json"

// maxIndexBytes bounds what is read of an index file: an index of
// DefaultMaxCommits commits takes a few megabytes at most.
const maxIndexBytes = 64 << 20

// Source is a repository's history as coord's planner asks for it
// (app.History): the commits kept in the index at <common git
// dir>/coord/plan-index.json, brought up to HEAD by reading only the
// commits made since (Refresh), and the paths of HEAD's tree. A
// missing index is built; an unreadable or foreign one is rebuilt from
// the history, with a one-line warning (HistoryData.Warning). The index
// is replaced atomically (through fsops) when it changed; a failure to
// save it is a warning too, never an error: it is a cache.
//
// Making a Source runs nothing: git runs at Load.
type Source struct {
	// Dir is a directory inside the repository's work tree.
	Dir string
	// Map turns paths as git names them (relative to top, the work
	// tree's top) into the project's paths, leaving out those outside
	// the project; nil keeps them as they are.
	Map func(top string, paths []string) []string
	// Max bounds the commits kept (0: plan.DefaultMaxCommits).
	Max int
}

// Load implements app.History.
func (s *Source) Load(ctx context.Context) (app.HistoryData, error) {
	var h app.HistoryData
	out, err := Run(ctx, shortTimeout, s.Dir, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir", "HEAD^{commit}")
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || len(lines) != 3 {
		if errors.Is(err, exec.ErrNotFound) {
			return h, err
		}
		return h, fmt.Errorf("%w: %w (%s)", app.ErrNoHistory, ErrNoRepo, s.Dir)
	}
	top, common := lines[0], lines[1]
	ix, warn := s.readIndex(common)
	old := ix.Head
	head, changed, err := Refresh(ctx, s.Dir, ix)
	if err != nil {
		return h, err
	}
	h.Head, h.Read = head, readSince(ix, old, changed)
	if changed || warn != "" {
		if serr := saveIndex(common, ix); serr != nil {
			warn = join(warn, fmt.Sprintf("planning index %s not saved: %v", filepath.Join(common, IndexFile), serr))
		}
	}
	h.Warning = warn
	tree, err := Tree(ctx, s.Dir, head)
	if err != nil {
		return h, err
	}
	h.Commits, h.Tree = ix.Commits, tree
	if s.Map != nil {
		h.Tree = s.Map(top, tree)
		h.Commits = mapCommits(ix.Commits, func(paths []string) []string { return s.Map(top, paths) })
	}
	return h, nil
}

// readSince counts the commits of ix after old (all of them when old is
// not among them: a rebuild).
func readSince(ix *plan.Index, old string, changed bool) int {
	if !changed {
		return 0
	}
	for i := len(ix.Commits) - 1; i >= 0; i-- {
		if ix.Commits[i].Hash == old {
			return len(ix.Commits) - 1 - i
		}
	}
	return len(ix.Commits)
}

// readIndex reads the index kept under common, or returns an empty one
// (with a warning when a file was there but could not be read).
func (s *Source) readIndex(common string) (*plan.Index, string) {
	empty := &plan.Index{Max: s.Max}
	t, err := fsops.OpenTree(common)
	if err != nil {
		return empty, fmt.Sprintf("planning index not read (%v): the history is read again", err)
	}
	defer t.Close()
	data, err := t.ReadFile(IndexFile, maxIndexBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return empty, ""
	}
	if err == nil {
		var ix *plan.Index
		if ix, err = plan.Load(bytes.NewReader(data)); err == nil {
			if s.Max > 0 && ix.Max != s.Max { // another bound: start again
				return empty, ""
			}
			return ix, ""
		}
	}
	return empty, fmt.Sprintf("planning index %s unreadable (%s): rebuilt from the history", t.Path(IndexFile), oneLine(err.Error()))
}

// saveIndex replaces the index file atomically.
func saveIndex(common string, ix *plan.Index) error {
	t, err := fsops.OpenTree(common)
	if err != nil {
		return err
	}
	defer t.Close()
	if err := t.MkdirAll(filepath.Dir(IndexFile), 0o755); err != nil {
		return err
	}
	return t.WriteFileFrom(IndexFile, 0o644, func(w io.Writer) error { return ix.Save(w) })
}

// mapCommits returns the commits with their paths mapped (a change whose
// path leaves the project is dropped; a rename from outside it becomes
// an addition).
func mapCommits(cs []plan.Commit, m func([]string) []string) []plan.Commit {
	out := make([]plan.Commit, len(cs))
	for i, c := range cs {
		c.Changes = append([]plan.Change(nil), c.Changes...)
		keep := c.Changes[:0]
		for _, ch := range c.Changes {
			p := m([]string{ch.Path})
			if len(p) != 1 {
				continue
			}
			ch.Path = p[0]
			if ch.From != "" {
				if f := m([]string{ch.From}); len(f) == 1 {
					ch.From = f[0]
				} else {
					ch.Status, ch.From = 'A', ""
				}
			}
			keep = append(keep, ch)
		}
		c.Changes = keep
		out[i] = c
	}
	return out
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
