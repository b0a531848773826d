package gitlog

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// Bounds of Holders: one git grep over the tracked files for every name
// at once takes tens of milliseconds on a repository of 50,000 lines.
// A name held by more than maxHolders files is reported for the first
// maxHolders only (git grep lists files in path order): a name that
// common says nothing of where a task works (the model ignores it).
const (
	grepTimeout  = 10 * time.Second
	maxGrepBytes = 64 << 20
	maxHolders   = 64
	maxNames     = 1024
)

// Holders implements app.Contents: for each tracked file of the work
// tree (below Dir) whose content holds some of names as whole words,
// those names, by one git grep (fixed strings, whole words, text files
// only) bounded in time and bytes read. Paths are mapped as Load maps
// them. A name that is not an identifier (letters, digits, '_') is
// ignored.
func (s *Source) Holders(ctx context.Context, names []string) (map[string][]string, error) {
	var pats []string
	for _, n := range names {
		if isIdentifier(n) && len(pats) < maxNames {
			pats = append(pats, "-e", n)
		}
	}
	if len(pats) == 0 {
		return map[string][]string{}, nil
	}
	out, err := git(ctx, shortTimeout, s.Dir, "rev-parse", "--path-format=absolute", "--show-toplevel")
	if err != nil {
		return nil, err
	}
	top := strings.TrimSpace(string(out))
	got, err := grepNames(ctx, s.Dir, pats)
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

// grepNames runs git grep in dir and returns path (from the top) ->
// names found.
func grepNames(ctx context.Context, dir string, pats []string) (map[string][]string, error) {
	ctx, cancel := context.WithTimeout(ctx, grepTimeout)
	defer cancel()
	args := append([]string{"-C", dir, "-c", "core.quotePath=false", "--no-pager", "grep", "-I", "-o", "-w", "-F",
		"--full-name", "-z", "--no-color", "--no-recurse-submodules"}, pats...)
	cmd := exec.CommandContext(ctx, "git", append(args, "--")...)
	cmd.WaitDelay = time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	got, perr := parseGrep(io.LimitReader(stdout, maxGrepBytes+1))
	if perr != nil {
		cancel()
	}
	werr := cmd.Wait()
	if ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("gitlog: git grep in %s: no answer within %v", dir, grepTimeout)
	}
	if perr != nil {
		return nil, fmt.Errorf("gitlog: git grep in %s: %w", dir, perr)
	}
	var ee *exec.ExitError
	if errors.As(werr, &ee) && ee.ExitCode() == 1 && stderr.Len() == 0 {
		return got, nil // nothing found
	}
	if werr != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		return nil, fmt.Errorf("gitlog: git grep in %s: %w: %s", dir, werr, msg)
	}
	return got, nil
}

// parseGrep reads git grep -o -z output, "path\x00match\n" for each
// match, into path -> distinct matches (a name's first maxHolders files
// only), refusing more than maxGrepBytes.
func parseGrep(r io.Reader) (map[string][]string, error) {
	br := bufio.NewReader(r)
	out := map[string][]string{}
	files := map[string]int{}
	var read int
	for {
		path, err := br.ReadString(0)
		if err == io.EOF && path == "" {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: a match without its path", ErrFormat)
		}
		name, err := br.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("%w: a match without its end", ErrFormat)
		}
		read += len(path) + len(name)
		if read > maxGrepBytes {
			return nil, fmt.Errorf("more than %d bytes of matches", maxGrepBytes)
		}
		path, name = path[:len(path)-1], name[:len(name)-1]
		if slices.Contains(out[path], name) || files[name] >= maxHolders {
			continue
		}
		files[name]++
		out[path] = append(out[path], name)
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
