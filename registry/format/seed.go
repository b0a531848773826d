package format

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rotd/coordination/coord"
)

// MaxSeedLine bounds one seed line.
const MaxSeedLine = 1 << 20

// ParseSeed reads JSON Lines, one task per line (blank lines skipped),
// strictly, each as ParseSeedLine does. Errors carry the line number.
func ParseSeed(file string, r io.Reader) ([]coord.SeedLine, error) {
	var out []coord.SeedLine
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) > MaxSeedLine {
			return nil, coord.Errorf(coord.CodeUsage, "%s: line %d: longer than %d bytes", file, n, MaxSeedLine)
		}
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			t, perr := ParseSeedLine(fmt.Sprintf("%s: line %d", file, n), trimmed)
			if perr != nil {
				return nil, perr
			}
			out = append(out, coord.SeedLine{Line: n, Task: t})
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, readError(file, err)
		}
	}
}

// ParseSeedLine parses one seed line in coord's format (strict JSON,
// known fields typed, status defaulting to unclaimed). The line may carry
// only coord.SeedFields, and status only as unclaimed: a field coord
// owns, or an unknown one (named with the nearest known field), is
// refused with where, the line.
func ParseSeedLine(where string, line []byte) (*coord.Task, error) {
	t, err := ParseTaskLine(where, line)
	if err != nil {
		return nil, err
	}
	for _, m := range Members(t.Raw) {
		if err := coord.CheckSeedField(m.Name); err != nil {
			return nil, seedLineErr(where, err)
		}
		if m.Name == "status" {
			if err := coord.CheckSeedStatus(t.Status); err != nil {
				return nil, seedLineErr(where, err)
			}
		}
	}
	return t, nil
}

// seedLineErr puts where (the line) before a coded error's message.
func seedLineErr(where string, err error) error {
	if ce, ok := err.(*coord.Error); ok {
		ce.Msg = where + ": " + ce.Msg
		return ce
	}
	return coord.Errorf(coord.CodeUsage, "%s: %v", where, err)
}

// ParseTaskLine parses one task line (strict JSON, known fields typed,
// status defaulting to unclaimed) whatever fields it carries, unknown
// ones kept: a task as coord wrote it (an archive line), or a line a
// dialect's importer built from its own fields (registry/rotd), which
// answers for what the line may set.
func ParseTaskLine(where string, line []byte) (*coord.Task, error) {
	line = bytes.Clone(line)
	if bytes.HasPrefix(line, []byte("\xef\xbb\xbf")) {
		return nil, coord.Errorf(coord.CodeUsage, "%s: starts with a byte-order mark", where)
	}
	s := &scanner{data: line, file: where, oneLine: true} // where names the line
	if s.peek() != '{' {
		return nil, coord.Errorf(coord.CodeUsage, "%s: a seed line must be one JSON object", where)
	}
	t, err := parseTask(s, 1)
	if err == nil {
		err = s.end()
	}
	if err != nil {
		msg := err.Error()
		if pe, ok := err.(*ParseError); ok {
			msg = pe.File + ": " + strings.TrimPrefix(pe.Msg, "task 1 ")
		}
		return nil, coord.Errorf(coord.CodeUsage, "%s", msg)
	}
	t.Raw = line
	t.Dirty = true
	return t, nil
}

// readError is a failure of the reader: a coded error (the caller's
// reader ended by a signal: interrupted) as it is, anything else I/O.
func readError(file string, err error) error {
	var ce *coord.Error
	if errors.As(err, &ce) {
		return err
	}
	return coord.Wrap(coord.CodeIO, err, "cannot read %s", file)
}
