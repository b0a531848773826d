package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
)

// Harness is what an engine provides to be checked: its name and a way to
// make fresh projects.
type Harness struct {
	// Name is the engine's name (coord.Backend.Name): the subtest's name
	// and the word `make conformance` prints.
	Name string
	// New lays down a fresh, empty, initialised project and returns it;
	// the harness removes it with t.Cleanup.
	New func(t *testing.T) Project
}

// Project is one fresh project of an engine.
type Project struct {
	// URL names the project for registry/backend.Open: worker processes
	// open it with it.
	URL string
	// Open opens the project in this process on clock (nil: the system
	// clock). The suite closes what it opens.
	Open func(t *testing.T, clock coord.Clock) coord.Backend
	// Clocked says that the engine honours Open's clock for every instant
	// it keeps and judges (heartbeats, leases, kv, path-lock TTLs, the
	// log's days). Checks that move time are skipped when it is false.
	Clocked bool
	// LogRotates says that the log starts a new file (or segment) at a
	// new UTC day, so the maintenance step after midnight reports one
	// rotated; an engine whose log is one stream leaves it false.
	LogRotates bool
	// Corrupt damages the stored state of one part by hand, as a broken
	// tool or a careless edit would, and returns the name an error about
	// it must contain (a file path, a bucket and key).
	Corrupt func(t *testing.T, part Part) string
	// Keep saves the stored state of one part (Leases, KV) as it stands
	// and returns what writes it back, as restoring a backup or an older
	// copy does. Nil: the checks that restore are skipped.
	Keep func(t *testing.T, part Part) (restore func())
	// Edit rewrites the stored registry document by hand: edit gets its
	// bytes and returns the new ones. Nil: the checks that edit are
	// skipped.
	Edit func(t *testing.T, edit func(doc []byte) []byte)
	// Raw returns the project's stored state as comparable text: every
	// record a write could change, by name, except heartbeat instants and
	// the engine's own lock bookkeeping. It proves a refused operation
	// wrote nothing.
	Raw func(t *testing.T) map[string]string
}

// Part names one kind of stored state Corrupt damages.
type Part string

// The parts whose damage must be refused.
const (
	Registry Part = "registry"
	KV       Part = "kv"
	Leases   Part = "leases"
	Quota    Part = "quota"
)

// Parts lists every Part.
var Parts = []Part{Registry, KV, Leases, Quota}

// check is one conformance check.
type check struct {
	name string
	// procs: real processes; run by RunProcesses, not Run.
	procs bool
	// big: moves tens of megabytes; run by RunProcesses, not Run (the
	// race detector only slows it).
	big bool
	// clocked: moves an injected clock; skipped on engines without one.
	clocked bool
	run     func(t *testing.T, e *env)
}

// checks is the suite, in the order it runs.
var checks = []check{
	{name: "contention", procs: true, run: checkContention},
	{name: "fencing", clocked: true, run: checkFencing},
	{name: "sweep-recheck", clocked: true, run: checkSweepRecheck},
	{name: "sweep-dry-run", clocked: true, run: checkSweepDryRun},
	{name: "beat-in-commit", clocked: true, run: checkBeatInCommit},
	{name: "liveness", clocked: true, run: checkLiveness},
	{name: "lease-ttl", clocked: true, run: checkLeases},
	{name: "kv-ttl", clocked: true, run: checkKV},
	{name: "path-locks", clocked: true, run: checkPathLocks},
	{name: "write-claims", clocked: true, run: checkWriteClaims},
	{name: "notify", run: checkNotify},
	{name: "wait-wakes", run: checkWaitWakes},
	{name: "archive", run: checkArchive},
	{name: "quota", clocked: true, run: checkQuota},
	{name: "log-follow-rotation", clocked: true, run: checkLog},
	{name: "strict-refusal", run: checkStrict},
	{name: "read-back", run: checkReadBack},
	{name: "read-back-size", big: true, run: checkReadBackSize},
	{name: "doctor-clean", run: checkDoctor},
	{name: "counters-restored", run: checkCountersRestored},
	{name: "epoch-ceiling", run: checkEpochCeiling},
	{name: "config", run: checkConfig},
}

// Run runs every in-process check against h as subtests
// TestX/<h.Name>/<check>, each on a fresh project, and prints "backend
// NAME: N passed, M failed" (and the skipped, if any). The checks with
// real processes or tens of megabytes are RunProcesses's: each engine's
// package calls both, Run from a test built with or without the race
// detector, RunProcesses from one built without it, so every check runs
// once per engine.
func Run(t *testing.T, h Harness) {
	t.Helper()
	run(t, h, "", func(c check) bool { return !c.procs && !c.big })
}

// RunProcesses runs the checks Run leaves out: those that start real
// processes (which the race detector cannot see across) or move tens of
// megabytes (which it only slows). It prints "backend NAME (processes):
// N passed, M failed".
func RunProcesses(t *testing.T, h Harness) {
	t.Helper()
	if raceEnabled {
		t.Skip("real processes: built without the race detector only")
	}
	run(t, h, " (processes)", func(c check) bool { return c.procs || c.big })
}

func run(t *testing.T, h Harness, label string, pick func(check) bool) {
	t.Helper()
	var passed, failed, skipped int
	t.Run(h.Name, func(t *testing.T) {
		for _, c := range checks {
			if !pick(c) {
				continue
			}
			var skip bool
			ok := t.Run(c.name, func(t *testing.T) {
				defer func() { skip = t.Skipped() }()
				e := newEnv(t, h)
				if c.clocked && !e.p.Clocked {
					t.Skipf("the %s engine does not take an injected clock", h.Name)
				}
				c.run(t, e)
			})
			switch {
			case !ok:
				failed++
			case skip:
				skipped++
			default:
				passed++
			}
		}
	})
	line := fmt.Sprintf("backend %s%s: %d passed, %d failed", h.Name, label, passed, failed)
	if skipped > 0 {
		line += fmt.Sprintf(", %d skipped", skipped)
	}
	fmt.Println(line)
}

// env is one check's project, clock and services.
type env struct {
	t     *testing.T
	h     Harness
	p     Project
	clock *Clock
	ctx   context.Context
}

func newEnv(t *testing.T, h Harness) *env {
	p := h.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return &env{t: t, h: h, p: p, clock: NewClock(time.Now().Truncate(time.Second)), ctx: ctx}
}

// open opens the project on the check's clock.
func (e *env) open() coord.Backend {
	e.t.Helper()
	b := e.p.Open(e.t, e.clock.Now)
	e.t.Cleanup(func() { b.Close() })
	return b
}

// service is the application over b on the check's clock; warnings after
// commits are logged (a clean project should have none).
func (e *env) service(b coord.Backend) *app.Service {
	e.t.Helper()
	s, err := app.New(e.ctx, b, app.Options{Clock: e.clock.Now, Warn: func(msg string) { e.t.Logf("warning: %s", msg) }})
	if err != nil {
		e.t.Fatalf("app.New: %v", err)
	}
	return s
}

// svc opens the project and returns the application over it.
func (e *env) svc() *app.Service { return e.service(e.open()) }

// seed adds tasks (unclaimed, medium unless set) in one batch.
func (e *env) seed(s *app.Service, tasks ...*coord.Task) {
	e.t.Helper()
	batch := make([]coord.SeedLine, len(tasks))
	for i, task := range tasks {
		if task.Status == "" {
			task.Status = coord.Unclaimed
		}
		batch[i] = coord.SeedLine{Line: i + 1, Task: task}
	}
	if _, err := s.Seed(e.ctx, app.SeedRequest{Name: "conformance", Batch: batch}); err != nil {
		e.t.Fatalf("seed: %v", err)
	}
}

// claim claims id for agent and returns its epoch.
func (e *env) claim(s *app.Service, agent, id string) int64 {
	e.t.Helper()
	res, err := s.Claim(e.ctx, app.ClaimRequest{Agent: coord.Agent{ID: agent}, TaskID: id})
	task := res.Task
	if err != nil || task == nil || task.ID != id || task.ClaimedBy != agent {
		e.t.Fatalf("%s claims %s: %+v, %v", agent, id, task, err)
	}
	return task.Epoch
}

// task returns the registry's task id (nil: none).
func (e *env) task(s *app.Service, id string) *coord.Task {
	e.t.Helper()
	list, err := s.Tasks(e.ctx, app.ListRequest{})
	if err != nil {
		e.t.Fatalf("list: %v", err)
	}
	for _, task := range list {
		if task.ID == id {
			return task
		}
	}
	return nil
}

// wantCode fails unless err has the code and its text contains every
// word of want.
func wantCode(t *testing.T, what string, err error, code coord.Code, want ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want code %d", what, code)
		return
	}
	if got := coord.CodeOf(err); got != code {
		t.Errorf("%s: code %d, want %d: %v", what, got, code, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not name %q", what, err, w)
		}
	}
}

// ok fails the check at once on an unexpected error.
func ok(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// bound is the generous limit on anything the suite waits for: never how
// fast, only that it happens.
const bound = 60 * time.Second

// eventually waits (up to bound) until cond holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, bound)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Clock is an injected clock that moves only when told.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock is a clock standing at start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now is the clock's time (a coord.Clock).
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Set moves the clock to at.
func (c *Clock) Set(at time.Time) {
	c.mu.Lock()
	c.now = at
	c.mu.Unlock()
}

// Main is a TestMain for packages that call RunProcesses: in a worker
// process (the test binary re-executed by the contention check) it runs
// the worker and exits; otherwise it runs the tests.
func Main(m *testing.M) {
	Worker()
	os.Exit(m.Run())
}

// Worker, called first in a TestMain of its own, runs the worker and
// exits when this process is one of the suite's workers; otherwise it
// returns.
func Worker() {
	if mode := os.Getenv(workerEnv); mode != "" {
		os.Exit(worker(mode))
	}
}

// isInterrupted reports a context's end as the app reports it.
func isInterrupted(err error) bool { return errors.Is(err, coord.ErrInterrupted) }
