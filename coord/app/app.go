package app

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/rotd/coordination/coord"
)

// Service is the application over one backend. Its methods are safe for
// concurrent use by several goroutines as far as the backend is (both
// engines are); identity is per call.
type Service struct {
	b coord.Backend
	// cfg is the project's configuration in force: replaced whole when it
	// changes (SetConfig, Reload), read through conf.
	cfg     atomic.Pointer[coord.Config]
	clock   coord.Clock
	warn    func(string)
	formats Formats
	getenv  func(string) string
	repo    Repo
	history History
	replan  replanMark
	// notLanded remembers finished work found not yet on the target
	// (landedAmong).
	notLanded notLanded
}

// Options tune a Service.
type Options struct {
	// Clock is the application's clock (the time written into logs and
	// records); nil is the system clock. Liveness is judged on the beat
	// store's clock, never on this one.
	Clock coord.Clock
	// Warn receives problems that happened after a commit (the change
	// stands, so the call still succeeds). nil discards them.
	Warn func(string)
	// Formats reads and writes the formats front ends hand over as
	// bytes (seed batches, settings, a task as the registry holds it):
	// registry/backend.Formats. The methods that need it (ParseSeed,
	// TaskJSON, Settings, Setting, SetConfigText, UnsetConfig) refuse or
	// panic without it; KVValue reads JSON less strictly.
	Formats Formats
	// Getenv reads the environment variables that override a setting for
	// one process (COORD_LEASE_TTL: LeaseTTL); nil reads none. Every
	// front end of one process shares the Service, so they all honour the
	// same ones.
	Getenv func(string) string
	// Repo is the caller's git repository (nil: the caller stands in no
	// repository, and nothing git-aware is recorded or checked: no
	// branch at a claim, no head at a release, no landing found).
	Repo Repo
	// History is the caller's repository's history as coord plan
	// learns from it (nil: no repository; plan predicts nothing).
	History History
}

// New opens the application on b, reading the project's configuration.
func New(ctx context.Context, b coord.Backend, opt Options) (*Service, error) {
	cfg, err := b.Config(ctx)
	if err != nil {
		return nil, err
	}
	s := &Service{b: b, clock: opt.Clock, warn: opt.Warn, formats: opt.Formats, getenv: opt.Getenv, repo: opt.Repo, history: opt.History}
	s.cfg.Store(&cfg)
	if s.clock == nil {
		s.clock = coord.SystemClock
	}
	return s, nil
}

// Config is the project's configuration in force.
func (s *Service) Config() coord.Config { return *s.cfg.Load() }

// conf is the configuration in force, for the Service's own reading.
func (s *Service) conf() *coord.Config { return s.cfg.Load() }

// Reload reads the project's settings again and uses them from then on
// (a long-running watch or lander follows a change of config.json or
// coord config set): it reports whether any setting changed. A settings
// document that cannot be read leaves the ones in force (and the error
// says why).
func (s *Service) Reload(ctx context.Context) (bool, error) {
	cfg, err := s.b.Config(ctx)
	if err != nil {
		return false, interrupted(ctx, err)
	}
	old := s.cfg.Load()
	if reflect.DeepEqual(*old, cfg) {
		return false, nil
	}
	s.cfg.Store(&cfg)
	return true, nil
}

// Backend is the engine the Service runs on (its name and where it is, for
// people; front ends must not reach around the Service through it).
func (s *Service) Backend() coord.Backend { return s.b }

// Now is the Service's clock.
func (s *Service) Now() time.Time { return s.clock() }

func (s *Service) warnf(err error) {
	if err != nil && s.warn != nil {
		s.warn(coord.OneLine(err.Error()))
	}
}

// interrupted maps a context's end to the documented interruption.
func interrupted(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return &coord.Error{Code: coord.CodeInterrupted, Msg: "interrupted", Err: coord.ErrInterrupted}
	}
	return err
}

// nonNil returns s, or an empty slice for nil (JSON prints [] not null).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
