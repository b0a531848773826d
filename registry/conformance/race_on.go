//go:build race

package conformance

// raceEnabled: the race detector cannot see across processes and slows
// each ~10×, so the multi-process check skips itself.
const raceEnabled = true
