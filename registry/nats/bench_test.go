package nats_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	coordnats "github.com/rotd/coordination/registry/nats"
)

// BenchmarkClaim is one claim as a fresh process makes it (open, which
// connects and reads the config, then claim), without the process start,
// at 10 and 1,000 tasks on an embedded hub (every write synced).
func BenchmarkClaim(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			h := startHub(b)
			url := newNamespace(b, h, "bench")
			s := service(b, open(b, url, coordnats.Options{}))
			ids := make([]string, n)
			for i := range ids {
				ids[i] = fmt.Sprintf("t%d", i)
			}
			seed(b, s, ids...)
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				be, err := coordnats.Open(ctx, url, coordnats.Options{})
				if err != nil {
					b.Fatal(err)
				}
				sv, _ := app.New(ctx, be, app.Options{})
				res, err := sv.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: "a"}})
				if err != nil || res.Task == nil {
					b.Fatal(res, err)
				}
				b.StopTimer()
				// Handed back (requeued), not released: the pool stays at n
				// unclaimed tasks however many claims the benchmark makes
				// (released, 10 tasks ran out at the eleventh claim).
				if _, err := sv.HandBack(ctx, app.TaskRef{Agent: coord.Agent{ID: "a"}, TaskID: res.Task.ID, Epoch: res.Task.Epoch}, "bench"); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				be.Close()
			}
		})
	}
}
