package file

import (
	"context"
	"errors"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/fsops"
)

// notifier wakes waiters on changes in the tree: fsnotify on the
// coordination directory (the registry, the data files and the log, all
// replaced by rename or appended to there), heartbeat/ and agent_locks/.
// Directories are watched, never single files: a file replaced by rename
// would lose its watch.
type notifier struct{ b *Backend }

// Watch starts watching and returns a channel that receives a value after
// changes, coalesced (one value may stand for many; the channel holds at
// most one), until ctx ends, when it is closed. An overflow of the
// kernel's queue is reported as a change. An error means notification
// cannot start (inotify limits, a network file system): callers poll.
func (n notifier) Watch(ctx context.Context) (<-chan coord.Change, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, IOError(err, "")
	}
	for _, d := range []string{".", HeartbeatDir, LocksDir} {
		if err := w.Add(n.b.tree.Path(d)); err != nil {
			w.Close()
			return nil, IOError(err, "")
		}
	}
	out := make(chan coord.Change, 1)
	changed := func(missed bool) {
		select {
		case out <- coord.Change{Missed: missed}:
		default: // one is pending already: it stands for this one too
			if missed { // but a loss must not be hidden behind a plain change
				select {
				case <-out:
				default:
				}
				select {
				case out <- coord.Change{Missed: true}:
				default:
				}
			}
		}
	}
	go func() {
		defer close(out)
		defer w.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-w.Events:
				if !ok {
					return
				}
				changed(false)
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				changed(true) // an overflow: anything may have changed
			}
		}
	}()
	return out, nil
}

// HoldExclusive takes the flock of .lock/<name>.lock for the life of the
// process (coord.Exclusive): the kernel releases it when the process ends,
// however it ends. Another holder is refused at once (CodeConflict), with
// the description it wrote into the sidecar.
func (s *Backend) HoldExclusive(ctx context.Context, name string, holder []byte) (func(), error) {
	unlock, err := s.tree.Lock(ctx, LockDir+"/"+name+".lock", time.Millisecond, holder)
	if err != nil {
		var lt *fsops.LockTimeoutError
		if errors.As(err, &lt) {
			return nil, coord.Errorf(coord.CodeConflict, "another %s already serves %s: %s", name, s.tree.Dir(), lt.Holder).
				WithHint("one is enough; stop the other first")
		}
		return nil, IOError(err, "")
	}
	return unlock, nil
}
