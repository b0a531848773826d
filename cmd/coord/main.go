// Command coord coordinates AI coding agents that share one repository
// through the file system or a NATS hub: claim, beat, release. README.md
// is the quick start; docs/COMMANDS.md and docs/FORMATS.md document the
// contract (commands, exit codes, file formats).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/rotd/coord/cmd/coord/gcstart"
	"github.com/rotd/coord/coord"
)

var version = "dev"

func main() {
	gcstart.Delay(gcstart.Limit) // a one-shot command ends before its first collection
	os.Exit(run(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// usageError marks errors that urfave reports about flags and arguments.
type usageError struct{ error }

// run is the whole program; tests call it. It returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		args = []string{"coord"}
	}
	if isRunGuard(args) { // coord run's helper process (guard.go)
		return runGuard(args, stdin, stdout, stderr)
	}
	// "rotd coord …" behaves exactly like "coord …".
	if filepath.Base(args[0]) == "rotd" {
		if len(args) < 2 || args[1] != "coord" {
			fmt.Fprintln(stderr, "rotd: this binary provides only 'rotd coord …'; run 'rotd coord help'")
			return int(coord.CodeUsage)
		}
		args = append([]string{"rotd coord"}, args[2:]...)
	}
	// A signal before a commit interrupts (130); during a commit it is
	// held off until the command finishes (the handler is installed, so
	// the process is not killed).
	ctx, stop := notifyStop(ctx)
	defer stop()

	e := &env{stdin: &ctxReader{ctx: ctx, r: stdin}, stdout: stdout, stderr: stderr, ctx: ctx}
	app := newApp(e)
	argv := args
	// Completion queries must reach urfave as they are (the flag last).
	if len(args) == 0 || args[len(args)-1] != "--generate-bash-completion" {
		argv = normalizeArgs(app, args)
	}
	if isHelpExitCodes(app, argv) {
		printExitCodes(stdout)
		return 0
	}
	err := app.RunContext(ctx, argv)
	defer e.close()
	if err == nil {
		return 0
	}
	var es exitStatus
	if errors.As(err, &es) { // the command has said why, in its own convention
		return int(es)
	}
	code := exitCode(err)
	msg := err.Error()
	if ue, ok := err.(usageError); ok {
		msg = ue.error.Error()
	}
	if code == coord.CodeInterrupted && msg == "interrupted" {
		msg = interrupted(ctx).Error() // name the signal
	}
	var ce *coord.Error
	if errors.As(err, &ce) && e.diagnose && ce.Detail != "" {
		msg += "; holder " + ce.Detail
	}
	if code == coord.CodeLockTimeout && !e.diagnose { // the CLI's own words for the engine's hint
		msg += "; --lock-wait DUR waits longer, --lock-diagnose names the holder"
	}
	fmt.Fprintln(stderr, "coord: "+coord.OneLine(msg))
	return int(code)
}

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

// exitCode is the one table from errors to exit codes.
func exitCode(err error) coord.Code {
	var ue usageError
	if errors.As(err, &ue) {
		return coord.CodeUsage
	}
	if errors.Is(err, context.Canceled) {
		return coord.CodeInterrupted
	}
	return coord.CodeOf(err)
}

func printExitCodes(w io.Writer) {
	fmt.Fprintf(w, "%-5s %-15s %s\n", "CODE", "NAME", "MEANING")
	for _, c := range coord.ExitCodes {
		fmt.Fprintf(w, "%-5d %-15s %s\n", c.Code, c.Name, c.Meaning)
	}
}

func onUsageError(_ *cli.Context, err error, _ bool) error {
	return usageError{err}
}

func newApp(e *env) *cli.App {
	app := &cli.App{
		Name:                 "coord",
		Usage:                "coordinate AI coding agents through the file system",
		Version:              version,
		Writer:               e.stdout,
		ErrWriter:            e.stderr,
		Reader:               e.stdin,
		HideHelpCommand:      false,
		EnableBashCompletion: true,
		ExitErrHandler:       func(*cli.Context, error) {}, // run maps errors; deferred unlocks run first
		OnUsageError:         onUsageError,
		Flags:                globalFlags(),
		Before:               e.before,
		Commands:             append(append(append(append(commands(e), planningCommands(e)...), scheduleCommands(e)...), agentCommands(e)...), hubCommands(e)...),
		CommandNotFound: func(c *cli.Context, name string) {
			e.notFound = name
		},
		After: func(c *cli.Context) error {
			if e.notFound != "" {
				return usageError{fmt.Errorf("unknown command %q; run 'coord help'", e.notFound)}
			}
			return nil
		},
	}
	for _, c := range app.Commands {
		setUsage(c)
		guardArgs(c, "")
	}
	return app
}

func setUsage(c *cli.Command) {
	c.OnUsageError = onUsageError
	for _, s := range c.Subcommands {
		setUsage(s)
	}
}

func globalFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "root", Usage: "project root holding .rotd/coordination (env COORD_ROOT)"},
		&cli.StringFlag{Name: "backend", Usage: "where the project's state lives: file:///abs/path or nats://[user:pass@]host:port[,host:port…][/NAMESPACE] (env COORD_BACKEND; default: the root's tree, or \"backend\" in its config.json)"},
		&cli.StringFlag{Name: "agent", Usage: "this agent's id (env COORD_AGENT or ROTD_AGENT_ID; default: a UUID kept in .rotd/agent_id)"},
		&cli.BoolFlag{Name: "json", Usage: "machine-readable output"},
		&cli.StringFlag{Name: "lock-wait", Usage: "how long to wait for an artifact lock (Go duration; a bare number is seconds)"},
		&cli.BoolFlag{Name: "lock-diagnose", Usage: "name the holder of a contended lock"},
		&cli.BoolFlag{Name: "allow-unsafe-fs", Usage: "run on NFS, 9p/WSL, FUSE or SMB even though flock and rename are not trustworthy there (env COORD_ALLOW_UNSAFE_FS=1)"},
	}
}

func strErr(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}
