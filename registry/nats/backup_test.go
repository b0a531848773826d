package nats_test

import (
	"context"
	"strings"
	"testing"
	"time"

	gonats "github.com/nats-io/nats.go"

	rotdtemplate "github.com/rotd/coordination"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend/backendtest"
	coordnats "github.com/rotd/coordination/registry/nats"
)

// TestBackupStreamOldNamespace: a namespace made before the backup
// stream existed works without it; doctor reports that the registry has
// no backups and --repair (or init, which is idempotent) makes the
// stream, after which every commit is kept there, the current one and
// Backups before it.
func TestBackupStreamOldNamespace(t *testing.T) {
	h := startHub(t)
	url := newNamespace(t, h, "old")
	nc, err := gonats.Connect(h.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteStream("coord_old_backup"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b := open(t, url, coordnats.Options{})
	s := service(t, b)
	seed(t, s, "t1", "t2")
	probs, err := s.Doctor(ctx, false)
	if err != nil || len(probs) != 1 || !strings.Contains(probs[0].What, "coord_old_backup is missing") {
		t.Fatalf("doctor on an old namespace: %+v, %v", probs, err)
	}
	if probs, err = s.Doctor(ctx, true); err != nil || !probs[0].Fixed {
		t.Fatalf("doctor --repair: %+v, %v", probs, err)
	}
	if _, created, err := coordnats.Init(ctx, url, rotdtemplate.Coordination(), coordnats.Options{}); err != nil || len(created) != 0 {
		t.Fatalf("init again: %v made, %v", created, err)
	}
	// The server copies each commit to the backup stream shortly after
	// it lands (a source is asynchronous: revisions replaced within that
	// moment are not all kept); wait for each.
	caughtUp := func() {
		t.Helper()
		backendtest.Wait(t, "the backup stream to catch up with the registry", func() bool {
			cur, err := js.GetLastMsg("KV_coord_old", "$KV.coord_old.registry")
			if err != nil {
				t.Fatal(err)
			}
			got, err := js.GetLastMsg("coord_old_backup", "$KV.coord_old.registry")
			return err == nil && string(got.Data) == string(cur.Data)
		})
	}
	caughtUp()
	if _, err := s.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: "a"}, TaskID: "t1"}); err != nil {
		t.Fatal(err)
	}
	caughtUp()
	for i := range coordnats.Backups + 1 {
		if _, err := s.Progress(ctx, app.TaskRef{Agent: coord.Agent{ID: "a"}, TaskID: "t1", Epoch: coord.NoEpoch}, i+1, ""); err != nil {
			t.Fatal(err)
		}
		caughtUp()
	}
	si, err := js.StreamInfo("coord_old_backup")
	if err != nil || si.State.Msgs != coordnats.Backups+1 {
		t.Fatalf("the backup stream holds %+v (%v), want %d revisions", si.State, err, coordnats.Backups+1)
	}
	if probs, err := s.Doctor(ctx, false); err != nil || len(probs) != 0 {
		t.Fatalf("doctor with backups: %+v, %v", probs, err)
	}
}

// TestRestoreKeepsEpochs: a restored backup older than the last claim
// (the source skipped the newest revision, or newer backups were damaged
// too) never makes a claim reissue an epoch: the restore raises the
// counter to the highest epoch the log records.
func TestRestoreKeepsEpochs(t *testing.T) {
	h := startHub(t)
	url := newNamespace(t, h, "ep")
	nc, err := gonats.Connect(h.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	const subject = "$KV.coord_ep.registry"
	caughtUp := func() uint64 {
		t.Helper()
		var seq uint64
		backendtest.Wait(t, "the backup stream to catch up with the registry", func() bool {
			cur, err := js.GetLastMsg("KV_coord_ep", subject)
			if err != nil {
				t.Fatal(err)
			}
			got, err := js.GetLastMsg("coord_ep_backup", subject)
			if err == nil && string(got.Data) == string(cur.Data) {
				seq = got.Sequence
				return true
			}
			return false
		})
		return seq
	}
	ctx := context.Background()
	s := service(t, open(t, url, coordnats.Options{}))
	seed(t, s, "t1", "t2", "t3")
	claim := func(id string) int64 {
		t.Helper()
		res, err := s.Claim(ctx, app.ClaimRequest{Agent: coord.Agent{ID: "a"}, TaskID: id})
		if err != nil {
			t.Fatal(err)
		}
		return res.Task.Epoch
	}
	claim("t1")
	caughtUp()
	issued := claim("t2")
	newest := caughtUp()
	if _, err := s.LogRead(ctx, 1, func(string) error { return nil }); err != nil { // the claims' log lines are written
		t.Fatal(err)
	}
	// The newest backup is lost and the registry damaged: the restore
	// can only bring back the registry from before t2's claim.
	if err := js.DeleteMsg("coord_ep_backup", newest); err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Request(subject, []byte(`{"version":1,"tas`), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Doctor(ctx, true); err != nil {
		t.Fatal(err)
	}
	if got := claim("t3"); got <= issued {
		t.Fatalf("after the restore a claim got epoch %d; %d was issued before", got, issued)
	}
}
