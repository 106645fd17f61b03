package workers

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRunCallsEachPartOnce(t *testing.T) {
	for n := 0; n <= 40; n++ {
		counts := make([]atomic.Int32, n)
		Run(n, func(i int) { counts[i].Add(1) })
		for i := range counts {
			require.Equal(t, int32(1), counts[i].Load(), "n=%d, part %d", n, i)
		}
	}
}

func TestSplitCoversTheRangeOnce(t *testing.T) {
	for _, c := range []struct{ n, parts int }{{0, 4}, {1, 4}, {3, 4}, {10, 3}, {1000, 7}, {5, 0}} {
		seen := make([]atomic.Int32, c.n)
		var calls, empty atomic.Int32
		Split(c.n, c.parts, func(lo, hi int) {
			calls.Add(1)
			if lo >= hi {
				empty.Add(1) // (no require here: FailNow must run on the test's goroutine)
			}
			for i := lo; i < hi; i++ {
				seen[i].Add(1)
			}
		})
		require.Zero(t, empty.Load(), "%+v: fn called with an empty range", c)
		for i := range seen {
			require.Equal(t, int32(1), seen[i].Load(), "%+v: element %d", c, i)
		}
		require.LessOrEqual(t, int(calls.Load()), max(c.parts, 1), "%+v", c)
	}
}

// bothAtOnce runs two parts that each wait (up to 10 s) for the other to
// start, and reports whether they met: false if Run ran them one after the
// other. first, when set, runs in part 1 once both have started.
func bothAtOnce(first func()) bool {
	var started [2]atomic.Bool
	met := true
	Run(2, func(i int) {
		started[i].Store(true)
		deadline := time.Now().Add(10 * time.Second)
		for !started[1-i].Load() {
			if time.Now().After(deadline) {
				met = false
				return
			}
		}
		if i == 1 && first != nil {
			first()
		}
	})
	return met
}

func needTwoProcessors(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("GOMAXPROCS is 1: Run has no workers, its parts run one after the other on the caller")
	}
}

// TestPartsRunAtTheSameTime fails if Run ran its parts one after another.
func TestPartsRunAtTheSameTime(t *testing.T) {
	needTwoProcessors(t)
	for range 50 {
		require.True(t, bothAtOnce(nil), "the two parts of a Run never ran at the same time")
	}
}

// TestAPartThatEndsItsGoroutineCostsNoWorker: a part on a worker calls
// runtime.Goexit (as t.FailNow does); later Runs still run in parallel.
func TestAPartThatEndsItsGoroutineCostsNoWorker(t *testing.T) {
	needTwoProcessors(t)
	// Part 1 is usually on a worker, part 0 on the caller waiting for it;
	// a loaded machine may give the caller part 1, whose Goexit would end
	// the test's own goroutine: only a part off the caller's stack exits.
	onWorker := func() {
		buf := make([]byte, 1<<16)
		if !strings.Contains(string(buf[:runtime.Stack(buf, false)]), "workers.bothAtOnce(") {
			runtime.Goexit()
		}
	}
	for range runtime.GOMAXPROCS(0) {
		require.True(t, bothAtOnce(onWorker))
	}
	require.True(t, bothAtOnce(nil), "after parts ended their workers' goroutines, the parts of a Run no longer run at the same time")
}

// TestNoMoreWorkersThanProcessors: a Run of many parts starts at most
// GOMAXPROCS-1 workers; the caller runs what they do not take.
func TestNoMoreWorkersThanProcessors(t *testing.T) {
	var n atomic.Int32
	Run(64, func(int) { n.Add(1) })
	require.Equal(t, int32(64), n.Load())
	tm := theTeam()
	tm.mu.Lock()
	size := tm.size
	tm.mu.Unlock()
	require.LessOrEqual(t, size, max(runtime.GOMAXPROCS(0)-1, 0))
}

// TestNestedAndConcurrentRunsFinish runs more Runs at once than there are
// workers, each part running a Run of its own: callers must run their
// unstarted parts themselves, or all would wait on parts nobody runs.
func TestNestedAndConcurrentRunsFinish(t *testing.T) {
	var total atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 20 {
				Run(4, func(int) {
					Run(3, func(int) { total.Add(1) })
				})
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("nested Runs did not finish in a minute: deadlock")
	}
	require.Equal(t, int64(16*20*4*3), total.Load())
}

func TestPanicInAPartReachesTheCaller(t *testing.T) {
	for _, bad := range []int{0, 1, 3} {
		got := func() (r any) {
			defer func() { r = recover() }()
			Run(4, func(i int) {
				if i == bad {
					panic(fmt.Sprintf("part %d failed", i))
				}
			})
			return nil
		}()
		p, ok := got.(*Panic)
		require.True(t, ok, "Run panicked with %T, want *Panic", got)
		require.Equal(t, fmt.Sprintf("part %d failed", bad), p.Value)
		require.Contains(t, p.Error(), fmt.Sprintf("part %d failed", bad))
		require.Contains(t, p.Error(), "part's stack:")
		require.Contains(t, string(p.Stack), "TestPanicInAPartReachesTheCaller", "the stack of the part that panicked")
	}
	// A runtime error stays one through errors.As.
	got := func() (r any) {
		defer func() { r = recover() }()
		var nilMap map[int]int
		Run(2, func(i int) {
			if i == 1 {
				nilMap[i] = i
			}
		})
		return nil
	}()
	var rerr runtime.Error
	require.ErrorAs(t, got.(error), &rerr)
	// The team still works after a part panicked.
	var n atomic.Int32
	Run(8, func(int) { n.Add(1) })
	require.Equal(t, int32(8), n.Load())
}

// BenchmarkStart reports how long the second of two parts waits before it
// starts (start-µs), for Run and for a goroutine started per part, with
// the first part busy for 100 µs and then a gap of 50 µs of work on the
// caller alone, as between the parallel ops of a program.
func BenchmarkStart(b *testing.B) {
	busy := func(d time.Duration) {
		for t := time.Now(); time.Since(t) < d; {
		}
	}
	for _, c := range []struct {
		name string
		run  func(n int, fn func(int))
	}{{"workers", Run}, {"goroutines", func(n int, fn func(int)) {
		var wg sync.WaitGroup
		for i := 1; i < n; i++ {
			wg.Go(func() { fn(i) })
		}
		fn(0)
		wg.Wait()
	}}} {
		b.Run(c.name, func(b *testing.B) {
			var waited time.Duration
			for b.Loop() {
				t0 := time.Now()
				c.run(2, func(i int) {
					if i == 1 {
						waited += time.Since(t0)
					}
					busy(100 * time.Microsecond)
				})
				busy(50 * time.Microsecond)
			}
			b.ReportMetric(float64(waited.Microseconds())/float64(b.N), "start-µs")
		})
	}
}

// TestNoPartsQueuedWithoutWorkers: with GOMAXPROCS 1 a team has no
// workers, and Run must not leave its parts (and what their closures
// hold) in a queue nobody reads.
func TestNoPartsQueuedWithoutWorkers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	tm := &team{queue: make(chan *part, 16)}
	var n atomic.Int32
	for range 4 {
		tm.run(3, func(int) { n.Add(1) })
	}
	require.Equal(t, int32(12), n.Load())
	require.Zero(t, tm.size, "no workers with GOMAXPROCS 1")
	require.Zero(t, len(tm.queue), "parts left in the queue of a team without workers")
}

// A caller whose own part ends its goroutine (runtime.Goexit, as
// t.FailNow does) still runs the parts nobody started and waits for the
// others before the goroutine ends: they were left unrun (GOMAXPROCS 1)
// or running after it (found in review).
func TestCallerGoexitFinishesTheParts(t *testing.T) {
	for _, procs := range []int{1, runtime.GOMAXPROCS(0)} {
		prev := runtime.GOMAXPROCS(procs)
		var finished atomic.Int32
		done := make(chan struct{})
		go func() {
			defer close(done)
			Run(4, func(i int) {
				if i == 0 {
					runtime.Goexit()
				}
				finished.Add(1)
			})
		}()
		<-done
		runtime.GOMAXPROCS(prev)
		require.EqualValues(t, 3, finished.Load(), "GOMAXPROCS %d", procs)
	}
}
