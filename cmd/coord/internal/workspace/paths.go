package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/internal/gitrepo"
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
	if top, _ := gitrepo.GitTop(root); top != "" {
		if r, err := filepath.Rel(top, root); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
			tops, rel = gitrepo.ReadLayout(top).Worktrees(), r
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
// Symbolic links are resolved in order, as the kernel does (resolve): a
// ".." after a link climbs from its target. A symlinked folder names
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

// abs is the absolute form of a path the caller names (see RepoPath),
// joined to the caller's directory as text but never cleaned: a ".."
// after a symbolic link is resolved by resolve, as the kernel does, not
// here as text.
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
		p = m.cwd + string(filepath.Separator) + p
	}
	return p, nil
}

// repoPath maps the absolute path p to its project path: the file p
// names once its components are resolved in order, as the kernel
// resolves them (resolve; its last component too when final and it is a
// link to a directory). That file may lie in any worktree of the
// repository: it is then that worktree's file, under its own project
// path, whatever the path as written passed through.
func (m *Paths) repoPath(p string, final bool) (string, error) {
	last := keepLast
	if final {
		last = dirLast
	}
	real, err := resolve(p, last)
	if err != nil {
		return "", coord.Errorf(coord.CodeUsage, "path %s: %v", p, err).
			WithHint("name a path whose symbolic links end somewhere")
	}
	i, rel := locate(real, m.bases)
	if i < 0 {
		if j, _ := locate(filepath.Clean(p), m.bases); j >= 0 && m.bases[j].exists {
			return "", coord.Errorf(coord.CodeUsage, "path %s leads through a symbolic link to %s, outside the project %s", p, real, m.root).
				WithHint("coord never follows a link out of the project and guards only the project's own files; name a path inside the project")
		}
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
		if target, err := resolve(abs, followLast); err == nil {
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

// lastMode says what resolve does with a path's last component when it
// is a symbolic link.
type lastMode int

const (
	keepLast   lastMode = iota // the link itself (git's view: a link is an entry)
	dirLast                    // its target when that is a directory (a folder named through a link)
	followLast                 // its target, whatever it is
)

// maxLinks bounds the links one path may pass through, as the kernel's
// ELOOP does.
const maxLinks = 40

// errLoop is resolve's refusal of a path through too many links.
var errLoop = errors.New("too many levels of symbolic links")

// resolve is the file the absolute path p names, resolved component by
// component in order, as the kernel does: each symbolic link is replaced
// by its target before the next component is read, so a ".." after a
// link climbs from the link's target, not from the link's folder
// ("l/../secret.go" with l a link to a/b is a/secret.go). A link's
// target is read relative to the folder holding the link (or from / when
// absolute). Once a component does not exist, the rest of p cannot pass
// through links: it is taken as written, cleaned as text (the folders a
// write makes there are plain ones). p's last component is resolved as
// last says. It only reads links (lstat, readlink), never opens a file,
// so nothing found on the way can make it wait. Only a loop is an error.
func resolve(p string, last lastMode) (string, error) {
	todo := strings.Split(filepath.ToSlash(p), "/")
	cur, links := "/", 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil {
			// Missing (or unreadable): the rest is new, taken as text.
			return filepath.Join(append([]string{next}, todo...)...), nil
		}
		isLast := true
		for _, r := range todo {
			if r != "" && r != "." {
				isLast = false
				break
			}
		}
		if fi.Mode()&fs.ModeSymlink == 0 || isLast && last == keepLast {
			cur = next
			continue
		}
		if isLast && last == dirLast {
			if st, err := os.Stat(next); err != nil || !st.IsDir() {
				cur = next
				continue
			}
		}
		target, err := os.Readlink(next)
		if err != nil {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", errLoop
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		todo = append(strings.Split(filepath.ToSlash(target), "/"), todo...)
	}
	return cur, nil
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
