package main

import (
	"context"
	"errors"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/rotd/coord/registry/file"
)

// errWaitTimeout is what untilChange returns when its timeout passes.
var errWaitTimeout = errors.New("timed out")

// untilChange calls check now, then again after every change in dirs and
// at least once a second, until check reports done (or fails), ctx ends
// (its error, as an I/O error: exit 130 for a signal) or timeout passes (errWaitTimeout; 0 means no
// timeout). A burst of events is coalesced over settle into one check.
//
// Notification is only a hint: the directories are watched, never single
// files (an atomic rename replaces the file and loses its watch), and the
// one-second poll is the fallback when fsnotify cannot start (inotify
// limits, network file systems), overflows, or misses a change.
func untilChange(ctx context.Context, dirs []string, timeout, settle time.Duration, check func() (bool, error)) error {
	var events <-chan fsnotify.Event
	if w, err := fsnotify.NewWatcher(); err == nil {
		defer w.Close()
		for _, d := range dirs {
			if w.Add(d) == nil {
				events = w.Events
			}
		}
	}
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	poll := time.NewTicker(time.Second)
	defer poll.Stop()
	for {
		if done, err := check(); err != nil || done {
			return err
		}
		select {
		case <-events:
			time.Sleep(settle)
			for len(events) > 0 {
				<-events
			}
		case <-poll.C:
		case <-deadline:
			return errWaitTimeout
		case <-ctx.Done():
			return file.IOError(ctx.Err(), "")
		}
	}
}
