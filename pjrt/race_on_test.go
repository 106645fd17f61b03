//go:build race

package pjrt

// raceEnabled: the race detector makes sync.Pool drop some of what it is
// given, so tests cannot count allocations.
const raceEnabled = true
