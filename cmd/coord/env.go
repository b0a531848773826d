package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/rotd/coord/coord"
	"github.com/rotd/coord/coord/app"
	"github.com/rotd/coord/registry/backend"
	"github.com/rotd/coord/registry/file"
)

// env is what every command needs, resolved lazily from the global flags.
type env struct {
	ctx                 context.Context
	stdin               io.Reader
	stdout, stderr      io.Writer
	json, diagnose      bool
	rootFlag, agentFlag string
	rootSet, agentSet   bool
	lockWait            time.Duration
	lockWaitSet         bool
	notFound            string
	allowUnsafeFS       bool
	clock               coord.Clock
	store               coord.Backend
	svc                 *app.Service
	dir                 string // the coordination directory
	cfg                 coord.Config
	root, agent, cwd    string

	// explicitAgent is the identity given by --agent, COORD_AGENT or
	// ROTD_AGENT_ID, resolved and checked by open (so help works whatever
	// the environment), "" when none is; who() adds the agent_id file.
	explicitAgent string
}

func (e *env) before(c *cli.Context) error {
	e.json = c.Bool("json")
	e.diagnose = c.Bool("lock-diagnose")
	e.rootFlag, e.rootSet = c.String("root"), c.IsSet("root")
	e.agentFlag, e.agentSet = c.String("agent"), c.IsSet("agent")
	e.clock = coord.SystemClock
	e.allowUnsafeFS = c.Bool("allow-unsafe-fs") || os.Getenv("COORD_ALLOW_UNSAFE_FS") == "1"
	if c.IsSet("lock-wait") {
		d, err := parseDuration(c.String("lock-wait"))
		if err != nil {
			return strErr("--lock-wait: %v", err)
		}
		e.lockWait, e.lockWaitSet = d, true
	}
	if e.agentSet {
		if err := checkAgent("--agent", e.agentFlag); err != nil {
			return err
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return file.IOError(err, "")
	}
	e.cwd = wd
	return nil
}

// parseDuration is coord.ParseDuration, the one duration parser (flags,
// COORD_LEASE_TTL and config.json all go through it): a Go duration or a
// bare number of seconds, never negative, NaN, infinite or overflowing.
func parseDuration(s string) (time.Duration, error) { return coord.ParseDuration(s) }

// open resolves the root and opens the store and config.
func (e *env) open() (coord.Backend, error) { return e.openStore(false) }

// openForDoctor is open for doctor, which reports (and repairs) what open
// refuses: a subdirectory of the wrong kind, an unreadable config.json
// (the defaults are used meanwhile).
func (e *env) openForDoctor() (coord.Backend, error) { return e.openStore(true) }

func (e *env) openStore(doctor bool) (coord.Backend, error) {
	if e.store != nil {
		return e.store, nil
	}
	id, _, err := explicitAgent(e.agentFlag, e.agentSet)
	if err != nil {
		return nil, err
	}
	e.explicitAgent = id
	root, err := findRoot(e.rootFlag, e.rootSet, e.cwd, true)
	if err != nil {
		return nil, err
	}
	e.root = root
	warn := func(msg string) { fmt.Fprintf(e.stderr, "coord: warning: %s\n", coord.OneLine(msg)) }
	opt := backend.Options{
		Root:          root,
		Clock:         e.clock,
		Warn:          warn,
		Holder:        e.explicitAgent,
		AllowUnsafeFS: e.allowUnsafeFS,
		Lenient:       doctor,
	}
	if e.lockWaitSet {
		opt.LockWait = e.lockWait
	}
	s, err := backend.Open(e.ctx, opt)
	if err != nil {
		return nil, err
	}
	svc, err := app.New(e.ctx, s, app.Options{Clock: e.clock, Warn: warn})
	if err != nil {
		s.Close()
		return nil, err
	}
	e.cfg = svc.Config()
	e.store, e.svc, e.dir = s, svc, s.Where()
	return s, nil
}

// openAs opens the store and resolves this agent's identity, as most
// commands that change something need both.
func (e *env) openAs() (coord.Backend, string, error) {
	s, err := e.open()
	if err != nil {
		return nil, "", err
	}
	agent, err := e.who()
	return s, agent, err
}

// who resolves this agent's id (after open, so the root is known).
func (e *env) who() (string, error) {
	if e.agent != "" {
		return e.agent, nil
	}
	id, err := agentID(e.agentFlag, e.agentSet, e.cwd, e.root)
	if err != nil {
		return "", err
	}
	e.agent = id
	if h, ok := e.store.(interface{ SetHolder(string) }); ok {
		h.SetHolder(id)
	}
	return id, nil
}

func (e *env) beats() coord.BeatStore { return e.store.Beats() }

func (e *env) close() {
	if e.store != nil {
		e.store.Close()
	}
}

func (e *env) printJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "%s\n", b)
	return err
}

func (e *env) printf(format string, args ...any) {
	fmt.Fprintf(e.stdout, format, args...)
}
