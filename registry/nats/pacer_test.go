package nats

import (
	"context"
	"testing"
	"time"
)

// TestPacer: every retry loop's pacing. A loop may try again while the
// next pause ends within its budget, each pause at most 250 ms; past the
// budget it gives up at once; a done context cuts a pause short.
func TestPacer(t *testing.T) {
	ctx := context.Background()
	p := newPacer(time.Now(), time.Minute)
	for i := 0; i < 3; i++ {
		if !p.wait(ctx) {
			t.Fatalf("wait %d refused within the budget", i)
		}
	}
	if p.tries != 3 {
		t.Fatalf("tries %d, want 3", p.tries)
	}
	if newPacer(time.Now().Add(-time.Minute), time.Minute).wait(ctx) {
		t.Fatal("a pacer past its budget let the loop try again")
	}
	// a done context cuts a pause short: the loop goes on to its
	// attempt, which sees the context
	done, cancel := context.WithCancel(ctx)
	cancel()
	p = &pacer{start: time.Now(), budget: time.Minute, tries: 10}
	if !p.wait(done) {
		t.Fatal("a pause within the budget was refused")
	}
	if (&pacer{start: time.Now(), budget: 0}).wait(ctx) {
		t.Fatal("a budget of 0 let the loop try again")
	}
}
