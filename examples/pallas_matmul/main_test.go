package main

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/mliropt"
	"github.com/halo-ml/halo/internal/plugintest"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pallas"
	"github.com/halo-ml/halo/xla"
)

func TestMatmulMatchesDense(t *testing.T) {
	gelu := func(v float64) float64 {
		return 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
	}
	cases := []struct {
		name                 string
		m, kk, n, bm, bn, bk int64
		act                  Activation
		ref                  func(float64) float64
	}{
		{"gelu 4x4 grid", 32, 16, 64, 8, 16, 4, Gelu, gelu},
		{"relu one K block", 16, 8, 8, 8, 4, 8, Relu, func(v float64) float64 { return math.Max(v, 0) }},
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := make([]float32, c.m*c.kk)
			y := make([]float32, c.kk*c.n)
			for i := range x {
				x[i] = r.Float32()*2 - 1
			}
			for i := range y {
				y[i] = r.Float32()*2 - 1
			}
			got, err := matmul(x, y, c.m, c.kk, c.n, c.bm, c.bn, c.bk, c.act)
			require.NoError(t, err)
			for i := int64(0); i < c.m; i++ {
				for j := int64(0); j < c.n; j++ {
					var s float64
					for l := int64(0); l < c.kk; l++ {
						s += float64(x[i*c.kk+l]) * float64(y[l*c.n+j])
					}
					require.InDelta(t, c.ref(s), got[i*c.n+j], 1e-4, "[%d,%d]", i, j)
				}
			}
		})
	}
}

// randomInputs returns x (m×kk) and y (kk×n) uniform in [-1, 1), rounded
// to dt, as tensors and as the values the kernel sees.
func randomInputs(seed uint64, m, kk, n int64, dt xla.DType) (tx, ty *interpreter.Tensor) {
	r := rand.New(rand.NewPCG(seed, 1))
	tx, ty = interpreter.NewTensor(xla.MakeShape(dt, m, kk)), interpreter.NewTensor(xla.MakeShape(dt, kk, n))
	for _, t := range []*interpreter.Tensor{tx, ty} {
		d := t.Data.([]float32)
		for i := range d {
			d[i] = r.Float32()*2 - 1
		}
		interpreter.RoundNarrowSlice(dt, d)
	}
	return tx, ty
}

// TestMatmulGeluOnPlugin runs the templated matmul with GELU through the
// HALO_PLUGIN plugin (as a Triton kernel on a GPU) in bf16 and compares
// with the plugin's dense gelu(x @ y).
func TestMatmulGeluOnPlugin(t *testing.T) {
	c := plugintest.Open(t, "run the matmul+gelu kernel as a Triton kernel in bf16")
	const m, kk, n = 256, 256, 256
	dt := xla.BFloat16
	kernel, err := buildMatmul(m, kk, n, 64, 64, 32, Gelu, dt, pallas.BackendFor(c.PlatformName()))
	require.NoError(t, err)
	dense, err := buildDenseGelu(m, kk, n, dt)
	require.NoError(t, err)
	tx, ty := randomInputs(5, m, kk, n, dt)
	args := []interpreter.Value{tx, ty}
	out := []xla.Shape{xla.MakeShape(dt, m, n)}
	got, err := plugintest.Run(context.Background(), c, kernel, args, out)
	require.NoError(t, err)
	want, err := plugintest.Run(context.Background(), c, dense, args, out)
	require.NoError(t, err)
	// The kernel sums in f32 and rounds once; the dense program may round
	// the product to bf16 before the activation: a few bf16 steps apart.
	require.NoError(t, plugintest.Close(got[0].Data.([]float32), want[0].Data.([]float32), 1.0/32))
}

// BenchmarkMatmulGeluOnPlugin times the templated matmul with GELU fused
// against the plugin's own gelu(x @ y), side by side, on the HALO_PLUGIN
// plugin: bf16, HALO_BENCH_SIZE^3 (default 4096), square output blocks of
// HALO_BENCH_BLOCK (default 128), K blocks of HALO_BENCH_BK (default 64,
// unrolled in the kernel as the seed's Python loop is).
func BenchmarkMatmulGeluOnPlugin(b *testing.B) {
	c := plugintest.Open(b, "time the matmul+gelu kernel against the plugin's dense program")
	size := plugintest.EnvInt(b, "HALO_BENCH_SIZE", 4096)
	blk := plugintest.EnvInt(b, "HALO_BENCH_BLOCK", 128)
	bk := plugintest.EnvInt(b, "HALO_BENCH_BK", 64)
	dt := xla.BFloat16
	kernel, err := buildMatmul(size, size, size, blk, blk, bk, Gelu, dt, pallas.BackendFor(c.PlatformName()))
	require.NoError(b, err)
	dense, err := buildDenseGelu(size, size, size, dt)
	require.NoError(b, err)
	b.Logf("%s: %d^3 %v, %dx%d blocks, K blocks of %d, kernel %v", c.PlatformName(), size, dt, blk, blk, bk, pallas.BackendFor(c.PlatformName()))
	tx, ty := randomInputs(6, size, size, size, dt)
	args := []interpreter.Value{tx, ty}
	plugintest.Compare(b, c, dense, args, kernel, args, xla.MakeShape(dt, size, size), func(dense, kernel []float32) error {
		return plugintest.Close(kernel, dense, 1.0/32)
	})
}

// TestTritonFormMLIROpt: the Triton kernels' TTIR (f32 and bf16, each
// activation) passes mlir-opt's parser and verifiers.
func TestTritonFormMLIROpt(t *testing.T) {
	var irs []string
	for _, dt := range []xla.DType{xla.Float32, xla.BFloat16} {
		for _, act := range []Activation{Gelu, Relu} {
			m, err := buildMatmul(64, 64, 64, 32, 32, 16, act, dt, pallas.Triton)
			require.NoError(t, err)
			ks, err := pallas.TritonKernels(m)
			require.NoError(t, err)
			require.Len(t, ks, 1)
			irs = append(irs, ks[0].IR)
		}
	}
	mliropt.Verify(t, irs...)
}
