package fsops

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"
)

// ErrLockTimeout is returned (wrapped in *LockTimeoutError) when a lock was
// not acquired within the wait.
var ErrLockTimeout = errors.New("lock wait timed out")

// LockTimeoutError names the contended lock and what its holder wrote.
type LockTimeoutError struct {
	Path   string
	Wait   time.Duration
	Holder string // the holder's self-description, possibly empty or stale
}

func (e *LockTimeoutError) Error() string {
	return fmt.Sprintf("timed out after %s waiting for lock %s", e.Wait, e.Path)
}

func (e *LockTimeoutError) Unwrap() error { return ErrLockTimeout }

const holderSize = 512

// Lock takes the exclusive flock of the sidecar file name (created if
// missing, never followed if a symlink), waiting at most wait. holder is a
// one-line self-description written into the sidecar for waiters to read.
// unlock releases the lock; it is safe to call once. A ctx already done
// (a signal arrived) takes no lock, so nothing is begun after a signal;
// once the lock is held, the caller's commit runs to its end.
func (t *Tree) Lock(ctx context.Context, name string, wait time.Duration, holder []byte) (unlock func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := t.refuseSymlink(name); err != nil {
		return nil, err
	}
	path := t.Path(name)
	fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW), flock.SetPermissions(0o644))
	ok, err := fl.TryLock()
	if err != nil {
		fl.Close()
		return nil, &fs.PathError{Op: "lock", Path: path, Err: unwrapPath(fixELOOP(t, name, err))}
	}
	if !ok {
		if err := waitLock(ctx, fl, wait); err != nil {
			if errors.Is(err, ErrLockTimeout) {
				return nil, &LockTimeoutError{Path: path, Wait: wait, Holder: t.readHolder(name)}
			}
			return nil, err
		}
	}
	if len(holder) > 0 {
		t.writeHolder(name, holder)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			fl.Unlock()
			fl.Close()
		})
	}, nil
}

// waitLock blocks in flock(2) on a helper goroutine so that the waiter is
// woken the moment the holder lets go (no polling delay), and abandons the
// wait on timeout or cancellation; an abandoned acquisition is released at
// once by the helper.
func waitLock(ctx context.Context, fl *flock.Flock, wait time.Duration) error {
	if wait <= 0 {
		fl.Close()
		return ErrLockTimeout
	}
	var mu sync.Mutex
	abandoned := false
	done := make(chan error, 1)
	go func() {
		err := fl.Lock()
		mu.Lock()
		defer mu.Unlock()
		if abandoned {
			if err == nil {
				fl.Unlock()
			}
			fl.Close()
			return
		}
		done <- err
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	var cause error
	select {
	case err := <-done:
		if err != nil {
			fl.Close()
		}
		return err
	case <-timer.C:
		cause = ErrLockTimeout
	case <-ctx.Done():
		cause = ctx.Err()
	}
	mu.Lock()
	defer mu.Unlock()
	abandoned = true
	select {
	case err := <-done: // acquired just as we gave up
		if err == nil {
			fl.Unlock()
		}
		fl.Close()
	default:
	}
	return cause
}

func (t *Tree) writeHolder(name string, holder []byte) {
	f, err := t.root.OpenFile(name, os.O_WRONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	defer f.Close()
	buf := make([]byte, 0, holderSize)
	buf = append(buf, holder...)
	if len(buf) >= holderSize {
		buf = buf[:holderSize-1]
	}
	for len(buf) < holderSize-1 {
		buf = append(buf, ' ')
	}
	buf = append(buf, '\n')
	f.WriteAt(buf, 0)
}

func (t *Tree) readHolder(name string) string {
	f, err := t.Open(name)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, holderSize)
	n, _ := f.ReadAt(buf, 0)
	return strings.TrimSpace(string(buf[:n]))
}
