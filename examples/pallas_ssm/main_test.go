package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/mliropt"
	"github.com/halo-ml/halo/internal/plugintest"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pallas"
	"github.com/halo-ml/halo/xla"
)

// TestScanMatchesGo: the kernel in interpret mode against the recurrence
// run step by step in Go (within 2e-6), one block of channels or several,
// few states or many, short and long sequences.
func TestScanMatchesGo(t *testing.T) {
	for _, s := range []Shape{
		{Len: 16, Chans: 8, States: 4, Block: 8},
		{Len: 64, Chans: 16, States: 8, Block: 4},
		{Len: 128, Chans: 4, States: 16, Block: 2},
		{Len: 1, Chans: 2, States: 2, Block: 2},
	} {
		in := inputs(5, s)
		want := goScan(s, in)
		mod, err := buildScan(s, pallas.Interpret)
		require.NoError(t, err)
		got, err := run(mod, in...)
		require.NoError(t, err)
		for i, g := range got.Data.([]float32) {
			require.InDelta(t, want[i], g, 2e-6, "%+v: element %d", s, i)
		}
	}
}

// TestScanTritonForm: the Triton kernel (one tt.scan of two values along
// the sequence) passes the race check and mlir-opt, and run on the TTIR
// evaluator (programs in both orders) it gives interpret mode's y within
// 1e-5 (the evaluator folds in order, Go's exp).
func TestScanTritonForm(t *testing.T) {
	s := Shape{Len: 32, Chans: 8, States: 4, Block: 4}
	in := inputs(6, s)
	mod, err := buildScan(s, pallas.Interpret)
	require.NoError(t, err)
	want, err := run(mod, in...)
	require.NoError(t, err)
	got, err := pallas.EvalTriton(scanKernel, scanSpec(s, pallas.Triton), in...)
	require.NoError(t, err)
	require.NoError(t, plugintest.Close(got[0].Data.([]float32), want.Data.([]float32), 1e-5))

	tri, err := buildScan(s, pallas.Triton)
	require.NoError(t, err)
	ks, err := pallas.TritonKernels(tri)
	require.NoError(t, err)
	require.Len(t, ks, 1)
	require.Contains(t, ks[0].IR, `"tt.scan"`)
	mliropt.Verify(t, ks[0].IR)
}

// TestScanOnPlugin runs the kernel through the HALO_PLUGIN plugin (a
// Triton kernel on a GPU) and compares y with the Go recurrence.
func TestScanOnPlugin(t *testing.T) {
	c := plugintest.Open(t, "run the selective scan as a Triton kernel")
	s := Shape{Len: 256, Chans: 64, States: 16, Block: 4}
	mod, err := buildScan(s, pallas.BackendFor(c.PlatformName()))
	require.NoError(t, err)
	in := inputs(7, s)
	args := make([]interpreter.Value, len(in))
	for i, a := range in {
		args[i] = a
	}
	got, err := plugintest.Run(context.Background(), c, mod, args, []xla.Shape{xla.MakeShape(xla.Float32, s.Len, s.Chans)})
	require.NoError(t, err)
	want := goScan(s, in)
	w := make([]float32, len(want))
	for i, v := range want {
		w[i] = float32(v)
	}
	require.NoError(t, plugintest.Close(got[0].Data.([]float32), w, 1e-4))
}
