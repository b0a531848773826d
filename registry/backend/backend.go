package backend

import (
	"context"
	"errors"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/fsops"
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

// Engine is a storage engine as the opener knows it. Each engine
// registers itself (Register, from its package's init); a front end
// that opens backends imports the engines it links (cmd/coord imports
// both) and names none of them otherwise.
type Engine struct {
	// Scheme is the URL scheme the engine opens ("file" also opens the
	// tree under Options.Root when the URL is "").
	Scheme string
	// Open opens the project o names.
	Open func(ctx context.Context, o Options) (coord.Backend, error)
	// Init lays down the project o names (idempotent, never
	// overwriting); it returns where it is and what it created.
	Init func(ctx context.Context, o Options) (where string, created []string, err error)
	// Where is where the project o names is, as its Backend.Where says
	// it, without opening it (a config.json naming its own tree is not
	// a redirect).
	Where func(o Options) (string, error)
	// Redact masks a URL's secrets for messages (nil: url's Redacted).
	Redact func(raw string) string
}

var (
	enginesMu sync.Mutex
	engines   = map[string]Engine{}
)

// Register makes e the engine for its scheme. It panics on a second
// engine for one scheme (a build that links two is broken).
func Register(e Engine) {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	if _, dup := engines[e.Scheme]; dup {
		panic("backend: two engines for scheme " + e.Scheme)
	}
	engines[e.Scheme] = e
}

// Schemes lists the registered engines' schemes, sorted.
func Schemes() []string {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	out := make([]string, 0, len(engines))
	for s := range engines {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// engineFor is the engine raw names ("" is the file tree).
func engineFor(raw string) (Engine, error) {
	scheme := "file"
	if raw != "" {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme == "" {
			scheme, _, _ = strings.Cut(raw, "://")
			if scheme == raw || scheme == "" || strings.ContainsAny(scheme, "/@:") {
				return Engine{}, coord.Errorf(coord.CodeUsage, "backend %q is not a URL", redact(raw)).
					WithHint("name a tree as file:///abs/path")
			}
		} else {
			scheme = u.Scheme
		}
	}
	enginesMu.Lock()
	e, ok := engines[scheme]
	enginesMu.Unlock()
	if !ok && len(Schemes()) == 0 {
		return Engine{}, coord.Errorf(coord.CodeUsage, "no storage engine is linked into this program").
			WithHint("import github.com/rotd/coordination/registry/engines")
	}
	if !ok {
		var known []string
		for _, s := range Schemes() {
			known = append(known, s+"://")
		}
		return Engine{}, coord.Errorf(coord.CodeUsage, "unknown backend scheme %q in %s", scheme, redact(raw)).
			WithHint("this coord knows %s", strings.Join(known, " and "))
	}
	return e, nil
}

// Open opens the backend o names: o.URL, else the tree at o.Root, or
// the backend that tree's config.json names under "backend" (a flag
// over the environment over config.json: the caller passes the first
// two as o.URL).
func Open(ctx context.Context, o Options) (coord.Backend, error) {
	b, err := openURL(ctx, o)
	if err != nil || o.URL != "" {
		return b, err
	}
	cfg, err := b.Config(ctx)
	if err != nil || cfg.Backend == "" {
		return b, nil // a broken config.json is reported by the first command that reads it
	}
	if e, err := engineFor(cfg.Backend); err == nil {
		if where, err := e.Where(Options{URL: cfg.Backend}); err == nil && where == b.Where() {
			return b, nil // names this tree itself
		}
	}
	configFile := filepath.Join(b.Where(), "config.json")
	b.Close()
	o.URL = cfg.Backend
	b, err = openURL(ctx, o)
	if err != nil {
		return nil, coord.Wrap(coord.CodeOf(err), err, "the backend named in %s", configFile)
	}
	return b, nil
}

// openURL opens the one backend o names, without looking at config.json.
func openURL(ctx context.Context, o Options) (coord.Backend, error) {
	e, err := engineFor(o.URL)
	if err != nil {
		return nil, err
	}
	return e.Open(ctx, o)
}

// Init lays down the project o names (for the file tree: its coordination
// directory from the template built into the binary). It is idempotent
// and never overwrites anything; it returns where the project is and what
// it created.
func Init(ctx context.Context, o Options) (where string, created []string, err error) {
	e, err := engineFor(o.URL)
	if err != nil {
		return "", nil, err
	}
	return e.Init(ctx, o)
}

// redact masks a URL's password for messages.
func redact(raw string) string {
	scheme, _, _ := strings.Cut(raw, "://")
	enginesMu.Lock()
	e, ok := engines[scheme]
	enginesMu.Unlock()
	if ok && e.Redact != nil {
		return e.Redact(raw)
	}
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return raw
}

// CheckFS refuses network and user-space file systems unless allowed.
// A file system that cannot be examined is not refused here: the failure
// surfaces on first use with a better message.
func CheckFS(dir string, allow bool) error {
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
