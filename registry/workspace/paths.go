package workspace

import (
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
type dirForms struct{ lex, real string }

func newDirForms(d string) dirForms {
	d = filepath.Clean(d)
	r, err := filepath.EvalSymlinks(d)
	if err != nil {
		r = d
	}
	return dirForms{d, r}
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

// RepoPath maps a path the caller names to the project path:
//   - an absolute path inside any worktree of the repository, to its
//     path relative to the project root in that worktree;
//   - a relative path, from the caller's working directory, when the
//     caller stands inside a worktree ("." is that directory, ".." may
//     climb as long as the result stays in the project);
//   - a relative path from outside every worktree (a caller using --root
//     elsewhere), as relative to the project root.
//
// Symlinked spellings of a worktree's directory (/tmp vs /private/tmp)
// are recognised; a path's last component is never resolved, since git
// tracks a symlink as itself. A path outside the project, or the project
// root itself, is refused (exit 1).
func (m *Paths) RepoPath(p string) (string, error) {
	if p == "" || strings.ContainsRune(p, 0) {
		return "", coord.Errorf(coord.CodeUsage, "invalid path %q", p)
	}
	if !filepath.IsAbs(p) {
		if m.here < 0 {
			return coord.CleanRepoPath(p)
		}
		p = filepath.Join(m.cwd, p)
	}
	p = filepath.Clean(p)
	i, rel := locate(p, m.bases)
	if i < 0 {
		i, rel = locate(resolveDir(p), m.bases)
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

// resolveDir resolves the symlinks of p's directory (as far as it exists),
// keeping p's last component as it is.
func resolveDir(p string) string {
	dir, rest := filepath.Dir(p), filepath.Base(p)
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
