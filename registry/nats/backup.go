package nats

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/format"
)

// Backups of the registry (docs/FORMATS.md#backups): the backup stream (init.go,
// makeBackupStream) sources the revisions of the registry's key from the
// bucket and keeps the last Backups+1. The server copies each commit
// there itself, shortly after it lands (no client sends a byte more; the
// server stores each revision twice): a source is asynchronous, so a
// revision replaced within that moment may be skipped, and the newest
// backup is normally the registry as it stands. The bucket itself keeps one
// revision per key, as it always has: keeping history there would let an
// older revision of a lease or kv key resurface when a newer one's TTL
// runs out (and an older coord, which does not expect it, may share the
// namespace). When the registry cannot be read, every command says to run
// 'coord doctor --repair', which puts back the newest revision of the
// backup stream that reads as a registry, by compare-and-set on the
// damaged revision, and logs that it did.

// repairHint is what every refusal of an unreadable registry says.
const repairHint = "run 'coord doctor --repair': it restores the newest readable backup of the registry"

// backup is a revision of the registry kept in the backup stream.
type backup struct {
	data []byte
	at   time.Time // when it was committed (the server's clock)
	seq  uint64    // its sequence in the backup stream
}

// newestBackup returns the newest revision in the backup stream that
// reads as a registry; ok is false when there is none (or no stream).
func (b *Backend) newestBackup(ctx context.Context) (bk backup, ok bool, err error) {
	var msgs []*msg
	err = b.w.batchFrom(ctx, b.names.backup, 1, 0, func(m *msg) error {
		if m.subject == b.names.pre+keyRegistry && !m.deleted() {
			msgs = append(msgs, m)
		}
		return nil
	})
	if errors.Is(err, errNoStream) {
		return backup{}, false, nil
	}
	if err != nil {
		return backup{}, false, b.ioErr(err, "reading the registry's backups")
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		d, err := b.docFrom(keyRegistry, msgs[i])
		if err != nil || !d.present() {
			continue
		}
		if _, err := format.Parse("backup", d.data); err != nil {
			continue
		}
		return backup{data: d.data, at: msgs[i].at, seq: msgs[i].seq}, true, nil
	}
	return backup{}, false, nil
}

// restoreRegistry replaces the registry's revision m (damaged) with bk,
// and logs it. A backup older than the last claim must not let a claim
// reissue an epoch: its counter is raised to the highest epoch the log
// records first.
func (b *Backend) restoreRegistry(ctx context.Context, m *msg, bk backup) (string, error) {
	base := &doc{key: keyRegistry}
	if m != nil {
		base.seq, base.txn, base.ring = m.seq, m.hdr.Get(hdrTxn), m.hdr.Get(hdrRecent)
	}
	data := bk.data
	seen, err := b.loggedEpoch(ctx)
	if err != nil {
		return "", err
	}
	if f, err := format.Parse(b.where(keyRegistry), data); err == nil && seen > f.LastEpoch {
		f.LastEpoch = seen
		if data, err = b.encodeRegistry(f); err != nil {
			return "", err
		}
	}
	if _, err := b.commit(ctx, base, data, 0, nil); err != nil {
		if errors.Is(err, errConflict) {
			return "it changed meanwhile; left alone", nil
		}
		return "", err
	}
	done := fmt.Sprintf("restored the registry from its backup of %s (stream %s, sequence %d)", coord.FormatTime(bk.at), b.names.backup, bk.seq)
	now, err := b.serverNow(ctx)
	if err != nil {
		now = b.clock()
	}
	if err := b.appendLog(ctx, coord.Event{Time: now, Agent: coord.CoordinatorID, Text: "repaired: " + done}); err != nil {
		b.warn(fmt.Errorf("restored, but the log line was not written: %w", err))
	}
	return done, nil
}

// checkRegistry reports a registry that cannot be read, with the restore
// of its newest readable backup as the fix; ok is true when it reads (f
// is then the registry).
func (b *Backend) checkRegistry(ctx context.Context, add func(func() (string, error), string, ...any)) (f *format.Registry, ok bool) {
	m, err := b.readLast(ctx, b.names.pre+keyRegistry)
	if err != nil {
		add(nil, "%v", b.ioErr(err, ""))
		return nil, false
	}
	var problem error
	switch d, err := b.docFrom(keyRegistry, m); {
	case err != nil:
		problem = err
	case !d.present():
		problem = fmt.Errorf("%s: no registry", b.where(keyRegistry))
	default:
		if f, err = format.Parse(b.where(keyRegistry), d.data); err == nil {
			return f, true
		}
		problem = err
	}
	what := coord.OneLine(problem.Error())
	if ce := (*coord.Error)(nil); errors.As(problem, &ce) {
		what = ce.Msg
	}
	bk, found, err := b.newestBackup(ctx)
	switch {
	case err != nil:
		add(nil, "%s; its backups cannot be read: %v", what, err)
	case !found:
		add(nil, "%s; no readable backup is kept in stream %s: restore the key from a copy ('coord backend copy') or fix it by hand", what, b.names.backup)
	default:
		add(func() (string, error) { return b.restoreRegistry(ctx, m, bk) },
			"%s; --repair restores its newest readable backup (of %s)", what, coord.FormatTime(bk.at))
	}
	return nil, false
}

// checkBackupStream reports a namespace without the backup stream (made
// before it existed), with its creation as the fix.
func (b *Backend) checkBackupStream(ctx context.Context, add func(func() (string, error), string, ...any)) {
	if _, err := b.w.streamInfo(ctx, b.names.backup); !errors.Is(err, errNoStream) {
		return // there, or reported with the other streams
	}
	add(func() (string, error) {
		js, err := jetstream.New(b.nc, jetstream.WithDefaultTimeout(30*time.Second))
		if err != nil {
			return "", b.ioErr(err, "")
		}
		replicas := 1
		if b.clustered {
			replicas = 3
		}
		return "made it", b.makeBackupStream(ctx, js, replicas)
	}, "stream %s is missing: the registry keeps no backups", b.names.backup)
}
