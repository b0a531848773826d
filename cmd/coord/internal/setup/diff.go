package setup

import (
	"bytes"

	"github.com/rogpeppe/go-internal/diff"
)

// unifiedDiff is a unified diff (3 lines of context) of a file from old
// to new, named a/name and b/name; /dev/null stands for a missing side.
// It is go-internal's anchored diff (the Go command's own): hunks are
// anchored on lines that occur once on each side, so a key added to a
// JSON or TOML file is not matched against unrelated braces, it runs in
// O(n log n), and a missing final newline is shown as diff and patch
// show it. Files that are the same give "".
func unifiedDiff(name string, old, new []byte, oldOK, newOK bool) string {
	from, to := "a/"+name, "b/"+name
	if !oldOK {
		from = "/dev/null"
	}
	if !newOK {
		to = "/dev/null"
	}
	d := diff.Diff(from, old, to, new)
	// Its first line names the two sides ("diff a/f b/f"), as the ---
	// and +++ lines do again: patch and git apply do not need it.
	if _, rest, ok := bytes.Cut(d, []byte("\n")); ok && bytes.HasPrefix(d, []byte("diff ")) {
		d = rest
	}
	return string(d)
}
