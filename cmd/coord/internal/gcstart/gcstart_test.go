package gcstart

import (
	"math"
	"runtime/metrics"
	"testing"
	"time"
)

func read(name string) metrics.Value {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value
}

func cycles() uint64 { return read("/gc/cycles/total:gc-cycles").Uint64() }

var sink [][]byte

func allocate(mb int) {
	for range mb * 16 {
		sink = append(sink, make([]byte, 64<<10))
		sink = sink[len(sink)-1:] // garbage at once, but for the last chunk
	}
}

// No collection until the limit; one at the limit; then Go's default
// pacing (GOGC 100, no memory limit).
func TestDelay(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	Delay(48 << 20)
	before := cycles()
	allocate(16)
	if n := cycles() - before; n != 0 {
		t.Fatalf("%d collections with 16 MB allocated, under the 48 MB limit", n)
	}
	if g := read("/gc/gogc:percent").Uint64(); g != math.MaxUint64 { // off
		t.Fatalf("GOGC %d before the first collection, want off", g)
	}
	allocate(96)
	if cycles() == before {
		t.Fatal("no collection after 112 MB allocated, over the 48 MB limit")
	}
	deadline := time.Now().Add(30 * time.Second)
	for read("/gc/gogc:percent").Uint64() != 100 || read("/gc/gomemlimit:bytes").Uint64() != math.MaxInt64 {
		if time.Now().After(deadline) {
			t.Fatalf("after a collection: GOGC %d, memory limit %d; want 100 and none",
				read("/gc/gogc:percent").Uint64(), read("/gc/gomemlimit:bytes").Uint64())
		}
		allocate(1) // collections go on; the cleanup runs after one
		time.Sleep(10 * time.Millisecond)
	}
}

// GOGC in the environment rules: Delay changes nothing.
func TestDelayLeavesGOGC(t *testing.T) {
	t.Setenv("GOGC", "200")
	g := read("/gc/gogc:percent").Uint64()
	Delay(48 << 20)
	if read("/gc/gogc:percent").Uint64() != g {
		t.Fatal("Delay changed GOGC set in the environment")
	}
}
