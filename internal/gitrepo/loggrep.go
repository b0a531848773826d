package gitrepo

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/rotd/coordination/fsops"
)

// Bounds of Holders: git grep -l over the tracked files for every name
// at once takes about a tenth of a second on a repository of 50,000
// lines; reading the files it lists and finding which names each holds
// takes less (asking git for the matches themselves, -o, takes ten
// times as long when a name is a common word). A name held by more
// than maxHolders files is reported for the first maxHolders only
// (git lists files in path order): a name that common says nothing of
// where a task works (the model ignores it). At most maxFiles files and
// maxReadBytes bytes are read, no file over maxFileBytes.
const (
	grepTimeout  = 10 * time.Second
	maxHolders   = 64
	maxNames     = 1024
	maxFiles     = 4096
	maxFileBytes = 4 << 20
	maxReadBytes = 64 << 20
)

// Holders implements app.Contents: for each tracked text file of the
// work tree (below Dir) whose content holds some of names as whole
// words, those names, in the order the file holds them. One git grep
// (fixed strings, whole words, text files only, bounded by a timeout)
// lists the files; they are read through fsops (within the bounds
// above). Paths are mapped as Load maps them. A name that is not an
// identifier (letters, digits, '_') is ignored.
func (s *Source) Holders(ctx context.Context, names []string) (map[string][]string, error) {
	var pats []string
	want := map[string]bool{}
	for _, n := range names {
		if isIdentifier(n) && len(pats) < 2*maxNames {
			pats = append(pats, "-e", n)
			want[n] = true
		}
	}
	if len(pats) == 0 {
		return map[string][]string{}, nil
	}
	out, err := Run(ctx, shortTimeout, s.Dir, "rev-parse", "--path-format=absolute", "--show-toplevel")
	if err != nil {
		return nil, err
	}
	top := strings.TrimSpace(string(out))
	args := append([]string{"grep", "-I", "-l", "-w", "-F", "--full-name", "-z", "--no-color", "--no-recurse-submodules"}, pats...)
	out, err = Run(ctx, grepTimeout, s.Dir, append(args, "--")...)
	if exitCode(err) == 1 {
		return map[string][]string{}, nil // nothing found
	}
	if err != nil {
		return nil, err
	}
	got, err := holders(top, strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00"), want)
	if err != nil {
		return nil, err
	}
	if s.Map == nil {
		return got, nil
	}
	mapped := map[string][]string{}
	for p, ns := range got {
		if m := s.Map(top, []string{p}); len(m) == 1 {
			mapped[m[0]] = ns
		}
	}
	return mapped, nil
}

// holders reads the files (relative to top) and returns path -> the
// wanted names each holds as whole words.
func holders(top string, paths []string, want map[string]bool) (map[string][]string, error) {
	t, err := fsops.OpenTree(top)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	out := map[string][]string{}
	files := map[string]int{}
	var read int
	for i, p := range paths {
		if i >= maxFiles || read > maxReadBytes {
			break
		}
		data, err := t.ReadFile(p, maxFileBytes)
		if err != nil {
			continue // gone, too large, a symlink: not a file to look into
		}
		read += len(data)
		var held []string
		forEachWord(data, func(w []byte) {
			if want[string(w)] && files[string(w)] < maxHolders && !slices.Contains(held, string(w)) {
				held = append(held, string(w))
			}
		})
		for _, w := range held {
			files[w]++
		}
		if len(held) > 0 {
			out[p] = held
		}
	}
	return out, nil
}

// forEachWord calls f with each maximal run of letters, digits and '_'
// (as git grep -w sees words).
func forEachWord(data []byte, f func([]byte)) {
	start := -1
	for i, c := range data {
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			f(data[start:i])
			start = -1
		}
	}
	if start >= 0 {
		f(data[start:])
	}
}

func isIdentifier(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
