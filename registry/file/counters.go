package file

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rotd/coordination/coord"
)

// The lease epochs and the kv revisions have high-water marks as the task
// epochs do (epoch.go), for the same reason: leases.json and kv.json each
// hold their counter (last_epoch, last_rev), and restoring either from an
// older copy (a backup, doctor's "restore it from version control") would
// bring an older counter back, and the next grant or write would issue a
// value already issued. LeaseEpochFile and KVRevFile live in .lock/ with
// the runtime state, so a restored document does not bring them back.
//
// Rules (under the document's flock): the counter a grant or write
// increments is max(the document's counter, every epoch or revision it
// records, the mark), values above coord.MaxCounter not counting; the
// mark is raised before the document that hands out a new value is
// written; it never goes back. A missing or unreadable mark counts as 0:
// the document alone then gives the floor, as it did before marks, and
// the next write rebuilds the mark (and so does doctor --repair).

// updateCounted runs fn on the document of one counter under its lock:
// the document's counter raised to its mark first (raise), the mark
// raised to the counter (counter) before a changed document is written.
func updateCounted[T any](ctx context.Context, s *Backend, file, lock, markFile string,
	raise func(d *T, mark int64), counter func(d *T) int64, fn func(d *T) (bool, error)) error {
	var mark int64
	var ok bool
	return updateDocThen(ctx, s, file, lock, func(d *T) (bool, error) {
		var err error
		if mark, ok, err = s.readMark(markFile); err != nil {
			return false, err
		}
		raise(d, mark)
		return fn(d)
	}, func(d *T) error {
		if n := counter(d); n > mark || !ok {
			return s.writeMark(markFile, n)
		}
		return nil
	})
}

func (l leases) update(ctx context.Context, fn func(d *coord.LeaseSet, now time.Time) (bool, error)) error {
	return updateCounted(ctx, l.b, LeasesFile, leasesLock, LeaseEpochFile,
		(*coord.LeaseSet).Raise, func(d *coord.LeaseSet) int64 { return d.LastEpoch },
		func(d *coord.LeaseSet) (bool, error) { return fn(d, l.b.clock()) })
}

func (k kvStore) update(ctx context.Context, fn func(d *coord.KVSpace, now time.Time) (bool, error)) error {
	return updateCounted(ctx, k.b, KVFile, kvLock, KVRevFile,
		(*coord.KVSpace).Raise, func(d *coord.KVSpace) int64 { return d.LastRev },
		func(d *coord.KVSpace) (bool, error) { return fn(d, k.b.clock()) })
}

// raiseMarkTo makes a mark at least n (an import's copied counter).
func (s *Backend) raiseMarkTo(name string, n int64) error {
	mark, _, err := s.readMark(name)
	if err != nil || n <= mark {
		return err
	}
	return s.writeMark(name, n)
}

// counterProblems is doctor's check of the lease and kv counters: a value
// above the counter ceiling in leases.json or kv.json (--repair gives it a
// new epoch or revision, coord.LeaseSet.Mend and KVSpace.Mend, under the
// document's lock), and a mark that does not hold a counter (--repair
// rewrites it from the document). A document that does not parse is
// reported by the parse check.
func (s *Backend) counterProblems() []coord.Problem {
	var probs []coord.Problem
	check := func(file, markFile string, mend func() ([]string, error), repair func() error) {
		if what, err := mend(); err == nil && len(what) > 0 {
			probs = append(probs, coord.Problem{
				What: file + ": " + strings.Join(what, "; "),
				Fix:  removeFix(repair),
			})
		}
		if _, err := s.tree.Lstat(markFile); err == nil {
			if _, ok, err := s.readMark(markFile); err == nil && !ok {
				probs = append(probs, coord.Problem{
					What: fmt.Sprintf("mark %s does not hold a number from 0 to %d", markFile, coord.MaxCounter),
					Fix:  removeFix(repair),
				})
			}
		}
	}
	ctx := context.Background()
	check(LeasesFile, LeaseEpochFile, func() ([]string, error) {
		d, err := readDoc[coord.LeaseSet](s, LeasesFile)
		if err != nil {
			return nil, err
		}
		return d.Mend(), nil
	}, func() error {
		return updateCounted(ctx, s, LeasesFile, leasesLock, LeaseEpochFile, (*coord.LeaseSet).Raise,
			func(d *coord.LeaseSet) int64 { return d.LastEpoch },
			func(d *coord.LeaseSet) (bool, error) { d.Mend(); return true, nil })
	})
	check(KVFile, KVRevFile, func() ([]string, error) {
		d, err := readDoc[coord.KVSpace](s, KVFile)
		if err != nil {
			return nil, err
		}
		return d.Mend(), nil
	}, func() error {
		return updateCounted(ctx, s, KVFile, kvLock, KVRevFile, (*coord.KVSpace).Raise,
			func(d *coord.KVSpace) int64 { return d.LastRev },
			func(d *coord.KVSpace) (bool, error) { d.Mend(); return true, nil })
	})
	return probs
}
