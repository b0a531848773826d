package nats

import (
	"context"
	"testing"
	"time"

	rotdtemplate "github.com/rotd/coordination"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/nats/hubtest"
)

// On the system clock the engine's instants are the server's, never this
// host's: with the server's clock an hour behind the host's, a claim is
// stamped an hour back and its holder is alive, judged on the server's
// now. Its writes carry no skew note.
func TestServerTimeNotHost(t *testing.T) {
	url := hubtest.Start(t) + "/servertime"
	ctx := context.Background()
	if _, _, err := Init(ctx, url, rotdtemplate.Coordination(), Options{}); err != nil {
		t.Fatal(err)
	}
	b, err := Open(ctx, url, Options{Clock: coord.SystemClock})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.srv.skew != nil {
		t.Fatal("the system clock is taken for an injected one")
	}
	// The server an hour behind: the learned pair moved, its reference
	// ten minutes on so that it stays fresh (not learned again) for the
	// test's length.
	b.srv.mu.Lock()
	b.srv.base = b.srv.base.Add(10*time.Minute - time.Hour)
	b.srv.mono = b.srv.mono.Add(10 * time.Minute)
	b.srv.mu.Unlock()
	host := time.Now()

	var claimedAt string
	err = b.Tasks().Update(ctx, func(tx *coord.Txn) error {
		tx.Add(&coord.Task{ID: "t1", Status: coord.Unclaimed, Priority: coord.Medium})
		task, err := tx.Claim(coord.Agent{ID: "a"}, coord.ClaimOptions{TaskID: "t1"})
		claimedAt = task.ClaimedAt
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	at, _ := coord.ParseTime(claimedAt)
	if d := host.Add(-time.Hour).Sub(at); d > time.Minute || d < -time.Minute {
		t.Errorf("claimed_at %s: not the server's clock (an hour behind %s)", claimedAt, coord.FormatTime(host))
	}
	if err := b.Beats().Beat(ctx, "a", nil); err != nil {
		t.Fatal(err)
	}
	seen, now, err := b.Beats().LastSeen(ctx, []string{"a"})
	alive := err == nil && now.Sub(seen["a"]) < time.Minute
	if !alive {
		t.Errorf("a beat judged on the host's clock: seen %v, now %v, %v", seen, now, err)
	}
	m, err := b.w.last(ctx, b.names.beats, b.names.beatPre+preBeat+enc("a"))
	if err != nil || m == nil || m.hdr.Get(hdrSkew) != "" {
		t.Errorf("the system clock's beat: %+v %v", m, err)
	}
}
