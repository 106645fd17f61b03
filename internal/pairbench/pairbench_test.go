package pairbench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestMedian(t *testing.T) {
	assert.Equal(t, 0.0, Median(nil))
	assert.Equal(t, 2.0, Median([]float64{3, 1, 2}))
	xs := []float64{4, 1, 3, 2}
	assert.Equal(t, 2.5, Median(xs))
	assert.Equal(t, []float64{4, 1, 3, 2}, xs, "the input keeps its order")
}

func BenchmarkRunSleeps(b *testing.B) {
	// A pair of sleeps, 2 ms against 1 ms: base/candidate comes out near 2.
	Run(b, "slow", func() error { time.Sleep(2 * time.Millisecond); return nil },
		"fast", func() error { time.Sleep(time.Millisecond); return nil })
}

// Each function runs once untimed before the timed pairs.
func TestRunWarmsUpBoth(t *testing.T) {
	var nb, nc int
	res := testing.Benchmark(func(b *testing.B) {
		nb, nc = 0, 0
		Run(b, "base", func() error { nb++; return nil }, "cand", func() error { nc++; return nil })
	})
	assert.Equal(t, res.N+1, nb)
	assert.Equal(t, res.N+1, nc)
	assert.Contains(t, res.Extra, "base/cand")
}

// Each round asks each function for n queued calls, base first; the
// times reported are per call.
func TestRunQueued(t *testing.T) {
	var order []string
	res := testing.Benchmark(func(b *testing.B) {
		order = nil
		for b.Loop() {
		}
		RunQueued(b, 3, 4, "base", func(n int) error {
			order = append(order, "base")
			time.Sleep(time.Duration(n) * 2 * time.Millisecond)
			return nil
		}, "cand", func(n int) error {
			order = append(order, "cand")
			time.Sleep(time.Duration(n) * time.Millisecond)
			return nil
		})
	})
	assert.Equal(t, []string{"base", "cand", "base", "cand", "base", "cand"}, order)
	// Per call: at least 2 ms and 1 ms (a sleep lasts at least its time).
	assert.GreaterOrEqual(t, res.Extra["base-queued-ms"], 2.0)
	assert.GreaterOrEqual(t, res.Extra["cand-queued-ms"], 1.0)
	assert.Contains(t, res.Extra, "base/cand-queued")
}
