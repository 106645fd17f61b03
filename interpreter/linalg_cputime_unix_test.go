//go:build unix

package interpreter

import (
	"syscall"
	"time"
)

// laCPUTime is the process's user + system CPU time so far; benchmarks
// report it per op because the machines they run on are shared.
func laCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
