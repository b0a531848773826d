package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/rotd/coordination/coord"
)

// signalsHook, when set (by the test wrapper only), is called once the
// stop signals are caught: from then on a signal means exit 130.
var signalsHook func()

// stopSignals are the signals that stop a command with exit 130: Ctrl-C,
// kill's default, and a closed terminal or ssh session.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// signalCause is the cause of a context cancelled by a stop signal
// (context.Cause); it names the signal, which run forwards.
type signalCause struct{ sig os.Signal }

func (c *signalCause) Error() string { return "interrupted by " + signalName(c.sig) }

// Unwrap makes a signal read as a cancellation (exit 130) wherever the
// cause is checked instead of ctx.Err().
func (c *signalCause) Unwrap() error { return context.Canceled }

func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return sig.String()
}

// notifyStop is signal.NotifyContext over stopSignals, except that the
// cause names the signal. After the first signal the handler stays
// installed until stop, so a second one cannot kill a commit half-way.
func notifyStop(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, stopSignals...)
	if signalsHook != nil {
		signalsHook()
	}
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			cancel(&signalCause{sig})
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		signal.Stop(ch)
		cancel(nil)
	}
}

// interrupted is what a command returns when a signal ended ctx: exit
// 130, naming the signal. Every command that waits returns it, so the
// long-running ones (log -f, top, beat --every, watch, wait, kv watch)
// agree on the code.
func interrupted(ctx context.Context) error {
	msg := "interrupted"
	var sc *signalCause
	if errors.As(context.Cause(ctx), &sc) {
		msg = sc.Error()
	}
	return &coord.Error{Code: coord.CodeInterrupted, Msg: msg}
}

// waitingHook, when set, is called once a waiting command is ready to be
// signalled: its signal handler is installed and it waits. Only the test
// wrapper sets it (COORD_TEST_WAITING names a file to create), so tests
// signal after a condition, never after a sleep.
var waitingHook func()

func markWaiting() {
	if waitingHook != nil {
		waitingHook()
	}
}

// runWaitsHook, when set, is called each time run has said that it waits
// for work ("coord: run: waiting for …"). Only the test wrapper sets it
// (COORD_TEST_RUN_WAITS names a file to create), so a script acts once
// the loop waits, not before.
var runWaitsHook func()
