package pallas

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/plugintest"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/xla"
)

// TestTritonRealPlugin runs every Triton test kernel through a real XLA
// GPU plugin (HALO_PLUGIN: a path, or "cuda"), as a Triton kernel and in
// interpret mode (plain StableHLO that XLA compiles, with the bounds
// checks, whose handler Register installs: it reads the check state from
// device memory), and compares both with interpret mode on the built-in
// interpreter. Without HALO_PLUGIN it skips.
func TestTritonRealPlugin(t *testing.T) {
	c := plugintest.Open(t, "run the Triton kernels on a GPU")
	require.NoError(t, Register(c))
	for _, backend := range []Backend{Triton, Interpret} {
		for _, tc := range append(tritonCases(), vmappedCases()...) {
			t.Run(string(backend)+"/"+tc.name, func(t *testing.T) {
				want, err := runCall(tc.kernel, tc.spec, tc.args...)
				require.NoError(t, err)
				got := runOnPlugin(t, c, tc, backend, want)
				for i := range want {
					assertCloseTol(t, want[i], got[i], 1e-4)
				}
			})
		}
	}
}

// TestTritonRandomKernelsRealPlugin runs the random kernels of
// TestTritonRandomKernels (PALLAS_FUZZ_SEED and PALLAS_FUZZ_N pick them;
// 200 by default) as Triton kernels through a real XLA GPU plugin
// (HALO_PLUGIN) and compares them with interpret mode on the built-in
// interpreter: they use ops, types and casts the hand-written kernels do
// not (an arith.bitcast XLA's Triton refused showed up in three of the
// first 200). Float outputs are compared within the fuzz test's error
// bound, at least 1e-4 relative as in TestTritonRealPlugin (a GPU
// contracts multiply-adds, and libdevice's functions differ from Go's in
// the last bits). Without HALO_PLUGIN it skips.
func TestTritonRandomKernelsRealPlugin(t *testing.T) {
	c := plugintest.Open(t, "run the random Triton kernels on a GPU")
	first, n := fzSeeds(t)
	for i := range n {
		seed := first + int64(i)
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			fc := fzGenerate(seed)
			tc := tritonCase{name: fmt.Sprintf("fuzz_%d", seed), kernel: fc.kernel(), spec: fc.spec(), args: fc.args()}
			defer func() {
				if t.Failed() {
					t.Logf("rerun: PALLAS_FUZZ_SEED=%d PALLAS_FUZZ_N=1; kernel:\n%s", seed, fc)
				}
			}()
			want, err := runCall(tc.kernel, tc.spec, tc.args...)
			require.NoError(t, err, "interpret mode")
			got := runOnPlugin(t, c, tc, Triton, want)
			for i, rel := range fc.tolerances() {
				rel = math.Max(rel, 1e-4)
				if want[i].Shape.DType == xla.Float64 {
					rel = math.Max(rel*1e7, 1e-4) // assertCloseTol scales f64 bounds by 1e-7
				}
				assertCloseTol(t, want[i], got[i], rel)
			}
		})
	}
}

// runOnPlugin runs tc's kernel through c with the given backend, its
// outputs shaped as want.
func runOnPlugin(t *testing.T, c *pjrt.Client, tc tritonCase, backend Backend, want []*interpreter.Tensor) []*interpreter.Tensor {
	t.Helper()
	m := tc.module(t, backend)
	shapes := make([]xla.Shape, len(want))
	for i, w := range want {
		shapes[i] = w.Shape
	}
	args := make([]interpreter.Value, len(tc.args))
	for i, a := range tc.args {
		args[i] = a
	}
	got, err := plugintest.Run(context.Background(), c, m, args, shapes)
	require.NoError(t, err, m.String())
	require.Len(t, got, len(want))
	return got
}
