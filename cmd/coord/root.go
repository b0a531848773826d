package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/fsops"
	"github.com/rotd/coord/registry"
)

// findRoot resolves the project root (contract §1): --root, else
// COORD_ROOT, else the nearest ancestor of cwd holding .rotd/coordination.
// Inside a linked git worktree the search starts from the same place in
// the main worktree, so agents in separate worktrees share one registry.
// With mustExist false (init) it falls back to the (main) git top level,
// else cwd.
func findRoot(flagRoot string, flagSet bool, cwd string, mustExist bool) (string, error) {
	root := flagRoot
	if !flagSet {
		if v, ok := os.LookupEnv("COORD_ROOT"); ok && v != "" {
			root = v
		}
	}
	if root != "" {
		abs, err := filepath.Abs(root)
		if err != nil {
			return "", coord.Errorf(coord.CodeUsage, "invalid root %q: %v", root, err)
		}
		if mustExist {
			if _, err := os.Stat(filepath.Join(abs, registry.RelDir)); err != nil {
				return "", coord.Errorf(coord.CodeIO, "no coordination tree at %s", filepath.Join(abs, registry.RelDir)).
					WithHint("run 'coord init --root %s' first", root)
			}
		}
		return abs, nil
	}
	start := cwd
	top, main := gitTop(cwd)
	if main != "" {
		rel, err := filepath.Rel(top, cwd)
		if err == nil {
			start = filepath.Join(main, rel)
		} else {
			start = main
		}
	}
	for d := start; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, registry.RelDir)); err == nil && fi.IsDir() {
			return d, nil
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	if mustExist {
		return "", coord.Errorf(coord.CodeIO, "no %s in %s or any parent directory", registry.RelDir, start).
			WithHint("run 'coord init' in the project root, or pass --root DIR")
	}
	if main != "" {
		return main, nil
	}
	if top != "" {
		return top, nil
	}
	return cwd, nil
}

// gitTop returns the git work-tree top containing dir and, if that is a
// linked worktree, the main worktree's top. It reads the files git keeps
// (no git binary needed, nothing that can block: see readGitFile).
func gitTop(dir string) (top, main string) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			g := readGitLayout(d)
			if g.linked {
				return d, g.mainTop()
			}
			return d, ""
		}
		if d == filepath.Dir(d) {
			return "", ""
		}
	}
}

// gitLayout is what the files git keeps say about one worktree.
type gitLayout struct {
	top    string // the worktree's top directory
	gitDir string // its git dir ("" when .git cannot be read)
	common string // the git dir all worktrees share ($GIT_COMMON_DIR)
	linked bool   // a linked worktree (its git dir has a "commondir" file)
}

// readGitLayout reads top/.git: a directory is the git dir itself; a file
// ("gitdir: …") names it, and a linked worktree's git dir has a
// "commondir" file naming the shared one (a submodule's or a separate git
// dir's has none: that worktree is its repository's main one).
func readGitLayout(top string) gitLayout {
	g := gitLayout{top: top}
	dotgit := filepath.Join(top, ".git")
	fi, err := os.Stat(dotgit)
	switch {
	case err != nil:
		return g
	case fi.IsDir():
		g.gitDir = dotgit
	default:
		b, err := readGitFile(dotgit)
		if err != nil {
			return g
		}
		gd, ok := strings.CutPrefix(strings.TrimSpace(b), "gitdir:")
		if !ok {
			return g
		}
		g.gitDir = absFrom(top, strings.TrimSpace(gd))
	}
	g.common = g.gitDir
	if cd, err := readGitFile(filepath.Join(g.gitDir, "commondir")); err == nil && strings.TrimSpace(cd) != "" {
		g.common = absFrom(g.gitDir, strings.TrimSpace(cd))
		g.linked = true
	}
	return g
}

// mainTop is the main worktree's top: top itself unless linked; for a
// linked worktree the directory holding the shared ".git" ("" when the
// repository is bare or keeps its git dir elsewhere).
func (g gitLayout) mainTop() string {
	if !g.linked {
		return g.top
	}
	if filepath.Base(g.common) == ".git" {
		return filepath.Dir(g.common)
	}
	return ""
}

// worktrees lists the top of every worktree of g's repository: the main
// one first (when known), then each linked one that git records in
// <common>/worktrees/NAME/gitdir (the path of that worktree's ".git"
// file). g's own top is always in the list.
func (g gitLayout) worktrees() []string {
	var tops []string
	if m := g.mainTop(); m != "" {
		tops = append(tops, m)
	}
	if g.common != "" {
		dir := filepath.Join(g.common, "worktrees")
		var ents []os.DirEntry
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() { // never open a FIFO
			ents, _ = os.ReadDir(dir)
		}
		for _, e := range ents {
			b, err := readGitFile(filepath.Join(dir, e.Name(), "gitdir"))
			if p := strings.TrimSpace(b); err == nil && p != "" {
				tops = append(tops, filepath.Dir(absFrom(filepath.Join(dir, e.Name()), p)))
			}
		}
	}
	if !slices.Contains(tops, g.top) {
		tops = append(tops, g.top)
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

// readGitFile reads one of git's small pointer files (.git, commondir,
// gitdir). It opens without blocking and reads only a regular file, so a
// FIFO or device planted there is an error, never a hang.
func readGitFile(name string) (string, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", &fs.PathError{Op: "read", Path: name, Err: errors.New("not a regular file")}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxGitFile))
	return string(b), err
}

// agentID resolves the agent identity: --agent, else COORD_AGENT, else a
// UUID kept in .rotd/agent_id at the git top level of cwd (or the project
// root outside git), created on first need. An explicitly empty id is
// invalid.
func agentID(flagVal string, flagSet bool, cwd, root string) (string, error) {
	if flagSet {
		return flagVal, coord.ValidAgentID(flagVal)
	}
	if v, ok := os.LookupEnv("COORD_AGENT"); ok {
		if err := coord.ValidAgentID(v); err != nil {
			return "", coord.Errorf(coord.CodeUsage, "COORD_AGENT: %v", err)
		}
		return v, nil
	}
	base, _ := gitTop(cwd)
	if base == "" {
		base = root
	}
	dir := filepath.Join(base, ".rotd")
	if b, err := os.ReadFile(filepath.Join(dir, "agent_id")); err == nil {
		id := strings.TrimSpace(string(b))
		if err := coord.ValidAgentID(id); err != nil {
			return "", coord.Errorf(coord.CodeUsage, "%s: %v", filepath.Join(dir, "agent_id"), err).WithHint("delete the file to get a new id, or pass --agent")
		}
		return id, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", registry.IOError(err, "")
	}
	t, err := fsops.OpenTree(dir)
	if err != nil {
		return "", registry.IOError(err, "")
	}
	defer t.Close()
	id := newUUID()
	if err := t.CreateFile("agent_id", []byte(id+"\n"), 0o644); err != nil {
		if errors.Is(err, fs.ErrExist) { // another process won the race: use its id
			return agentID("", false, cwd, root)
		}
		return "", registry.IOError(err, "")
	}
	return id, nil
}

func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// gitExclude finds where to keep root's coordination tree out of git: the
// exclude file of the repository holding root (info/exclude in the git
// dir that every worktree shares, so one entry serves them all) and
// root's path from its worktree's top. file is "" outside git.
func gitExclude(root string) (file, rel string) {
	top, _ := gitTop(root)
	if top == "" {
		return "", ""
	}
	g := readGitLayout(top)
	if fi, err := os.Stat(g.common); g.common == "" || err != nil || !fi.IsDir() {
		return "", "" // a .git file naming a git dir that is gone: write nothing there
	}
	rel, err := filepath.Rel(top, root)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", ""
	}
	return filepath.Join(g.common, "info", "exclude"), rel
}

// keepOutOfGit adds the tree (and .rotd/agent_id) to the repository's
// git exclude file, once (registry.GitExcludes says why). Outside git it
// does nothing; a failure is a warning, since the tree itself is laid
// down. It returns the exclude file and the patterns it added.
func (e *env) keepOutOfGit(root string) (string, []string) {
	file, rel := gitExclude(root)
	if file == "" {
		return "", nil
	}
	wait := 30 * time.Second
	if e.lockWaitSet {
		wait = e.lockWait
	}
	added, err := fsops.EnsureLines(e.ctx, file, registry.GitExcludes(rel), wait)
	if err != nil {
		fmt.Fprintf(e.stderr, "coord: warning: could not keep %s out of git: %v; add the line %s to %s by hand\n",
			registry.RelDir, err, registry.GitExcludes(rel)[0], file)
	}
	return file, added
}
