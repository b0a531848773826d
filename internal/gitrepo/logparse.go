package gitrepo

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rotd/coordination/coord/plan"
)

// The log format Parse reads: for each commit, a header
//
//	\x1e<hash>\x1f<committer time, unix>\x1f<raw message>\x1f\x00
//
// then, with -z --name-status, its changes as NUL-terminated fields:
// "M\x00path\x00", "R100\x00old\x00new\x00", … (a newline may precede
// the first). A message cannot hold a NUL, so the header ends at the
// first NUL; a status field never starts with \x1e, so a field that does
// starts the next commit.
const logFormat = "--format=%x1e%H%x1f%ct%x1f%B%x1f"

// maxField bounds one field kept (a commit's header with its message, or
// a path). A longer message (a squash of a long branch) is cut there:
// the planner keeps only its start anyway. A longer path is damaged
// input.
const maxField = 1 << 20

// ErrFormat is wrapped by every error Parse returns for input that is not
// in the format it reads.
var ErrFormat = errors.New("gitrepo: unexpected log format")

// Parse reads the output of
//
//	git log -z --name-status -M --format=%x1e%H%x1f%ct%x1f%B%x1f
//
// and returns the commits in the order the log gave them. Unknown change
// statuses are refused; 'U' (unmerged) and 'X' (unknown) never occur in
// a log and are refused too.
func Parse(r io.Reader) ([]plan.Commit, error) {
	br := bufio.NewReader(r)
	var out []plan.Commit
	var cur *plan.Commit
	for {
		field, cut, err := readField(br)
		if err == io.EOF {
			if len(field) > 0 {
				return nil, fmt.Errorf("%w: the output ends inside a field", ErrFormat)
			}
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		field = bytes.TrimPrefix(field, []byte("\n"))
		if len(field) == 0 {
			continue
		}
		if field[0] == '\x1e' {
			c, err := parseHeader(field[1:], cut)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
			cur = &out[len(out)-1]
			continue
		}
		if cur == nil {
			return nil, fmt.Errorf("%w: a change before the first commit", ErrFormat)
		}
		if cut {
			return nil, fmt.Errorf("%w: commit %s: a field longer than %d bytes", ErrFormat, cur.Hash, maxField)
		}
		st, n, err := parseNameStatus(field)
		if err != nil {
			return nil, fmt.Errorf("%w (commit %s)", err, cur.Hash)
		}
		paths := make([]string, n)
		for i := range paths {
			p, cut, err := readField(br)
			if err == nil && cut {
				err = fmt.Errorf("%w: commit %s: a path longer than %d bytes", ErrFormat, cur.Hash, maxField)
			}
			if err != nil {
				if err == io.EOF {
					return nil, fmt.Errorf("%w: commit %s: a change without its path", ErrFormat, cur.Hash)
				}
				return nil, err
			}
			if len(p) == 0 {
				return nil, fmt.Errorf("%w: commit %s: an empty path", ErrFormat, cur.Hash)
			}
			paths[i] = string(p)
		}
		ch := plan.Change{Status: st, Path: paths[n-1]}
		if n == 2 {
			ch.From = paths[0]
		}
		cur.Changes = append(cur.Changes, ch)
	}
}

// readField reads up to the next NUL (which it drops), keeping at most
// maxField bytes (cut says the rest was dropped). At the end of the
// input it returns what was left and io.EOF.
func readField(br *bufio.Reader) (field []byte, cut bool, err error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice(0)
		if !cut {
			buf = append(buf, chunk...)
			if len(buf) > maxField {
				buf, cut = buf[:maxField], true
			}
		}
		switch err {
		case nil:
			if !cut {
				buf = buf[:len(buf)-1]
			}
			return buf, cut, nil
		case bufio.ErrBufferFull:
			continue
		default:
			return buf, cut, err
		}
	}
}

// parseHeader reads a commit's header; cut says its message was cut
// (its terminator is lost with the rest).
func parseHeader(h []byte, cut bool) (plan.Commit, error) {
	hash, rest, ok := bytes.Cut(h, []byte("\x1f"))
	if !ok || !validHash(hash) {
		return plan.Commit{}, fmt.Errorf("%w: a commit header without a hash", ErrFormat)
	}
	ts, msg, ok := bytes.Cut(rest, []byte("\x1f"))
	if !ok {
		return plan.Commit{}, fmt.Errorf("%w: commit %s: a header without a date", ErrFormat, hash)
	}
	secs, err := strconv.ParseInt(string(ts), 10, 64)
	if err != nil || secs < 0 || secs > 1<<40 {
		return plan.Commit{}, fmt.Errorf("%w: commit %s: date %q", ErrFormat, hash, ts)
	}
	msg, ok = bytes.CutSuffix(msg, []byte("\x1f"))
	if cut {
		for i := 0; i < utf8.UTFMax-1 && len(msg) > 0; i++ {
			if r, n := utf8.DecodeLastRune(msg); r != utf8.RuneError || n > 1 {
				break
			}
			msg = msg[:len(msg)-1] // not half a character
		}
		ok = true
	}
	if !ok {
		return plan.Commit{}, fmt.Errorf("%w: commit %s: an unterminated message", ErrFormat, hash)
	}
	subject, body := splitMessage(string(msg))
	return plan.Commit{Hash: string(hash), Time: time.Unix(secs, 0).UTC(), Subject: subject, Body: body}, nil
}

func validHash(h []byte) bool {
	if len(h) < 4 || len(h) > 64 {
		return false
	}
	for _, c := range h {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// splitMessage splits a raw message as git's %s and %b do: the subject is
// the first paragraph with its lines joined by spaces, the body the rest.
func splitMessage(m string) (subject, body string) {
	m = strings.TrimLeft(m, "\n")
	para, rest, _ := strings.Cut(m, "\n\n")
	subject = strings.Join(strings.Fields(strings.ReplaceAll(para, "\n", " ")), " ")
	return subject, strings.TrimSpace(rest)
}

// parseNameStatus reads a --name-status status field: a letter, for R and C
// followed by a similarity score. It returns the status and how many
// paths follow.
func parseNameStatus(f []byte) (byte, int, error) {
	switch f[0] {
	case 'A', 'M', 'D', 'T':
		if len(f) != 1 {
			break
		}
		return f[0], 1, nil
	case 'R', 'C':
		for _, c := range f[1:] {
			if c < '0' || c > '9' {
				return 0, 0, fmt.Errorf("%w: status %q", ErrFormat, f)
			}
		}
		if len(f) > 4 {
			break
		}
		return f[0], 2, nil
	}
	return 0, 0, fmt.Errorf("%w: status %q", ErrFormat, f)
}
