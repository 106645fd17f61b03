package main

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/mliropt"
	"github.com/halo-ml/halo/internal/pairbench"
	"github.com/halo-ml/halo/internal/plugintest"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pallas"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// goAttention is softmax(q kᵀ · scale, masked) v in float64, head by head.
func goAttention(s Shape, q, k, v []float32) []float64 {
	out := make([]float64, len(q))
	n, d := int(s.Seq), int(s.Dim)
	for h := 0; h < int(s.Heads); h++ {
		base := h * n * d
		for i := 0; i < n; i++ {
			scores := make([]float64, n)
			top := math.Inf(-1)
			for j := 0; j < n; j++ {
				scores[j] = math.Inf(-1)
				if s.Causal && j > i {
					continue
				}
				dot := 0.0
				for c := 0; c < d; c++ {
					dot += float64(q[base+i*d+c]) * float64(k[base+j*d+c])
				}
				scores[j] = dot * s.scale()
				top = math.Max(top, scores[j])
			}
			sum := 0.0
			for j := range scores {
				scores[j] = math.Exp(scores[j] - top)
				sum += scores[j]
			}
			for c := 0; c < d; c++ {
				acc := 0.0
				for j := range scores {
					acc += scores[j] * float64(v[base+j*d+c])
				}
				out[base+i*d+c] = acc / sum
			}
		}
	}
	return out
}

// TestAttentionMatchesGo: the kernel in interpret mode against softmax
// attention computed in Go (f32: within 2e-6), with and without the
// causal mask, query and key blocks equal, taller and wider, one key
// block or many; and in bf16 against the dense StableHLO program, which
// rounds the probabilities to bf16 for the second product as the kernel
// does (within two bf16 steps).
func TestAttentionMatchesGo(t *testing.T) {
	for _, s := range []Shape{
		{Heads: 2, Seq: 32, Dim: 8, BQ: 8, BK: 8, Causal: true},
		{Heads: 2, Seq: 32, Dim: 8, BQ: 8, BK: 8},
		{Heads: 1, Seq: 64, Dim: 16, BQ: 16, BK: 8, Causal: true},
		{Heads: 3, Seq: 64, Dim: 4, BQ: 8, BK: 32, Causal: true},
		{Heads: 1, Seq: 16, Dim: 8, BQ: 4, BK: 16},
	} {
		qkv := randomQKV(9, s, xla.Float32)
		want := goAttention(s, qkv[0].Data.([]float32), qkv[1].Data.([]float32), qkv[2].Data.([]float32))
		mod, err := buildAttention(s, xla.Float32, pallas.Interpret)
		require.NoError(t, err)
		got, err := run(mod, qkv...)
		require.NoError(t, err)
		for i, g := range got.Data.([]float32) {
			require.InDelta(t, want[i], g, 2e-6, "%+v: element %d", s, i)
		}
		bg, bw, err := kernelAndDense(s, xla.BFloat16, 10)
		require.NoError(t, err)
		require.NoError(t, plugintest.Close(bg, bw, 1.0/64), "%+v in bf16", s)
	}
}

// TestAttentionOnPlugin runs the kernel through the HALO_PLUGIN plugin (a
// Triton kernel on a GPU) in bf16 and compares it with the plugin's dense
// attention program.
func TestAttentionOnPlugin(t *testing.T) {
	c := plugintest.Open(t, "run the flash-attention kernel as a Triton kernel in bf16")
	for _, causal := range []bool{false, true} {
		s := Shape{Heads: 4, Seq: 256, Dim: 64, BQ: 64, BK: 32, Causal: causal}
		dt := xla.BFloat16
		kernel, err := buildAttention(s, dt, pallas.BackendFor(c.PlatformName()))
		require.NoError(t, err)
		dense, err := buildDenseAttention(s, dt)
		require.NoError(t, err)
		qkv := randomQKV(11, s, dt)
		args := []interpreter.Value{qkv[0], qkv[1], qkv[2]}
		out := []xla.Shape{xla.MakeShape(dt, s.Heads, s.Seq, s.Dim)}
		got, err := plugintest.Run(context.Background(), c, kernel, args, out)
		require.NoError(t, err)
		want, err := plugintest.Run(context.Background(), c, dense, args, out)
		require.NoError(t, err)
		require.NoError(t, plugintest.Close(got[0].Data.([]float32), want[0].Data.([]float32), 1.0/32), "causal %v", causal)
	}
}

// BenchmarkAttentionOnPlugin times the causal kernel against the plugin's
// dense attention program, side by side, on the HALO_PLUGIN plugin: bf16,
// 16 heads of HALO_ATTN_SEQ (default 2048) × 64, query and key blocks of
// HALO_ATTN_BLOCK (default 64); its JAX twin is JAX's own Pallas flash
// attention (benchmarks/gpu/pallas_jax.py).
func BenchmarkAttentionOnPlugin(b *testing.B) {
	c := plugintest.Open(b, "time the flash-attention kernel against the plugin's dense program")
	seq := plugintest.EnvInt(b, "HALO_ATTN_SEQ", 2048)
	blk := plugintest.EnvInt(b, "HALO_ATTN_BLOCK", 64)
	s := Shape{Heads: 16, Seq: seq, Dim: 64, BQ: blk, BK: blk, Causal: true}
	dt := xla.BFloat16
	kernel, err := buildAttention(s, dt, pallas.BackendFor(c.PlatformName()))
	require.NoError(b, err)
	dense, err := buildDenseAttention(s, dt)
	require.NoError(b, err)
	b.Logf("%s: %+v %v, kernel %v", c.PlatformName(), s, dt, pallas.BackendFor(c.PlatformName()))
	qkv := randomQKV(12, s, dt)
	args := []interpreter.Value{qkv[0], qkv[1], qkv[2]}
	plugintest.Compare(b, c, dense, args, kernel, args, xla.MakeShape(dt, s.Heads, s.Seq, s.Dim), func(dense, kernel []float32) error {
		return plugintest.Close(kernel, dense, 1.0/32)
	})
}

// TestTritonFormMLIROpt: the Triton kernel's TTIR (f32 and bf16, causal
// or not) is accepted by the race check and passes mlir-opt's parser and
// verifiers.
func TestTritonFormMLIROpt(t *testing.T) {
	var irs []string
	for _, dt := range []xla.DType{xla.Float32, xla.BFloat16} {
		for _, causal := range []bool{false, true} {
			m, err := buildAttention(Shape{Heads: 2, Seq: 128, Dim: 64, BQ: 64, BK: 32, Causal: causal}, dt, pallas.Triton)
			require.NoError(t, err)
			ks, err := pallas.TritonKernels(m)
			require.NoError(t, err)
			require.Len(t, ks, 1)
			irs = append(irs, ks[0].IR)
		}
	}
	mliropt.Verify(t, irs...)
}

// BenchmarkAttentionPaired runs the dense attention program and the kernel
// in interpret mode (bounds checks on, the default) on the built-in
// interpreter, alternately, and reports each one's median time and the
// median of dense/kernel over the pairs: 8 heads of 1024 × 64 in f32,
// blocks of 64, causal (the kernel skips the key blocks above the
// diagonal, the dense program computes and masks every score) and not.
func BenchmarkAttentionPaired(b *testing.B) {
	for _, causal := range []bool{true, false} {
		s := Shape{Heads: 8, Seq: 1024, Dim: 64, BQ: 64, BK: 64, Causal: causal}
		b.Run(fmt.Sprintf("causal=%v", causal), func(b *testing.B) {
			kernel, err := buildAttention(s, xla.Float32, pallas.Interpret)
			require.NoError(b, err)
			dense, err := buildDenseAttention(s, xla.Float32)
			require.NoError(b, err)
			qkv := randomQKV(13, s, xla.Float32)
			args := []interpreter.Value{qkv[0], qkv[1], qkv[2]}
			pairbench.Run(b, "dense", compiled(b, dense, args), "kernel", compiled(b, kernel, args))
		})
	}
}

// compiled compiles mod on the interpreter and returns a run of it on args.
func compiled(b *testing.B, mod *stablehlo.Module, args []interpreter.Value) func() error {
	p, err := interpreter.Compile(mod, "main")
	require.NoError(b, err)
	return func() error {
		_, err := p.Run(context.Background(), interpreter.Device{}, args)
		return err
	}
}
