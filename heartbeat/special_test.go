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

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/fsops"
)

func newDir(t *testing.T) (*Dir, *time.Time) {
	t.Helper()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, DirName), 0o755); err != nil {
		t.Fatal(err)
	}
	tree, err := fsops.OpenTree(root, DirName)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tree.Close() })
	now := time.Now().Truncate(time.Second)
	return &Dir{Tree: tree, Clock: func() time.Time { return now }}, &now
}

// A FIFO or directory named <agent>.beat is not a heartbeat: it is never
// opened in a way that blocks, never counts as a sign of life, and Beat
// refuses it with an error naming it instead of waiting on it or writing
// through it. (That the sweep then frees the agent's lock, aged from its
// claim, is registry/file's TestSweepSpecialFileIsNoHeartbeat.)
//
// Broken build this fails against: Beat reading the file with a plain
// open (it blocks on the FIFO until the bound fires).
func TestSpecialFileIsNoHeartbeat(t *testing.T) {
	for _, kind := range []string{"FIFO", "directory"} {
		t.Run(kind, func(t *testing.T) {
			d, now := newDir(t)
			path := d.Tree.Path(FileName("a"))
			var err error
			if kind == "FIFO" {
				err = unix.Mkfifo(path, 0o644)
			} else {
				err = os.Mkdir(path, 0o755)
			}
			if err != nil {
				t.Fatal(err)
			}
			// Far in the future, so that a mtime read from it would pin a lock.
			future := now.Add(24 * time.Hour)
			os.Chtimes(path, future, future)

			done := make(chan error, 1)
			go func() { done <- d.Beat(context.Background(), "a", nil) }()
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("Beat blocked on a " + kind)
			}
			if !errors.Is(err, fsops.ErrWrongKind) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Beat over a %s: %v; want an error naming it", kind, err)
			}
			if _, ok, err := d.MTime("a"); ok || err != nil {
				t.Fatalf("MTime took a %s for a heartbeat (ok=%v, %v)", kind, ok, err)
			}
			if m, _, err := d.LastSeen(context.Background(), []string{"a"}); len(m) != 0 || err != nil {
				t.Fatalf("LastSeen took a %s for a heartbeat: %v %v", kind, m, err)
			}
			if l, _, _ := d.List(context.Background()); len(l) != 0 {
				t.Fatalf("List took a %s for a heartbeat: %v", kind, l)
			}
			if fi, err := os.Lstat(path); err != nil || fi.Mode().IsRegular() {
				t.Fatalf("the %s was replaced: %v", kind, err)
			}
		})
	}
}

// LastSeen clamps a heartbeat in the future to now, on disk too, so it
// ages from now on; one in the past is left as it is; an agent without a
// heartbeat is absent. Both reads return the store's now.
func TestLastSeenClampsFuture(t *testing.T) {
	d, now := newDir(t)
	ctx := context.Background()
	for _, a := range []string{"future", "past"} {
		if err := d.Beat(ctx, a, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Tree.Chtimes(FileName("future"), now.Add(24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := d.Tree.Chtimes(FileName("past"), now.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	// The list is a read: it shows the mtimes as they are.
	list, lnow, err := d.List(ctx)
	if err != nil || !lnow.Equal(*now) || len(list) != 2 || !list[0].At.Equal(now.Add(24*time.Hour)) {
		t.Fatalf("List: %+v at %v, %v", list, lnow, err)
	}
	seen, snow, err := d.LastSeen(ctx, []string{"future", "past", "ghost"})
	if err != nil || !snow.Equal(*now) {
		t.Fatalf("LastSeen: %v at %v", err, snow)
	}
	if !seen["future"].Equal(*now) || !seen["past"].Equal(now.Add(-time.Minute)) {
		t.Fatalf("LastSeen %v, want future clamped to %v and past kept", seen, *now)
	}
	if _, ok := seen["ghost"]; ok || len(seen) != 2 {
		t.Fatalf("an agent without a heartbeat is seen: %v", seen)
	}
	if mt, _, _ := d.MTime("future"); !mt.Equal(*now) {
		t.Fatalf("the future mtime is %v on disk, want it clamped to %v", mt, *now)
	}
	// From now on it ages.
	*now = now.Add(time.Hour)
	if seen, _, _ = d.LastSeen(ctx, []string{"future"}); coord.Age(seen["future"], *now) != time.Hour {
		t.Fatalf("an hour later the clamped heartbeat is %v old", coord.Age(seen["future"], *now))
	}
}

// A beat only moves the mtime while the agent's state is unchanged; a new
// status, task or set of capabilities rewrites the description.
func TestBeatRewritesOnlyOnChange(t *testing.T) {
	d, now := newDir(t)
	ctx := context.Background()
	task := "4.2"
	working := &coord.BeatInfo{Status: coord.AgentWorking, CurrentTask: &task, Capabilities: []string{"go"}}
	if err := d.Beat(ctx, "a", working); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(d.Tree.Path(FileName("a")))
	*now = now.Add(time.Minute)
	same := *working
	if err := d.Beat(ctx, "a", &same); err != nil {
		t.Fatal(err)
	}
	if err := d.Beat(ctx, "a", nil); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(d.Tree.Path(FileName("a"))); string(again) != string(first) {
		t.Fatalf("an unchanged state rewrote the description:\n%s\n%s", first, again)
	}
	if mt, _, _ := d.MTime("a"); !mt.Equal(*now) {
		t.Fatalf("mtime %v, want %v", mt, *now)
	}
	if err := d.Beat(ctx, "a", &coord.BeatInfo{Status: coord.AgentIdle}); err != nil {
		t.Fatal(err)
	}
	in, err := d.Read("a")
	if err != nil || in.Status != coord.AgentIdle || in.CurrentTask != nil || in.AgentID != "a" || in.LastBeat != coord.FormatTime(*now) {
		t.Fatalf("description after a change: %+v, %v", in, err)
	}
}
