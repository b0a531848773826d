package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/coord/app"
	"github.com/rotd/coord/fsops"
	"github.com/rotd/coord/registry/file"
	"github.com/urfave/cli/v2"
)

const watchLock = file.LockDir + "/watch.lock"

// cmdWatch is the long-running sweeper of one tree. It sleeps until the
// next lock could go stale, wakes early on file-system events in
// heartbeat/ and agent_locks/ (debounced), rescans fully every
// --interval regardless, rotates the log at UTC midnight and archives
// when archive_after is set. When notification cannot start, or its queue
// overflows, it says so once and polls.
func (e *env) cmdWatch(c *cli.Context) error {
	if c.NArg() > 0 {
		return strErr("watch takes no arguments")
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	timeout, err := durFlag(c, "timeout", e.cfg.StaleAfter)
	if err != nil {
		return err
	}
	interval, err := durFlag(c, "interval", coord.RoundDuration(min(timeout/3, time.Minute)))
	if err != nil {
		return err
	}
	holder := fmt.Appendf(nil, `{"holder":"watch","pid":%d,"since":%q}`, os.Getpid(), coord.FormatTime(e.clock()))
	tree, err := fsops.OpenTree(e.dir, file.LockDir)
	if err != nil {
		return file.IOError(err, "")
	}
	defer tree.Close()
	unlock, err := tree.Lock(e.ctx, watchLock, time.Millisecond, holder)
	if err != nil {
		var lt *fsops.LockTimeoutError
		if errors.As(err, &lt) {
			return coord.Errorf(coord.CodeConflict, "another watcher already serves %s: %s", e.dir, lt.Holder).
				WithHint("one watcher per tree is enough; stop the other first")
		}
		return file.IOError(err, "")
	}
	defer unlock()

	var events <-chan fsnotify.Event
	var errs <-chan error
	mode := "notification"
	if !c.Bool("poll") {
		w, werr := fsnotify.NewWatcher()
		if werr == nil {
			defer w.Close()
			for _, d := range []string{file.HeartbeatDir, file.LocksDir} {
				if werr == nil {
					werr = w.Add(filepath.Join(e.dir, d))
				}
			}
		}
		if werr != nil {
			mode = "polling"
			e.logf("file notification unavailable (%v); polling every %s", werr, interval)
		} else {
			events, errs = w.Events, w.Errors
		}
	} else {
		mode = "polling"
	}
	e.logf("watching %s (%s; stale after %s; full rescan every %s)", e.dir, mode, timeout, interval)

	day := e.clock().UTC().Format("2006-01-02")
	sweep := func(full bool) {
		freed, err := e.svc.Sweep(e.ctx, app.SweepRequest{Timeout: timeout})
		if err != nil && e.ctx.Err() == nil {
			e.logf("sweep: %v", err)
			return
		}
		gone := map[string]bool{}
		for _, f := range freed {
			gone[f.Agent] = true
			e.logf("freed %s (agent %s, idle %s) -> %s", f.TaskID, f.Agent, f.Idle.Round(time.Second), f.Status)
		}
		now := e.clock()
		e.dropExpiredPathLocks(e.ctx, s) // a freed agent's went with its task
		if !full {
			return
		}
		s.Leases().Sweep(e.ctx)
		s.KV().Sweep(e.ctx)
		if d := now.UTC().Format("2006-01-02"); d != day {
			day = d
			if name, err := s.Log().Rotate(e.ctx, now); err == nil && name != "" {
				e.logf("rotated the log to %s", name)
			}
		}
		if e.cfg.ArchiveAfter > 0 {
			if ids, err := e.svc.Archive(e.ctx, now.Add(-e.cfg.ArchiveAfter)); err == nil && len(ids) > 0 {
				e.logf("archived %d done tasks", len(ids))
			}
		}
	}
	sweep(true)
	rescan := time.NewTicker(interval)
	defer rescan.Stop()
	debounce := time.NewTimer(time.Hour)
	debounce.Stop()
	due := time.NewTimer(time.Hour)
	schedule := func() {
		next, now, ok, err := e.svc.NextDue(e.ctx, timeout)
		wait := interval
		if err == nil && ok {
			wait = min(max(next.Sub(now)+50*time.Millisecond, 50*time.Millisecond), interval)
		}
		due.Reset(wait)
	}
	schedule()
	overflowSaid := false
	markWaiting()
	for {
		select {
		case <-e.ctx.Done():
			e.logf("stopped")
			return interrupted(e.ctx)
		case _, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			debounce.Reset(100 * time.Millisecond)
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				if !overflowSaid {
					e.logf("notification queue overflowed; rescanning (said once)")
					overflowSaid = true
				}
				sweep(true)
				schedule()
			}
		case <-debounce.C:
			sweep(false)
			schedule()
		case <-due.C:
			sweep(false)
			schedule()
		case <-rescan.C:
			sweep(true)
			schedule()
		}
	}
}

// logf prints a timestamped line for a person or a log collector.
func (e *env) logf(format string, args ...any) {
	fmt.Fprintf(e.stdout, "%s %s\n", coord.FormatTime(e.clock()), coord.OneLine(fmt.Sprintf(format, args...)))
}
