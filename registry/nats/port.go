package nats

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/format"
)

var _ coord.Porter = (*Backend)(nil)

// Export reads the whole namespace for 'coord backend copy': the registry
// at one revision, the dependency map, config and quota, the leases and
// keys in force with their epochs and revisions (and the highest either
// could have been: the stream's last sequence plus the base), every log
// line and every archived task.
func (b *Backend) Export(ctx context.Context) (*coord.Snapshot, error) {
	docs, err := b.readDocs(ctx, keyRegistry, keyDepMap, keyConfig, keyQuota)
	if err != nil {
		return nil, err
	}
	reg := docs[keyRegistry]
	if !reg.present() {
		return nil, coord.Errorf(coord.CodeIO, "%s: no registry", b.where(keyRegistry))
	}
	f, err := format.Parse(b.where(keyRegistry), reg.data)
	if err != nil {
		return nil, coord.Errorf(coord.CodeIO, "%v", err).WithHint("'coord doctor' checks it")
	}
	for _, t := range f.Tasks {
		f.LastEpoch = max(f.LastEpoch, t.Epoch)
	}
	data, err := b.encodeRegistry(f)
	if err != nil {
		return nil, err
	}
	snap := &coord.Snapshot{Registry: data}
	for _, x := range []struct {
		key string
		dst *[]byte
	}{{keyDepMap, &snap.DepMap}, {keyConfig, &snap.Config}, {keyQuota, &snap.Quota}} {
		if d := docs[x.key]; d.present() {
			*x.dst = d.data
		}
	}
	si, err := b.w.streamInfo(ctx, b.names.kv)
	if err != nil {
		return nil, b.ioErr(err, "")
	}
	issued := int64(si.State.LastSeq) + b.meta.Base
	if snap.Leases, err = (leases{b}).List(ctx); err != nil {
		return nil, err
	}
	if snap.KV, err = (kvStore{b}).List(ctx, ""); err != nil {
		return nil, err
	}
	snap.LeaseEpoch, snap.KVRev = issued, issued
	if _, err := (logStore{b}).Read(ctx, 0, func(l string) error { snap.Log = append(snap.Log, l); return nil }); err != nil {
		return nil, err
	}
	if snap.Archive, err = b.archivedTasks(ctx); err != nil {
		return nil, err
	}
	return snap, nil
}

// Import writes a snapshot into a namespace that holds no task, lease or
// key in force: the base is raised past every copied epoch and revision,
// then the archive, the log, the dependency map, config and quota, the
// leases and keys (each with its own epoch or revision, its times, and
// the rest of its TTL), and last the registry, by compare-and-set on the
// revision read when the namespace was found empty.
func (b *Backend) Import(ctx context.Context, snap *coord.Snapshot) error {
	if _, err := format.Parse("the copied registry", snap.Registry); err != nil {
		return coord.Errorf(coord.CodeIO, "%v", err)
	}
	tx, _, reg, err := b.loadRegistry(ctx)
	if err != nil {
		return err
	}
	ls, err := (leases{b}).List(ctx)
	if err != nil {
		return err
	}
	keys, err := (kvStore{b}).List(ctx, "")
	if err != nil {
		return err
	}
	if len(tx.Tasks) > 0 || len(ls) > 0 || len(keys) > 0 {
		return coord.Errorf(coord.CodeConflict, "%s already holds %d tasks, %d leases and %d keys: copying would mix two projects", b.url, len(tx.Tasks), len(ls), len(keys)).
			WithHint("copy into an empty project (a new directory or namespace); nothing was written")
	}
	// Every piece held to its reader first: a copy that could not be read
	// back here is refused whole, nothing written.
	for _, x := range []struct {
		key  string
		data []byte
	}{{keyRegistry, snap.Registry}, {keyDepMap, snap.DepMap}, {keyConfig, snap.Config}, {keyQuota, snap.Quota}} {
		if x.data != nil {
			if err := b.checkKey(x.key, x.data); err != nil {
				return err
			}
		}
	}
	var arcLines [][]byte
	for _, t := range snap.Archive {
		line, err := b.archiveLine(t)
		if err != nil {
			return err
		}
		arcLines = append(arcLines, line)
	}
	for _, l := range snap.Log {
		if err := coord.CheckLogLine(b.url.String()+" log", l); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return b.ioErr(err, "")
	}
	ctx = context.WithoutCancel(ctx)
	// The base first: every epoch and revision issued from now on is
	// larger than every copied one.
	// Values above the counter ceiling were never issued (a hand edit
	// of the source): they raise nothing.
	base := max(b.meta.Base, coord.Counted(snap.LeaseEpoch), coord.Counted(snap.KVRev))
	for _, l := range snap.Leases {
		base = max(base, coord.Counted(l.Epoch))
	}
	for _, e := range snap.KV {
		base = max(base, coord.Counted(e.Rev))
	}
	if base > maxBase {
		return coord.Errorf(coord.CodeUsage, "the copied project has issued lease epochs or kv revisions up to %d; a namespace continues from at most %d", base, maxBase).
			WithHint("nothing was written")
	}
	if base > b.meta.Base {
		m := meta{Version: 1, Base: base}
		data, _ := json.Marshal(m)
		err := b.update(ctx, "the meta key", func(ctx context.Context) (*doc, error) {
			docs, err := b.readDocs(ctx, keyMeta)
			if err != nil {
				return nil, err
			}
			return docs[keyMeta], nil
		}, func(*doc) ([]byte, error) { return data, nil })
		if err != nil {
			return err
		}
		b.meta = m
	}
	if len(arcLines) > 0 {
		if err := b.appendChunks(ctx, b.names.arcSubj, arcLines, "the archive"); err != nil {
			return err
		}
	}
	if len(snap.Log) > 0 {
		lines := make([][]byte, len(snap.Log))
		for i, l := range snap.Log {
			lines[i] = []byte(l)
		}
		if err := b.appendChunks(ctx, b.names.logSubj, lines, "the log"); err != nil {
			return err
		}
	}
	for _, x := range []struct {
		key  string
		data []byte
	}{{keyDepMap, snap.DepMap}, {keyConfig, snap.Config}, {keyQuota, snap.Quota}} {
		if x.data == nil {
			continue
		}
		err := b.update(ctx, "key "+x.key, func(ctx context.Context) (*doc, error) {
			docs, err := b.readDocs(ctx, x.key)
			if err != nil {
				return nil, err
			}
			return docs[x.key], nil
		}, func(*doc) ([]byte, error) { return x.data, nil })
		if err != nil {
			return err
		}
	}
	now, err := b.serverNow(ctx)
	if err != nil {
		return err
	}
	for _, l := range snap.Leases {
		left := l.Expires().Sub(now)
		if left <= 0 {
			continue
		}
		data, _ := json.Marshal(leaseValue{Holder: l.Holder, Epoch: l.Epoch, GrantedAt: l.GrantedAt, ExpiresAt: l.ExpiresAt, TTL: l.TTL, Meta: l.Meta})
		if err := b.put(ctx, preLease+enc(l.Name), data, left+time.Second, "lease "+l.Name); err != nil {
			return err
		}
	}
	for _, e := range snap.KV {
		at, err := coord.ParseTime(e.ExpiresAt)
		left := at.Sub(now)
		if err != nil || left <= 0 {
			continue
		}
		data, _ := json.Marshal(kvValue{Value: e.Value, Rev: e.Rev, ExpiresAt: e.ExpiresAt, UpdatedBy: e.UpdatedBy, UpdatedAt: e.UpdatedAt})
		if err := b.put(ctx, preKV+enc(e.Key), data, left+time.Second, "key "+e.Key); err != nil {
			return err
		}
	}
	_, err = b.commit(ctx, reg, snap.Registry, 0, nil)
	if errors.Is(err, errConflict) {
		return coord.Errorf(coord.CodeConflict, "%s: the registry changed while the copy was written", b.where(keyRegistry)).
			WithHint("someone is using this namespace; the leases, keys and log lines copied are there, the tasks are not")
	}
	return err
}

// appendChunks appends lines to an append-only stream in messages of at
// most 256 KiB.
func (b *Backend) appendChunks(ctx context.Context, subject string, lines [][]byte, what string) error {
	var buf bytes.Buffer
	flush := func() error {
		if buf.Len() == 0 {
			return nil
		}
		err := b.publishAppend(ctx, subject, buf.Bytes(), what)
		buf.Reset()
		return err
	}
	for _, l := range lines {
		if buf.Len()+len(l) > 256<<10 {
			if err := flush(); err != nil {
				return err
			}
		}
		buf.Write(l)
		buf.WriteByte('\n')
	}
	return flush()
}
