package workspace

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rotd/coord/coord"
)

// Paths maps the paths a caller names onto project paths: '/'-separated,
// relative to the project root (the directory holding .rotd, normally the
// repository's top level), and the same in every worktree of the
// repository. Path locks, task files patterns and staged paths are all
// compared in that form, so every command that takes or reads a path
// goes through RepoPath, whichever worktree and subdirectory the caller
// stands in.
type Paths struct {
	root  string
	cwd   string     // the caller's working directory (resolved when only that form lies in a worktree)
	tops  []dirForms // the top of every worktree of the repository ([root] outside git)
	bases []dirForms // the project root's place in each of those worktrees
	here  int        // index in tops of the worktree the caller stands in; -1 outside them all
}

// dirForms is a directory as found and with its symlinks resolved, so
// that a path spelled either way is recognised inside it.
// exists is false when the directory is not on this machine (a root
// named for a remote backend): paths in it are then taken as written.
type dirForms struct {
	lex, real string
	exists    bool
}

func newDirForms(d string) dirForms {
	d = filepath.Clean(d)
	r, err := filepath.EvalSymlinks(d)
	if err != nil {
		return dirForms{d, d, false}
	}
	return dirForms{d, r, true}
}

// NewPaths learns the repository around root from the files git keeps
// (no git binary is needed, so it works the same outside git).
func NewPaths(root, cwd string) *Paths {
	m := &Paths{root: root, cwd: filepath.Clean(cwd), here: -1}
	tops, rel := []string{root}, "."
	if top, _ := GitTop(root); top != "" {
		if r, err := filepath.Rel(top, root); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
			tops, rel = readGitLayout(top).worktrees(), r
		}
	}
	for _, t := range tops {
		m.tops = append(m.tops, newDirForms(t))
		m.bases = append(m.bases, newDirForms(filepath.Join(t, rel)))
	}
	if i, _ := locate(m.cwd, m.tops); i >= 0 {
		m.here = i
	} else if r, err := filepath.EvalSymlinks(m.cwd); err == nil {
		if i, _ := locate(r, m.tops); i >= 0 {
			m.here, m.cwd = i, r
		}
	}
	return m
}

// locate finds the innermost of dirs that holds p (p itself counts) and
// p's path relative to it; -1 if none does. Nested worktrees (one kept
// inside another's directory) resolve to the inner one.
func locate(p string, dirs []dirForms) (int, string) {
	best, rel := -1, ""
	bestLen := -1
	for i, d := range dirs {
		for _, form := range []string{d.lex, d.real} {
			r, ok := under(p, form)
			if ok && len(form) > bestLen {
				best, rel, bestLen = i, r, len(form)
			}
		}
	}
	return best, rel
}

// under reports whether the clean absolute path p is dir or lies below it,
// and p relative to dir ("." for dir itself).
func under(p, dir string) (string, bool) {
	switch {
	case p == dir:
		return ".", true
	case dir == "/":
		return p[1:], true
	case strings.HasPrefix(p, dir+"/"):
		return p[len(dir)+1:], true
	}
	return "", false
}

// RepoPath maps a path the caller names to the project path of the file
// it names:
//   - an absolute path inside any worktree of the repository, to its
//     path relative to the project root in that worktree;
//   - a relative path, from the caller's working directory, when the
//     caller stands inside a worktree ("." is that directory, ".." may
//     climb as long as the result stays in the project);
//   - a relative path from outside every worktree (a caller using --root
//     elsewhere), as relative to the project root.
//
// Symbolic links are resolved (see realPath): a symlinked folder names
// the same files as its target, so "link/a.go" is "real/a.go" when link
// points to real, and a symlinked spelling of a worktree's directory
// (/tmp vs /private/tmp) is recognised. A path's last component is
// resolved only when it is a link to a directory; a link to a file is
// itself, as git tracks it (EditPaths adds its target). A path outside
// the project, the project root itself, or a path that leads through a
// symbolic link out of the project (coord never follows a link out of
// the tree, and guards only the project's own files) is refused (exit 1).
// This is the one place a path becomes a repository path: the CLI's
// lock-file and unlock-file, the MCP files tool, the edit hooks and guard
// (Staged) all go through it, and task files patterns through Pattern.
func (m *Paths) RepoPath(p string) (string, error) {
	abs, err := m.abs(p)
	if err != nil {
		return "", err
	}
	return m.repoPath(abs, true)
}

// abs is the absolute, clean form of a path the caller names (see
// RepoPath).
func (m *Paths) abs(p string) (string, error) {
	if p == "" || strings.ContainsRune(p, 0) {
		return "", coord.Errorf(coord.CodeUsage, "invalid path %q", p)
	}
	if !filepath.IsAbs(p) {
		if m.here < 0 {
			c, err := coord.CleanRepoPath(p)
			if err != nil {
				return "", err
			}
			return filepath.Join(m.root, filepath.FromSlash(c)), nil
		}
		p = filepath.Join(m.cwd, p)
	}
	return filepath.Clean(p), nil
}

// repoPath maps the clean absolute path p to its project path, resolving
// its symbolic links (and its last component too when final and it is a
// link to a directory).
func (m *Paths) repoPath(p string, final bool) (string, error) {
	i, rel := locate(p, m.bases)
	real := realPath(p, final)
	if j, r := locate(real, m.bases); j >= 0 {
		i, rel = j, r
	} else if i >= 0 && m.bases[i].exists {
		return "", coord.Errorf(coord.CodeUsage, "path %s leads through a symbolic link to %s, outside the project %s", p, real, m.root).
			WithHint("coord never follows a link out of the project and guards only the project's own files; name a path inside the project")
	}
	if i < 0 {
		return "", coord.Errorf(coord.CodeUsage, "path %s is outside the project %s (in every worktree of its repository)", p, m.root).
			WithHint("name a path inside the project, relative to your working directory or absolute")
	}
	if rel == "." {
		return "", coord.Errorf(coord.CodeUsage, "path %s is the project root itself", p).
			WithHint("name a file or directory inside it; '**' covers everything")
	}
	return coord.CleanRepoPath(filepath.ToSlash(rel))
}

// EditPaths is RepoPath for a file an edit tool is about to write: the
// file p names and, when p itself is a symbolic link to a file inside the
// project, that file too, since a write through the link changes it.
func (m *Paths) EditPaths(p string) ([]string, error) {
	abs, err := m.abs(p)
	if err != nil {
		return nil, err
	}
	rp, err := m.repoPath(abs, true)
	if err != nil {
		return nil, err
	}
	out := []string{rp}
	if fi, err := os.Lstat(abs); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if target, err := filepath.EvalSymlinks(abs); err == nil {
			if tp, err := m.repoPath(target, true); err == nil && tp != rp {
				out = append(out, tp)
			}
		}
	}
	return out, nil
}

// Pattern maps a task's files pattern (relative to the project root) to
// the files it names, as RepoPath maps a path: its literal prefix (the
// leading segments without a glob character '*', '?', '[' or '\\') is
// resolved, so "link/*.go" through a symlinked folder is "real/*.go",
// and a pattern that names one path ("link/a.go") is that path's
// project path. The resolved prefix is quoted (its glob characters taken
// literally); the rest of the pattern is kept as written. A pattern whose
// prefix leads out of the project, or that is not a clean relative
// pattern, is returned unchanged (it names no file coord guards). The
// prefix is resolved in the caller's worktree (the project root outside
// the repository).
func (m *Paths) Pattern(p string) string {
	if p == "" || strings.ContainsRune(p, 0) || strings.HasPrefix(p, "/") || coord.HasDotDot(p) {
		return p
	}
	c := coord.CleanPath(p)
	dir := strings.HasSuffix(c, "/")
	segs := strings.Split(strings.TrimSuffix(c, "/"), "/")
	k := 0
	for k < len(segs) && !strings.ContainsAny(segs[k], `*?[\`) {
		k++
	}
	if k == 0 || segs[0] == "" {
		return p
	}
	base := m.root
	if m.here >= 0 {
		base = m.bases[m.here].lex
	}
	prefix := strings.Join(segs[:k], "/")
	rp, err := m.repoPath(filepath.Join(base, filepath.FromSlash(prefix)), true)
	if err != nil || rp == prefix {
		return p
	}
	out := coord.QuoteGlob(rp)
	if rest := segs[k:]; len(rest) > 0 {
		out += "/" + strings.Join(rest, "/")
	}
	if dir {
		out += "/"
	}
	return out
}

// realPath is the file the clean absolute path p names: the longest part
// of p that exists, with its symbolic links resolved (wherever they
// point), followed by the rest of p as written. p's last component is
// resolved only when final is set and it is a directory (a folder named
// through a link is its target); a link to a file stays itself. It only
// reads links (lstat, readlink), never opens a file, so nothing found on
// the way can make it wait.
func realPath(p string, final bool) string {
	dir, rest := p, ""
	if fi, err := os.Stat(p); !final || err != nil || !fi.IsDir() {
		dir, rest = filepath.Dir(p), filepath.Base(p)
	}
	for {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		if dir == filepath.Dir(dir) {
			return p
		}
		dir, rest = filepath.Dir(dir), filepath.Join(filepath.Base(dir), rest)
	}
}

// WorkTop is the top of the worktree the caller stands in (the project
// root when the caller stands outside the repository): where `git diff`
// sees the caller's own changes.
func (m *Paths) WorkTop() string {
	if m.here < 0 {
		return m.root
	}
	return m.tops[m.here].lex
}
