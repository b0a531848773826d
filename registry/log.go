package registry

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rotd/coord/coord"
)

// AppendLog appends events to coordination.log, each as one whole line in
// one write(2) under the log's flock, rotating first if the current file
// holds an earlier UTC day.
func (s *Store) AppendLog(ctx context.Context, events ...coord.Event) error {
	if len(events) == 0 {
		return nil
	}
	unlock, err := s.Tree.Lock(ctx, logLock, s.LockWait, s.holderLine())
	if err != nil {
		return IOError(err, "")
	}
	defer unlock()
	if _, err := s.rotateLocked(events[0].Time); err != nil {
		return err
	}
	var b []byte
	for _, e := range events {
		b = append(b, coord.FormatLogLine(e)...)
		b = append(b, '\n')
	}
	// One write for the batch: the lines land together, never interleaved.
	if err := s.Tree.AppendLine(LogFile, b); err != nil {
		return IOError(err, "")
	}
	return nil
}

// Rotate renames the log to coordination-YYYY-MM-DD.log if its first line
// is from a UTC day before now's; it returns the new name or "".
func (s *Store) Rotate(ctx context.Context, now time.Time) (string, error) {
	unlock, err := s.Tree.Lock(ctx, logLock, s.LockWait, s.holderLine())
	if err != nil {
		return "", IOError(err, "")
	}
	defer unlock()
	return s.rotateLocked(now)
}

// RotatedName is the name a log of the given day is rotated to.
func RotatedName(day string) string { return "coordination-" + day + ".log" }

func (s *Store) rotateLocked(now time.Time) (string, error) {
	day, err := s.firstDay()
	if err != nil || day == "" {
		return "", err
	}
	if day >= now.UTC().Format("2006-01-02") {
		return "", nil
	}
	name := RotatedName(day)
	for i := 1; ; i++ { // never overwrite an earlier rotation
		if _, err := s.Tree.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			break
		}
		name = "coordination-" + day + "." + strconv.Itoa(i) + ".log"
	}
	if err := s.Tree.Rename(LogFile, name); err != nil {
		return "", IOError(err, "")
	}
	if err := s.Tree.SyncDir("."); err != nil {
		return "", IOError(err, "")
	}
	return name, nil
}

// firstDay returns the UTC day of the log's first line, or "" when the
// log is missing, empty, or starts with something that is not a line of
// ours (then the file's mtime day is used).
func (s *Store) firstDay() (string, error) {
	f, err := s.Tree.Open(LogFile)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", IOError(err, "")
	}
	defer f.Close()
	var buf [22]byte
	n, _ := io.ReadFull(f, buf[:])
	if n == 22 && buf[0] == '[' && buf[21] == ']' {
		if _, err := time.Parse(coord.TimeFormat, string(buf[1:21])); err == nil {
			return string(buf[1:11]), nil
		}
	}
	if n == 0 {
		return "", nil
	}
	fi, err := f.Stat()
	if err != nil {
		return "", IOError(err, "")
	}
	return fi.ModTime().UTC().Format("2006-01-02"), nil
}

// LogFiles lists the rotated logs oldest first, then the current log.
func (s *Store) LogFiles() ([]string, error) {
	ents, err := s.Tree.ReadDir(".")
	if err != nil {
		return nil, IOError(err, "")
	}
	var rotated []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, "coordination-") && strings.HasSuffix(n, ".log") && e.Type().IsRegular() {
			rotated = append(rotated, n)
		}
	}
	sort.Slice(rotated, func(i, j int) bool { return rotKey(rotated[i]) < rotKey(rotated[j]) })
	return append(rotated, LogFile), nil
}

// rotKey orders coordination-DAY.log before coordination-DAY.1.log.
func rotKey(n string) string {
	core := strings.TrimSuffix(strings.TrimPrefix(n, "coordination-"), ".log")
	day, seq, _ := strings.Cut(core, ".")
	if len(seq) < 6 {
		seq = strings.Repeat("0", 6-len(seq)) + seq
	}
	return day + "." + seq
}

// LogLines returns the last n complete lines across the rotated logs and
// the current one (n <= 0: all), and how many torn or foreign lines were
// skipped.
func (s *Store) LogLines(n int) (lines []string, skipped int, err error) {
	files, err := s.LogFiles()
	if err != nil {
		return nil, 0, err
	}
	for i := len(files) - 1; i >= 0; i-- {
		ls, sk, err := s.readLog(files[i])
		if err != nil {
			return nil, 0, err
		}
		skipped += sk
		lines = append(ls, lines...)
		if n > 0 && len(lines) >= n {
			return lines[len(lines)-n:], skipped, nil
		}
	}
	return lines, skipped, nil
}

func (s *Store) readLog(name string) ([]string, int, error) {
	f, err := s.Tree.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, IOError(err, "")
	}
	defer f.Close()
	var out []string
	skipped := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	// Only newline-terminated lines count: an unterminated tail is torn
	// (cut by a crash, or still being written) and is skipped, not parsed.
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			skipped++
			return len(data), nil, nil
		}
		return 0, nil, nil
	})
	for sc.Scan() {
		if line, ok := coord.CleanLogLine(sc.Text()); ok {
			out = append(out, line)
		} else {
			skipped++
		}
	}
	if err := sc.Err(); err != nil {
		return out, skipped + 1, nil
	}
	return out, skipped, nil
}

// Follower follows the log across rotations: it reads what is appended to
// the open file and, when the name coordination.log points at a new file,
// drains the old one and switches.
type Follower struct {
	s       *Store
	f       *os.File
	partial []byte
	Skipped int
}

// Follow opens a follower positioned at the end of the current log.
func (s *Store) Follow() (*Follower, error) {
	fl := &Follower{s: s}
	if err := fl.reopen(true); err != nil {
		return nil, err
	}
	return fl, nil
}

func (fl *Follower) reopen(atEnd bool) error {
	f, err := fl.s.Tree.Open(LogFile)
	if errors.Is(err, fs.ErrNotExist) {
		fl.f = nil
		return nil
	}
	if err != nil {
		return IOError(err, "")
	}
	if atEnd {
		f.Seek(0, io.SeekEnd)
	}
	fl.f = f
	return nil
}

// Poll returns complete lines appended since the last call.
func (fl *Follower) Poll() ([]string, error) {
	var out []string
	read := func() error {
		if fl.f == nil {
			return nil
		}
		buf := make([]byte, 64<<10)
		for {
			n, err := fl.f.Read(buf)
			fl.partial = append(fl.partial, buf[:n]...)
			if err == io.EOF || n == 0 {
				return nil
			}
			if err != nil {
				return err
			}
		}
	}
	if err := read(); err != nil {
		return nil, IOError(err, "")
	}
	// Rotated? The name now points at another file (or none yet).
	if fl.f != nil {
		cur, err := fl.s.Tree.Lstat(LogFile)
		old, _ := fl.f.Stat()
		if err == nil && old != nil && !os.SameFile(cur, old) {
			read()
			fl.f.Close()
			if err := fl.reopen(false); err != nil {
				return nil, err
			}
			read()
		}
	} else if err := fl.reopen(false); err != nil {
		return nil, err
	} else {
		read()
	}
	for {
		i := strings.IndexByte(string(fl.partial), '\n')
		if i < 0 {
			break
		}
		line := string(fl.partial[:i])
		fl.partial = fl.partial[i+1:]
		if line, ok := coord.CleanLogLine(line); ok {
			out = append(out, line)
		} else {
			fl.Skipped++
		}
	}
	return out, nil
}

// Close closes the follower.
func (fl *Follower) Close() {
	if fl.f != nil {
		fl.f.Close()
	}
}
