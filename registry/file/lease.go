package file

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/rotd/coord/coord"
)

// Leases: named, auto-expiring locks with fencing epochs, in the spirit of
// TORCH's per-agent, per-period locks. They live in leases.json under
// .lock/leases.lock. An expired lease is invisible to every reader at once
// (readers filter by the clock) and is dropped by the next write or sweep.
// On one file system the grant is exclusive under the flock; the
// documented tie-break for concurrent grants (earliest granted_at, then
// the lowest epoch) is what a distributed backend will also apply.

const (
	LeasesFile = "leases.json"
	leasesLock = LockDir + "/leases.lock"
)

// Lease is one grant.
type Lease struct {
	Name      string `json:"name"`
	Holder    string `json:"holder"`
	Epoch     int64  `json:"epoch"`
	GrantedAt string `json:"granted_at"`
	ExpiresAt string `json:"expires_at"`
	// TTL is the duration the lease was granted for (a Go duration);
	// a renewal without a TTL of its own extends it by this much again.
	TTL  string            `json:"ttl,omitempty"`
	Meta map[string]string `json:"meta,omitempty"`
}

// GrantedTTL is the duration the lease was granted for: TTL, or for a
// lease written before TTL was recorded, expires_at - granted_at.
func (l Lease) GrantedTTL() time.Duration {
	if d, err := coord.ParseDuration(l.TTL); err == nil && d > 0 {
		return d
	}
	g, err := coord.ParseTime(l.GrantedAt)
	if err != nil {
		return 0
	}
	return l.Expires().Sub(g)
}

// Expires is the lease's expiry instant.
func (l Lease) Expires() time.Time {
	t, _ := coord.ParseTime(l.ExpiresAt)
	return t
}

// Live reports whether the lease is still in force at now.
func (l Lease) Live(now time.Time) bool { return now.Before(l.Expires()) }

type leaseDoc struct {
	Version   int     `json:"version"`
	LastEpoch int64   `json:"last_epoch"`
	Leases    []Lease `json:"leases"`
}

// ValidLeaseName checks a lease name: [A-Za-z0-9][A-Za-z0-9._:-]{0,127}.
// (By hand: a regexp with {0,127} costs every coord process 2 ms to
// compile at start-up.)
func ValidLeaseName(name string) error {
	ok := len(name) >= 1 && len(name) <= 128
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		ok = alnum || i > 0 && (c == '.' || c == '_' || c == ':' || c == '-')
	}
	if !ok {
		return coord.Errorf(coord.CodeUsage, "invalid lease name %q: use letters, digits and . _ : - (at most 128)", name)
	}
	return nil
}

// drop removes expired leases; it reports whether any went.
func (d *leaseDoc) drop(now time.Time) bool {
	n := len(d.Leases)
	d.Leases = slices.DeleteFunc(d.Leases, func(l Lease) bool { return !l.Live(now) })
	return len(d.Leases) != n
}

func (d *leaseDoc) find(name string) int {
	for i, l := range d.Leases {
		if l.Name == name {
			return i
		}
	}
	return -1
}

// Leases lists the leases in force, by name.
func (s *Store) Leases() ([]Lease, error) {
	d, err := readDoc[leaseDoc](s, LeasesFile)
	if err != nil {
		return nil, err
	}
	d.drop(s.Clock())
	sort.Slice(d.Leases, func(i, j int) bool { return d.Leases[i].Name < d.Leases[j].Name })
	return d.Leases, nil
}

// AcquireLease grants name to holder for ttl with a new epoch, or exits 3
// naming the holder of a lease in force. dryRun checks without writing.
func (s *Store) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration, meta map[string]string, dryRun bool) (Lease, error) {
	var got Lease
	if err := ValidLeaseName(name); err != nil {
		return got, err
	}
	if err := coord.ValidActingAgent(holder); err != nil {
		return got, err
	}
	if ttl <= 0 {
		return got, coord.Errorf(coord.CodeUsage, "a lease needs a positive --ttl")
	}
	err := updateDoc(ctx, s, LeasesFile, leasesLock, func(d *leaseDoc) (bool, error) {
		now := s.Clock()
		dropped := d.drop(now)
		if i := d.find(name); i >= 0 {
			l := d.Leases[i]
			return dropped, coord.Errorf(coord.CodeConflict, "lease %s is held by %s (epoch %d) until %s", name, l.Holder, l.Epoch, l.ExpiresAt).
				WithHint("wait for it to expire or be released")
		}
		got = Lease{Name: name, Holder: holder, Epoch: d.LastEpoch + 1, GrantedAt: coord.FormatTime(now),
			ExpiresAt: coord.FormatTime(now.Add(ttl)), TTL: ttl.String(), Meta: meta}
		if dryRun {
			return dropped, nil
		}
		d.Version = 1
		d.LastEpoch = got.Epoch
		d.Leases = append(d.Leases, got)
		return true, nil
	})
	if err == nil && !dryRun {
		s.AppendLog(ctx, coord.Event{Time: s.Clock().UTC(), Agent: holder, Text: "acquired lease " + name + " until " + got.ExpiresAt})
	}
	return got, err
}

// held finds holder's lease in force at epoch (epoch < 0: any), or a
// CodeLost error.
func (d *leaseDoc) held(name, holder string, epoch int64, now time.Time) (int, error) {
	i := d.find(name)
	if i < 0 || !d.Leases[i].Live(now) {
		return -1, coord.Errorf(coord.CodeLost, "lease %s is not held (expired or released)", name).WithHint("acquire it again")
	}
	l := d.Leases[i]
	if l.Holder != holder || epoch >= 0 && l.Epoch != epoch {
		return -1, coord.Errorf(coord.CodeLost, "lease %s is held by %s at epoch %d, not by %s at epoch %d", name, l.Holder, l.Epoch, holder, epoch).
			WithHint("stop: someone else holds it now")
	}
	return i, nil
}

// RenewLease extends holder's lease (at epoch; -1: any) by ttl from now;
// a ttl of 0 keeps the lease's own (the duration it was granted for).
func (s *Store) RenewLease(ctx context.Context, name, holder string, epoch int64, ttl time.Duration) (Lease, error) {
	var got Lease
	if ttl < 0 {
		return got, coord.Errorf(coord.CodeUsage, "a lease renewal needs a positive --ttl")
	}
	err := updateDoc(ctx, s, LeasesFile, leasesLock, func(d *leaseDoc) (bool, error) {
		now := s.Clock()
		i, err := d.held(name, holder, epoch, now)
		if err != nil {
			return d.drop(now), err
		}
		if ttl == 0 {
			if ttl = d.Leases[i].GrantedTTL(); ttl <= 0 {
				return false, coord.Errorf(coord.CodeUsage, "lease %s records no duration to renew it by", name).WithHint("pass --ttl DUR")
			}
		}
		d.Leases[i].ExpiresAt = coord.FormatTime(now.Add(ttl))
		d.Leases[i].TTL = ttl.String()
		got = d.Leases[i]
		d.drop(now)
		return true, nil
	})
	return got, err
}

// ReleaseLease ends holder's lease (at epoch; -1: any).
func (s *Store) ReleaseLease(ctx context.Context, name, holder string, epoch int64) error {
	err := updateDoc(ctx, s, LeasesFile, leasesLock, func(d *leaseDoc) (bool, error) {
		now := s.Clock()
		i, err := d.held(name, holder, epoch, now)
		if err != nil {
			return d.drop(now), err
		}
		d.Leases = append(d.Leases[:i], d.Leases[i+1:]...)
		d.drop(now)
		return true, nil
	})
	if err == nil {
		s.AppendLog(ctx, coord.Event{Time: s.Clock().UTC(), Agent: holder, Text: "released lease " + name})
	}
	return err
}

// SweepLeases drops expired leases from the file; it returns how many.
func (s *Store) SweepLeases(ctx context.Context) (int, error) {
	n := 0
	err := updateDoc(ctx, s, LeasesFile, leasesLock, func(d *leaseDoc) (bool, error) {
		before := len(d.Leases)
		d.drop(s.Clock())
		n = before - len(d.Leases)
		return n > 0, nil
	})
	return n, err
}
