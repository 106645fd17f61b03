package interpreter

import (
	"errors"
	"sync/atomic"
)

// A run's stop flag (Exec.stopFlag) is set when its context ends. Kernels
// that can take long poll it and return early, with errStopped or an
// unfinished result; runKernel then reports the context's cause instead.

// errStopped is what a kernel may return when it ended early because its
// run's stop flag was set.
var errStopped = errors.New("interpreter: stopped: the run's context ended")

// stopped reports whether stop is set (false for a nil flag: a run that
// cannot be stopped).
func stopped(stop *atomic.Bool) bool { return stop != nil && stop.Load() }

// stopPiece is about how much work (multiply-adds, elements produced or
// moved) a kernel does between two polls of its stop flag: well under a
// millisecond, and large enough that polling costs nothing measurable.
const stopPiece = 1 << 18

// laParallelForStop is laParallelFor handing fn pieces of about stopPiece
// work each (work is the whole range's), and no more pieces once stop is
// set.
func laParallelForStop(n int, work int64, stop *atomic.Bool, fn func(lo, hi int)) {
	if stop == nil || n <= 0 {
		laParallelFor(n, work, fn)
		return
	}
	step := n
	if per := work / int64(n); per > 0 {
		step = int(max(1, min(int64(n), stopPiece/per)))
	}
	laParallelFor(n, work, func(lo, hi int) {
		for lo < hi && !stop.Load() {
			e := min(hi, lo+step)
			fn(lo, e)
			lo = e
		}
	})
}

// stopCounter polls a stop flag for a sequential loop: at its first step,
// then once per stopPiece units of work counted by add.
type stopCounter struct {
	stop *atomic.Bool
	left int64 // work until the next poll
}

// add counts work units and reports whether the loop should end.
func (c *stopCounter) add(work int64) bool {
	if c.left -= work; c.left >= 0 {
		return false
	}
	c.left = stopPiece
	return stopped(c.stop)
}
