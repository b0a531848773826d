package gitrepo

import (
	"context"

	"github.com/rotd/coordination/coord/app"
)

// Project is the repository around a directory as coord's application
// asks for it (app.Repo), with the paths git names mapped to the
// project's repository paths. Making one runs nothing.
type Project struct {
	r *Repo
	// toProject maps paths as git names them in the worktree whose top is
	// top to project paths, leaving out those outside the project (nil:
	// the project is the repository: paths are kept as they are).
	toProject func(top string, paths []string) []string
}

var _ app.Repo = (*Project)(nil)

// ForProject is the repository around dir for the application;
// toProject maps git's paths to project paths (nil: unchanged).
func ForProject(dir string, toProject func(top string, paths []string) []string) *Project {
	return &Project{r: New(dir), toProject: toProject}
}

func (p *Project) WorktreeTree(ctx context.Context) (string, error) { return p.r.WorktreeTree(ctx) }

func (p *Project) Branch(ctx context.Context) (string, error) { return p.r.Branch(ctx) }

// Place is Repo.Place of the caller's worktree.
func (p *Project) Place(ctx context.Context) (app.Place, error) {
	pl, err := p.r.Place(ctx)
	return app.Place(pl), err
}

func (p *Project) SwitchTo(ctx context.Context, branch, start string) error {
	return p.r.Switch(ctx, branch, start)
}

// Detach is Repo.Detach of the worktree at path.
func (p *Project) Detach(ctx context.Context, path string) error { return New(path).Detach(ctx) }

func (p *Project) Shortstat(ctx context.Context, base, head string) (string, int, error) {
	return p.r.Shortstat(ctx, base, head)
}

func (p *Project) UncommittedStat(ctx context.Context) (string, error) {
	return p.r.UncommittedStat(ctx)
}

func (p *Project) Head(ctx context.Context, ref string) (string, error) { return p.r.Head(ctx, ref) }

func (p *Project) MergeBase(ctx context.Context, a, b string) (string, error) {
	return p.r.MergeBase(ctx, a, b)
}

func (p *Project) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	return p.r.IsAncestor(ctx, a, b)
}

func (p *Project) Contains(ctx context.Context, into, commit string) (bool, error) {
	return p.r.Contains(ctx, into, commit)
}

// ChangedPaths is Repo.ChangedPaths in project paths.
func (p *Project) ChangedPaths(ctx context.Context, base, head string) ([]string, error) {
	changed, err := p.r.ChangedPaths(ctx, base, head)
	if err != nil || p.toProject == nil {
		return changed, err
	}
	top, err := p.r.Top(ctx)
	if err != nil {
		return nil, err
	}
	return p.toProject(top, changed), nil
}

// Worktrees is Repo.Worktrees without bare entries.
func (p *Project) Worktrees(ctx context.Context) ([]app.Worktree, error) {
	list, err := p.r.Worktrees(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]app.Worktree, 0, len(list))
	for _, w := range list {
		if !w.Bare {
			out = append(out, app.Worktree{Path: w.Path, Branch: w.Branch, Head: w.Head})
		}
	}
	return out, nil
}

func (p *Project) AddWorktree(ctx context.Context, path, branch, start string) error {
	return p.r.AddWorktree(ctx, path, branch, start)
}

func (p *Project) RemoveWorktree(ctx context.Context, path string, force bool) error {
	return p.r.RemoveWorktree(ctx, path, force)
}

// Dirty is Repo.Dirty of the worktree at path.
func (p *Project) Dirty(ctx context.Context, path string) ([]string, error) {
	return New(path).Dirty(ctx)
}

func (p *Project) Unmerged(ctx context.Context, branch, target string, max int) ([]string, error) {
	return p.r.Unmerged(ctx, branch, target, max)
}

func (p *Project) DeleteBranch(ctx context.Context, branch string, force bool) error {
	return p.r.DeleteBranch(ctx, branch, force)
}

// OnlyHere is Repo.OnlyHere.
func (p *Project) OnlyHere(ctx context.Context, path string, max int) ([]string, error) {
	return New(path).OnlyHere(ctx, path, max)
}

// InProgress is Repo.InProgress.
func (p *Project) InProgress(ctx context.Context, path string) (string, error) {
	return p.r.InProgress(ctx, path)
}

func (p *Project) CreateBranch(ctx context.Context, branch, commit string) error {
	return p.r.CreateBranch(ctx, branch, commit)
}

// CommonDir is Repo.CommonDir.
func (p *Project) CommonDir(ctx context.Context) (string, error) { return p.r.CommonDir(ctx) }

// TreeOf is Repo.TreeOf.
func (p *Project) TreeOf(ctx context.Context, commit string) (string, error) {
	return p.r.TreeOf(ctx, commit)
}
