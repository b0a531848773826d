package file

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

	"github.com/rotd/coordination/coord"
)

// logStore is coordination.log and its daily rotations as a
// coord.LogStore.
type logStore struct{ b *Backend }

func (l logStore) Append(ctx context.Context, events ...coord.Event) error {
	return l.b.appendLog(ctx, events...)
}

func (l logStore) Read(ctx context.Context, n int, fn func(line string) error) (int, error) {
	return l.b.readLog(n, fn)
}

func (l logStore) Follow(ctx context.Context) (coord.LogFollower, error) {
	return l.b.follow()
}

func (l logStore) Rotate(ctx context.Context, now time.Time) (string, error) {
	return l.b.rotate(ctx, now)
}

// appendLog appends events to coordination.log, each as one whole line in
// one write(2) under the log's flock, rotating first if the current file
// holds an earlier UTC day. A line no reader would take back
// (coord.LogLines) refuses the whole batch before anything is written.
func (s *Backend) appendLog(ctx context.Context, events ...coord.Event) error {
	if len(events) == 0 {
		return nil
	}
	b, err := coord.LogLines(s.tree.Path(LogFile), events)
	if err != nil {
		return err
	}
	unlock, err := s.lock(ctx, logLock)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := s.rotateLocked(events[0].Time); err != nil {
		return err
	}
	// One write for the batch: the lines land together, never interleaved.
	if err := s.tree.AppendLine(LogFile, b); err != nil {
		return IOError(err, "")
	}
	return nil
}

// rotate renames the log to coordination-YYYY-MM-DD.log if its first line
// is from a UTC day before now's; it returns the new name or "".
func (s *Backend) rotate(ctx context.Context, now time.Time) (string, error) {
	unlock, err := s.lock(ctx, logLock)
	if err != nil {
		return "", err
	}
	defer unlock()
	return s.rotateLocked(now)
}

// RotatedName is the name a log of the given day is rotated to.
func RotatedName(day string) string { return "coordination-" + day + ".log" }

func (s *Backend) rotateLocked(now time.Time) (string, error) {
	today := now.UTC().Format("2006-01-02")
	day, err := s.firstDay(today)
	if err != nil || day == "" {
		return "", err
	}
	if day >= today {
		return "", nil
	}
	name := RotatedName(day)
	for i := 1; ; i++ { // never overwrite an earlier rotation
		if _, err := s.tree.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			break
		}
		name = "coordination-" + day + "." + strconv.Itoa(i) + ".log"
	}
	if err := s.tree.Rename(LogFile, name); err != nil {
		return "", IOError(err, "")
	}
	if err := s.tree.SyncDir("."); err != nil {
		return "", IOError(err, "")
	}
	return name, nil
}

// firstDay returns the UTC day of the log (today is now's): the day of
// its first line, or "" when the log is missing or empty. A line dated
// after today (a hand edit, a clock set back) does not date the log, as
// a heartbeat's mtime from the future does not date a beat: the first
// line of ours dated today or before does (searched for within the
// first firstDayScan bytes), else today, so the log rotates once a later
// day comes instead of never. A log that starts with something not ours
// is dated by its mtime, at most today.
func (s *Backend) firstDay(today string) (string, error) {
	f, err := s.tree.Open(LogFile)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", IOError(err, "")
	}
	defer f.Close()
	br := bufio.NewReaderSize(io.LimitReader(f, firstDayScan), 64<<10)
	head, _ := br.Peek(22)
	if len(head) == 0 {
		return "", nil
	}
	if day, ok := lineDay(head); ok {
		for !ok || day > today {
			// From the future: the first line dated today or before.
			line, err := br.ReadSlice('\n')
			if err == bufio.ErrBufferFull {
				for err == bufio.ErrBufferFull { // a long line: skip it
					_, err = br.ReadSlice('\n')
				}
				continue
			}
			if err != nil && len(line) == 0 {
				return today, nil
			}
			day, ok = lineDay(line)
		}
		return day, nil
	}
	fi, err := f.Stat()
	if err != nil {
		return "", IOError(err, "")
	}
	return min(fi.ModTime().UTC().Format("2006-01-02"), today), nil
}

// firstDayScan bounds how far firstDay reads past lines from the future.
const firstDayScan = 1 << 20

// lineDay is the UTC day of a log line of ours ("[2025-07-06T12:34:01Z]
// …"), from its first 22 bytes.
func lineDay(line []byte) (string, bool) {
	if len(line) < 22 || line[0] != '[' || line[21] != ']' {
		return "", false
	}
	if _, err := time.Parse(coord.TimeFormat, string(line[1:21])); err != nil {
		return "", false
	}
	return string(line[1:11]), true
}

// logFiles lists the rotated logs oldest first, then the current log.
func (s *Backend) logFiles() ([]string, error) {
	ents, err := s.tree.ReadDir(".")
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

// Reading bounds: the log is read in blocks of logBlock bytes, and a line
// longer than maxLogLine is skipped as foreign without being held whole.
const (
	logBlock   = 64 << 10
	maxLogLine = coord.MaxLogLine
)

// readLog calls fn with the last n complete log lines (n <= 0: every
// line), oldest first, across rotations, and returns how many torn or
// foreign lines it skipped among those it read. With n > 0 it reads the
// files backwards from their end, newest file first, and stops once it
// has n lines: time and memory are bounded by n, not by the log's size.
// With n <= 0 it streams every file forwards, one block at a time. A
// line is complete when it ends in a newline (an unterminated tail was
// cut by a crash, or is still being written) and parses as a log line.
func (s *Backend) readLog(n int, fn func(line string) error) (skipped int, err error) {
	files, err := s.logFiles()
	if err != nil {
		return 0, err
	}
	if n <= 0 {
		for _, name := range files {
			sk, err := s.scanLog(name, fn)
			skipped += sk
			if err != nil {
				return skipped, err
			}
		}
		return skipped, nil
	}
	var rev []string // newest first
	for i := len(files) - 1; i >= 0 && len(rev) < n; i-- {
		sk, _, err := s.tailLog(files[i], -1, func(line string) bool {
			rev = append(rev, line)
			return len(rev) >= n
		})
		skipped += sk
		if err != nil {
			return skipped, err
		}
	}
	for i := len(rev) - 1; i >= 0; i-- {
		if err := fn(rev[i]); err != nil {
			return skipped, err
		}
	}
	return skipped, nil
}

func (s *Backend) openLog(name string) (*os.File, error) {
	f, err := s.tree.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // rotated away meanwhile, or no log yet
	}
	if err != nil {
		return nil, IOError(err, "")
	}
	return f, nil
}

// tailLog reads the log file name backwards, block by block, calling fn
// with each complete line, newest first, until fn returns true (stop),
// the file's start is reached, or budget bytes (budget >= 0) were read.
func (s *Backend) tailLog(name string, budget int64, fn func(line string) (stop bool)) (skipped int, stopped bool, err error) {
	f, err := s.openLog(name)
	if f == nil {
		return 0, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, false, IOError(err, "")
	}
	size := fi.Size()
	// The first block is small (the last lines are usually all that is
	// wanted); each next one twice as large, up to logBlock.
	buf := make([]byte, min(size, logBlock/8))
	// The end of a line whose start lies in an earlier block: copies of
	// its pieces, last piece first, and their total length.
	var parts [][]byte
	partsLen := 0
	long := false // that line is longer than maxLogLine: it is skipped unheld
	last := true  // the segment at hand is the one after the file's last newline
	// emit judges the segment head+parts between two newlines; it reports
	// whether enough lines have been found.
	emit := func(head []byte) bool {
		n := len(head) + partsLen
		switch {
		case last:
			if n > 0 || long {
				skipped++ // torn tail
			}
		case long || n > maxLogLine:
			skipped++
		default:
			seg := head
			if len(parts) > 0 {
				seg = make([]byte, 0, n)
				seg = append(seg, head...)
				for k := len(parts) - 1; k >= 0; k-- {
					seg = append(seg, parts[k]...)
				}
			}
			if line, ok := coord.CleanLogLine(string(seg)); ok {
				stopped = fn(line)
			} else {
				skipped++
			}
		}
		last, long, parts, partsLen = false, false, parts[:0], 0
		return stopped
	}
	for pos := size; pos > 0; {
		if budget >= 0 && size-pos >= budget {
			return skipped, false, nil
		}
		if pos < size && len(buf) < logBlock {
			buf = make([]byte, min(pos, int64(2*len(buf))))
		}
		k := min(pos, int64(len(buf)))
		pos -= k
		b := buf[:k]
		if _, err := f.ReadAt(b, pos); err != nil && err != io.EOF {
			return skipped, false, IOError(err, "")
		}
		end := len(b)
		for {
			i := bytes.LastIndexByte(b[:end], '\n')
			if i < 0 {
				break
			}
			if emit(b[i+1 : end]) {
				return skipped, true, nil
			}
			end = i
		}
		switch {
		case long || end == 0:
		case partsLen+end > maxLogLine:
			long, parts, partsLen = true, parts[:0], 0
		default:
			parts = append(parts, bytes.Clone(b[:end]))
			partsLen += end
		}
	}
	if size > 0 {
		emit(nil) // the file's first line: no newline before it
	}
	return skipped, stopped, nil
}

// scanLog streams the log file name forwards, calling fn with each
// complete line.
func (s *Backend) scanLog(name string, fn func(line string) error) (skipped int, err error) {
	f, err := s.openLog(name)
	if f == nil {
		return 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, logBlock)
	var acc []byte // a line longer than the buffer, gathered
	long := false
	for {
		chunk, err := r.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			if !long && len(acc)+len(chunk) > maxLogLine {
				long, acc = true, acc[:0]
			} else if !long {
				acc = append(acc, chunk...)
			}
			continue
		case err == io.EOF:
			if len(acc)+len(chunk) > 0 || long {
				skipped++ // torn tail
			}
			return skipped, nil
		case err != nil:
			return skipped, IOError(err, "")
		}
		line := chunk[:len(chunk)-1]
		if len(acc) > 0 {
			acc = append(acc, line...)
			line = acc
		}
		if long || len(line) > maxLogLine {
			skipped++
		} else if l, ok := coord.CleanLogLine(string(line)); ok {
			if err := fn(l); err != nil {
				return skipped, err
			}
		} else {
			skipped++
		}
		acc, long = acc[:0], false
	}
}

// follower follows the log across rotations: it reads what is appended to
// the open file and, when the name coordination.log points at a new file,
// drains the old one and switches. It implements coord.LogFollower.
type follower struct {
	s       *Backend
	f       *os.File
	partial []byte // an unterminated line, awaiting its end
	long    bool   // the line at hand is longer than maxLogLine
	Skipped int
}

// follow opens a follower positioned at the end of the current log.
func (s *Backend) follow() (*follower, error) {
	fl := &follower{s: s}
	if err := fl.reopen(true); err != nil {
		return nil, err
	}
	return fl, nil
}

func (fl *follower) reopen(atEnd bool) error {
	f, err := fl.s.tree.Open(LogFile)
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
func (fl *follower) Poll(ctx context.Context) ([]string, error) {
	var out []string
	buf := make([]byte, logBlock)
	// read takes what was appended, block by block, passing on each
	// complete line; a line longer than maxLogLine is skipped unheld.
	read := func() error {
		if fl.f == nil {
			return nil
		}
		for {
			n, err := fl.f.Read(buf)
			fl.take(buf[:n], &out)
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
		cur, err := fl.s.tree.Lstat(LogFile)
		old, _ := fl.f.Stat()
		if err == nil && old != nil && !os.SameFile(cur, old) {
			read()
			fl.f.Close()
			if len(fl.partial) > 0 || fl.long { // the old file's torn tail
				fl.Skipped++
				fl.partial, fl.long = fl.partial[:0], false
			}
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
	return out, nil
}

// take splits data into lines, keeping an unterminated end for later.
func (fl *follower) take(data []byte, out *[]string) {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			if fl.long || len(fl.partial)+len(data) > maxLogLine {
				fl.long, fl.partial = true, fl.partial[:0]
			} else {
				fl.partial = append(fl.partial, data...)
			}
			return
		}
		line := data[:i]
		data = data[i+1:]
		if len(fl.partial) > 0 {
			line = append(fl.partial, line...)
		}
		if fl.long || len(line) > maxLogLine {
			fl.Skipped++
		} else if l, ok := coord.CleanLogLine(string(line)); ok {
			*out = append(*out, l)
		} else {
			fl.Skipped++
		}
		fl.partial, fl.long = fl.partial[:0], false
	}
}

// Close closes the follower.
func (fl *follower) Close() error {
	if fl.f != nil {
		return fl.f.Close()
	}
	return nil
}
