//go:build !race

package pjrt

// raceEnabled: see race_on_test.go.
const raceEnabled = false
