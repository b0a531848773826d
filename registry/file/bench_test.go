package file

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	rotdtemplate "github.com/rotd/coordination"
	"github.com/rotd/coordination/coord"
)

// registryOf builds a registry of n tasks shaped like real ones.
func registryOf(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"version":1,"last_epoch":0,"tasks":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "\n"+`{"id":"%d.%d","title":"Task number %d with a title","description":"Something to do in module %d","status":"unclaimed","priority":"%s","deps":[],"capability":"go","skill_level":"intermediate","files":["src/m%d/*.go"],"conflict_group":"g%d","claimed_by":null,"claimed_at":null,"completed_at":null,"epoch":0,"progress":0,"blocked_reason":null,"reviewer_id":null}`,
			i/100, i%100, i, i%50, []string{"urgent", "high", "medium", "low"}[i%4], i%50, i%20)
	}
	b.WriteString("\n]}\n")
	return []byte(b.String())
}

// benchStore makes a store on disk with n generated tasks.
func benchStore(b *testing.B, n int) *Backend {
	dir := filepath.Join(b.TempDir(), ".rotd", "coordination")
	if _, err := Init(dir, rotdtemplate.Coordination()); err != nil {
		b.Fatal(err)
	}
	s, err := Open(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if err := s.tree.WriteFile(RegistryFile, registryOf(n), 0o644); err != nil {
		b.Fatal(err)
	}
	return s
}

var sizes = []int{10, 1000, 10000, 100000}

// BenchmarkClaimRelease: one agent's claim + release through the real
// store on disk (flock, reconcile, lock file, durable registry write, log
// line). Two commits per iteration.
func BenchmarkClaimRelease(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			s := benchStore(b, n)
			ctx := context.Background()
			a := coord.Agent{ID: "bench", Caps: []string{"go"}}
			for b.Loop() {
				var id string
				var epoch int64
				err := s.update(ctx, func(tx *coord.Txn) error {
					t, err := tx.Claim(a, coord.ClaimOptions{})
					if err == nil && t == nil {
						err = fmt.Errorf("nothing to claim")
					}
					if err == nil {
						id, epoch = t.ID, t.Epoch
					}
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
				err = s.update(ctx, func(tx *coord.Txn) error {
					t, err := tx.Release("bench", id, epoch, "", false)
					if err == nil {
						t.Status, t.ClaimedBy, t.Dirty = coord.Unclaimed, "", true // keep the pool full
					}
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkView: a read-only snapshot (what ls does before printing).
func BenchmarkView(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			s := benchStore(b, n)
			for b.Loop() {
				if err := s.view(context.Background(), func(*coord.Txn) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
