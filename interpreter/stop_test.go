package interpreter

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

// TestFactorizationsStop: cholesky and triangular_solve end early when
// the run's stop flag is set (a 3000x3000 cholesky ran 18 s past a 100 ms
// deadline), leaving their results unfinished.
func TestFactorizationsStop(t *testing.T) {
	const n = 64
	a := NewTensor(xla.MakeShape(xla.Float64, n, n))
	d := a.Data.([]float64)
	for i := 0; i < n; i++ {
		d[i*n+i] = 4
	}
	var stop atomic.Bool
	full, err := choleskyT[float64](a, true, a.Shape, &stop)
	require.NoError(t, err)
	assert.Equal(t, 2.0, full.Data.([]float64)[0])
	stop.Store(true)
	cut, err := choleskyT[float64](a, true, a.Shape, &stop)
	require.NoError(t, err)
	assert.Equal(t, 0.0, cut.Data.([]float64)[0], "no column computed")

	solved, err := triangularSolve(a, a, triSolveOptions{left: true, lower: true, transpose: "NO_TRANSPOSE", stop: &stop}, a.Shape)
	require.NoError(t, err)
	assert.Equal(t, 4.0, solved.Data.([]float64)[0], "b as it came: no row solved")
}
