//go:build race

package nats_test

// raceEnabled: the race detector slows every process ~10x; the
// many-process scenarios run in make test's non-race pass.
const raceEnabled = true
