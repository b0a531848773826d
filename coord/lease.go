package coord

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// Lease is a named, auto-expiring lock with a fencing epoch (TORCH-style):
// one grant of Name to Holder until ExpiresAt.
type Lease struct {
	Name      string `json:"name"`
	Holder    string `json:"holder"`
	Epoch     int64  `json:"epoch"`
	GrantedAt string `json:"granted_at"`
	ExpiresAt string `json:"expires_at"`
	// TTL is the duration the lease was granted for (a Go duration); a
	// renewal without a TTL of its own extends it by this much again.
	TTL  string            `json:"ttl,omitempty"`
	Meta map[string]string `json:"meta,omitempty"`
}

// DefaultLeaseTTL is the lifetime of a lease acquired without one when
// neither COORD_LEASE_TTL nor config.json's lease_ttl says otherwise.
const DefaultLeaseTTL = 2 * time.Hour

// LeaseRequest asks for a lease.
type LeaseRequest struct {
	Name   string
	Holder string
	TTL    time.Duration // 0: the application's default (app.Service.LeaseTTL)
	Meta   map[string]string
	DryRun bool // check without granting
}

// Check validates a request before any store is touched.
func (r LeaseRequest) Check() error {
	if err := ValidLeaseName(r.Name); err != nil {
		return err
	}
	if err := ValidActor(r.Holder); err != nil {
		return err
	}
	return CheckTTL("a lease", r.TTL)
}

// GrantedTTL is the duration the lease was granted for: TTL, or for a
// lease written before TTL was recorded, expires_at - granted_at.
func (l Lease) GrantedTTL() time.Duration {
	if d, err := ParseDuration(l.TTL); err == nil && d > 0 {
		return d
	}
	g, err := ParseTime(l.GrantedAt)
	if err != nil {
		return 0
	}
	return l.Expires().Sub(g)
}

// Expires is the lease's expiry instant.
func (l Lease) Expires() time.Time {
	t, _ := ParseTime(l.ExpiresAt)
	return t
}

// Live reports whether the lease is still in force at now.
func (l Lease) Live(now time.Time) bool { return now.Before(l.Expires()) }

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
		return Errorf(CodeUsage, "invalid lease name %q: use letters, digits and . _ : - (at most 128)", clip(name))
	}
	return nil
}

// LeaseSet is every lease of a project as one document with the epoch
// counter: the rules of granting, renewing and releasing applied to it.
// Engines that keep leases as one document use it directly; others apply
// the same checks (Grant's conflict, Held's loss) key by key.
type LeaseSet struct {
	Version   int     `json:"version"`
	LastEpoch int64   `json:"last_epoch"`
	Leases    []Lease `json:"leases"`
}

// Floor is the highest epoch the set records, as far as it counts
// (Counted): its counter and every lease's epoch. The next grant's epoch
// is above it, even when a hand edit lowered last_epoch below a lease.
func (d *LeaseSet) Floor() int64 {
	n := Counted(d.LastEpoch)
	for _, l := range d.Leases {
		n = max(n, Counted(l.Epoch))
	}
	return n
}

// Raise makes the set's counter its Floor, and at least mark: a
// high-water mark the engine keeps apart from the set, so that a set
// restored from an older copy never issues an epoch again.
func (d *LeaseSet) Raise(mark int64) { d.LastEpoch = max(d.Floor(), Counted(mark)) }

// Mend puts the set's counters back in range (doctor --repair): a lease
// whose epoch is above MaxCounter gets a new one, and the counter becomes
// the Floor. It says what it changed, one entry each; none: the set was
// sound.
func (d *LeaseSet) Mend() []string {
	var out []string
	if !CounterOK(d.LastEpoch) {
		out = append(out, CounterDamage("last_epoch", d.LastEpoch))
	}
	d.LastEpoch = d.Floor()
	for i, l := range d.Leases {
		if CounterOK(l.Epoch) {
			continue
		}
		next, err := NextCounter("lease epoch", d.LastEpoch)
		if err != nil {
			break
		}
		out = append(out, CounterDamage("lease "+l.Name+"'s epoch", l.Epoch)+fmt.Sprintf("; it gets epoch %d", next))
		d.Leases[i].Epoch, d.LastEpoch = next, next
	}
	return out
}

// Drop removes the leases expired at now; it reports whether any went.
func (d *LeaseSet) Drop(now time.Time) bool {
	n := len(d.Leases)
	d.Leases = slices.DeleteFunc(d.Leases, func(l Lease) bool { return !l.Live(now) })
	return len(d.Leases) != n
}

func (d *LeaseSet) find(name string) int {
	for i, l := range d.Leases {
		if l.Name == name {
			return i
		}
	}
	return -1
}

// InForce returns the leases in force at now, by name.
func (d *LeaseSet) InForce(now time.Time) []Lease {
	d.Drop(now)
	out := slices.Clone(d.Leases)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LeaseConflict is the refusal of a grant while l is in force.
func LeaseConflict(l Lease) error {
	return Errorf(CodeConflict, "lease %s is held by %s (epoch %d) until %s", l.Name, l.Holder, l.Epoch, l.ExpiresAt).
		WithHint("wait for it to expire or be released").WithHolder(l.Holder)
}

// Grant grants the request at now with the next epoch, or refuses with
// LeaseConflict. With DryRun nothing changes. It reports whether the set
// changed (expired leases dropped count too).
func (d *LeaseSet) Grant(r LeaseRequest, now time.Time) (Lease, bool, error) {
	dropped := d.Drop(now)
	if i := d.find(r.Name); i >= 0 {
		return Lease{}, dropped, LeaseConflict(d.Leases[i])
	}
	next, err := NextCounter("lease epoch", d.Floor())
	if err != nil {
		return Lease{}, dropped, err
	}
	l := NewLease(r, next, now)
	if r.DryRun {
		return l, dropped, nil
	}
	d.Version = 1
	d.LastEpoch = l.Epoch
	d.Leases = append(d.Leases, l)
	return l, true, nil
}

// NewLease is the grant of r at now with epoch.
func NewLease(r LeaseRequest, epoch int64, now time.Time) Lease {
	return Lease{Name: r.Name, Holder: r.Holder, Epoch: epoch, GrantedAt: FormatTime(now),
		ExpiresAt: FormatTime(now.Add(r.TTL)), TTL: r.TTL.String(), Meta: r.Meta}
}

// HeldBy checks that l (nil: none in force) is holder's at epoch (NoEpoch:
// any); otherwise the error is CodeLost.
func HeldBy(l *Lease, name, holder string, epoch int64, now time.Time) error {
	if l == nil || !l.Live(now) {
		return Errorf(CodeLost, "lease %s is not held (expired or released)", name).WithHint("acquire it again")
	}
	if l.Holder != holder || epoch != NoEpoch && l.Epoch != epoch {
		return Errorf(CodeLost, "lease %s is held by %s at epoch %d, not by %s%s", name, l.Holder, l.Epoch, holder, epochSuffix(epoch)).
			WithHint("stop: someone else holds it now").WithHolder(l.Holder)
	}
	return nil
}

func epochSuffix(epoch int64) string {
	if epoch == NoEpoch {
		return ""
	}
	return " at epoch " + itoa(int(epoch))
}

// Renewed is l extended by ttl from now (0: by its own granted TTL).
func Renewed(l Lease, ttl time.Duration, now time.Time) (Lease, error) {
	if ttl < 0 { // 0: by its own TTL, below
		return l, CheckTTL("a lease renewal", ttl)
	}
	if ttl == 0 {
		if ttl = l.GrantedTTL(); ttl <= 0 {
			return l, Errorf(CodeUsage, "lease %s records no duration to renew it by", l.Name).WithHint("give a TTL")
		}
	}
	l.ExpiresAt = FormatTime(now.Add(ttl))
	l.TTL = ttl.String()
	return l, nil
}

// Renew extends holder's lease; see Renewed and HeldBy.
func (d *LeaseSet) Renew(name, holder string, epoch int64, ttl time.Duration, now time.Time) (Lease, error) {
	i := d.find(name)
	var cur *Lease
	if i >= 0 {
		cur = &d.Leases[i]
	}
	if err := HeldBy(cur, name, holder, epoch, now); err != nil {
		return Lease{}, err
	}
	l, err := Renewed(*cur, ttl, now)
	if err != nil {
		return Lease{}, err
	}
	d.Leases[i] = l
	d.Drop(now)
	return l, nil
}

// Release ends holder's lease; see HeldBy.
func (d *LeaseSet) Release(name, holder string, epoch int64, now time.Time) error {
	i := d.find(name)
	var cur *Lease
	if i >= 0 {
		cur = &d.Leases[i]
	}
	if err := HeldBy(cur, name, holder, epoch, now); err != nil {
		return err
	}
	d.Leases = append(d.Leases[:i], d.Leases[i+1:]...)
	d.Drop(now)
	return nil
}
