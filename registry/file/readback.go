package file

import (
	"errors"
	"fmt"
	"io"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/fsops"
	"github.com/rotd/coordination/registry/format"
)

// No commit ever writes a file coord cannot read back (docs/FORMATS.md#reading-strictly).
// Every write of a data file goes through writeRegistry or writeDoc,
// which hold it to the file's reader before anything is written: the
// bound the reader reads it with (readLimit, the one table both sides
// use) and the reader's own parse. What the reader would refuse is
// refused with coord.Unreadable (exit 1, naming the file), and the file
// stays as it was.
//
// The registry is the one file written on every claim, so it is not
// parsed again whole: format.Registry.EncodeTo parses back what it writes
// anew (changed tasks, path locks and agents) and checks that every id
// appears once, and the bytes are counted against MaxRegistrySize as they
// stream to the temp file, which never replaces the registry unless the
// whole document was written.

// readLimit is the bound a data file is read with, and so the most any
// writer may write to it.
func readLimit(name string) int64 {
	switch name {
	case RegistryFile:
		return MaxRegistrySize
	case DepMapFile, QuotaFile:
		return maxSmallFile * 16
	case KVFile, LeasesFile:
		return maxSmallFile * 64
	}
	return maxSmallFile // config.json, lock files
}

// registryBackups are the generations of the registry kept in .backup/,
// newest first: the registry itself (0), then the Backups it replaced.
var registryBackups = func() []string {
	out := make([]string, Backups+1)
	for i := range out {
		out[i] = BackupName(i)
	}
	return out
}()

// writeRegistry replaces the registry with f's encoding, refusing one
// its reader would not take back (see above). With keep, the backups in
// .backup/ move a generation on (backup.go): the registry it replaces
// (which the caller has just read and parsed under the registry's flock)
// and the new one are kept by hard link, no data copied; a backup that
// could not be kept is a warning, never the commit's failure. After the rename, a failed directory fsync is a
// warning too: the registry is replaced and every reader sees it.
func (s *Backend) writeRegistry(f *format.Registry, keep bool) error {
	var backups []string
	if keep {
		backups = registryBackups
	}
	err := s.tree.WriteFileFromKeeping(RegistryFile, 0o644, func(w io.Writer) error {
		return f.EncodeTo(&capped{w: w, left: MaxRegistrySize, limit: MaxRegistrySize})
	}, backups)
	var nd *fsops.NotDurableError
	var ke *fsops.KeepError
	var ee *format.EncodeError
	var ol *overLimit
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee):
		return coord.Unreadable(s.tree.Path(RegistryFile), ee.Msg).
			WithHint("this is a bug in coord; please report it with the command that failed")
	case errors.As(err, &ol):
		return s.tooLarge(RegistryFile, ol.limit)
	case errors.As(err, &nd) || errors.As(err, &ke):
		s.warn(err) // committed: readers see it
		return nil
	}
	return IOError(err, "")
}

// writeDoc replaces the data file name with data once the file's reader
// would take it: within its read bound, and accepted by parse (the
// reader's own parse, given the file's path for its messages). It returns
// the write's own error as fsops gives it (a *fsops.NotDurableError
// means written), or a coded refusal with nothing written.
func (s *Backend) writeDoc(name string, data []byte, parse func(path string, data []byte) error) error {
	if err := s.checkDoc(name, data, parse); err != nil {
		return err
	}
	return s.tree.WriteFile(name, data, 0o644)
}

// checkDoc is writeDoc's check alone: nil when name's reader would take
// data, else the coded refusal.
func (s *Backend) checkDoc(name string, data []byte, parse func(path string, data []byte) error) error {
	if max := readLimit(name); int64(len(data)) > max {
		return s.tooLarge(name, max)
	}
	if err := parse(s.tree.Path(name), data); err != nil {
		why := err.Error()
		var pe *format.ParseError
		var ce *coord.Error
		switch {
		case errors.As(err, &pe):
			why = pe.Msg
		case errors.As(err, &ce):
			why = ce.Msg
		}
		return coord.Unreadable(s.tree.Path(name), "it would not read back ("+coord.Clip(coord.OneLine(why), 200)+")")
	}
	return nil
}

// tooLarge refuses a write of name over its read bound.
func (s *Backend) tooLarge(name string, limit int64) error {
	hint := "make the change smaller"
	switch name {
	case RegistryFile:
		hint = "archive done tasks ('coord archive'), or add fewer or smaller tasks"
	case KVFile:
		hint = "delete keys or let them expire, or store smaller values"
	case LeasesFile:
		hint = "release leases no longer needed"
	}
	return coord.Unreadable(s.tree.Path(name), fmt.Sprintf("it would be larger than %d bytes, the most coord reads", limit)).
		WithHint("%s", hint)
}

// overLimit is capped's refusal.
type overLimit struct{ limit int64 }

func (e *overLimit) Error() string { return fmt.Sprintf("more than %d bytes", e.limit) }

// capped passes writes through until more than limit bytes would have
// been written; then it refuses (and every write after).
type capped struct {
	w     io.Writer
	left  int64 // of limit
	limit int64
}

func (c *capped) Write(p []byte) (int, error) {
	if int64(len(p)) > c.left {
		c.left = -1
		return 0, &overLimit{c.limit}
	}
	c.left -= int64(len(p))
	return c.w.Write(p)
}
