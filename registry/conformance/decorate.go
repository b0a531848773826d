package conformance

import (
	"context"
	"sync"

	"github.com/rotd/coordination/coord"
)

// decorated is an engine with parts of it wrapped: the suite's way to set
// a configuration without touching the engine's storage of it, to count
// transactions, and to act inside a window (between a sweep's judgement
// and its commit, while a waiter waits).
type decorated struct {
	coord.Backend
	cfg func(*coord.Config)

	mu sync.Mutex
	// beforeUpdate runs once, before the next TaskStore.Update.
	beforeUpdate func()
	// afterView runs after every TaskStore.View.
	afterView func()
	updates   int
	// beforeBeat runs before every BeatStore.Beat, with the agent.
	beforeBeat func(agent string)
}

func decorate(b coord.Backend) *decorated { return &decorated{Backend: b} }

// Config is the engine's configuration changed by cfg.
func (d *decorated) Config(ctx context.Context) (coord.Config, error) {
	c, err := d.Backend.Config(ctx)
	if err == nil && d.cfg != nil {
		d.cfg(&c)
	}
	return c, err
}

func (d *decorated) Tasks() coord.TaskStore { return hookedTasks{d.Backend.Tasks(), d} }

func (d *decorated) Beats() coord.BeatStore { return hookedBeats{d.Backend.Beats(), d} }

// onBeat arranges for fn to run before every beat.
func (d *decorated) onBeat(fn func(agent string)) {
	d.mu.Lock()
	d.beforeBeat = fn
	d.mu.Unlock()
}

type hookedBeats struct {
	coord.BeatStore
	d *decorated
}

func (h hookedBeats) Beat(ctx context.Context, agent string, info *coord.BeatInfo) error {
	h.d.mu.Lock()
	hook := h.d.beforeBeat
	h.d.mu.Unlock()
	if hook != nil {
		hook(agent)
	}
	return h.BeatStore.Beat(ctx, agent, info)
}

// onNextUpdate arranges for fn to run just before the next Update.
func (d *decorated) onNextUpdate(fn func()) {
	d.mu.Lock()
	d.beforeUpdate = fn
	d.mu.Unlock()
}

// onView arranges for fn to run after every View.
func (d *decorated) onView(fn func()) {
	d.mu.Lock()
	d.afterView = fn
	d.mu.Unlock()
}

// Updates counts the Updates run through d.
func (d *decorated) Updates() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.updates
}

type hookedTasks struct {
	coord.TaskStore
	d *decorated
}

func (h hookedTasks) Update(ctx context.Context, fn func(*coord.Txn) error) error {
	h.d.mu.Lock()
	hook := h.d.beforeUpdate
	h.d.beforeUpdate = nil
	h.d.updates++
	h.d.mu.Unlock()
	if hook != nil {
		hook()
	}
	return h.TaskStore.Update(ctx, fn)
}

func (h hookedTasks) View(ctx context.Context, fn func(*coord.Txn) error) error {
	err := h.TaskStore.View(ctx, fn)
	h.d.mu.Lock()
	hook := h.d.afterView
	h.d.mu.Unlock()
	if hook != nil {
		hook()
	}
	return err
}
