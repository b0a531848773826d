package file

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/fsops"
	"github.com/rotd/coordination/registry/format"
)

// The epoch high-water mark, EpochFile: the highest fencing token the
// tree has issued or recorded, in decimal. An epoch is issued once in a
// tree's life, but the registry alone cannot promise that: restoring an
// older active_work_registry.json (a backup, a 'git checkout' of a
// committed .rotd/) brings back an older last_epoch. The mark lives apart
// from the registry, with the runtime state in .lock/, which version
// control never needs to hold, so a restored registry does not bring it
// back.
//
// Rules (every step under the registry flock):
//   - the counter a claim increments is max(registry last_epoch, every
//     task's epoch, the mark);
//   - the mark is raised before an epoch is handed out: a commit that
//     issues one writes it before the lock files and the registry
//     rename, which stays the commit point; the reconcile step raises it
//     past an unbacked lock's epoch before it removes that lock;
//   - it never goes back: it is only ever written with a larger value,
//     or after a scan, with the highest epoch recorded anywhere;
//   - the newest claim line at the end of the current log counts too
//     (epochs grow with time, so it holds the log's highest): a cheap
//     check that catches a registry restored together with a mark that
//     was under version control, when the log was not;
//   - a missing or unreadable mark (a new tree, a tree from an older
//     coord, a power loss that left it empty) is rebuilt by a full scan
//     of everything that records epochs: the registry, the lock files,
//     the archive and the logs. So is a mark behind the tree, by
//     'coord doctor --repair'.
//
// The mark is replaced atomically without its own fsync: the registry's
// fsyncs that follow in the same commit make it durable on journaling
// file systems, and should a power loss still take it, the durable
// registry holds the epoch and an empty mark is rebuilt by the scan.

// readEpochMark returns the mark; ok is false when it is missing or does
// not hold a counter (see readMark).
func (s *Backend) readEpochMark() (mark int64, ok bool, err error) { return s.readMark(EpochFile) }

func (s *Backend) writeEpochMark(n int64) error { return s.writeMark(EpochFile, n) }

// readMark reads a high-water mark (EpochFile, LeaseEpochFile,
// KVRevFile); ok is false when it is missing or does not hold a counter:
// a decimal from 0 to coord.MaxCounter (a larger one was never issued:
// a hand edit put it there, and it must not stop every later issue).
func (s *Backend) readMark(name string) (mark int64, ok bool, err error) {
	data, err := s.tree.ReadFile(name, 64)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fsops.ErrTooLarge):
		return 0, false, nil
	case err != nil:
		return 0, false, IOError(err, "remove "+s.tree.Path(name)+"; coord rebuilds it")
	}
	n, perr := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if perr != nil || !coord.CounterOK(n) {
		return 0, false, nil
	}
	return n, true, nil
}

// writeMark replaces a high-water mark (atomically; its durability is
// the commit's that follows: see above).
func (s *Backend) writeMark(name string, n int64) error {
	if err := s.tree.ReplaceFile(name, []byte(strconv.FormatInt(n, 10)+"\n"), 0o644); err != nil {
		return IOError(err, "")
	}
	return nil
}

// epochFloor raises tx.LastEpoch to the mark and returns the mark. A
// missing or damaged mark is rebuilt first, from a full scan.
func (s *Backend) epochFloor(tx *coord.Txn) (int64, error) {
	mark, ok, err := s.readEpochMark()
	if err != nil {
		return 0, err
	}
	if !ok {
		hi, err := s.highestEpoch(tx)
		if err != nil {
			return 0, err
		}
		mark = max(hi.Epoch, tx.LastEpoch)
		if err := s.writeEpochMark(mark); err != nil {
			return 0, err
		}
	}
	tx.LastEpoch = max(tx.LastEpoch, mark, s.lastLoggedEpoch())
	return mark, nil
}

// logTailBudget bounds how much of the current log's end every mutation
// reads to find the newest claim line: one read block.
const logTailBudget = logBlock

// lastLoggedEpoch returns the epoch of the newest claim line within the
// last logTailBudget bytes of the current log (0 if there is none). It is
// a check on top of the mark: a log it cannot read (doctor reports it)
// counts as holding none, and does not stop the command.
func (s *Backend) lastLoggedEpoch() int64 {
	var n int64
	if _, _, err := s.tailLog(LogFile, logTailBudget, func(line string) bool {
		e, ok := coord.ClaimedEpoch(line)
		n = coord.Counted(e)
		return ok
	}); err != nil {
		return 0
	}
	return n
}

// raiseEpochMark makes the mark at least n before evidence of n is
// removed or n is handed out.
func (s *Backend) raiseEpochMark(mark *int64, n int64) error {
	if n <= *mark {
		return nil
	}
	if err := s.writeEpochMark(n); err != nil {
		return err
	}
	*mark = n
	return nil
}

// EpochSeen is the highest epoch found in the tree and the file that
// records it.
type EpochSeen struct {
	Epoch int64
	Where string
}

// highestEpoch scans everything in the tree that records an epoch: the
// registry as loaded in tx (its last_epoch and every task's epoch), every
// lock file, every archived task and every claim line of every log.
// Unreadable files are skipped (as far as they cannot be read): the scan
// looks for the highest token, and doctor reports broken files on its
// own.
func (s *Backend) highestEpoch(tx *coord.Txn) (EpochSeen, error) {
	best := EpochSeen{tx.LastEpoch, RegistryFile}
	see := func(n int64, where string) {
		if n > best.Epoch && coord.CounterOK(n) { // above the ceiling: never issued
			best = EpochSeen{n, where}
		}
	}
	ents, err := s.tree.ReadDir(LocksDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return best, IOError(err, "")
	}
	for _, e := range ents {
		if _, _, ok := SplitLockName(e.Name()); !ok || !e.Type().IsRegular() {
			continue
		}
		if n, ok := s.lockEpoch(e.Name()); ok {
			see(n, LocksDir+"/"+e.Name())
		}
	}
	ents, err = s.tree.ReadDir(ArchiveDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return best, IOError(err, "")
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".jsonl") || IsTempName(e.Name()) {
			continue
		}
		name := ArchiveDir + "/" + e.Name()
		see(s.archiveEpoch(name), name)
	}
	files, err := s.logFiles()
	if err != nil {
		return best, err
	}
	for _, name := range files {
		var logMax int64
		s.scanLog(name, func(line string) error {
			if n, ok := coord.ClaimedEpoch(line); ok {
				logMax = max(logMax, coord.Counted(n))
			}
			return nil
		})
		see(logMax, name+" (a claim line)")
	}
	return best, nil
}

// lockEpoch reads the epoch recorded in agent_locks/name.
func (s *Backend) lockEpoch(name string) (int64, bool) {
	path := LocksDir + "/" + name
	data, err := s.tree.ReadFile(path, maxSmallFile)
	if err != nil {
		return 0, false
	}
	li, err := format.ParseLockInfo(s.tree.Path(path), data)
	if err != nil || !coord.CounterOK(li.Epoch) {
		return 0, false
	}
	return li.Epoch, true
}

// archiveEpoch returns the highest epoch of the tasks in one archive file,
// streamed line by line (0 if it cannot be read).
func (s *Backend) archiveEpoch(name string) int64 {
	f, err := s.tree.Open(name)
	if err != nil {
		return 0
	}
	defer f.Close()
	var hi int64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), MaxRegistrySize)
	for sc.Scan() {
		var t struct {
			Epoch int64 `json:"epoch"`
		}
		if json.Unmarshal(sc.Bytes(), &t) == nil {
			hi = max(hi, coord.Counted(t.Epoch))
		}
	}
	return hi
}

// epochProblems is doctor's check of the epoch counter: the counter a
// claim would increment must be at least the highest epoch recorded
// anywhere in the tree; --repair raises the mark and the registry's
// last_epoch to it.
func (s *Backend) epochProblems(tx *coord.Txn, f *format.Registry) []coord.Problem {
	mark, ok, err := s.readEpochMark()
	if err != nil {
		return []coord.Problem{{What: err.Error()}}
	}
	hi, err := s.highestEpoch(tx)
	if err != nil {
		return []coord.Problem{{What: err.Error()}}
	}
	counter := max(tx.LastEpoch, mark)
	var probs []coord.Problem
	switch {
	case hi.Epoch > counter:
		probs = append(probs, coord.Problem{
			What: fmt.Sprintf("epoch counter %d is behind the highest epoch %d recorded in %s: a claim would reissue a fencing token", counter, hi.Epoch, hi.Where),
			Fix: removeFix(func() error {
				if err := s.writeEpochMark(hi.Epoch); err != nil {
					return err
				}
				if f.LastEpoch >= hi.Epoch {
					return nil
				}
				f.LastEpoch = hi.Epoch
				return s.writeRegistry(f, true)
			}),
		})
	case !ok:
		if _, err := s.tree.Lstat(EpochFile); err == nil {
			probs = append(probs, coord.Problem{
				What: fmt.Sprintf("epoch mark %s does not hold a number from 0 to %d", EpochFile, coord.MaxCounter),
				Fix:  removeFix(func() error { return s.writeEpochMark(counter) }),
			})
		}
	}
	// Values above the counter ceiling were never issued: they raise
	// nothing (coord.Counted) but are damage. --repair gives each such
	// task a new epoch (a holder fenced by the old one claims again; the
	// lock file is then rewritten from the registry) and puts last_epoch
	// back on the counter, the mark raised first.
	issued := max(counter, hi.Epoch) // never one recorded anywhere
	write := func() error {
		if err := s.raiseEpochMark(&mark, issued); err != nil {
			return err
		}
		f.LastEpoch = issued
		return s.writeRegistry(f, true)
	}
	if !coord.CounterOK(f.LastEpoch) {
		probs = append(probs, coord.Problem{
			What: coord.CounterDamage(RegistryFile+" last_epoch", f.LastEpoch),
			Fix:  removeFix(write),
		})
	}
	for _, t := range tx.Tasks {
		if coord.CounterOK(t.Epoch) {
			continue
		}
		probs = append(probs, coord.Problem{
			What: coord.CounterDamage("task "+t.ID+"'s epoch", t.Epoch),
			Fix: func() (string, error) {
				next, err := coord.NextCounter("epoch", issued)
				if err != nil {
					return "", err
				}
				issued, t.Epoch, t.Dirty = next, next, true
				return fmt.Sprintf("gave it epoch %d", next), write()
			},
		})
	}
	// Temp files of an interrupted mark write (where older coords made
	// them).
	ents, _ := s.tree.ReadDir(LockDir)
	var notes problems
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".epoch") && IsTempName(e.Name()) && e.Type().IsRegular() {
			s.tempNote(&notes, LockDir+"/"+e.Name())
		}
	}
	return append(probs, notes...)
}
