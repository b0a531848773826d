package nats

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/format"
)

// tasks is the registry document as a coord.TaskStore.
type tasks struct{ b *Backend }

func (t tasks) Update(ctx context.Context, fn func(*coord.Txn) error) error {
	return t.b.updateRegistry(ctx, fn)
}

func (t tasks) View(ctx context.Context, fn func(*coord.Txn) error) error {
	tx, _, _, err := t.b.loadRegistry(ctx)
	if err != nil {
		return err
	}
	return fn(tx)
}

func (t tasks) ArchivedTasks(ctx context.Context) ([]*coord.Task, error) {
	return t.b.archivedTasks(ctx)
}

// loadRegistry reads the registry and the dependency map in one round
// trip into a Txn whose Now is the server's time.
func (b *Backend) loadRegistry(ctx context.Context) (*coord.Txn, *format.Registry, *doc, error) {
	clock := b.srv.start(ctx, b)
	docs, err := b.readDocs(ctx, keyRegistry, keyDepMap)
	if err != nil {
		clock()
		return nil, nil, nil, err
	}
	reg := docs[keyRegistry]
	if !reg.present() {
		clock()
		return nil, nil, nil, coord.Errorf(coord.CodeIO, "%s: no registry", b.where(keyRegistry)).
			WithHint("if the project had tasks, %s; a new project: 'coord init --backend %s'", repairHint, b.url)
	}
	f, err := format.Parse(b.where(keyRegistry), reg.data)
	if err != nil {
		clock()
		return nil, nil, nil, coord.Errorf(coord.CodeIO, "%v", err).WithHint(repairHint)
	}
	var deps map[string][]string
	if dm := docs[keyDepMap]; dm.present() {
		if deps, err = format.ParseDepMap(b.where(keyDepMap), dm.data); err != nil {
			clock()
			return nil, nil, nil, coord.Errorf(coord.CodeIO, "%v", err).WithHint("fix the dependency map; 'coord doctor' checks it")
		}
	}
	if err := clock(); err != nil {
		return nil, nil, nil, b.ioErr(err, "")
	}
	tx := &coord.Txn{Tasks: f.Tasks, DepMap: deps, Now: b.srv.now(), Archived: b.archivedLookup(ctx), PathLocks: f.PathLocks, Pool: f.Agents}
	tx.UseIndex(f.Index())
	tx.LastEpoch = max(tx.LastEpoch, coord.Counted(f.LastEpoch)) // one above the ceiling was never issued
	return tx, f, reg, nil
}

// updateRegistry runs fn on the registry and commits what it changed by
// compare-and-set, retrying on a lost race (fn runs again on the new
// state) until the lock wait; then it appends the Txn's events to the
// log.
func (b *Backend) updateRegistry(ctx context.Context, fn func(*coord.Txn) error) error {
	unlock, err := b.lock(ctx, "registry", b.holderName())
	if err != nil {
		return err
	}
	var tx *coord.Txn
	var f *format.Registry
	err = b.update(ctx, "the registry", func(ctx context.Context) (*doc, error) {
		var reg *doc
		var err error
		tx, f, reg, err = b.loadRegistry(ctx)
		return reg, err
	}, func(reg *doc) ([]byte, error) {
		before, n := tx.LastEpoch, len(tx.Tasks)
		tx.PathLocksDirty, tx.PoolDirty = false, false
		if err := fn(tx); err != nil {
			return nil, err
		}
		dirty := tx.LastEpoch != before || len(tx.Tasks) != n || tx.PathLocksDirty || tx.PoolDirty || len(tx.Outbox) > 0
		for _, t := range tx.Tasks {
			if t.Dirty {
				dirty = true
				break
			}
		}
		if !dirty {
			return nil, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, b.ioErr(err, "")
		}
		if len(tx.Outbox) > 0 {
			// The archive first: a crash before the commit leaves the
			// tasks in both places (the registry wins), never in neither.
			if err := b.archiveOutbox(ctx, tx); err != nil {
				return nil, err
			}
		}
		f.Tasks = tx.Tasks
		f.PathLocks = tx.PathLocks
		f.Agents = tx.Pool
		if tx.LastEpoch > f.LastEpoch || !coord.CounterOK(f.LastEpoch) {
			f.LastEpoch = tx.LastEpoch // a value above the ceiling was never issued
		}
		f.Touch(tx.Now)
		// The log lines follow the commit: one no reader would take
		// back refuses the commit now, before anything is written.
		if _, err := coord.LogLines(b.url.String()+" log", tx.Events); err != nil {
			return nil, err
		}
		return b.encodeRegistry(f)
	})
	unlock()
	if err != nil {
		return err
	}
	// Committed (or nothing to commit): the log lines follow in the
	// background, in order, while the caller goes on (its next write, a
	// heartbeat, overlaps their sync); Close waits for them. A failure now
	// is a warning.
	if tx != nil && len(tx.Events) > 0 {
		b.logLater(tx.Events)
	}
	return nil
}

// logLater appends events to the log from the backend's one log writer,
// so lines keep the order of their commits.
func (b *Backend) logLater(events []coord.Event) {
	b.logMu.Lock()
	defer b.logMu.Unlock()
	if b.logQ == nil {
		q, done := make(chan []coord.Event, 64), make(chan struct{})
		b.logQ, b.logDone = q, done
		go func() { // q and done, not the fields: flushLog clears them
			defer close(done)
			for evs := range q {
				if err := b.appendLog(context.Background(), evs...); err != nil {
					b.warn(fmt.Errorf("committed, but the log line was not written: %w", err))
				}
			}
		}()
	}
	b.logQ <- events
}

// flushLog waits until every log line queued so far is written.
func (b *Backend) flushLog() {
	b.logMu.Lock()
	q, done := b.logQ, b.logDone
	b.logQ = nil
	b.logMu.Unlock()
	if q != nil {
		close(q)
		<-done
	}
}

// archiveOutbox stores the outbox's tasks in the archive stream, one
// message, acknowledged before the registry commit that drops them.
func (b *Backend) archiveOutbox(ctx context.Context, tx *coord.Txn) error {
	var buf bytes.Buffer
	for _, t := range tx.Outbox {
		line, err := b.archiveLine(t)
		if err != nil {
			return err
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return b.publishAppend(ctx, b.names.arcSubj, buf.Bytes(), "the archive")
}

// publishAppend stores one message in an append-only stream, retrying
// while no server answers. A retried append may be stored twice (its
// first answer lost); readers of the log and the archive tolerate that.
func (b *Backend) publishAppend(ctx context.Context, subject string, data []byte, what string) error {
	ctx = context.WithoutCancel(ctx)
	if max := b.nc.MaxPayload(); int64(len(data))+1024 > max {
		return coord.Errorf(coord.CodeUsage, "%s: %s message would be %d bytes, more than the server's max_payload of %d; nothing was written", b.url, what, len(data), max).
			WithHint("make the change smaller, or raise the server's max_payload")
	}
	return b.retryWrite(ctx, what, nil, func() error {
		_, err := b.w.publish(ctx, subject, data, noHeaders())
		return err
	})
}

// archivedTasks reads the whole archive stream, oldest first; an id
// archived twice counts once (the later line wins).
func (b *Backend) archivedTasks(ctx context.Context) ([]*coord.Task, error) {
	var out []*coord.Task
	at := map[string]int{}
	err := b.w.batchFrom(ctx, b.names.arc, 1, 0, func(m *msg) error {
		for n, line := range bytes.Split(m.data, []byte{'\n'}) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			where := b.url.String() + " archive message " + strconv.FormatUint(m.seq, 10) + ": line " + strconv.Itoa(n+1)
			t, err := format.ParseTaskLine(where, line)
			if err != nil {
				return coord.Errorf(coord.CodeIO, "%s", strings.TrimSpace(err.Error()))
			}
			t.Dirty = false
			if i, dup := at[t.ID]; dup {
				out[i] = t
				continue
			}
			at[t.ID] = len(out)
			out = append(out, t)
		}
		return nil
	})
	if err != nil {
		return nil, b.ioErr(err, "reading the archive")
	}
	return out, nil
}

// archivedLookup returns a lazy Txn.Archived: the archive is read only if
// some dependency names no task in the registry.
func (b *Backend) archivedLookup(ctx context.Context) func(id string) bool {
	var ids map[string]bool
	return func(id string) bool {
		if ids == nil {
			ids = map[string]bool{}
			if tasks, err := b.archivedTasks(ctx); err == nil {
				for _, t := range tasks {
					ids[t.ID] = true
				}
			}
		}
		return ids[id]
	}
}
