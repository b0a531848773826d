package gitrepo

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"time"
)

// A FileDiff is what one commit changed in one file, in lines, as
// git log -U0 shows it: Diffs returns them in the order of the commit's
// plan.Changes (the same diff, so the same files in the same order).
type FileDiff struct {
	// Binary is set for a file git shows no lines of (Add and Del are
	// then 0 and Hunks nil).
	Binary   bool
	Add, Del int
	// Hunks are [start, length] of each changed range on the old side
	// of the diff ("@@ -start,length …"); an addition is [0, 0].
	Hunks [][2]int
}

// Bounds of Diffs: the patches of a few hundred commits take a few
// megabytes; a vendored tree can take far more, and the reader stops.
const (
	diffTimeout  = 60 * time.Second
	maxDiffBytes = 256 << 20
)

// Diffs returns, for the newest max commits reachable from head (0: all),
// each commit's files' changed line ranges, keyed by commit hash, read
// with the options Log uses (-M, merges without a diff of their own) so
// that a commit's FileDiffs line up with its Log changes. The run is
// bounded by a timeout and by the bytes read.
func Diffs(ctx context.Context, dir, head string, max int) (map[string][]FileDiff, error) {
	args := []string{"log", "-U0", "-M", "--no-relative",
		"--no-color", "--no-ext-diff", "--no-textconv", "--no-show-signature", "--topo-order", "--format=%x1e%H"}
	if max > 0 {
		args = append(args, "-n", strconv.Itoa(max))
	}
	args = append(args, head, "--")
	var ds map[string][]FileDiff
	err := stream(ctx, diffTimeout, dir, args, func(r io.Reader) error {
		var perr error
		ds, perr = ParseDiffs(io.LimitReader(r, maxDiffBytes+1))
		if perr != nil {
			return fmt.Errorf("%w (git log -U0 in %s)", perr, dir)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ds, nil
}

// ParseDiffs reads the output of
//
//	git log -U0 --format=%x1e%H
//
// (a line "\x1e<hash>" starts a commit, "diff --git " a file, "@@ -s,n
// +…" a hunk, "Binary files " marks a binary file; every other line is
// ignored) and returns each commit's FileDiffs. It reads at most
// maxDiffBytes and refuses more.
func ParseDiffs(r io.Reader) (map[string][]FileDiff, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	out := map[string][]FileDiff{}
	var hash string
	var read int64
	for {
		line, err := readLine(br)
		read += int64(len(line)) + 1
		if read > maxDiffBytes {
			return nil, fmt.Errorf("%w: more than %d bytes of patches", ErrFormat, maxDiffBytes)
		}
		if len(line) > 0 {
			switch {
			case line[0] == '\x1e':
				h := bytes.TrimSpace(line[1:])
				if !validHash(h) {
					return nil, fmt.Errorf("%w: a commit line without a hash", ErrFormat)
				}
				hash = string(h)
				out[hash] = []FileDiff{}
			case bytes.HasPrefix(line, []byte("diff --git ")):
				if hash == "" {
					return nil, fmt.Errorf("%w: a file before the first commit", ErrFormat)
				}
				out[hash] = append(out[hash], FileDiff{})
			case bytes.HasPrefix(line, []byte("@@ -")) || bytes.HasPrefix(line, []byte("Binary files ")):
				fs := out[hash]
				if len(fs) == 0 {
					return nil, fmt.Errorf("%w: a hunk outside a file", ErrFormat)
				}
				f := &fs[len(fs)-1]
				if line[0] == 'B' {
					f.Binary = true
					break
				}
				old, add, ok := parseHunk(line)
				if !ok {
					return nil, fmt.Errorf("%w: commit %s: hunk header %.80q", ErrFormat, hash, line)
				}
				f.Hunks = append(f.Hunks, old)
				f.Del += old[1]
				f.Add += add
			}
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// readLine reads a line without its newline; of a line longer than the
// buffer only the start is kept (a patch's content lines are skipped).
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		head := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull {
			_, err = br.ReadSlice('\n')
		}
		return head, err
	}
	return bytes.TrimSuffix(line, []byte("\n")), err
}

// parseHunk reads "@@ -s[,n] +t[,m] @@…": the old side [s, n] and m.
func parseHunk(line []byte) ([2]int, int, bool) {
	rest := line[len("@@ -"):]
	oldSide, rest, ok := bytes.Cut(rest, []byte(" +"))
	if !ok {
		return [2]int{}, 0, false
	}
	newSide, _, ok := bytes.Cut(rest, []byte(" @@"))
	if !ok {
		return [2]int{}, 0, false
	}
	s, n, ok1 := rangeOf(oldSide)
	_, m, ok2 := rangeOf(newSide)
	return [2]int{s, n}, m, ok1 && ok2
}

// maxLine bounds a line number or count in a hunk header (so sums of
// them cannot overflow).
const maxLine = 1 << 30

// rangeOf reads "s,n" or "s" (n 1).
func rangeOf(b []byte) (int, int, bool) {
	a, c, has := bytes.Cut(b, []byte(","))
	s, err := strconv.Atoi(string(a))
	if err != nil || s < 0 || s > maxLine {
		return 0, 0, false
	}
	n := 1
	if has {
		if n, err = strconv.Atoi(string(c)); err != nil || n < 0 || n > maxLine {
			return 0, 0, false
		}
	}
	return s, n, true
}
