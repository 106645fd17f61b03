package pallas

import (
	"testing"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
	"github.com/stretchr/testify/require"
)

// TestI8DotIntoFloatIsExact: i8 products summed into f32 past 2^24 give
// the exact sum rounded once on both backends (interpret mode summed in
// f32, rounding at every add: 72 of 256 elements differed from the
// Triton kernel's integer accumulator).
func TestI8DotIntoFloatIsExact(t *testing.T) {
	const K = 4096
	av := []int64{127, -128, 127, 127, 125, -3}
	bv := []int64{127, 127, -127, 126, 127}
	a := intTensor(xla.Int8, []int64{16, K}, func(i int) int64 { return av[i%6] })
	b := intTensor(xla.Int8, []int64{K, 16}, func(i int) int64 { return bv[(i/16)%5] - int64(i%16) })
	kern := func(k *Kernel, refs []*Ref) { refs[2].Store(Dot(refs[0].Load(), refs[1].Load(), xla.Float32)) }
	c := tritonCase{name: "i8dot", kernel: kern, spec: CallSpec{Name: "i8dot", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 16, 16)}},
		args: []*interpreter.Tensor{a, b}}
	want := make([]float32, 256)
	ad, bd := a.Data.([]int8), b.Data.([]int8)
	for e := range want {
		i, j := e/16, e%16
		var exact int64
		for r := 0; r < K; r++ {
			exact += int64(ad[i*K+r]) * int64(bd[r*16+j])
		}
		want[e] = float32(exact)
	}
	got, err := runCall(c.kernel, c.spec, c.args...)
	require.NoError(t, err)
	require.Equal(t, want, got[0].Data)
	require.Equal(t, want, runTritonEval(t, c)[0].Data)
}
