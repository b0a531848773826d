package coord

import "strings"

// A shared remote (config.json "remote"): agents on many machines each
// work in their own clone, the backend carries the claims and the remote
// carries the commits. The target is then the remote's branch, read
// through its remote-tracking ref (RemoteRef) after a fetch.

// CheckRemoteName validates a remote setting: a name git accepts for a
// remote (letters, digits, '.', '_', '-' and '/', not starting with
// '-' or '.', no "..", no empty part), never a URL.
func CheckRemoteName(name string) error {
	bad := func(why string) error {
		return Errorf(CodeUsage, "invalid remote name %q: %s", clip(name), why).
			WithHint("name a remote of the repository (git remote -v lists them), such as origin")
	}
	switch {
	case name == "":
		return bad("empty")
	case len(name) > 100:
		return bad("longer than 100 bytes")
	case strings.Contains(name, "://") || strings.Contains(name, ":"):
		return bad("it is a URL: add it as a remote (git remote add origin URL) and name the remote")
	case strings.HasPrefix(name, "-") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "/"):
		return bad("must not start with '-', '.' or '/'")
	case strings.Contains(name, "..") || strings.Contains(name, "//") || strings.HasSuffix(name, "/"):
		return bad(`must not hold "..", "//" or end with '/'`)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == '/') {
			return bad("only letters, digits, '.', '_', '-' and '/'")
		}
	}
	return nil
}

// RemoteRef is the remote-tracking ref of branch (short or full name)
// of remote: refs/remotes/<remote>/<branch>.
func RemoteRef(remote, branch string) string {
	return "refs/remotes/" + remote + "/" + ShortBranch(branch)
}

// PushBranch is the branch (full ref name) a release pushes t's work to
// and the lander fetches it from: the task's own branch, else the
// pattern's branch for it (task/<id> when the pattern is off).
func PushBranch(pattern string, t *Task) string {
	if b := BranchRef(t.Branch); b != "" && ValidBranch(ShortBranch(b)) == nil {
		return b
	}
	if pattern == TaskBranchOff || pattern == "" {
		pattern = DefaultTaskBranch
	}
	return TaskBranch(pattern, t.ID)
}
