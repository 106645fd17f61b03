package pallas

import (
	"testing"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
	"github.com/stretchr/testify/require"
)

// TestBoolReductions: any (ReduceMax), all (ReduceMin) and the count of
// trues (Sum, an i32) of bool values, per row and whole, in interpret mode
// and as Triton, against Go.
func TestBoolReductions(t *testing.T) {
	x := tensor(t, xla.Float32, f32s(32, func(i int) float32 { return float32((i*5)%7) - 3 }), 4, 8)
	c := tritonCase{name: "bool_reductions", kernel: func(k *Kernel, r []*Ref) {
		m := r[0].Load().Gt(1.0)
		r[1].Store(m.ReduceMax(1))
		r[2].Store(m.ReduceMin(1))
		r[3].Store(m.Sum(1))
		r[4].Store(m.Sum().Add(m.ReduceMax().Astype(xla.Int32).Mul(100)))
	}, spec: CallSpec{Name: "bool_reductions", OutShapes: []xla.Shape{xla.MakeShape(xla.Bool, 4), xla.MakeShape(xla.Bool, 4),
		xla.MakeShape(xla.Int32, 4), xla.MakeShape(xla.Int32)}},
		args: []*interpreter.Tensor{x}}
	xs := x.Data.([]float32)
	anyRow, allRow, count := make([]bool, 4), make([]bool, 4), make([]int32, 4)
	total := int32(0)
	for i := 0; i < 4; i++ {
		allRow[i] = true
		for j := 0; j < 8; j++ {
			b := xs[i*8+j] > 1
			anyRow[i] = anyRow[i] || b
			allRow[i] = allRow[i] && b
			if b {
				count[i]++
				total++
			}
		}
	}
	if total > 0 {
		total += 100
	}
	interp, err := runCall(c.kernel, c.spec, c.args...)
	require.NoError(t, err)
	tt := runTritonEval(t, c)
	for _, got := range [][]*interpreter.Tensor{interp, tt} {
		require.Equal(t, anyRow, got[0].Data)
		require.Equal(t, allRow, got[1].Data)
		require.Equal(t, count, got[2].Data)
		require.Equal(t, []int32{total}, got[3].Data)
	}
	require.Contains(t, anyRow, true)
	require.Contains(t, allRow, false)
}

// TestNotDefinedSaysWhatToConvert: math refused on a dtype says which
// conversion makes it work.
func TestNotDefinedSaysWhatToConvert(t *testing.T) {
	for _, c := range []struct {
		kernel KernelFunc
		want   string
	}{
		{func(k *Kernel, r []*Ref) { r[0].Store(k.Iota(xla.Int32, 0, 4).Exp().Astype(xla.Float32)) }, "exp at reduce_bool_test.go:"},
		{func(k *Kernel, r []*Ref) { r[0].Store(k.Iota(xla.Int32, 0, 4).Exp().Astype(xla.Float32)) }, "not defined on i32 (integer) values (convert with Astype to a float type first)"},
		{func(k *Kernel, r []*Ref) { r[0].Store(k.Iota(xla.Int32, 0, 4).Gt(1).Add(true).Astype(xla.Float32)) }, "add at reduce_bool_test.go:"},
		{func(k *Kernel, r []*Ref) { r[0].Store(k.Iota(xla.Int32, 0, 4).Gt(1).Add(true).Astype(xla.Float32)) }, "not defined on bool values (convert with Astype to an integer or float type first)"},
		{func(k *Kernel, r []*Ref) { r[0].Store(k.Iota(xla.Int32, 0, 4).Gt(1).Shl(true).Astype(xla.Float32)) }, "not defined on bool values (convert with Astype to an integer type first)"},
		{func(k *Kernel, r []*Ref) { r[0].Store(k.Iota(xla.Int32, 0, 4).Gt(1).Exp().Astype(xla.Float32)) }, "not defined on bool values (convert with Astype to a float type first)"},
		{func(k *Kernel, r []*Ref) { r[0].Store(k.Iota(xla.Float32, 0, 4).Shl(1.0)) }, "not defined on f32 (float) values (convert with Astype to an integer type first)"},
	} {
		_, err := Trace(c.kernel, CallSpec{Name: "bad", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}}, nil)
		require.ErrorContains(t, err, c.want)
	}
}

// TestBoolReductionsOfNothing: any of no elements is false, all of none
// true, their count 0 (jnp.any, jnp.all, jnp.sum of an empty array).
func TestBoolReductionsOfNothing(t *testing.T) {
	x := interpreter.NewTensor(xla.MakeShape(xla.Float32, 3, 0))
	kern := func(k *Kernel, r []*Ref) {
		m := r[0].Load().Gt(0.0)
		r[1].Store(m.ReduceMax(1))
		r[2].Store(m.ReduceMin(1))
		r[3].Store(m.Sum(1))
		r[4].Store(m.ReduceMax())
	}
	spec := CallSpec{Name: "nothing", OutShapes: []xla.Shape{xla.MakeShape(xla.Bool, 3), xla.MakeShape(xla.Bool, 3),
		xla.MakeShape(xla.Int32, 3), xla.MakeShape(xla.Bool)}}
	got, err := runCall(kern, spec, x)
	require.NoError(t, err)
	require.Equal(t, []bool{false, false, false}, got[0].Data)
	require.Equal(t, []bool{true, true, true}, got[1].Data)
	require.Equal(t, []int32{0, 0, 0}, got[2].Data)
	require.Equal(t, []bool{false}, got[3].Data)
}
