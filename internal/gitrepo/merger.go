package gitrepo

import (
	"context"
	"sync"

	"github.com/rotd/coordination/coord/app"
)

// Merger is a Repo as the application's conflict scans ask for it
// (app.Merger): branch tips, commits held, and trial merges answered
// from the merge cache of the repository's common git directory (loaded
// at the first merge, saved after every call that merged). A cache that
// cannot be read or saved costs merges, never a result.
type Merger struct {
	r *Repo
	// paths maps the conflicted paths, as git names them from the top
	// of the Repo's worktree, to the caller's (nil: as they are).
	paths func(top string, paths []string) []string

	once  sync.Once
	cache *MergeCache
	top   string
	err   error
}

// NewMerger returns r as app.Merger; paths (nil: none) maps the paths
// git names from the top of r's worktree to the caller's, dropping
// those it does not name.
func NewMerger(r *Repo, paths func(top string, paths []string) []string) *Merger {
	return &Merger{r: r, paths: paths}
}

var _ app.Merger = (*Merger)(nil)

func (m *Merger) load(ctx context.Context) error {
	m.once.Do(func() {
		var common string
		if m.top, common, m.err = m.r.TopAndCommonDir(ctx); m.err != nil {
			return
		}
		// An unreadable cache is replaced at the next save.
		m.cache, _ = LoadMergeCache(common, nil)
	})
	return m.err
}

// BranchTips is Repo.BranchTips.
func (m *Merger) BranchTips(ctx context.Context) (map[string]string, error) {
	return m.r.BranchTips(ctx)
}

// Head is Repo.Head.
func (m *Merger) Head(ctx context.Context, ref string) (string, error) { return m.r.Head(ctx, ref) }

// HasCommits is Repo.HasCommits.
func (m *Merger) HasCommits(ctx context.Context, ids []string) (map[string]bool, error) {
	return m.r.HasCommits(ctx, ids)
}

// TrialMerges is Repo.MergeTrees through the cache, the paths mapped;
// a conflict only in paths the mapping drops is none.
func (m *Merger) TrialMerges(ctx context.Context, pairs [][2]string) ([]app.TrialMerge, error) {
	if err := m.load(ctx); err != nil {
		return nil, err
	}
	rs, err := m.r.MergeTrees(ctx, pairs, m.cache)
	if err != nil {
		return nil, err
	}
	out := make([]app.TrialMerge, len(rs))
	for i, r := range rs {
		t := app.TrialMerge{Conflict: r.Conflict, Files: r.Files, Cached: r.Cached, Err: r.Err}
		if m.paths != nil && len(r.Files) > 0 {
			t.Files = m.paths(m.top, r.Files)
			t.Conflict = len(t.Files) > 0
		}
		out[i] = t
	}
	m.cache.Save(ctx) // a cache: a failed save costs merges next time
	return out, nil
}
