package nats

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/format"
)

// HubInfoSubject is where a coord hub answers with its durability
// settings (HubInfo as JSON). Other NATS servers do not answer it.
const HubInfoSubject = "coord.hub.info"

// HubInfo is what a hub says about itself.
type HubInfo struct {
	Version    string `json:"version"`     // the NATS server's
	SyncAlways bool   `json:"sync_always"` // every write synced before it is acknowledged
	Cluster    string `json:"cluster,omitempty"`
	Nodes      int    `json:"nodes"` // configured cluster size (1: single node)
	StoreDir   string `json:"store_dir"`
}

// Doctor checks what the engine can see: the server's version and
// durability (sync on every write, which only a coord hub reports;
// replicated storage in a cluster, a stream leader, replicas current),
// the namespace's streams (file storage, per-key TTL), and every document
// and key (they parse; the epoch counter is not behind an epoch the log
// records), and the registry's backup stream. With repair it restores a
// registry that cannot be read from its newest readable backup (and logs
// it), makes a missing backup stream, removes lease and kv keys that do
// not parse and raises a counter found behind.
func (b *Backend) Doctor(ctx context.Context, repair bool) ([]coord.Problem, error) {
	var probs []coord.Problem
	add := func(fix func() (string, error), format string, args ...any) {
		probs = append(probs, coord.Problem{What: b.url.String() + ": " + fmt.Sprintf(format, args...), Fix: fix})
	}
	if err := b.checkVersion(); err != nil {
		add(nil, "%s", strings.TrimPrefix(err.Error(), b.url.String()+": "))
	}
	b.checkDurability(ctx, add)
	b.checkStreams(ctx, add)
	b.checkBackupStream(ctx, add)
	b.checkDocuments(ctx, add)
	b.checkKeys(ctx, add)
	if repair {
		for i := range probs {
			if probs[i].Fix == nil {
				continue
			}
			done, err := probs[i].Fix()
			if err != nil {
				return probs, err
			}
			probs[i].Fixed = true
			probs[i].What += " (" + done + ")"
		}
	}
	return probs, nil
}

func (b *Backend) hubInfo(ctx context.Context) (*HubInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	m, err := b.nc.RequestWithContext(ctx, HubInfoSubject, nil)
	if err != nil {
		return nil, err
	}
	var hi HubInfo
	if err := json.Unmarshal(m.Data, &hi); err != nil {
		return nil, err
	}
	return &hi, nil
}

func (b *Backend) checkDurability(ctx context.Context, add func(func() (string, error), string, ...any)) {
	hi, err := b.hubInfo(ctx)
	switch {
	case err != nil:
		add(nil, "cannot tell whether the server syncs every write before acknowledging it (it is not a coord hub); by default NATS syncs every 2 minutes and an acknowledged claim can be lost in a power cut: set sync_interval: always in its jetstream block")
	case !hi.SyncAlways:
		add(nil, "the hub does not sync every write before acknowledging it; an acknowledged claim can be lost in a power cut: restart it with coord hub (which sets sync always)")
	}
}

func (b *Backend) checkStreams(ctx context.Context, add func(func() (string, error), string, ...any)) {
	clustered := b.nc.ConnectedClusterName() != ""
	for _, name := range []string{b.names.kv, b.names.log, b.names.arc} {
		si, err := b.w.streamInfo(ctx, name)
		if err != nil {
			add(nil, "stream %s: %v", name, b.ioErr(err, ""))
			continue
		}
		if si.Config.Storage != "file" {
			add(nil, "stream %s keeps %s storage: everything in it is lost when the server restarts", name, si.Config.Storage)
		}
		if si.Config.PersistMode == "async" {
			add(nil, "stream %s persists asynchronously: acknowledged writes can be lost in a crash", name)
		}
		if clustered && si.Config.Replicas < 3 {
			add(nil, "stream %s has %d replica(s) in a cluster: losing its node loses it (recreate the namespace with 'coord backend copy' onto a fresh namespace)", name, si.Config.Replicas)
		}
		if si.Cluster != nil {
			if si.Cluster.Leader == "" {
				add(nil, "stream %s has no leader: a majority of its replicas is unreachable and writes are refused", name)
			}
			for _, r := range si.Cluster.Replicas {
				switch {
				case r.Offline:
					add(nil, "stream %s: replica %s is offline", name, r.Name)
				case !r.Current:
					add(nil, "stream %s: replica %s is behind by %d operations", name, r.Name, r.Lag)
				}
			}
		}
		if name == b.names.kv && !si.Config.AllowMsgTTL {
			add(nil, "bucket %s was created without per-key TTL: leases and keys would never expire (recreate it: copy the project to a new namespace)", b.names.bucket)
		}
	}
}

func (b *Backend) checkDocuments(ctx context.Context, add func(func() (string, error), string, ...any)) {
	docs, err := b.readDocs(ctx, keyDepMap, keyConfig, keyQuota)
	if err != nil {
		add(nil, "%v", err)
		return
	}
	if d := docs[keyConfig]; d.present() {
		if _, err := format.ParseConfig(b.where(keyConfig), d.data); err != nil {
			add(nil, "%v", err)
		}
	}
	if d := docs[keyDepMap]; d.present() {
		if _, err := format.ParseDepMap(b.where(keyDepMap), d.data); err != nil {
			add(nil, "%v", err)
		}
	}
	if _, _, err := b.readQuota(ctx); err != nil {
		add(nil, "%v", err)
	}
	f, ok := b.checkRegistry(ctx, add)
	if !ok {
		return
	}
	// Values above the counter ceiling were never issued: they raise
	// nothing, and are damage; --repair gives each such task a new epoch
	// and puts last_epoch back on the counter.
	counter := coord.Counted(f.LastEpoch)
	var damaged []string
	for _, t := range f.Tasks {
		counter = max(counter, coord.Counted(t.Epoch))
		if !coord.CounterOK(t.Epoch) {
			damaged = append(damaged, coord.CounterDamage("task "+t.ID+"'s epoch", t.Epoch))
		}
	}
	if !coord.CounterOK(f.LastEpoch) {
		damaged = append(damaged, coord.CounterDamage("last_epoch", f.LastEpoch))
	}
	// The log records every epoch a claim was given: one above the
	// counter means a commit the server acknowledged was lost.
	seen, err := b.loggedEpoch(ctx)
	if err != nil {
		add(nil, "the log: %v", err)
	}
	if seen > counter {
		add(func() (string, error) {
			err := b.updateRegistry(ctx, func(tx *coord.Txn) error {
				if tx.LastEpoch < seen {
					tx.LastEpoch = seen
					tx.Log(coord.CoordinatorID, "repaired: raised the epoch counter to %d, the highest epoch the log records", seen)
				}
				return nil
			})
			return fmt.Sprintf("raised it to %d", seen), err
		}, "the epoch counter is %d but the log records epoch %d: an acknowledged commit was lost (was the server syncing every write?)", counter, seen)
	}
	if len(damaged) > 0 {
		add(func() (string, error) {
			var given []string
			err := b.updateRegistry(ctx, func(tx *coord.Txn) error {
				given = given[:0]
				tx.LastEpoch = max(tx.LastEpoch, seen) // never one the log records
				for _, t := range tx.Tasks {
					if coord.CounterOK(t.Epoch) {
						continue
					}
					next, err := coord.NextCounter("epoch", tx.LastEpoch)
					if err != nil {
						return err
					}
					tx.LastEpoch, t.Epoch, t.Dirty = next, next, true
					given = append(given, fmt.Sprintf("task %s epoch %d", t.ID, next))
					tx.Log(coord.CoordinatorID, "repaired: task %s had an epoch above the counter ceiling; it has epoch %d", t.ID, next)
				}
				if len(given) == 0 {
					// Only last_epoch is out of range: a commit writes the
					// counter over it, and one is made by issuing a value.
					next, err := coord.NextCounter("epoch", tx.LastEpoch)
					if err != nil {
						return err
					}
					tx.LastEpoch = next
				}
				return nil
			})
			if len(given) == 0 {
				return "put last_epoch back in range", err
			}
			return "gave " + strings.Join(given, ", "), err
		}, "%s: %s", keyRegistry, strings.Join(damaged, "; "))
	}
	if b.meta.Base < 0 || b.meta.Base > maxBase {
		add(nil, "key %s: base %d is outside 0..%d: no lease epoch or kv revision can be issued from it; set it back to what it was before it was edited", keyMeta, b.meta.Base, maxBase)
	}
}

func (b *Backend) checkKeys(ctx context.Context, add func(func() (string, error), string, ...any)) {
	msgs, err := b.lastAll(ctx, b.names.kv, []string{b.names.pre + preLease + ">", b.names.pre + preKV + ">"})
	if err != nil {
		add(nil, "%v", err)
		return
	}
	for _, m := range msgs {
		if m.deleted() {
			continue
		}
		key := strings.TrimPrefix(m.subject, b.names.pre)
		var bad error
		if rest, ok := strings.CutPrefix(key, preLease); ok {
			name, ok := dec(rest)
			if !ok {
				bad = fmt.Errorf("%s: not a lease name", b.where(key))
			} else if _, err := b.leaseFrom(name, m); err != nil {
				bad = err
			}
		} else if rest, ok := strings.CutPrefix(key, preKV); ok {
			name, ok := dec(rest)
			if !ok {
				bad = fmt.Errorf("%s: not a key name", b.where(key))
			} else if _, err := b.entryFrom(name, m); err != nil {
				bad = err
			}
		}
		if bad == nil {
			continue
		}
		seq := m.seq
		add(func() (string, error) {
			_, err := b.commit(ctx, &doc{key: key, seq: seq}, nil, markerTTL, deleteHeader())
			if err == errConflict {
				return "it changed meanwhile; left alone", nil
			}
			return "removed it", err
		}, "%s", strings.TrimSuffix(strings.SplitN(bad.Error(), "; ", 2)[0], "."))
	}
}

// loggedEpoch is the highest epoch the last 2,000 log lines record a
// claim was given.
func (b *Backend) loggedEpoch(ctx context.Context) (int64, error) {
	var seen int64
	_, err := (logStore{b}).Read(ctx, 2000, func(line string) error {
		if n, ok := coord.ClaimedEpoch(line); ok && coord.CounterOK(n) && n > seen {
			seen = n
		}
		return nil
	})
	return seen, err
}
