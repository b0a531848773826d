package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

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
					WithHint("create it first: coord init --root %s", shellQuote(root))
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

// agentID resolves this agent's identity, the one place that does: an
// explicit id (explicitAgent: --agent, COORD_AGENT, ROTD_AGENT_ID), else
// the UUID kept in .rotd/agent_id at the git top level of cwd (or the
// project root outside git), created on first need. Every id, whatever
// its source, is checked by checkAgent.
func agentID(flagVal string, flagSet bool, cwd, root string) (string, error) {
	id, ok, err := explicitAgent(flagVal, flagSet)
	if err != nil || ok {
		return id, err
	}
	base, _ := gitTop(cwd)
	if base == "" {
		base = root
	}
	return fileAgentID(filepath.Join(base, ".rotd"))
}

// explicitAgent is the identity given explicitly, in the contract's
// order: --agent, else COORD_AGENT, else ROTD_AGENT_ID (ROTD's spelling).
// ok is false when none is given. A source that is given but empty or
// invalid is an error (exit 1), not a request for the next one.
func explicitAgent(flagVal string, flagSet bool) (id string, ok bool, err error) {
	if flagSet {
		return flagVal, true, checkAgent("--agent", flagVal)
	}
	for _, name := range []string{"COORD_AGENT", "ROTD_AGENT_ID"} {
		if v, set := os.LookupEnv(name); set {
			return v, true, checkAgent(name, v)
		}
	}
	return "", false, nil
}

// checkAgent validates an agent id from source (a flag, a variable or a
// file) as the id of an acting agent (coord.ValidActingAgent).
func checkAgent(source, id string) error {
	err := coord.ValidActingAgent(id)
	if err == nil {
		return nil
	}
	ce, ok := err.(*coord.Error)
	if !ok {
		return err
	}
	e := coord.Errorf(coord.CodeUsage, "%s: %s", source, ce.Msg)
	switch {
	case source == "--agent":
		e.Hint = ce.Hint
	case strings.HasPrefix(source, "/") || strings.Contains(source, string(filepath.Separator)):
		e.WithHint("delete the file to get a new id (rm %s), or pass --agent ID", shellQuote(source))
	default:
		e.WithHint("set %s to a valid agent id, unset it, or pass --agent ID", source)
	}
	return e
}

// agentIDTries bounds fileAgentID's read-or-create loop: a file that
// another process creates between our read and our create is read on
// the next round; one that keeps vanishing is an error, not a recursion.
const agentIDTries = 3

// fileAgentID reads the agent id kept in dir/agent_id, creating it with a
// new UUID if it does not exist. The file must be a regular file: a
// directory, FIFO, socket, device or symlink (dangling or not) there is
// refused with exit 2 naming it and the fix; reading never blocks.
func fileAgentID(dir string) (string, error) {
	path := filepath.Join(dir, "agent_id")
	for try := 0; try < agentIDTries; try++ {
		id, err := readAgentFile(path)
		if err == nil {
			return id, checkAgent(path, id)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", agentFileError(path, err)
		}
		t, err := fsops.OpenTree(dir)
		if err != nil {
			return "", agentFileError(path, err)
		}
		id = newUUID()
		err = t.CreateFile("agent_id", []byte(id+"\n"), 0o644)
		t.Close()
		if err == nil {
			return id, nil
		}
		if !errors.Is(err, fs.ErrExist) { // fs.ErrExist: another process won the race; read its id
			return "", agentFileError(path, err)
		}
	}
	return "", coord.Errorf(coord.CodeIO, "%s: exists when created, missing when read, %d times", path, agentIDTries).
		WithHint("check what else writes or removes it, or pass --agent ID")
}

// maxAgentFile bounds what is read of .rotd/agent_id (an id is at most 64
// bytes).
const maxAgentFile = 4096

// readAgentFile reads an agent_id file without following a symlink and
// without blocking (O_NONBLOCK: a FIFO opens at once and is then refused
// by type), checking the type of what it opened (fstat), not of what
// the name pointed to a moment before.
func readAgentFile(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		return "", agentFileError(path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", agentFileError(path, err)
	}
	if !fi.Mode().IsRegular() {
		return "", coord.Errorf(coord.CodeIO, "%s is %s, not a file holding this agent's id", path, fileKind(fi.Mode())).
			WithHint("remove it (rm -r %s) to get a new id, or pass --agent ID", shellQuote(path))
	}
	b, err := io.ReadAll(io.LimitReader(f, maxAgentFile+1))
	if err != nil {
		return "", agentFileError(path, err)
	}
	if len(b) > maxAgentFile {
		return "", coord.Errorf(coord.CodeUsage, "%s: longer than %d bytes, not an agent id", path, maxAgentFile).
			WithHint("delete the file to get a new id (rm %s), or pass --agent ID", shellQuote(path))
	}
	return strings.TrimSpace(string(b)), nil
}

// agentFileError is the exit-2 error for an agent_id file coord cannot
// open, create or read: a symlink (refused, never followed), a path
// through something that is not a directory, permissions.
func agentFileError(path string, err error) error {
	switch {
	case errors.Is(err, syscall.ELOOP), errors.Is(err, fsops.ErrSymlink):
		return coord.Errorf(coord.CodeIO, "%s is a symlink; coord reads this agent's id only from a regular file", path).
			WithHint("remove it (rm %s) to get a new id, or pass --agent ID", shellQuote(path))
	case errors.Is(err, syscall.ENXIO):
		return coord.Errorf(coord.CodeIO, "%s is a socket, not a file holding this agent's id", path).
			WithHint("remove it (rm %s) to get a new id, or pass --agent ID", shellQuote(path))
	case errors.Is(err, syscall.ENOTDIR):
		return coord.Errorf(coord.CodeIO, "%s is not a directory, so %s cannot hold this agent's id", filepath.Dir(path), path).
			WithHint("move %s away, or pass --agent ID", shellQuote(filepath.Dir(path)))
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return coord.Errorf(coord.CodeIO, "%s: %v", path, err).WithHint("fix the file or its directory, or pass --agent ID")
}

// fileKind names a file type for a message.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "not a regular file"
}

func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
