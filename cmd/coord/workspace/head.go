package workspace

import (
	"path/filepath"
	"strings"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/fsops"
)

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
	g := readGitLayout(top)
	if g.gitDir == "" {
		return "", ""
	}
	head, err := readGitFile(filepath.Join(g.gitDir, "HEAD"))
	if err != nil {
		return "", g.gitDir
	}
	head = strings.TrimSpace(head)
	ref, symbolic := strings.CutPrefix(head, "ref:")
	if !symbolic {
		return objectID(head), g.gitDir
	}
	ref = strings.TrimSpace(ref)
	if !strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "..") {
		return "", g.gitDir
	}
	// Per-worktree refs live in the worktree's git dir, shared ones in
	// the common one.
	for _, d := range []string{g.common, g.gitDir} {
		if b, err := readGitFile(filepath.Join(d, filepath.FromSlash(ref))); err == nil {
			return objectID(strings.TrimSpace(b)), g.gitDir
		}
	}
	packed, err := readPackedRefs(filepath.Join(g.common, "packed-refs"))
	if err != nil {
		return "", g.gitDir
	}
	for _, line := range strings.Split(packed, "\n") {
		if id, name, ok := strings.Cut(line, " "); ok && name == ref {
			return objectID(id), g.gitDir
		}
	}
	return "", g.gitDir
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
	g := readGitLayout(top)
	if g.gitDir == "" {
		return ""
	}
	head, err := readGitFile(filepath.Join(g.gitDir, "HEAD"))
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
	g := readGitLayout(top)
	if g.common == "" {
		return m, false
	}
	data, err := fsops.ReadFile(filepath.Join(g.common, filepath.FromSlash(coord.MoveJournalPath)), 4<<10)
	if err != nil {
		return m, false
	}
	if m, ok = coord.ParseMoveJournal(data); !ok || HeadBranch(dir) != coord.BranchRef(m.Branch) {
		return coord.MoveJournal{}, false
	}
	return m, true
}
