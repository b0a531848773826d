package coord

import (
	"slices"
	"strings"
)

// Where a task's work lives and when it is finished with (docs/GIT.md).
// A task's work is in flight from its claim until it has landed on the
// target branch: while it is, the paths it touched are its write claims,
// which no other task's agent may write, lock or commit.

// DefaultTarget is the target branch when config.json names none.
const DefaultTarget = "main"

// InFlight reports whether t's work is under way or finished but not yet
// landed: claimed, blocked with an owner, unblocked back to the pool for
// its owner, in review, or done with a head (its commits) not yet found
// on the target. A task handed back, swept or requeued (unclaimed, or
// blocked without an owner) is not, and neither is a done task released
// without commits of its own (nothing can land).
func (t *Task) InFlight() bool {
	switch t.Status {
	case Claimed, Review:
		return true
	case Unclaimed:
		return t.Owner != "" // returned to its owner, its work on its branch
	case Blocked:
		return t.ClaimedBy != ""
	case Done:
		return t.Head != "" && t.LandedAt == ""
	}
	return false
}

// Worker is the agent whose work t's is: its holder, else the owner it
// was returned to ("" nobody).
func (t *Task) Worker() string {
	if t.ClaimedBy != "" {
		return t.ClaimedBy
	}
	return t.Owner
}

// WriteClaims returns the paths t holds by write claim: its touched
// files while it is in flight, else none.
func (t *Task) WriteClaims() []string {
	if !t.InFlight() {
		return nil
	}
	return t.TouchedFiles
}

// freeClaims drops what would claim paths for t's next holder: its
// touched files, its head and its conflicts (the task was handed back or
// swept; where its work stood stays in branch and base).
func (t *Task) freeClaims() {
	t.TouchedFiles, t.Head, t.Conflicts, t.LandingAt, t.LandingOn = nil, "", nil, "", nil
}

// startWork starts a new claim's record of the work: nothing held, not
// landed; the branch and base stay (work that comes back goes on from
// them; the application records them for new work).
func (t *Task) startWork() {
	if t.Owner == "" {
		t.freeClaims()
	}
	t.Head, t.Conflicts, t.LandingAt, t.LandingOn = "", nil, "", nil
	t.LandedCommit, t.LandedAt = "", ""
}

// RecordWork records at a release what the work is: head, the branch
// tip with commits of its own ("" : none, so nothing is left to land),
// and the paths those commits changed, added to the touched files.
func (t *Task) RecordWork(head string, changed []string) {
	t.Head = head
	t.Touch(changed)
	t.Dirty = true
}

// Claimable reports whether a write claim can hold path (a clean
// repository path): every path but those under .rotd/, where coord keeps
// its tree and ROTD its shared artifacts, which agents share by design
// (coord artifact writes them under a lock).
func Claimable(path string) bool {
	return path != ".rotd" && !strings.HasPrefix(path, ".rotd/")
}

// Touch adds paths (clean repository paths) to t's touched files, which
// stay sorted, each once; paths no write claim can hold (Claimable) are
// left out. It reports whether any was new.
func (t *Task) Touch(paths []string) bool {
	added := false
	for _, p := range paths {
		if !Claimable(p) {
			continue
		}
		i, found := slices.BinarySearch(t.TouchedFiles, p)
		if found {
			continue
		}
		t.TouchedFiles = slices.Insert(t.TouchedFiles, i, p)
		added = true
	}
	if added {
		t.Dirty = true
	}
	return added
}

// NormalizeTouched sorts paths and drops repeats (how touched_files is
// kept), in place.
func NormalizeTouched(paths []string) []string {
	slices.Sort(paths)
	return slices.Compact(paths)
}

// ClaimMode is config.json's "write_claims": what the edit hooks do with
// a path at the first write of a task's agent.
type ClaimMode string

// The write-claim modes. The zero value means ClaimsExclusive.
const (
	// ClaimsExclusive (default): the path is claimed for the task, and a write,
	// lock, commit or claim of another task that meets another in-flight
	// task's claim is refused.
	ClaimsExclusive ClaimMode = "exclusive"
	// WarnClaims: claims are recorded and the other holder named, but
	// nothing is refused for them.
	WarnClaims ClaimMode = "warn"
	// ClaimsOff: no path is claimed at a write and touched files claim
	// nothing (they are still recorded at release, for planning).
	ClaimsOff ClaimMode = "off"
)

// Valid reports whether m is one of the three modes ("" is not: a stored
// setting names one).
func (m ClaimMode) Valid() bool { return m == ClaimsExclusive || m == WarnClaims || m == ClaimsOff }

// Enforced reports whether claims refuse (exclusive, or the zero value).
func (m ClaimMode) Enforced() bool { return m == ClaimsExclusive || m == "" }

// Recorded reports whether the edit hooks record claims (not off).
func (m ClaimMode) Recorded() bool { return m != ClaimsOff }

// UntaskedMode is config.json's "write_claims_untasked": what a write by
// an agent that holds no task (a person, an agent between tasks) meets at
// another in-flight task's write claim. Nothing is claimed for it either
// way: a claim belongs to a task.
type UntaskedMode string

// The modes for writes without a task.
const (
	// UntaskedGuard (default): refused, as a task's agent would be.
	UntaskedGuard UntaskedMode = "guard"
	// UntaskedWarn: the write goes ahead; the holder is named.
	UntaskedWarn UntaskedMode = "warn"
	// UntaskedOff: write claims do not apply to it.
	UntaskedOff UntaskedMode = "off"
)

// Valid reports whether m is one of the three modes.
func (m UntaskedMode) Valid() bool {
	return m == UntaskedGuard || m == UntaskedWarn || m == UntaskedOff
}

// ValidCommit reports whether s looks like a git object id: 4 to 64
// lower-case hexadecimal digits (an abbreviation, SHA-1 or SHA-256).
func ValidCommit(s string) bool {
	if len(s) < 4 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// ValidBranch checks a branch name by git's rules for one
// (git check-ref-format --branch), as the target setting and a task's
// branch must satisfy: no empty component, none starting with '.' or
// ending with ".lock", no "..", no "@{", no space, control character or
// any of ~^:?*[\, not "@", not starting with '-', not ending with '/' or
// '.', at most 255 bytes.
func ValidBranch(name string) error {
	bad := func(why string) error {
		return Errorf(CodeUsage, "invalid branch name %q: %s", clip(name), why)
	}
	switch {
	case name == "":
		return bad("empty")
	case len(name) > 255:
		return bad("longer than 255 bytes")
	case name == "@":
		return bad(`"@" names no branch`)
	case strings.HasPrefix(name, "-"):
		return bad("must not start with '-'")
	case strings.HasSuffix(name, "/"), strings.HasSuffix(name, "."):
		return bad("must not end with '/' or '.'")
	case strings.Contains(name, ".."), strings.Contains(name, "@{"):
		return bad(`must not hold ".." or "@{"`)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == 0x7f || strings.IndexByte(" ~^:?*[\\", c) >= 0 {
			return bad("must not hold spaces, control characters or any of ~^:?*[\\")
		}
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock") {
			return bad(`no component may be empty, start with '.' or end with ".lock"`)
		}
	}
	return nil
}

// CheckBranchName checks a branch name a person gives coord (the target,
// a worktree's branch): one git takes as a branch (ValidBranch) and no
// git command could read as something else. coord always names it in
// full (refs/heads/NAME), but a name like HEAD, FETCH_HEAD, a commit id,
// or refs/heads/x (which would be refs/heads/refs/heads/x) is a mistake
// that loses work, not a branch.
func CheckBranchName(name string) error {
	if err := ValidBranch(name); err != nil {
		return err
	}
	bad := func(why string) error {
		return Errorf(CodeUsage, "invalid branch name %q: %s", clip(name), why).WithHint("name a branch by its short name, such as main")
	}
	switch {
	case name == "HEAD" || strings.HasSuffix(name, "_HEAD"):
		return bad("git reads it as " + name + ", not as a branch")
	case strings.HasPrefix(name, "refs/") || name == "refs":
		return bad("give the branch's short name, without refs/")
	case len(name) >= 4 && ValidCommit(name):
		return bad("it looks like a commit id")
	}
	return nil
}

// TargetRef is the full ref name of the target branch (refs/heads/…):
// what every git command coord runs is given, so that a tag or another
// ref of the same short name never stands in for it. With a remote it
// is the remote's branch as last fetched (refs/remotes/<remote>/…):
// the work on the target is what the remote holds.
func (c Config) TargetRef() string {
	if c.Remote != "" {
		return RemoteRef(c.Remote, c.Target)
	}
	return BranchRef(c.Target)
}

// DefaultTaskBranch is the pattern of a task's own branch when
// config.json's "task_branch" names none: {id} stands for the task's id.
const DefaultTaskBranch = "task/{id}"

// TaskBranchOff, as config.json's "task_branch", keeps coord from
// switching branches: a task's work is then the branch its claimer
// stood on.
const TaskBranchOff = "off"

// CheckTaskBranch validates a task_branch setting: TaskBranchOff, or a
// branch name holding {id} that names a valid branch for a task id.
func CheckTaskBranch(pattern string) error {
	if pattern == TaskBranchOff {
		return nil
	}
	if !strings.Contains(pattern, "{id}") {
		return Errorf(CodeUsage, "task branch pattern %q holds no {id}", clip(pattern)).
			WithHint(`give a pattern such as "task/{id}", or "off"`)
	}
	if strings.HasPrefix(pattern, "refs/") {
		return Errorf(CodeUsage, "task branch pattern %q: give the branch's name under refs/heads/, without refs/", clip(pattern))
	}
	if err := CheckBranchName(strings.ReplaceAll(pattern, "{id}", "4.2")); err != nil {
		return Errorf(CodeUsage, "task branch pattern %q does not make a branch name: %v", clip(pattern), err)
	}
	return nil
}

// TaskBranch is the full name of task id's own branch by pattern
// (refs/heads/…), or "" when pattern is TaskBranchOff. A task id that
// git would not take in a branch name ("4..2", "x.lock") has those
// sequences replaced, so every task has a branch.
func TaskBranch(pattern, id string) string {
	if pattern == "" {
		pattern = DefaultTaskBranch
	}
	if pattern == TaskBranchOff {
		return ""
	}
	name := strings.ReplaceAll(pattern, "{id}", id)
	for strings.Contains(name, "..") {
		name = strings.ReplaceAll(name, "..", ".-")
	}
	parts := strings.Split(name, "/")
	for i, p := range parts {
		if strings.HasSuffix(p, ".lock") {
			p = strings.TrimSuffix(p, ".lock") + "-lock"
		}
		if strings.HasSuffix(p, ".") {
			p += "-"
		}
		parts[i] = p
	}
	return BranchRef(strings.Join(parts, "/"))
}

// BranchRef is the full ref name of a branch: name itself when it is
// one already (refs/heads/…), else refs/heads/name.
func BranchRef(name string) string {
	if name == "" || strings.HasPrefix(name, "refs/heads/") {
		return name
	}
	return "refs/heads/" + name
}

// ShortBranch is a branch's name without refs/heads/, for people.
func ShortBranch(ref string) string { return strings.TrimPrefix(ref, "refs/heads/") }

// WorktreeBranch is the branch `coord worktree add` makes for agent's
// worktree unless told another: coord/<agent>.
func WorktreeBranch(agent string) string { return "coord/" + agent }

// SetWorktree records where agent works (its worktree and branch) in its
// pool record, registering it (as an implementer) when it is not in the
// pool yet; live says which registered agents are alive (Register's
// rule: an id a live agent holds from another worktree is refused).
func (tx *Txn) SetWorktree(agent, host, worktree, branch string, live map[string]bool) (PoolAgent, error) {
	p := PoolAgent{ID: agent, Role: Implementer, Host: host}
	if old := tx.Member(agent); old != nil {
		p = *old
		p.Raw, p.Host = nil, host
	}
	p.Worktree, p.Branch = worktree, branch
	got, _, err := tx.Register(p, live)
	return got, err
}

// ForgetWorktree clears agent's pool record of the worktree at path (it
// was removed): the record no longer names a checkout that is gone. It
// reports whether the record named it.
func (tx *Txn) ForgetWorktree(agent, path string) bool {
	p := tx.Member(agent)
	if p == nil || p.Worktree != path {
		return false
	}
	p.Worktree, p.Branch = "", ""
	p.Dirty = true
	tx.PoolDirty = true
	return true
}
