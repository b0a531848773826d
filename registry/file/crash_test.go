package file

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	rotdtemplate "github.com/rotd/coordination"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/fsops"
)

var errCrash = errors.New("simulated crash")

func freshStore(t testing.TB, seed string) *Backend {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".rotd", "coordination")
	if _, err := Init(dir, rotdtemplate.Coordination()); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.tree.WriteFile(RegistryFile, []byte(seed), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

const crashSeed = `{"version":1,"last_epoch":1,"tasks":[
{"id":"held","status":"claimed","claimed_by":"old","epoch":1},
{"id":"free","title":"f"}
]}
`

// The operation under test: a claim of "free" by "a" and, in the same
// commit, "old" releasing "held" (a lock created and one removed).
func claimAndRelease(tx *coord.Txn) error {
	if _, err := tx.Claim(coord.Agent{ID: "a"}, coord.ClaimOptions{TaskID: "free"}); err != nil {
		return err
	}
	_, err := tx.Release("old", "held", -1, "x", false)
	return err
}

// state reads back what a restarted coord sees, after the reconcile that
// every mutating command runs: which of the two outcomes happened.
func state(t *testing.T, s *Backend) string {
	t.Helper()
	var out string
	err := s.update(context.Background(), func(tx *coord.Txn) error {
		f, h := tx.Task("free"), tx.Task("held")
		out = fmt.Sprintf("free=%s/%s held=%s/%s", f.Status, f.ClaimedBy, h.Status, h.ClaimedBy)
		return nil
	})
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	if probs := s.diagnose(); len(probs) > 0 {
		t.Fatalf("invariants broken after restart: %v", probs)
	}
	return out
}

const (
	before = "free=unclaimed/ held=claimed/old"
	after  = "free=claimed/a held=done/old"
)

// powerModel follows the steps of a commit and decides what a power loss
// right after the last completed step would leave of the registry: the
// new version only once it was written, fsynced, renamed into place and
// its directory fsynced; before that, the old one. Lock files are never
// fsynced (by design): a power loss drops every lock created since the
// last directory fsync, and the reconcile after restart recreates them
// from the registry.
type powerModel struct {
	synced, renamed, durable bool
	stopAt, n                int
	stopped                  bool
}

func (m *powerModel) hook(op fsops.Op, path string) error {
	if m.stopped || m.n >= m.stopAt {
		m.stopped = true
		return errCrash
	}
	m.n++
	switch {
	case op == fsops.OpSync && strings.HasPrefix(path, RegistryFile):
		m.synced = true
	case op == fsops.OpRename && path == RegistryFile:
		m.renamed = true
	case op == fsops.OpSyncDir && path == "." && m.renamed && m.synced:
		m.durable = true
	}
	return nil
}
