package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

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
// linked worktree, the main worktree's top.
func gitTop(dir string) (top, main string) {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Lstat(filepath.Join(d, ".git"))
		if err == nil {
			if fi.IsDir() {
				return d, ""
			}
			return d, linkedMain(d)
		}
		if d == filepath.Dir(d) {
			return "", ""
		}
	}
}

// linkedMain reads a ".git" file ("gitdir: …/.git/worktrees/NAME"); a
// linked worktree's git dir has a "commondir" file naming the main .git.
func linkedMain(top string) string {
	b, err := os.ReadFile(filepath.Join(top, ".git"))
	if err != nil {
		return ""
	}
	gd, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return ""
	}
	gd = strings.TrimSpace(gd)
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(top, gd)
	}
	cd, err := os.ReadFile(filepath.Join(gd, "commondir"))
	if err != nil {
		return "" // a submodule, not a linked worktree
	}
	common := strings.TrimSpace(string(cd))
	if !filepath.IsAbs(common) {
		common = filepath.Join(gd, common)
	}
	common = filepath.Clean(common)
	if filepath.Base(common) != ".git" {
		return ""
	}
	return filepath.Dir(common)
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
