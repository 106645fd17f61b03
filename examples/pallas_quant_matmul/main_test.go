package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/mliropt"
	"github.com/halo-ml/halo/internal/plugintest"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pallas"
	"github.com/halo-ml/halo/xla"
)

// TestQuantMatchesGo: the kernel in interpret mode against x @ w with w
// dequantized in Go (the bf16 weights the kernel multiplies by, within
// 1e-4: f32 sums in another order), for groups smaller than, equal to and
// larger than the K step, one block or many.
func TestQuantMatchesGo(t *testing.T) {
	for _, s := range []Shape{
		{M: 16, N: 32, K: 128, Group: 64, BM: 16, BN: 32, BK: 64},
		{M: 32, N: 64, K: 256, Group: 32, BM: 16, BN: 16, BK: 64},
		{M: 16, N: 16, K: 256, Group: 128, BM: 16, BN: 16, BK: 32},
		{M: 32, N: 32, K: 64, Group: 8, BM: 16, BN: 32, BK: 16},
	} {
		x, w := inputs(3, s)
		q := quantize(s, w)
		want := goProduct(s, x, dequantize(s, q))
		mod, err := buildQuant(s, pallas.Interpret)
		require.NoError(t, err)
		got, err := run(mod, args(s, x, q)...)
		require.NoError(t, err)
		for i, g := range got.Data.([]float32) {
			require.InDelta(t, want[i], g, 1e-4, "%+v: element %d", s, i)
		}
	}
}

// TestQuantRoundTrip: quantize keeps each weight within half a step of
// its group's scale, and the packing puts value j of a word in bits
// 4j..4j+3 (what the kernel's unpack reads).
func TestQuantRoundTrip(t *testing.T) {
	s := Shape{M: 16, N: 8, K: 64, Group: 16, BM: 16, BN: 8, BK: 16}
	_, w := inputs(4, s)
	q := quantize(s, w)
	deq := dequantize(s, q)
	for i, v := range w {
		scale := float64(q.Scales[(i/int(s.N))/int(s.Group)*int(s.N)+i%int(s.N)])
		assert.InDelta(t, float64(v), deq[i], 0.5*scale+0.01*scale+1e-3*abs(float64(v)), "weight %d", i)
	}
	// Row 8r+j, column n is nibble j of word (r, n).
	for r := 0; r < 8; r++ {
		for j := 0; j < 8; j++ {
			v := (q.Packed[r*int(s.N)] >> (4 * j)) & 15
			f := float64(v-8) * float64(q.Scales[(8*r+j)/int(s.Group)*int(s.N)])
			assert.InDelta(t, f, deq[(8*r+j)*int(s.N)], 1e-2*abs(f)+1e-6)
		}
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// TestQuantTritonForm: the Triton kernel (the unpacking as shifts, masks
// and tt.join, one bf16 tt.dot into f32 per K step) passes the race
// check and mlir-opt, and on the TTIR evaluator (programs in both orders)
// it gives interpret mode's product within 1e-4.
func TestQuantTritonForm(t *testing.T) {
	s := Shape{M: 32, N: 32, K: 128, Group: 32, BM: 16, BN: 16, BK: 64}
	x, w := inputs(5, s)
	in := args(s, x, quantize(s, w))
	mod, err := buildQuant(s, pallas.Interpret)
	require.NoError(t, err)
	want, err := run(mod, in...)
	require.NoError(t, err)
	got, err := pallas.EvalTriton(quantKernel(s), quantSpec(s, pallas.Triton), in...)
	require.NoError(t, err)
	require.NoError(t, plugintest.Close(got[0].Data.([]float32), want.Data.([]float32), 1e-4))

	tri, err := buildQuant(s, pallas.Triton)
	require.NoError(t, err)
	ks, err := pallas.TritonKernels(tri)
	require.NoError(t, err)
	require.Len(t, ks, 1)
	assert.Regexp(t, `"tt.dot"\(%\w+, %\w+, %\w+\) : \(tensor<16x64xbf16>, tensor<64x16xbf16>, tensor<16x16xf32>\)`, ks[0].IR)
	assert.Contains(t, ks[0].IR, `"tt.join"`)
	assert.Contains(t, ks[0].IR, "arith.shrsi")
	mliropt.Verify(t, ks[0].IR)
}

// TestQuantShapes: shapes the kernel does not take are errors naming why.
func TestQuantShapes(t *testing.T) {
	for _, c := range []struct {
		s    Shape
		want string
	}{
		{Shape{M: 16, N: 16, K: 100, Group: 20, BM: 16, BN: 16, BK: 32}, "do not divide"},
		{Shape{M: 16, N: 16, K: 48, Group: 12, BM: 16, BN: 16, BK: 12}, "a multiple of 8"},
		{Shape{M: 16, N: 16, K: 96, Group: 24, BM: 16, BN: 16, BK: 32}, "a group divides K and divides, or is a multiple of, a step"},
	} {
		_, err := buildQuant(c.s, pallas.Interpret)
		require.Error(t, err, "%+v", c.s)
		assert.Contains(t, err.Error(), c.want)
	}
}

// TestQuantOnPlugin runs the kernel through the HALO_PLUGIN plugin (a
// Triton kernel on a GPU) and compares it with the Go product of the
// dequantized weights.
func TestQuantOnPlugin(t *testing.T) {
	c := plugintest.Open(t, "run the 4-bit matmul as a Triton kernel")
	s := Shape{M: 256, N: 256, K: 1024, Group: 128, BM: 64, BN: 64, BK: 64}
	mod, err := buildQuant(s, pallas.BackendFor(c.PlatformName()))
	require.NoError(t, err)
	x, w := inputs(7, s)
	q := quantize(s, w)
	in := args(s, x, q)
	vals := make([]interpreter.Value, len(in))
	for i, a := range in {
		vals[i] = a
	}
	got, err := plugintest.Run(context.Background(), c, mod, vals, []xla.Shape{xla.MakeShape(xla.Float32, s.M, s.N)})
	require.NoError(t, err)
	want := goProduct(s, x, dequantize(s, q))
	wf := make([]float32, len(want))
	for i, v := range want {
		wf[i] = float32(v)
	}
	require.NoError(t, plugintest.Close(got[0].Data.([]float32), wf, 1e-3))
}

// TestQuantShapesNotPositive: zero or negative sizes are an error, not a
// division by zero.
func TestQuantShapesNotPositive(t *testing.T) {
	for _, s := range []Shape{{M: 16, N: 16, K: 64, Group: 8, BM: 0, BN: 16, BK: 8}, {M: 16, N: 16, K: -64, Group: 8, BM: 16, BN: 16, BK: -8}} {
		_, err := buildQuant(s, pallas.Interpret)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "every size must be positive")
	}
}
