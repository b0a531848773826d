package file

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rotdtemplate "github.com/rotd/coordination"
	"github.com/rotd/coordination/coord"
)

// waitChange waits for a notification, bounded so that a missing one fails
// the test instead of hanging it (the bound is no assertion on speed).
func waitChange(t *testing.T, ch <-chan coord.Change, what string) {
	t.Helper()
	select {
	case _, ok := <-ch:
		if !ok {
			t.Fatalf("%s: the channel closed", what)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no notification", what)
	}
}

// The notifier wakes a waiter when another process commits to the
// registry (replaced by rename: the directory is watched, not the file),
// when a heartbeat moves and when a lock file appears; it closes its
// channel when the context ends.
func TestNotifierWakesOnChanges(t *testing.T) {
	s := freshStore(t, crashSeed)
	other, err := Open(s.tree.Dir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := s.Changes().Watch(ctx)
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	err = other.Tasks().Update(context.Background(), func(tx *coord.Txn) error {
		_, err := tx.Claim(coord.Agent{ID: "a"}, coord.ClaimOptions{TaskID: "free"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	waitChange(t, ch, "a claim committed by another backend")
	cancel()
	for range ch { // closed once the context ends
	}
	// A new watcher sees only what happens after it started: a beat.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	if ch, err = s.Changes().Watch(ctx); err != nil {
		t.Fatal(err)
	}
	if err := other.Beats().Beat(context.Background(), "a", nil); err != nil {
		t.Fatal(err)
	}
	waitChange(t, ch, "a heartbeat")
}

// Notification that cannot start is an error, not a silent channel: the
// caller polls instead.
func TestNotifierErrorWhenItCannotStart(t *testing.T) {
	s := freshStore(t, crashSeed)
	if err := os.RemoveAll(s.tree.Path(HeartbeatDir)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Changes().Watch(context.Background()); err == nil {
		t.Fatal("Watch started without heartbeat/ to watch")
	}
}

// config.json: missing is the defaults; read strictly; a broken one is
// exit 2 naming it, or the defaults for a lenient (doctor's) open, which
// reports it instead. LockWait 0 takes config.json's lock_wait.
func TestConfig(t *testing.T) {
	s := freshStore(t, crashSeed)
	ctx := context.Background()
	os.Remove(s.tree.Path(ConfigFile))
	if c, err := s.Config(ctx); err != nil || c.StaleAfter != coord.DefaultConfig().StaleAfter || !c.SweepOnClaim {
		t.Fatalf("missing config.json: %+v, %v", c, err)
	}
	writeTreeFile(t, s, ConfigFile, []byte(`{"lock_wait":"7s","sweep_on_claim":false,"a later key":1}`))
	if c, err := s.Config(ctx); err != nil || c.LockWait != 7*time.Second || c.SweepOnClaim {
		t.Fatalf("config.json: %+v, %v", c, err)
	}
	s2, err := Open(s.tree.Dir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s2.lockWait != 7*time.Second {
		t.Fatalf("lock wait %v, want config.json's 7s", s2.lockWait)
	}
	s2.Close()
	writeTreeFile(t, s, ConfigFile, []byte(`{"stale_after":"soon"}`))
	if _, err := s.Config(ctx); coord.CodeOf(err) != coord.CodeIO || !strings.Contains(err.Error(), ConfigFile) {
		t.Fatalf("broken config.json: %v, want exit 2 naming it", err)
	}
	if _, err := Open(s.tree.Dir(), Options{}); coord.CodeOf(err) != coord.CodeIO {
		t.Fatalf("open with a broken config.json: %v, want exit 2", err)
	}
	l, err := Open(s.tree.Dir(), Options{Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if c, err := l.Config(ctx); err != nil || c.StaleAfter != coord.DefaultConfig().StaleAfter {
		t.Fatalf("lenient: %+v, %v; want the defaults", c, err)
	}
	if probs, err := l.Doctor(ctx, false); err != nil || !hasProblem(probs, ConfigFile+": ", false) {
		t.Fatalf("doctor does not report the broken config.json: %v %v", probs, err)
	}
}

func TestNameWhereArtifacts(t *testing.T) {
	s := freshStore(t, crashSeed)
	if s.Name() != "file" || s.Where() != s.tree.Dir() {
		t.Fatalf("Name %q, Where %q", s.Name(), s.Where())
	}
	if s.Artifacts() != nil {
		t.Fatal("artifacts without a .rotd directory")
	}
	rotd := filepath.Dir(s.tree.Dir())
	b, err := Open(s.tree.Dir(), Options{RotdDir: rotd})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	a := b.Artifacts()
	if err := a.Append(ctx, "tasks.jsonl", []byte(`{"id":"6.1"}`+"\n")); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(ctx, "tasks.jsonl", []byte(`not json`)); coord.CodeOf(err) != coord.CodeUsage {
		t.Fatalf("a .jsonl line that is no object: %v", err)
	}
	if err := a.Write(ctx, ".rotd/session_state.json", []byte(`{"s":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := a.Write(ctx, "coordination/active_work_registry.json", []byte(`{}`)); coord.CodeOf(err) != coord.CodeUsage {
		t.Fatalf("an artifact inside the coordination tree: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(rotd, "tasks.jsonl")); string(got) != `{"id":"6.1"}`+"\n" {
		t.Fatalf("tasks.jsonl: %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(rotd, "session_state.json")); string(got) != `{"s":1}` {
		t.Fatalf("session_state.json: %q", got)
	}
}

// The holder line of a flock names the process as SetHolder last said,
// for a waiter's --lock-diagnose.
func TestHolderLine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".rotd", "coordination")
	if _, err := Init(dir, rotdtemplate.Coordination()); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, Options{Holder: "first"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.Contains(string(s.holderLine()), `"holder":"first"`) {
		t.Fatalf("holder line %s", s.holderLine())
	}
	s.SetHolder("agent-b")
	if !strings.Contains(string(s.holderLine()), `"holder":"agent-b"`) {
		t.Fatalf("holder line %s", s.holderLine())
	}
}

// A transaction whose context ends before its commit changes nothing and
// reports the interruption (exit 130); the lock wait ends with it too.
func TestUpdateInterrupted(t *testing.T) {
	s := freshStore(t, crashSeed)
	before := readTreeFile(t, s, RegistryFile)
	ctx, cancel := context.WithCancel(context.Background())
	err := s.Tasks().Update(ctx, func(tx *coord.Txn) error {
		_, err := tx.Claim(coord.Agent{ID: "a"}, coord.ClaimOptions{TaskID: "free"})
		cancel() // a signal arrives while the transaction runs
		return err
	})
	if coord.CodeOf(err) != coord.CodeInterrupted || !errors.Is(err, coord.ErrInterrupted) {
		t.Fatalf("Update cancelled before its commit: %v (code %d)", err, coord.CodeOf(err))
	}
	if after := readTreeFile(t, s, RegistryFile); string(after) != string(before) {
		t.Fatal("the registry changed")
	}
	// A wait for the registry lock ends with the context.
	held := make(chan struct{})
	release := make(chan struct{})
	go s.Tasks().Update(context.Background(), func(*coord.Txn) error {
		close(held)
		<-release
		return nil
	})
	<-held
	other, err := Open(s.tree.Dir(), Options{LockWait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx, cancel = context.WithCancel(context.Background())
	go cancel()
	err = other.Tasks().Update(ctx, func(*coord.Txn) error { return nil })
	close(release)
	if !errors.Is(err, coord.ErrInterrupted) {
		t.Fatalf("a lock wait cancelled: %v", err)
	}
}
