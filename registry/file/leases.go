package file

import (
	"context"
	"time"

	"github.com/rotd/coordination/coord"
)

// Leases live in leases.json (a coord.LeaseSet) under .lock/leases.lock;
// the rules of granting, renewing and releasing are coord's. An expired
// lease is invisible to every reader at once (readers filter by the
// clock) and is dropped by the next write or Sweep. On one file system
// the grant is exclusive under the flock; the documented tie-break for
// concurrent grants (earliest granted_at, then the lowest epoch) is what
// a distributed engine applies. Epochs are issued once in the tree's life
// (counters.go).

type leases struct{ b *Backend }

// Acquire grants req.Name to req.Holder with the next epoch, or refuses
// with coord.LeaseConflict naming the holder of a lease in force.
func (l leases) Acquire(ctx context.Context, req coord.LeaseRequest) (coord.Lease, error) {
	if err := req.Check(); err != nil {
		return coord.Lease{}, err
	}
	var got coord.Lease
	err := l.update(ctx, func(d *coord.LeaseSet, now time.Time) (bool, error) {
		var changed bool
		var err error
		got, changed, err = d.Grant(req, now)
		return changed, err
	})
	return got, err
}

// Renew extends holder's lease by ttl from now (0: by its own TTL).
func (l leases) Renew(ctx context.Context, name, holder string, epoch int64, ttl time.Duration) (coord.Lease, error) {
	if err := coord.ValidLeaseName(name); err != nil {
		return coord.Lease{}, err
	}
	var got coord.Lease
	err := l.update(ctx, func(d *coord.LeaseSet, now time.Time) (bool, error) {
		var err error
		got, err = d.Renew(name, holder, epoch, ttl, now)
		return err == nil, err
	})
	return got, err
}

// Release ends holder's lease.
func (l leases) Release(ctx context.Context, name, holder string, epoch int64) error {
	if err := coord.ValidLeaseName(name); err != nil {
		return err
	}
	return l.update(ctx, func(d *coord.LeaseSet, now time.Time) (bool, error) {
		err := d.Release(name, holder, epoch, now)
		return err == nil, err
	})
}

// List returns the leases in force, by name.
func (l leases) List(ctx context.Context) ([]coord.Lease, error) {
	d, err := readDoc[coord.LeaseSet](l.b, LeasesFile)
	if err != nil {
		return nil, err
	}
	return d.InForce(l.b.clock()), nil
}

// Sweep drops expired leases from the file; it returns how many.
func (l leases) Sweep(ctx context.Context) (int, error) {
	n := 0
	err := l.update(ctx, func(d *coord.LeaseSet, now time.Time) (bool, error) {
		before := len(d.Leases)
		d.Drop(now)
		n = before - len(d.Leases)
		return n > 0, nil
	})
	return n, err
}
