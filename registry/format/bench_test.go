package format

import (
	"fmt"
	"io"
	"strings"
	"testing"

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

func BenchmarkParse(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		data := registryOf(n)
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := Parse("bench", data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncodeOneChange: the common write, one task changed, streamed
// as the store does (into a discarding writer here).
func BenchmarkEncodeOneChange(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		f, err := Parse("bench", registryOf(n))
		if err != nil {
			b.Fatal(err)
		}
		f.Tasks[n/2].Status, f.Tasks[n/2].Dirty = coord.Claimed, true
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			for b.Loop() {
				if err := f.EncodeTo(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
