package workspace

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/fsops"
	"github.com/rotd/coordination/internal/gitrepo"
)

// FindRoot resolves the project root (docs/FORMATS.md): --root, else
// COORD_ROOT, else the nearest ancestor of cwd holding .rotd/coordination.
// Inside a linked git worktree the search starts from the same place in
// the main worktree, so agents in separate worktrees share one registry.
// With mustExist false (init) it falls back to the (main) git top level,
// else cwd.
func FindRoot(flagRoot string, flagSet bool, cwd string, mustExist bool) (string, error) {
	root := flagRoot
	if !flagSet {
		if v, ok := os.LookupEnv(coord.EnvRoot); ok && v != "" {
			root = v
		}
	}
	if root != "" {
		abs, err := filepath.Abs(root)
		if err != nil {
			return "", coord.Errorf(coord.CodeUsage, "invalid root %q: %v", root, err)
		}
		if mustExist {
			if _, err := os.Stat(filepath.Join(abs, coord.TreeDir)); err != nil {
				return "", coord.Errorf(coord.CodeIO, "no coordination tree at %s", filepath.Join(abs, coord.TreeDir)).
					WithHint("create it first: coord init --root %s", ShellQuote(root))
			}
		}
		return abs, nil
	}
	start := cwd
	top, main := gitrepo.GitTop(cwd)
	if main != "" {
		rel, err := filepath.Rel(top, cwd)
		if err == nil {
			start = filepath.Join(main, rel)
		} else {
			start = main
		}
	}
	for d := start; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, coord.TreeDir)); err == nil && fi.IsDir() {
			return d, nil
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	if mustExist {
		return "", coord.Errorf(coord.CodeIO, "no %s in %s or any parent directory", coord.TreeDir, start).
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

// AgentID resolves this agent's identity, the one place that does: an
// explicit id (explicitAgent: --agent, COORD_AGENT, ROTD_AGENT_ID), else
// the UUID kept in .rotd/agent_id at the git top level of cwd (or the
// project root outside git), created on first need. Every id, whatever
// its source, is checked by checkAgent.
func AgentID(flagVal string, flagSet bool, cwd, root string) (string, error) {
	id, ok, err := ExplicitAgent(flagVal, flagSet)
	if err != nil || ok {
		return id, err
	}
	base, _ := gitrepo.GitTop(cwd)
	if base == "" {
		base = root
	}
	return fileAgentID(filepath.Join(base, ".rotd"))
}

// ExplicitAgent is the identity given explicitly, in the contract's
// order: --agent, else COORD_AGENT, else ROTD_AGENT_ID (ROTD's spelling).
// ok is false when none is given. A source that is given but empty or
// invalid is an error (exit 1), not a request for the next one.
func ExplicitAgent(flagVal string, flagSet bool) (id string, ok bool, err error) {
	if flagSet {
		return flagVal, true, CheckAgent("--agent", flagVal)
	}
	for _, name := range coord.AgentEnvs {
		if v, set := os.LookupEnv(name); set {
			return v, true, CheckAgent(name, v)
		}
	}
	return "", false, nil
}

// CheckAgent validates an agent id from source (a flag, a variable or a
// file) as the id of an acting agent (coord.ValidActingAgent).
func CheckAgent(source, id string) error {
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
		e.WithHint("delete the file to get a new id (rm %s), or pass --agent ID", ShellQuote(source))
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
			return id, CheckAgent(path, id)
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

// SetAgentFile makes the worktree whose top is top the agent id's own:
// its .rotd/agent_id holds id (replaced atomically), so every command,
// hook and MCP session run there acts as id without COORD_AGENT (coord
// worktree add). A symlink or special file where the file or its folder
// should be is refused.
func SetAgentFile(top, id string) error {
	if err := CheckAgent("agent", id); err != nil {
		return err
	}
	dir := filepath.Join(top, ".rotd")
	path := filepath.Join(dir, "agent_id")
	if fi, err := os.Lstat(dir); err == nil && !fi.IsDir() {
		return coord.Errorf(coord.CodeIO, "%s is %s, not a folder", dir, fsops.Kind(fi.Mode()))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return agentFileError(path, err)
	}
	t, err := fsops.OpenTree(dir)
	if err != nil {
		return agentFileError(path, err)
	}
	defer t.Close()
	if err := t.ReplaceFile("agent_id", []byte(id+"\n"), 0o644); err != nil {
		return agentFileError(path, err)
	}
	return nil
}

// maxAgentFile bounds what is read of .rotd/agent_id (an id is at most 64
// bytes).
const maxAgentFile = 4096

// readAgentFile reads an agent_id file through fsops, without following
// a symlink and without blocking (a FIFO opens at once and is then
// refused by type), checking the type of what it opened (fstat), not of
// what the name pointed to a moment before.
func readAgentFile(path string) (string, error) {
	b, err := fsops.ReadFileNoFollow(path, maxAgentFile)
	var ke *fsops.KindError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", err
	case errors.As(err, &ke):
		return "", coord.Errorf(coord.CodeIO, "%s is %s, not a file holding this agent's id", path, ke.Is).
			WithHint("remove it (rm -r %s) to get a new id, or pass --agent ID", ShellQuote(path))
	case errors.Is(err, fsops.ErrTooLarge):
		return "", coord.Errorf(coord.CodeUsage, "%s: longer than %d bytes, not an agent id", path, maxAgentFile).
			WithHint("delete the file to get a new id (rm %s), or pass --agent ID", ShellQuote(path))
	case err != nil:
		return "", agentFileError(path, err)
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
			WithHint("remove it (rm %s) to get a new id, or pass --agent ID", ShellQuote(path))
	case errors.Is(err, syscall.ENXIO):
		return coord.Errorf(coord.CodeIO, "%s is a socket, not a file holding this agent's id", path).
			WithHint("remove it (rm %s) to get a new id, or pass --agent ID", ShellQuote(path))
	case errors.Is(err, syscall.ENOTDIR):
		return coord.Errorf(coord.CodeIO, "%s is not a directory, so %s cannot hold this agent's id", filepath.Dir(path), path).
			WithHint("move %s away, or pass --agent ID", ShellQuote(filepath.Dir(path)))
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return coord.Errorf(coord.CodeIO, "%s: %v", path, err).WithHint("fix the file or its directory, or pass --agent ID")
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
	top, _ := gitrepo.GitTop(root)
	if top == "" {
		return "", ""
	}
	g := gitrepo.ReadLayout(top)
	if fi, err := os.Stat(g.Common); g.Common == "" || err != nil || !fi.IsDir() {
		return "", "" // a .git file naming a git dir that is gone: write nothing there
	}
	rel, err := filepath.Rel(top, root)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", ""
	}
	return filepath.Join(g.Common, "info", "exclude"), rel
}

// KeepOutOfGit adds the project's tree (and .rotd/agent_id) to the
// repository's git exclude file, once (GitExcludes says why), waiting at
// most wait for the file's lock. Outside git it does nothing. It returns
// the exclude file and the patterns it added.
func KeepOutOfGit(ctx context.Context, root string, wait time.Duration) (file string, added []string, err error) {
	file, rel := gitExclude(root)
	if file == "" {
		return "", nil, nil
	}
	added, err = fsops.EnsureLines(ctx, file, GitExcludes(rel), wait)
	return file, added, err
}

// GitExcludes is what keeps a coordination tree out of git: gitignore
// patterns, anchored at a worktree's top, for the tree of a project root
// at rel (its path from the repository's top, "." for the top itself)
// and for the agent's own identity file at the top. A restored old
// registry (a checkout, a stash, a revert of a committed .rotd/) would
// bring back an older epoch counter, and coord would hand out fencing
// epochs it had already issued; a committed agent_id would give every
// worktree that checks it out the same identity.
func GitExcludes(rel string) []string {
	dir := "/"
	if rel = filepath.ToSlash(filepath.Clean(rel)); rel != "." {
		dir += gitignoreQuote(rel) + "/"
	}
	return []string{dir + coord.TreeDir + "/", "/.rotd/agent_id"}
}

// gitignoreQuote escapes the characters a gitignore pattern reads as glob
// syntax, so a directory name is matched as written.
func gitignoreQuote(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`\*?[`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ShellQuote quotes s as a POSIX shell word when it needs quoting, so a
// hint's command can be pasted as it is.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
