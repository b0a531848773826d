package file

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/format"
)

var _ coord.Porter = (*Backend)(nil)

// Export reads the whole tree for 'coord backend copy': the registry as
// the next command would see it (under its flock, reconciled, the epoch
// counter raised to the tree's high-water mark, path locks from the lock
// files if the registry does not hold them yet), then the dependency map,
// config, quota, leases and keys in force, every log line and every
// archived task.
func (s *Backend) Export(ctx context.Context) (*coord.Snapshot, error) {
	snap := &coord.Snapshot{}
	err := s.update(ctx, func(tx *coord.Txn) error {
		data, err := s.tree.ReadFile(RegistryFile, MaxRegistrySize)
		if err != nil {
			return IOError(err, "")
		}
		f, err := format.Parse(s.tree.Path(RegistryFile), data)
		if err != nil {
			return IOError(err, "")
		}
		f.Tasks, f.PathLocks = tx.Tasks, tx.PathLocks
		f.LastEpoch = max(coord.Counted(f.LastEpoch), tx.LastEpoch)
		snap.Registry, err = f.Encode()
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, x := range []struct {
		name string
		dst  *[]byte
	}{{DepMapFile, &snap.DepMap}, {ConfigFile, &snap.Config}, {QuotaFile, &snap.Quota}} {
		data, err := s.tree.ReadFile(x.name, readLimit(x.name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, IOError(err, "")
		}
		*x.dst = data
	}
	now := s.clock()
	ls, err := readDoc[coord.LeaseSet](s, LeasesFile)
	if err != nil {
		return nil, err
	}
	// The counters as issued: the documents' raised to their marks.
	mark, _, err := s.readMark(LeaseEpochFile)
	if err != nil {
		return nil, err
	}
	ls.Raise(mark)
	snap.Leases, snap.LeaseEpoch = ls.InForce(now), ls.LastEpoch
	kv, err := readDoc[coord.KVSpace](s, KVFile)
	if err != nil {
		return nil, err
	}
	if mark, _, err = s.readMark(KVRevFile); err != nil {
		return nil, err
	}
	kv.Raise(mark)
	snap.KV, snap.KVRev = kv.List("", now), kv.LastRev
	if _, err := s.readLog(0, func(line string) error { snap.Log = append(snap.Log, line); return nil }); err != nil {
		return nil, err
	}
	if snap.Archive, err = s.archivedTasks(ctx); err != nil {
		return nil, err
	}
	return snap, nil
}

// Import writes a snapshot into a tree that holds no task, lease or key
// in force, under the registry's flock: the archive, the log lines, the
// dependency map, config, quota, leases and keys, the epoch mark, the
// lock files of claimed tasks, and last the registry.
func (s *Backend) Import(ctx context.Context, snap *coord.Snapshot) error {
	f, err := format.Parse("the copied registry", snap.Registry)
	if err != nil {
		return coord.Errorf(coord.CodeIO, "%v", err)
	}
	unlock, err := s.lock(ctx, registryLock)
	if err != nil {
		return err
	}
	defer unlock()
	tx, _, err := s.load()
	if err != nil {
		return err
	}
	now := s.clock()
	ls, err := readDoc[coord.LeaseSet](s, LeasesFile)
	if err != nil {
		return err
	}
	kv, err := readDoc[coord.KVSpace](s, KVFile)
	if err != nil {
		return err
	}
	if n := len(tx.Tasks); n > 0 || len(ls.InForce(now)) > 0 || len(kv.List("", now)) > 0 {
		return coord.Errorf(coord.CodeConflict, "%s already holds %d tasks, %d leases and %d keys: copying would mix two projects", s.Where(), n, len(ls.InForce(now)), len(kv.List("", now))).
			WithHint("copy into an empty project (a new directory or namespace); nothing was written")
	}
	// Everything to write, each piece held to its reader first: a copy
	// that could not be read back here is refused whole, nothing written.
	type doc struct {
		name  string
		data  []byte
		parse func(path string, data []byte) error
	}
	docs := []doc{{DepMapFile, snap.DepMap, parseDepMap}, {ConfigFile, snap.Config, parseConfig}, {QuotaFile, snap.Quota, parseQuota}}
	// Every counter continues past the copied ones and the tree's own
	// (values above the ceiling were never issued and raise nothing).
	leases := &coord.LeaseSet{Version: 1, LastEpoch: ls.LastEpoch, Leases: snap.Leases}
	leases.Raise(coord.Counted(snap.LeaseEpoch))
	keys := append([]coord.KVEntry(nil), snap.KV...)
	sort.Slice(keys, func(i, j int) bool { return keys[i].Key < keys[j].Key })
	space := &coord.KVSpace{Version: 1, LastRev: kv.LastRev, Keys: keys}
	space.Raise(coord.Counted(snap.KVRev))
	leasesData, _ := json.Marshal(leases)
	kvData, _ := json.Marshal(space)
	docs = append(docs, doc{LeasesFile, append(leasesData, '\n'), parseAs[coord.LeaseSet]}, doc{KVFile, append(kvData, '\n'), parseAs[coord.KVSpace]})
	for _, d := range append(docs, doc{RegistryFile, snap.Registry, parseRegistry}) {
		if d.data == nil {
			continue
		}
		if err := s.checkDoc(d.name, d.data, d.parse); err != nil {
			return err
		}
	}
	var byFile map[string][]byte
	if len(snap.Archive) > 0 {
		if byFile, err = s.archiveLines(snap.Archive, now); err != nil {
			return err
		}
	}
	var logLines []byte
	for _, l := range snap.Log {
		if err := coord.CheckLogLine(s.tree.Path(LogFile), l); err != nil {
			return err
		}
		logLines = append(append(logLines, l...), '\n')
	}
	if err := ctx.Err(); err != nil {
		return IOError(err, "")
	}
	ctx = context.WithoutCancel(ctx)
	if len(byFile) > 0 {
		if err := s.appendArchive(ctx, byFile); err != nil {
			return err
		}
	}
	if len(logLines) > 0 {
		unlockLog, err := s.lock(ctx, logLock)
		if err != nil {
			return err
		}
		err = s.tree.AppendLine(LogFile, logLines)
		unlockLog()
		if err != nil {
			return IOError(err, "")
		}
	}
	if err := s.raiseMarkTo(LeaseEpochFile, leases.LastEpoch); err != nil {
		return err
	}
	if err := s.raiseMarkTo(KVRevFile, space.LastRev); err != nil {
		return err
	}
	for _, d := range docs {
		if d.data == nil {
			continue
		}
		if err := s.writeDoc(d.name, d.data, d.parse); err != nil {
			return IOError(err, "")
		}
	}
	mark, err := s.epochFloor(tx)
	if err != nil {
		return err
	}
	epoch := coord.Counted(f.LastEpoch)
	for _, t := range f.Tasks {
		epoch = max(epoch, coord.Counted(t.Epoch))
	}
	if err := s.raiseEpochMark(&mark, epoch); err != nil {
		return err
	}
	for _, t := range f.Tasks {
		if t.HoldsLock() {
			if err := s.createLock(LocksDir+"/"+LockName(t.ID, t.ClaimedBy), t); err != nil && !errors.Is(err, fs.ErrExist) {
				return IOError(err, "")
			}
		}
	}
	for _, l := range f.PathLocks {
		if err := s.writeMirror(l); err != nil {
			return IOError(err, "")
		}
	}
	if err := s.writeDoc(RegistryFile, snap.Registry, parseRegistry); err != nil {
		return IOError(err, fmt.Sprintf("the registry was not written; the rest of the copy is in %s", s.Where()))
	}
	return nil
}
