package fsops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// maxLinesFile bounds what EnsureLines reads of the file it extends.
const maxLinesFile = 1 << 20

// EnsureLines appends to the text file name each of lines that it does
// not already hold as a line (surrounding blanks ignored), creating the
// file and its directory if needed, and returns the lines it added. The
// file is opened without blocking and must be a regular file; it is
// flocked while read and extended (waiting at most wait), so concurrent
// callers never add a line twice. The missing lines go in one write(2),
// on a line of their own even if the file did not end with a newline.
// For small files other programs own (a git exclude file); it never
// replaces the file, so flocking it is safe.
func EnsureLines(ctx context.Context, name string, lines []string, wait time.Duration) ([]string, error) {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return nil, err
	}
	if err := step(OpCreate, name); err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	f, err := OpenFile(name, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := flockWait(ctx, f, wait); err != nil {
		return nil, &fs.PathError{Op: "lock", Path: name, Err: err}
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	data, err := io.ReadAll(io.NewSectionReader(f, 0, maxLinesFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxLinesFile {
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrTooLarge}
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var added []string
	var buf strings.Builder
	for _, l := range lines {
		if have[strings.TrimSpace(l)] {
			continue
		}
		have[strings.TrimSpace(l)] = true
		added = append(added, l)
		buf.WriteString(l + "\n")
	}
	if len(added) == 0 {
		return nil, nil
	}
	out := buf.String()
	if len(data) > 0 && data[len(data)-1] != '\n' {
		out = "\n" + out
	}
	if err := step(OpWrite, name); err != nil {
		return nil, &fs.PathError{Op: "write", Path: name, Err: err}
	}
	n, err := f.WriteString(out)
	if err != nil || n != len(out) {
		if n > 0 {
			f.Truncate(int64(len(data)))
		}
		if err == nil {
			err = io.ErrShortWrite
		}
		return nil, &fs.PathError{Op: "write", Path: name, Err: unwrapPath(err)}
	}
	return added, nil
}

// flockWait takes an exclusive flock on f, polling without blocking until
// wait has passed or ctx is done.
func flockWait(ctx context.Context, f *os.File, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			return err
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("%w after %s", ErrLockTimeout, wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}
