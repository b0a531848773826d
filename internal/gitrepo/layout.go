package gitrepo

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/fsops"
)

// The process-free reading of a repository: what the files git keeps
// (.git, commondir, gitdir, HEAD, loose refs, packed-refs) say, read
// through fsops (never blocking on a FIFO, bounded in size), for the
// hooks and every command's start, which may not wait for a git process.
// What these cannot tell they say they cannot ("", false); the callers
// that need certainty ask git (Repo).

// GitTop returns the git work-tree top containing dir and, if that is a
// linked worktree, the main worktree's top. It reads the files git keeps
// (no git binary needed, nothing that can block: see readGitFile).
func GitTop(dir string) (top, main string) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			g := ReadLayout(d)
			if g.Linked {
				return d, g.MainTop()
			}
			return d, ""
		}
		if d == filepath.Dir(d) {
			return "", ""
		}
	}
}

// SameRepository reports whether a and b lie in working trees of one
// git repository (the same worktree, or two worktrees sharing it), read
// from the files git keeps: false when either is in none.
func SameRepository(a, b string) bool {
	repo := func(d string) string {
		top, main := GitTop(d)
		if main != "" {
			top = main
		}
		if top == "" {
			return ""
		}
		if r, err := filepath.EvalSymlinks(top); err == nil {
			return r
		}
		return top
	}
	ra := repo(a)
	return ra != "" && ra == repo(b)
}

// Layout is what the files git keeps say about one worktree.
type Layout struct {
	Top    string // the worktree's top directory
	GitDir string // its git dir ("" when .git cannot be read)
	Common string // the git dir all worktrees share ($GIT_COMMON_DIR)
	Linked bool   // a linked worktree (its git dir has a "commondir" file)
}

// ReadLayout reads top/.git: a directory is the git dir itself; a file
// ("gitdir: …") names it, and a linked worktree's git dir has a
// "commondir" file naming the shared one (a submodule's or a separate git
// dir's has none: that worktree is its repository's main one).
func ReadLayout(top string) Layout {
	g := Layout{Top: top}
	dotgit := filepath.Join(top, ".git")
	fi, err := os.Stat(dotgit)
	switch {
	case err != nil:
		return g
	case fi.IsDir():
		g.GitDir = dotgit
	default:
		b, err := ReadGitFile(dotgit)
		if err != nil {
			return g
		}
		gd, ok := strings.CutPrefix(strings.TrimSpace(b), "gitdir:")
		if !ok {
			return g
		}
		g.GitDir = absFrom(top, strings.TrimSpace(gd))
	}
	g.Common = g.GitDir
	if cd, err := ReadGitFile(filepath.Join(g.GitDir, "commondir")); err == nil && strings.TrimSpace(cd) != "" {
		g.Common = absFrom(g.GitDir, strings.TrimSpace(cd))
		g.Linked = true
	}
	return g
}

// MainTop is the main worktree's top: top itself unless linked; for a
// linked worktree the directory holding the shared ".git" ("" when the
// repository is bare or keeps its git dir elsewhere).
func (g Layout) MainTop() string {
	if !g.Linked {
		return g.Top
	}
	if filepath.Base(g.Common) == ".git" {
		return filepath.Dir(g.Common)
	}
	return ""
}

// Worktrees lists the top of every worktree of g's repository: the main
// one first (when known), then each linked one that git records in
// <common>/worktrees/NAME/gitdir (the path of that worktree's ".git"
// file). g's own top is always in the list.
func (g Layout) Worktrees() []string {
	var tops []string
	if m := g.MainTop(); m != "" {
		tops = append(tops, m)
	}
	if g.Common != "" {
		dir := filepath.Join(g.Common, "worktrees")
		ents, _ := fsops.ReadDir(dir) // never opens a FIFO
		for _, e := range ents {
			b, err := ReadGitFile(filepath.Join(dir, e.Name(), "gitdir"))
			if p := strings.TrimSpace(b); err == nil && p != "" {
				tops = append(tops, filepath.Dir(absFrom(filepath.Join(dir, e.Name()), p)))
			}
		}
	}
	if !slices.Contains(tops, g.Top) {
		tops = append(tops, g.Top)
	}
	return tops
}

// absFrom makes p absolute against dir (git writes relative paths in
// these files with worktree.useRelativePaths).
func absFrom(dir, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p)
}

// maxGitFile bounds what coord reads of git's small pointer files.
const maxGitFile = 64 << 10

// ReadGitFile reads one of git's small pointer files (.git, commondir,
// gitdir) through fsops: it opens without blocking and reads only a
// regular file, so a FIFO or device planted there is an error, never a
// hang.
func ReadGitFile(name string) (string, error) {
	b, err := fsops.ReadFile(name, maxGitFile)
	return string(b), err
}

// HeadCommit is the commit the worktree around dir has checked out, read
// from the files git keeps (HEAD, the loose ref it names, else
// packed-refs), with no git process: a cheap way to tell that a
// worktree's HEAD moved (a commit, a checkout, a reset). gitDir is that
// worktree's own git directory. commit is "" when it cannot be told this
// way (no repository, an unborn branch, a ref store other than files);
// gitDir is "" outside a repository.
func HeadCommit(dir string) (commit, gitDir string) {
	top, _ := GitTop(dir)
	if top == "" {
		return "", ""
	}
	g := ReadLayout(top)
	if g.GitDir == "" {
		return "", ""
	}
	head, err := ReadGitFile(filepath.Join(g.GitDir, "HEAD"))
	if err != nil {
		return "", g.GitDir
	}
	head = strings.TrimSpace(head)
	ref, symbolic := strings.CutPrefix(head, "ref:")
	if !symbolic {
		return objectID(head), g.GitDir
	}
	ref = strings.TrimSpace(ref)
	if !strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "..") {
		return "", g.GitDir
	}
	// Per-worktree refs live in the worktree's git dir, shared ones in
	// the common one.
	for _, d := range []string{g.Common, g.GitDir} {
		if b, err := ReadGitFile(filepath.Join(d, filepath.FromSlash(ref))); err == nil {
			return objectID(strings.TrimSpace(b)), g.GitDir
		}
	}
	packed, err := readPackedRefs(filepath.Join(g.Common, "packed-refs"))
	if err != nil {
		return "", g.GitDir
	}
	for _, line := range strings.Split(packed, "\n") {
		if id, name, ok := strings.Cut(line, " "); ok && name == ref {
			return objectID(id), g.GitDir
		}
	}
	return "", g.GitDir
}

// maxPackedRefs bounds what is read of packed-refs (a repository with
// very many tags: the check then says it cannot tell).
const maxPackedRefs = 8 << 20

func readPackedRefs(name string) (string, error) {
	b, err := fsops.ReadFile(name, maxPackedRefs)
	return string(b), err
}

// objectID returns s when it is a full object id, else "".
func objectID(s string) string {
	if len(s) != 40 && len(s) != 64 {
		return ""
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return ""
		}
	}
	return s
}

// HeadBranch is the branch the worktree around dir has checked out (its
// full ref name), read from git's HEAD file with no git process; "" on a
// detached HEAD, outside a repository, or when it cannot be told so.
func HeadBranch(dir string) string {
	top, _ := GitTop(dir)
	if top == "" {
		return ""
	}
	g := ReadLayout(top)
	if g.GitDir == "" {
		return ""
	}
	head, err := ReadGitFile(filepath.Join(g.GitDir, "HEAD"))
	if err != nil {
		return ""
	}
	ref, symbolic := strings.CutPrefix(strings.TrimSpace(head), "ref:")
	ref = strings.TrimSpace(ref)
	if !symbolic || !strings.HasPrefix(ref, "refs/heads/") || strings.Contains(ref, "..") {
		return ""
	}
	return ref
}

// UnfollowedLanding is the landing the checkout around dir has not
// followed yet (coord.MoveJournal in its repository's common git
// directory, naming the branch this checkout has checked out), read
// with no git process; ok false when there is none.
func UnfollowedLanding(dir string) (m coord.MoveJournal, ok bool) {
	top, _ := GitTop(dir)
	if top == "" {
		return m, false
	}
	g := ReadLayout(top)
	if g.Common == "" {
		return m, false
	}
	data, err := fsops.ReadFile(filepath.Join(g.Common, filepath.FromSlash(coord.MoveJournalPath)), 4<<10)
	if err != nil {
		return m, false
	}
	if m, ok = coord.ParseMoveJournal(data); !ok || HeadBranch(dir) != coord.BranchRef(m.Branch) {
		return coord.MoveJournal{}, false
	}
	return m, true
}
