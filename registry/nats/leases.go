package nats

import (
	"context"
	"encoding/json"
	"time"

	"github.com/rotd/coordination/coord"
)

// Leases: one key per lease, "lease.<name>", written with the lease's TTL
// as the message's server-side TTL, so the server drops a lease nobody
// renews. Grants, renewals and releases are compare-and-set on the key's
// revision with coord's rules (LeaseConflict, HeldBy, Renewed). A lease's
// epoch is the stream sequence of its grant plus the namespace's base:
// strictly increasing across every lease (and kv revision) of the
// namespace, server restarts and leader changes included.

type leases struct{ b *Backend }

// leaseValue is a lease key's value. Epoch is 0 for a fresh grant (the
// epoch is then the write's revision plus the base); a renewal or a copy
// records it.
type leaseValue struct {
	Holder    string            `json:"holder"`
	Epoch     int64             `json:"epoch,omitempty"`
	GrantedAt string            `json:"granted_at"`
	ExpiresAt string            `json:"expires_at"`
	TTL       string            `json:"ttl,omitempty"`
	Meta      map[string]string `json:"meta,omitempty"`
}

// leaseFrom reads the lease a message holds; nil for a marker, and nil
// with an error for a value that does not parse.
func (b *Backend) leaseFrom(name string, m *msg) (*coord.Lease, error) {
	if m == nil || m.deleted() {
		return nil, nil
	}
	var v leaseValue
	if err := json.Unmarshal(m.data, &v); err != nil || v.Holder == "" {
		return nil, coord.Errorf(coord.CodeIO, "%s: not a lease", b.where(preLease+enc(name))).
			WithHint("'coord doctor --repair' removes it")
	}
	l := &coord.Lease{Name: name, Holder: v.Holder, Epoch: v.Epoch, GrantedAt: v.GrantedAt, ExpiresAt: v.ExpiresAt, TTL: v.TTL, Meta: v.Meta}
	if l.Epoch == 0 {
		l.Epoch = int64(m.seq) + b.meta.Base
	}
	return l, nil
}

// Acquire grants req.Name to req.Holder for req.TTL, or refuses with
// coord.LeaseConflict naming the holder of a lease in force.
func (l leases) Acquire(ctx context.Context, req coord.LeaseRequest) (coord.Lease, error) {
	if err := req.Check(); err != nil {
		return coord.Lease{}, err
	}
	b := l.b
	if err := b.checkBase(); err != nil {
		return coord.Lease{}, err
	}
	// The leases are one part, as leases.json is on files: a damaged
	// lease refuses every acquisition until doctor --repair removes it.
	if _, _, err := leaseSpace.all(ctx, b); err != nil {
		return coord.Lease{}, err
	}
	var got coord.Lease
	seq, err := b.updateKey(ctx, preLease+enc(req.Name), "lease "+req.Name, func(m *msg, now time.Time) (change, error) {
		cur, err := b.leaseFrom(req.Name, m)
		if err != nil {
			return change{}, err
		}
		if cur != nil && cur.Live(now) {
			return change{}, coord.LeaseConflict(*cur)
		}
		got = coord.NewLease(req, 0, now)
		if req.DryRun {
			return change{}, nil
		}
		data, _ := json.Marshal(leaseValue{Holder: got.Holder, GrantedAt: got.GrantedAt, ExpiresAt: got.ExpiresAt, TTL: got.TTL, Meta: got.Meta})
		return change{write: true, data: data, ttl: req.TTL}, nil
	})
	if err != nil {
		return coord.Lease{}, err
	}
	if req.DryRun {
		// The next epoch is at least the stream's next sequence.
		si, err := b.w.streamInfo(ctx, b.names.kv)
		if err != nil {
			return coord.Lease{}, b.ioErr(err, "")
		}
		got.Epoch = int64(si.State.LastSeq) + 1 + b.meta.Base
		return got, nil
	}
	got.Epoch = int64(seq) + b.meta.Base
	return got, nil
}

// Renew extends holder's lease by ttl from now (0: by its own TTL).
func (l leases) Renew(ctx context.Context, name, holder string, epoch int64, ttl time.Duration) (coord.Lease, error) {
	if err := coord.ValidLeaseName(name); err != nil {
		return coord.Lease{}, err
	}
	b := l.b
	var got coord.Lease
	_, err := b.updateKey(ctx, preLease+enc(name), "lease "+name, func(m *msg, now time.Time) (change, error) {
		cur, err := b.leaseFrom(name, m)
		if err != nil {
			return change{}, err
		}
		if err := coord.HeldBy(cur, name, holder, epoch, now); err != nil {
			return change{}, err
		}
		got, err = coord.Renewed(*cur, ttl, now)
		if err != nil {
			return change{}, err
		}
		data, _ := json.Marshal(leaseValue{Holder: got.Holder, Epoch: got.Epoch, GrantedAt: got.GrantedAt, ExpiresAt: got.ExpiresAt, TTL: got.TTL, Meta: got.Meta})
		return change{write: true, data: data, ttl: got.Expires().Sub(now)}, nil
	})
	return got, err
}

// Release ends holder's lease: a delete marker in its place.
func (l leases) Release(ctx context.Context, name, holder string, epoch int64) error {
	if err := coord.ValidLeaseName(name); err != nil {
		return err
	}
	b := l.b
	_, err := b.updateKey(ctx, preLease+enc(name), "lease "+name, func(m *msg, now time.Time) (change, error) {
		cur, err := b.leaseFrom(name, m)
		if err != nil {
			return change{}, err
		}
		if err := coord.HeldBy(cur, name, holder, epoch, now); err != nil {
			return change{}, err
		}
		return change{write: true, del: true, ttl: markerTTL}, nil
	})
	return err
}

// markerTTL is how long a delete marker stays before the server drops it.
const markerTTL = time.Hour

// List returns the leases in force, by name.
func (l leases) List(ctx context.Context) ([]coord.Lease, error) {
	all, now, err := leaseSpace.all(ctx, l.b)
	if err != nil {
		return nil, err
	}
	out := []coord.Lease{}
	for _, x := range all {
		if x.Live(now) {
			out = append(out, *x)
		}
	}
	return out, nil
}

// Sweep removes leases past their expiry that the server has not dropped
// yet; readers ignore them already.
func (l leases) Sweep(ctx context.Context) (int, error) { return leaseSpace.sweep(ctx, l.b) }
