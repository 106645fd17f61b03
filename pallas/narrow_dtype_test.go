package pallas

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
)

// TestNarrowDTypesInInterpretMode runs kernels on f8 and i4 values (their
// constants, casts, and the "never written" value of an output with edge
// blocks) in interpret mode; they once failed to lower ("no scalar
// encoding").
func TestNarrowDTypesInInterpretMode(t *testing.T) {
	x := tensor(t, xla.Float32, []float32{0.3, 1.7, -2.9, 5.5, 7, -100}, 6)
	for _, c := range []struct {
		dt   xla.DType
		want []float32
	}{
		// round(round(x) + 1): 1.3125 is a tie that goes to the even 1.25.
		{xla.Float8E4M3FN, []float32{1.25, 2.75, -2, 6.5, 8, -96}},
		{xla.Float8E5M2, []float32{1.25, 3, -2, 7, 8, -96}},
		// x converted (truncated, saturated to [-8, 7]) plus 1, wrapped.
		{xla.Int4, []float32{1, 2, -1, 6, -8, -7}},
	} {
		t.Run(c.dt.String(), func(t *testing.T) {
			// Blocks of 4 over 6 elements: the second block has padding.
			spec := CallSpec{Name: "narrow", OutShapes: []xla.Shape{xla.MakeShape(c.dt, 6)}, Grid: []int64{2},
				InSpecs:  []*BlockSpec{{BlockShape: []int64{4}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}},
				OutSpecs: []*BlockSpec{{BlockShape: []int64{4}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}}}
			kernel := func(k *Kernel, r []*Ref) {
				r[1].Store(r[0].Load().Astype(c.dt).Add(k.Full(c.dt, 1, 4)))
			}
			got, err := runCall(kernel, spec, x)
			require.NoError(t, err)
			want := interpreter.NewTensor(xla.MakeShape(c.dt, 6))
			switch d := want.Data.(type) {
			case []float32:
				copy(d, c.want)
			case []int8:
				for i, v := range c.want {
					d[i] = int8(v)
				}
			}
			assert.Equal(t, want.Data, got[0].Data)
		})
	}
}

// TestE8M0HasNoZero: f8E8M0FNU (exponents alone) has no zero, so its
// "zeros" are NaN, and adding them gives NaN: the 0 + x shortcut does not
// apply (it returned x, found in review).
func TestE8M0HasNoZero(t *testing.T) {
	x := tensor(t, xla.Float32, []float32{0.5, 4}, 2)
	spec := CallSpec{Name: "e8m0", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2), xla.MakeShape(xla.Float32, 2)}}
	kernel := func(k *Kernel, r []*Ref) {
		e := r[0].Load().Astype(xla.Float8E8M0FNU)
		r[1].Store(e.Add(k.Zeros(xla.Float8E8M0FNU, 2)).Astype(xla.Float32))
		r[2].Store(k.Zeros(xla.Int32, 2).Astype(xla.Float8E8M0FNU).Add(e).Astype(xla.Float32))
	}
	out, err := runCall(kernel, spec, x)
	require.NoError(t, err)
	for _, o := range out {
		for i, v := range o.Data.([]float32) {
			assert.True(t, math.IsNaN(float64(v)), "element %d: %v", i, v)
		}
	}
}
