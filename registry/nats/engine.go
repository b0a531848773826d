package nats

import (
	"context"
	"path/filepath"

	rotdtemplate "github.com/rotd/coordination"
	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/registry/backend"
	"github.com/rotd/coordination/registry/file"
)

// The JetStream engine registers itself for nats:// URLs.
func init() {
	backend.Register(backend.Engine{
		Scheme: "nats",
		Open: func(ctx context.Context, o backend.Options) (coord.Backend, error) {
			return Open(ctx, o.URL, engineOptions(o))
		},
		Init: func(ctx context.Context, o backend.Options) (string, []string, error) {
			return Init(ctx, o.URL, rotdtemplate.Coordination(), engineOptions(o))
		},
		Where: func(o backend.Options) (string, error) {
			u, err := ParseURL(o.URL)
			if err != nil {
				return "", err
			}
			return u.String(), nil
		},
		Redact: Redact,
	})
}

// engineOptions maps o to the engine's options: the checkout's .rotd/
// artifacts (when there is a root) are written by the file engine's
// artifact writer.
func engineOptions(o backend.Options) Options {
	opt := Options{Clock: o.Clock, LockWait: o.LockWait, Warn: o.Warn, Lenient: o.Lenient, Name: "coord " + o.Holder, Holder: o.Holder, ConnectTimeout: o.ConnectTimeout}
	if o.Root != "" {
		opt.Artifacts = file.Artifacts(filepath.Join(o.Root, ".rotd"), o.LockWait, o.Holder)
	}
	return opt
}
