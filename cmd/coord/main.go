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
	"path/filepath"

	"github.com/urfave/cli/v3"

	"github.com/rotd/coordination/cmd/coord/internal/gcstart"
	"github.com/rotd/coordination/coord"
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
	if isSupervisor(args) { // coord run's helper process (lifeline.go)
		return runSupervisor(args, stdin, stdout, stderr)
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
	if hook, ok := plainHook(args); ok {
		// The agents run `coord hook AGENT [EVENT]` before every edit,
		// with no flag: serve it without building the command tree
		// (every command and flag of coord), the same as the command
		// would (env.defaults is what before sets without flags).
		defer e.close()
		if err := e.defaults(); err != nil {
			return report(ctx, e, stderr, err)
		}
		return report(ctx, e, stderr, e.runHook(hook))
	}
	app := newApp(e)
	argv := args
	if args[len(args)-1] != completionFlag { // completion queries reach urfave as they are
		argv = hoistFlags(app, args)
	}
	if isHelpExitCodes(app, argv) {
		printExitCodes(stdout)
		return 0
	}
	err := app.Run(ctx, argv)
	defer e.close()
	return report(ctx, e, stderr, err)
}

// plainHook returns the arguments of `coord hook AGENT [EVENT]` given with
// no flag and nothing else (as setup installs it), for run's fast path.
func plainHook(args []string) ([]string, bool) {
	if len(args) < 3 || len(args) > 4 || args[1] != "hook" {
		return nil, false
	}
	for _, a := range args[2:] {
		if a == "" || a[0] == '-' {
			return nil, false
		}
	}
	return args[2:], true
}

// report ends a command: exit 0, the status a command has explained in
// its own convention, or one line on stderr with the code of the error.
func report(ctx context.Context, e *env, stderr io.Writer, err error) int {
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

func onUsageError(_ context.Context, _ *cli.Command, err error, _ bool) error {
	return usageError{err}
}

// completionFlag is the flag urfave/cli's completion scripts add to ask
// for the words that fit.
const completionFlag = "--generate-shell-completion"

// newApp is the command tree. urfave/cli v3 reads every command's flags
// after its name, before and after positional arguments, and the global
// flags in every command (docs/COMMANDS.md); hoistFlags moves the flags that
// stand before their command's name.
func newApp(e *env) *cli.Command {
	app := &cli.Command{
		Name:                  "coord",
		Usage:                 "coordinate AI coding agents through the file system",
		Version:               version,
		Writer:                e.stdout,
		ErrWriter:             e.stderr,
		Reader:                e.stdin,
		EnableShellCompletion: true,
		ConfigureShellCompletionCommand: func(c *cli.Command) {
			c.Hidden = false
			c.Usage = "print a shell completion script: coord completion bash|zsh|fish|pwsh"
			setUsage(c)
			guardArgs(c, "")
		},
		ExitErrHandler: func(context.Context, *cli.Command, error) {}, // run maps errors; deferred unlocks run first
		OnUsageError:   onUsageError,
		Flags:          globalFlags(),
		Before: func(ctx context.Context, c *cli.Command) (context.Context, error) {
			return ctx, e.before(c)
		},
		Action:   rootAction,
		Commands: commands(e),
	}
	for _, c := range app.Commands {
		setUsage(c)
		guardArgs(c, "")
	}
	return app
}

// rootAction runs when no command is named: help for nothing, exit 1 for
// a word that names no command.
func rootAction(_ context.Context, c *cli.Command) error {
	if c.NArg() == 0 {
		return cli.ShowRootCommandHelp(c)
	}
	return usageError{fmt.Errorf("unknown command %q; run 'coord help'", clipArg(c.Args().First()))}
}

func setUsage(c *cli.Command) {
	c.OnUsageError = onUsageError
	for _, s := range c.Commands {
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

// exitStatus ends a command with a status it has already explained (on
// stderr or in the agent's own convention): run prints nothing more.
type exitStatus int

func (s exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(s)) }
