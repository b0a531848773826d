package app

import (
	"context"
	"slices"

	"github.com/rotd/coordination/coord"
)

// Repo is the caller's git repository, as the application needs it for
// work in flight (docs/GIT.md): where a task's work lives, what it
// changed, whether it landed, and linked worktrees. The application never
// runs git itself: the front end passes one (Options.Repo), made from the
// directory the caller stands in. Paths it returns are the project's
// repository paths (relative to the project root, which may lie below the
// repository's top; paths outside the project left out); worktree paths
// are absolute directories. Every method is bounded in time.
type Repo interface {
	// Place is where the caller's worktree stands.
	Place(ctx context.Context) (Place, error)
	// SwitchTo checks out branch (a full ref name) in the caller's
	// worktree, creating it at start when it does not exist; git
	// refuses to overwrite a local change.
	SwitchTo(ctx context.Context, branch, start string) error
	// Detach leaves the worktree at path on a detached HEAD at the
	// commit it stands on, its files as they are.
	Detach(ctx context.Context, path string) error
	// Shortstat is git's one-line summary of the changes from base to
	// head and how many commits head has that base lacks.
	Shortstat(ctx context.Context, base, head string) (string, int, error)
	// UncommittedStat is git's one-line summary of the caller's
	// worktree's changes against its HEAD ("" none).
	UncommittedStat(ctx context.Context) (string, error)
	// Branch is the branch checked out ("" on a detached HEAD).
	Branch(ctx context.Context) (string, error)
	// Head is the commit ref names; an error when it names none.
	Head(ctx context.Context, ref string) (string, error)
	// MergeBase is the best common ancestor of a and b ("" for none).
	MergeBase(ctx context.Context, a, b string) (string, error)
	// IsAncestor reports whether a is an ancestor of b (or b itself).
	IsAncestor(ctx context.Context, a, b string) (bool, error)
	// Contains reports whether into already holds everything commit
	// changed (merging it would change nothing: an ancestor, or work
	// that arrived by a squash or rebase merge).
	Contains(ctx context.Context, into, commit string) (bool, error)
	// ChangedPaths are the paths the commits base...head changed.
	ChangedPaths(ctx context.Context, base, head string) ([]string, error)
	// Worktrees lists the repository's working trees, the main one first.
	Worktrees(ctx context.Context) ([]Worktree, error)
	// AddWorktree makes a linked worktree at path on a new branch from
	// start.
	AddWorktree(ctx context.Context, path, branch, start string) error
	// RemoveWorktree removes the linked worktree at path (force: with
	// its changes).
	RemoveWorktree(ctx context.Context, path string, force bool) error
	// Dirty lists what the worktree at path holds that no commit does
	// (changes, untracked files).
	Dirty(ctx context.Context, path string) ([]string, error)
	// Unmerged lists the commits of branch that target lacks (at most
	// max; 0: all), each "<short id> <subject>".
	Unmerged(ctx context.Context, branch, target string, max int) ([]string, error)
	// TreeOf is the tree id of commit.
	TreeOf(ctx context.Context, commit string) (string, error)
	// OnlyHere lists the commits the worktree at path has checked out
	// that no branch holds (a detached HEAD, a rebase under way), at most
	// max (0: all), each "<short id> <subject>".
	OnlyHere(ctx context.Context, path string, max int) ([]string, error)
	// InProgress names the git operation under way in the worktree at
	// path ("a rebase", "a merge", …; "" none).
	InProgress(ctx context.Context, path string) (string, error)
	// CreateBranch makes a branch at commit, only when none of that name
	// exists.
	CreateBranch(ctx context.Context, branch, commit string) error
	// CommonDir is the repository's common git directory (absolute).
	CommonDir(ctx context.Context) (string, error)
	// DeleteBranch deletes a branch (force: even unmerged).
	DeleteBranch(ctx context.Context, branch string, force bool) error
	// WorktreeTree is the git tree id of the caller's worktree as it
	// stands, uncommitted changes and untracked files included (ignored
	// files not), computed without touching its index or files: what a
	// receipt and require_verified compare (docs/GIT.md).
	WorktreeTree(ctx context.Context) (string, error)
}

// Worktree is one working tree of the caller's repository.
type Worktree struct {
	Path   string // absolute
	Branch string // "" when detached
	Head   string
}

// tasks is the registry store, every transaction of which follows the
// project's write_claims and predicted_files settings
// (coord.Txn.WriteClaims, WriteClaimsUntasked, PredictedFiles,
// PredictFloor) and knows
// which owners of work returned to the pool are away (OwnersAway).
func (s *Service) tasks() coord.TaskStore {
	return claimStore{s.b.Tasks(), s}
}

type claimStore struct {
	coord.TaskStore
	s *Service
}

func (c claimStore) Update(ctx context.Context, fn func(*coord.Txn) error) error {
	return c.TaskStore.Update(ctx, func(tx *coord.Txn) error {
		if err := c.settle(ctx, tx); err != nil {
			return err
		}
		return fn(tx)
	})
}

func (c claimStore) View(ctx context.Context, fn func(*coord.Txn) error) error {
	return c.TaskStore.View(ctx, func(tx *coord.Txn) error {
		if err := c.settle(ctx, tx); err != nil {
			return err
		}
		return fn(tx)
	})
}

// settle sets what every rule of a transaction reads besides the
// registry: the settings, and the owners of work returned to the pool
// that are away (silent for stale_after: their work is anyone's). The
// owners' beats are read only when such work exists.
func (c claimStore) settle(ctx context.Context, tx *coord.Txn) error {
	cfg := c.s.conf()
	tx.WriteClaims, tx.WriteClaimsUntasked, tx.PredictedFiles, tx.PredictFloor = cfg.WriteClaims, cfg.WriteClaimsUntasked, cfg.PredictedFiles, cfg.PredictFloor
	var owners []string
	for _, t := range tx.Tasks {
		if t.Status == coord.Unclaimed && t.Owner != "" && !slices.Contains(owners, t.Owner) {
			owners = append(owners, t.Owner)
		}
	}
	tx.OwnersAway = nil
	if len(owners) == 0 {
		return nil
	}
	seen, now, err := c.s.b.Beats().LastSeen(ctx, owners)
	if err != nil {
		return err
	}
	tx.OwnersAway = map[string]bool{}
	for _, o := range owners {
		at, ok := seen[o]
		if !ok || now.Sub(at) > cfg.StaleAfter {
			tx.OwnersAway[o] = true
		}
	}
	return nil
}
