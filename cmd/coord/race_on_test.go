//go:build race

package main

// raceEnabled: the race detector slows every process ~10×; the load
// scenarios then run in make test's separate non-race pass.
const raceEnabled = true
