// Package backendtest is coord's test kit: a project laid down and
// opened through the one opener (registry/backend), with the application
// over it, and a bounded wait for a condition. Tests of every layer use
// it (the application, the engines, the front ends), so that a project is
// made one way everywhere and no test waits on a sleep. Git for tests
// that need a real repository is run one way too (Git, GitEnv).
//
// It is imported only by tests. It lives beside the opener because it
// opens engines: a tree in a temporary directory, or any backend URL (a
// NATS namespace of a hub from registry/nats/hubtest). Package backend's
// own tests cannot use it (it imports backend).
package backendtest

import (
	_ "github.com/rotd/coordination/registry/engines" // tests open every engine

	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rotd/coordination/coord"
	"github.com/rotd/coordination/coord/app"
	"github.com/rotd/coordination/registry/backend"
	"github.com/rotd/coordination/registry/format"
)

// Timeout bounds every wait for a condition: generous, so that a loaded
// 2-core machine is slow, never wrong.
const Timeout = 60 * time.Second

// pollEvery is how often a wait looks again.
const pollEvery = 20 * time.Millisecond

// WaitFor calls cond until it reports true, for at most Timeout, and
// reports whether it did. cond runs on the caller's goroutine, so it may
// fail the test itself.
func WaitFor(cond func() bool) bool {
	deadline := time.Now().Add(Timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
	return true
}

// Wait is WaitFor that fails t, naming what it waited for, when cond
// never held.
func Wait(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if !WaitFor(cond) {
		t.Fatalf("timed out after %s waiting for %s", Timeout, what)
	}
}

// Options say which project a test gets.
type Options struct {
	// Root is the project root to lay down (idempotent: an existing tree
	// is only opened); "" is a new temporary directory.
	Root string
	// URL names another backend (nats://host:port/NAMESPACE, laid down
	// the same way); "" is the tree under Root.
	URL string
	// Config is config.json's whole content, written before the project
	// is opened ("": the template's). Trees only.
	Config string
	// Seed holds tasks as JSON Lines, each read as a task line (fields
	// another tool wrote are kept), and Tasks more tasks (unclaimed
	// unless they say otherwise); both are seeded before NewProject
	// returns.
	Seed  string
	Tasks []*coord.Task
	// Clock is the engine's and the application's clock (nil: the
	// system's).
	Clock coord.Clock
	// Warn receives the engine's and the application's warnings (nil:
	// none are kept).
	Warn func(string)
	// Wrap is the engine as the application sees it (a decorator that
	// counts or fails calls); nil is the engine itself.
	Wrap func(coord.Backend) coord.Backend
	// Open adjusts the opener's options further (a lock wait, a holder).
	Open func(*backend.Options)
	// Repo is the caller's git repository as the application sees it
	// (nil: none).
	Repo app.Repo
	// History is the repository's history as planning learns from it
	// (nil: none).
	History app.History
}

// Project is a test's project, closed when the test ends.
type Project struct {
	// Root is the project root ("" for a URL project).
	Root string
	// URL is the backend URL the project was opened by ("" for the tree
	// under Root).
	URL string
	// Backend is the engine as opened (before Options.Wrap).
	Backend coord.Backend
	// Service is the application over it, reading formats as the CLI
	// does (backend.Formats).
	Service *app.Service
}

// Init lays a project down as o says (a new temporary tree, the tree
// under o.Root, or the backend o.URL names; o.Config written) without
// opening it, and returns where it is: Backend and Service are nil.
func Init(t testing.TB, o Options) *Project {
	t.Helper()
	p := &Project{Root: o.Root, URL: o.URL}
	if p.URL == "" && p.Root == "" {
		p.Root = t.TempDir()
	}
	dir, _, err := backend.Init(context.Background(), backend.Options{URL: p.URL, Root: p.Root})
	if err != nil {
		t.Fatal(err)
	}
	if o.Config != "" {
		if p.URL != "" {
			t.Fatal("backendtest: Config is for trees; set a hub's settings through Service.SetConfig")
		}
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(o.Config), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// NewProject lays a project down as o says (Init), opens it, seeds it
// and returns it; any failure fails t.
func NewProject(t testing.TB, o Options) *Project {
	t.Helper()
	ctx := context.Background()
	p := Init(t, o)
	bo := backend.Options{URL: p.URL, Root: p.Root, Clock: o.Clock, Warn: o.Warn}
	if o.Open != nil {
		o.Open(&bo)
	}
	b, err := backend.Open(ctx, bo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	p.Backend = b
	var seen coord.Backend = b
	if o.Wrap != nil {
		seen = o.Wrap(b)
	}
	p.Service, err = app.New(ctx, seen, app.Options{Clock: o.Clock, Warn: o.Warn, Formats: backend.Formats{}, Repo: o.Repo, History: o.History})
	if err != nil {
		t.Fatal(err)
	}
	var batch []coord.SeedLine
	if s := strings.TrimSpace(o.Seed); s != "" {
		for i, line := range strings.Split(s, "\n") {
			task, err := format.ParseTaskLine(fmt.Sprintf("seed: line %d", i+1), []byte(line))
			if err != nil {
				t.Fatal(err)
			}
			batch = append(batch, coord.SeedLine{Line: i + 1, Task: task})
		}
	}
	for _, task := range o.Tasks {
		if task.Status == "" {
			task.Status = coord.Unclaimed
		}
		task.Dirty = true
		batch = append(batch, coord.SeedLine{Line: len(batch) + 1, Task: task})
	}
	if len(batch) > 0 {
		if _, err := p.Service.Seed(ctx, app.SeedRequest{Name: "seed", Batch: batch}); err != nil {
			t.Fatal(err)
		}
	}
	return p
}
