//go:build !race

package interpreter

// raceEnabled: see race_on_test.go.
const raceEnabled = false
