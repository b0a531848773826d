package file

import (
	"context"

	"github.com/fsnotify/fsnotify"
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
func (n notifier) Watch(ctx context.Context) (<-chan struct{}, error) {
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
	out := make(chan struct{}, 1)
	changed := func() {
		select {
		case out <- struct{}{}:
		default: // one is pending already: it stands for this one too
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
				changed()
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				changed() // an overflow: anything may have changed
			}
		}
	}()
	return out, nil
}
