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
