//go:build race

package interpreter

// raceEnabled: the race detector makes sync.Pool drop some of what it is
// given, so tests cannot count on the pools.
const raceEnabled = true
