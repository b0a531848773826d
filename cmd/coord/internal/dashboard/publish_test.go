package dashboard

import (
	"fmt"
	"html/template"
	"testing"
	"time"
)

// A client that never takes its snapshots never holds up the builder:
// publish replaces what the client had not taken, so the client skips to
// the newest snapshot and the builder goes on.
func TestPublishNeverBlocks(t *testing.T) {
	s := &Server{clients: map[*client]struct{}{}, ready: make(chan struct{})}
	hung := &client{next: make(chan *snapshot, 1)}
	s.clients[hung] = struct{}{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 1000; i++ {
			s.publish(&snapshot{panels: map[string]template.HTML{"agents": template.HTML(fmt.Sprint(i))}})
		}
	}()
	select {
	case <-done:
	case <-time.After(45 * time.Second):
		t.Fatal("publish blocked on a client that does not read")
	}
	if got := <-hung.next; got.panels["agents"] != "999" {
		t.Fatalf("the slow client holds snapshot %q, want the newest (999)", got.panels["agents"])
	}
	if len(hung.next) != 0 {
		t.Fatal("the slow client holds more than one snapshot")
	}
}
