package app_test

import (
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// TestLeaseTTL: a lease acquired without a TTL gets the one default,
// whichever front end asks: COORD_LEASE_TTL, else config.json's
// lease_ttl, else 2h; a COORD_LEASE_TTL that is not a positive duration
// refuses the acquisition (CodeUsage) and grants nothing.
func TestLeaseTTL(t *testing.T) {
	rows := []struct {
		name   string
		config string // config.json members
		env    string // COORD_LEASE_TTL ("": unset)
		want   time.Duration
		code   coord.Code
	}{
		{"default", "", "", 2 * time.Hour, 0},
		{"config", `"lease_ttl": "30m"`, "", 30 * time.Minute, 0},
		{"environment over config", `"lease_ttl": "30m"`, "45m", 45 * time.Minute, 0},
		{"environment", "", "90", 90 * time.Second, 0},
		{"bad environment", "", "0", 0, coord.CodeUsage},
		{"bad environment over config", `"lease_ttl": "30m"`, "soon", 0, coord.CodeUsage},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			p := openProject(t, r.config, nil)
			getenv := func(k string) string {
				if k == "COORD_LEASE_TTL" {
					return r.env
				}
				return ""
			}
			s, err := app.New(p.ctx, p.s.Backend(), app.Options{Clock: func() time.Time { return p.now }, Getenv: getenv})
			if err != nil {
				t.Fatal(err)
			}
			l, err := s.AcquireLease(p.ctx, coord.LeaseRequest{Name: "deploy", Holder: "a"})
			if r.code != 0 {
				if coord.CodeOf(err) != r.code {
					t.Fatalf("acquire: %v (code %d), want code %d", err, coord.CodeOf(err), r.code)
				}
				if ls, _ := s.Leases(p.ctx); len(ls) != 0 {
					t.Fatalf("a refused acquisition granted %v", ls)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := l.Expires().Sub(p.now); got != r.want || l.TTL != r.want.String() {
				t.Fatalf("lease for %v (ttl %q), want %v", got, l.TTL, r.want)
			}
		})
	}
}
