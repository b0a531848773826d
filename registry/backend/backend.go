package backend

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	rotdtemplate "github.com/rotd/coordination"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/fsops"
	"github.com/rotd/coordination/registry/file"
	coordnats "github.com/rotd/coordination/registry/nats"
)

// Options say which project to open and how.
type Options struct {
	// URL names the backend: "" (the file tree under Root),
	// file:///abs/path (a project root, or its .rotd/coordination
	// directory) or nats://[user:pass@]host:port[,host:port…][/NAMESPACE]
	// (NATS JetStream). Other schemes are refused.
	URL string
	// Root is the project root the caller found (the directory holding
	// .rotd/coordination), used when URL is ""; with a nats:// URL, the
	// checkout whose .rotd/ artifacts are written ("" for none).
	Root string
	// Clock is the engine's clock; nil is the system clock. The NATS
	// engine judges on the server's clock, shifted only by a test's clock
	// (anything but coord.SystemClock: registry/nats Options.Clock).
	Clock coord.Clock
	// LockWait bounds a wait for exclusion; 0 is the project's lock_wait.
	LockWait time.Duration
	// Warn receives problems that happened after a commit.
	Warn func(msg string)
	// Holder names this process to a waiter's --lock-diagnose.
	Holder string
	// AllowUnsafeFS opens a tree on a network or user-space file system:
	// the caller says every agent runs on this one machine.
	AllowUnsafeFS bool
	// Lenient opens a tree other commands refuse, for doctor.
	Lenient bool
	// ConnectTimeout bounds connecting to a remote backend's servers; 0
	// is the engine's default (see registry/nats.ConnectTimeout).
	ConnectTimeout time.Duration
}

// Open opens the backend o names: o.URL, else the tree at o.Root, or
// the backend that tree's config.json names under "backend" (docs/MANY-MACHINES.md:
// flag over environment over config; the caller passes the first two as
// o.URL).
func Open(ctx context.Context, o Options) (coord.Backend, error) {
	b, err := openURL(ctx, o)
	if err != nil || o.URL != "" {
		return b, err
	}
	cfg, err := b.Config(ctx)
	if err != nil || cfg.Backend == "" {
		return b, nil // a broken config.json is reported by the first command that reads it
	}
	if _, dir, err := locate(Options{URL: cfg.Backend}); err == nil && dir == b.Where() {
		return b, nil // names this tree itself
	}
	b.Close()
	o.URL = cfg.Backend
	b, err = openURL(ctx, o)
	if err != nil {
		return nil, coord.Wrap(coord.CodeOf(err), err, "the backend named in %s", filepath.Join(o.Root, file.RelDir, file.ConfigFile))
	}
	return b, nil
}

// openURL opens the one backend o names, without looking at config.json.
func openURL(ctx context.Context, o Options) (coord.Backend, error) {
	if isNATS(o.URL) {
		return coordnats.Open(ctx, o.URL, natsOptions(o))
	}
	root, dir, err := locate(o)
	if err != nil {
		return nil, err
	}
	if err := checkFS(dir, o.AllowUnsafeFS); err != nil {
		return nil, err
	}
	// The tree itself must not be reached through a symlink either: a
	// linked .rotd or .rotd/coordination would let one checkout write into
	// another's (or anywhere).
	for _, p := range []string{dir, filepath.Dir(dir)} {
		if li, err := os.Lstat(p); err == nil && li.Mode()&os.ModeSymlink != 0 {
			return nil, coord.Errorf(coord.CodeIO, "%s is a symlink; coord never follows symlinks into the coordination tree", p).
				WithHint("replace the link with the directory itself (linked git worktrees share the main worktree's tree without links)")
		}
	}
	return file.Open(dir, file.Options{
		Clock:    o.Clock,
		LockWait: o.LockWait,
		Warn:     o.Warn,
		Holder:   o.Holder,
		Lenient:  o.Lenient,
		RotdDir:  filepath.Join(root, ".rotd"),
	})
}

// Init lays down the project o names (for the file tree: its coordination
// directory from the template built into the binary). It is idempotent
// and never overwrites anything; it returns where the project is and what
// it created.
func Init(ctx context.Context, o Options) (where string, created []string, err error) {
	if isNATS(o.URL) {
		return coordnats.Init(ctx, o.URL, rotdtemplate.Coordination(), natsOptions(o))
	}
	root, dir, err := locate(o)
	if err != nil {
		return "", nil, err
	}
	if err := checkFS(root, o.AllowUnsafeFS); err != nil {
		return "", nil, err
	}
	created, err = file.Init(dir, rotdtemplate.Coordination())
	return dir, created, err
}

// locate maps o to a project root and its coordination directory.
func locate(o Options) (root, dir string, err error) {
	if o.URL == "" {
		if o.Root == "" {
			return "", "", coord.Errorf(coord.CodeUsage, "no project root and no backend URL")
		}
		return o.Root, filepath.Join(o.Root, file.RelDir), nil
	}
	u, perr := url.Parse(o.URL)
	if perr != nil || u.Scheme == "" {
		return "", "", coord.Errorf(coord.CodeUsage, "backend %q is not a URL", redact(o.URL)).
			WithHint("name a tree as file:///abs/path")
	}
	if u.Scheme != "file" {
		return "", "", coord.Errorf(coord.CodeUsage, "unknown backend scheme %q in %s", u.Scheme, redact(o.URL)).
			WithHint("this coord knows file:///abs/path and nats://host:port/NAMESPACE")
	}
	if (u.Host != "" && u.Host != "localhost") || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", "", coord.Errorf(coord.CodeUsage, "backend %s: a file URL names a local path only (file:///abs/path)", redact(o.URL))
	}
	p := u.Path
	if p == "" || !filepath.IsAbs(p) {
		return "", "", coord.Errorf(coord.CodeUsage, "backend %s: the path must be absolute (file:///abs/path)", redact(o.URL))
	}
	p = filepath.Clean(p)
	switch {
	case filepath.Base(p) == "coordination" && filepath.Base(filepath.Dir(p)) == ".rotd":
		return filepath.Dir(filepath.Dir(p)), p, nil
	case filepath.Base(p) == ".rotd":
		return filepath.Dir(p), filepath.Join(p, "coordination"), nil
	}
	return p, filepath.Join(p, file.RelDir), nil
}

// redact masks a URL's password for messages.
func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return coordnats.Redact(raw)
}

// isNATS reports whether raw names a NATS backend.
func isNATS(raw string) bool { return strings.HasPrefix(raw, "nats://") }

// natsOptions maps o to the NATS engine's options: the checkout's .rotd/
// artifacts (when there is a root) are written by the file engine's
// artifact writer.
func natsOptions(o Options) coordnats.Options {
	opt := coordnats.Options{Clock: o.Clock, LockWait: o.LockWait, Warn: o.Warn, Lenient: o.Lenient, Name: "coord " + o.Holder, Holder: o.Holder, ConnectTimeout: o.ConnectTimeout}
	if o.Root != "" {
		opt.Artifacts = file.Artifacts(filepath.Join(o.Root, ".rotd"), o.LockWait, o.Holder)
	}
	return opt
}

// checkFS refuses network and user-space file systems unless allowed.
// A file system that cannot be examined is not refused here: the failure
// surfaces on first use with a better message.
func checkFS(dir string, allow bool) error {
	if allow {
		return nil
	}
	err := fsops.CheckLocalFS(dir)
	if errors.Is(err, fsops.ErrUnsafeFS) {
		return coord.Errorf(coord.CodeIO, "%v", err).
			WithHint("flock and rename are not trustworthy there; put the tree on a local disk, or pass --allow-unsafe-fs if every agent runs on this one machine")
	}
	return nil
}
