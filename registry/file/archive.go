package file

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/format"
)

// archiveOutbox appends the outbox's tasks to their archive files and
// makes them durable (file and directory fsync) under the archive's lock.
// Update does it before it commits the registry without them: a crash in
// between leaves a task in both places (readers prefer the registry and
// count an id once; the next archive run finishes the move), never in
// neither.
func (s *Backend) archiveOutbox(ctx context.Context, tx *coord.Txn) error {
	byFile, err := s.archiveLines(tx.Outbox, tx.Now)
	if err != nil {
		return err
	}
	return s.appendArchive(ctx, byFile)
}

// archiveLines renders tasks as archive lines by month file, each one
// read back as the archive's reader reads it: a line it would refuse is
// refused here (coord.Unreadable), before anything is written.
func (s *Backend) archiveLines(tasks []*coord.Task, now time.Time) (map[string][]byte, error) {
	byFile := map[string][]byte{}
	for _, t := range tasks {
		line, err := format.TaskLine(t)
		if err != nil {
			return nil, IOError(err, "")
		}
		name := ArchiveDir + "/" + coord.ArchiveMonth(t.CompletedAt, now) + ".jsonl"
		if _, err := format.ParseTaskLine(s.tree.Path(name), line); err != nil {
			return nil, coord.Unreadable(s.tree.Path(name), fmt.Sprintf("task %q would not read back from it (%s)", t.ID, coord.Clip(coord.OneLine(err.Error()), 200)))
		}
		byFile[name] = append(append(byFile[name], line...), '\n')
	}
	return byFile, nil
}

// appendArchive appends each month file's lines, refusing (before
// anything is written) to make any file larger than the archive's reader
// reads (MaxRegistrySize).
func (s *Backend) appendArchive(ctx context.Context, byFile map[string][]byte) error {
	unlock, err := s.lock(ctx, archiveLock)
	if err != nil {
		return err
	}
	defer unlock()
	if err := s.tree.MkdirAll(ArchiveDir, 0o755); err != nil {
		return IOError(err, "")
	}
	names := make([]string, 0, len(byFile))
	for n := range byFile {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		size := int64(0)
		if fi, err := s.tree.Lstat(n); err == nil {
			size = fi.Size()
		}
		if size+int64(len(byFile[n])) > MaxRegistrySize {
			return coord.Unreadable(s.tree.Path(n), fmt.Sprintf("it would be larger than %d bytes, the most coord reads", int64(MaxRegistrySize))).
				WithHint("move the month's archive file out of the tree (it stays readable as JSON Lines) and archive again")
		}
	}
	for _, n := range names {
		if err := s.tree.AppendLine(n, byFile[n]); err != nil {
			return IOError(err, "")
		}
		if err := s.tree.SyncFile(n); err != nil {
			return IOError(err, "")
		}
	}
	return IOError(s.tree.SyncDir(ArchiveDir), "")
}

// ArchivedTasks reads every archive file, oldest month first. A torn last
// line (a crash mid-append) is skipped; an id archived twice counts once
// (the later line wins).
func (s *Backend) archivedTasks(ctx context.Context) ([]*coord.Task, error) {
	ents, err := s.tree.ReadDir(ArchiveDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, IOError(err, "")
	}
	var out []*coord.Task
	at := map[string]int{}
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".jsonl") || IsTempName(e.Name()) {
			continue
		}
		name := ArchiveDir + "/" + e.Name()
		data, err := s.tree.ReadFile(name, MaxRegistrySize)
		if err != nil {
			return nil, IOError(err, "")
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 64<<10), MaxRegistrySize)
		n, complete := 0, bytes.Count(data, []byte{'\n'})
		for sc.Scan() {
			n++
			line := sc.Bytes()
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			if n > complete {
				break // torn tail: a crash cut the last append short
			}
			t, err := format.ParseTaskLine(s.tree.Path(name)+": line "+strconv.Itoa(n), line)
			if err != nil {
				return nil, IOError(&format.ParseError{File: s.tree.Path(name), Msg: strings.TrimPrefix(err.Error(), s.tree.Path(name)+": ")}, "")
			}
			t.Dirty = false
			if i, dup := at[t.ID]; dup {
				out[i] = t
				continue
			}
			at[t.ID] = len(out)
			out = append(out, t)
		}
	}
	return out, nil
}

// archivedLookup returns a lazy Txn.Archived: the archive is read only if
// some dependency names no task in the registry.
func (s *Backend) archivedLookup() func(id string) bool {
	var ids map[string]bool
	return func(id string) bool {
		if ids == nil {
			ids = map[string]bool{}
			if tasks, err := s.archivedTasks(context.Background()); err == nil {
				for _, t := range tasks {
					ids[t.ID] = true
				}
			}
		}
		return ids[id]
	}
}
