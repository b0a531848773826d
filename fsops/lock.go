package fsops

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
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
//
// The sidecar is opened as every file is (see openFile): a FIFO, socket,
// device or directory at its name is refused at once with a *KindError,
// never opened in a way that can block.
func (t *Tree) Lock(ctx context.Context, name string, wait time.Duration, holder []byte) (unlock func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := t.openFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	path := t.Path(name)
	ok, err := tryFlock(f)
	if err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "lock", Path: path, Err: err}
	}
	if !ok {
		if err := waitLock(ctx, f, wait); err != nil {
			if errors.Is(err, ErrLockTimeout) {
				return nil, &LockTimeoutError{Path: path, Wait: wait, Holder: t.readHolder(name)}
			}
			if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				err = &fs.PathError{Op: "lock", Path: path, Err: err}
			}
			return nil, err
		}
	}
	if len(holder) > 0 {
		writeHolder(f, holder)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			flock(f, unix.LOCK_UN)
			f.Close()
		})
	}, nil
}

// flock is flock(2) on f's descriptor, retried on EINTR.
func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	cerr := rc.Control(func(fd uintptr) {
		for {
			ferr = unix.Flock(int(fd), how)
			if ferr != unix.EINTR {
				return
			}
		}
	})
	if cerr != nil {
		return cerr
	}
	return ferr
}

// tryFlock takes the exclusive lock if it is free; ok is false if another
// descriptor holds it.
func tryFlock(f *os.File) (ok bool, err error) {
	err = flock(f, unix.LOCK_EX|unix.LOCK_NB)
	if err == unix.EWOULDBLOCK {
		return false, nil
	}
	return err == nil, err
}

// waitLock blocks in flock(2) on a helper goroutine so that the waiter is
// woken the moment the holder lets go (no polling delay), and abandons the
// wait on timeout or cancellation; an abandoned acquisition is released at
// once by the helper. f is closed unless the lock was acquired.
func waitLock(ctx context.Context, f *os.File, wait time.Duration) error {
	if wait <= 0 {
		f.Close()
		return ErrLockTimeout
	}
	var mu sync.Mutex
	abandoned := false
	done := make(chan error, 1)
	go func() {
		err := flock(f, unix.LOCK_EX)
		mu.Lock()
		defer mu.Unlock()
		if abandoned {
			if err == nil {
				flock(f, unix.LOCK_UN)
			}
			f.Close()
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
			f.Close()
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
			flock(f, unix.LOCK_UN)
		}
		f.Close()
	default:
	}
	return cause
}

// writeHolder writes the holder line at the start of the locked sidecar,
// through the descriptor that holds the lock (never by name again).
func writeHolder(f *os.File, holder []byte) {
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
