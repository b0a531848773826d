package heartbeat

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rotd/coord/fsops"
)

// A FIFO or directory named <agent>.beat is not a heartbeat: it is never
// opened in a way that blocks, never counts as a sign of life (the lock
// ages from its since, so the sweep frees it), and Beat refuses it with an
// error naming it instead of waiting on it or writing through it.
//
// Broken build this fails against: Beat reading the file with a plain
// open (it blocks on the FIFO until the bound fires).
func TestSpecialFileIsNoHeartbeat(t *testing.T) {
	for _, kind := range []string{"FIFO", "directory"} {
		t.Run(kind, func(t *testing.T) {
			f := newFixture(t)
			f.claim(t, "a", "t1")
			path := f.store.Tree.Path(fileName("a"))
			os.Remove(path)
			var err error
			if kind == "FIFO" {
				err = unix.Mkfifo(path, 0o644)
			} else {
				err = os.Mkdir(path, 0o755)
			}
			if err != nil {
				t.Fatal(err)
			}
			// Far in the future, so that a mtime read from it would pin the lock.
			future := f.now.Add(24 * time.Hour)
			os.Chtimes(path, future, future)

			done := make(chan error, 1)
			go func() { done <- f.beats.Beat("a", nil) }()
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("Beat blocked on a " + kind)
			}
			if !errors.Is(err, fsops.ErrWrongKind) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Beat over a %s: %v; want an error naming it", kind, err)
			}
			if _, ok, err := f.beats.MTime("a"); ok || err != nil {
				t.Fatalf("MTime took a %s for a heartbeat (ok=%v, %v)", kind, ok, err)
			}
			if m, _ := f.beats.MTimes([]string{"a"}); len(m) != 0 {
				t.Fatalf("MTimes took a %s for a heartbeat: %v", kind, m)
			}
			if l, _ := f.beats.List(); len(l) != 0 {
				t.Fatalf("List took a %s for a heartbeat: %v", kind, l)
			}
			// Without a heartbeat the lock ages from its since.
			f.now = f.now.Add(time.Hour)
			sw := &Sweeper{Backend: f.store, Beats: f.beats, Timeout: 30 * time.Minute, Clock: f.store.Clock}
			freed, err := sw.Sweep(context.Background())
			if err != nil || len(freed) != 1 {
				t.Fatalf("sweep: %v, %v; want t1 freed", freed, err)
			}
			if fi, err := os.Lstat(filepath.Clean(path)); err != nil || fi.Mode().IsRegular() {
				t.Fatalf("the %s was replaced: %v", kind, err)
			}
		})
	}
}
