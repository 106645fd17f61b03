package pallas

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/plugintest"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
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
		for _, tc := range append(tritonCases(), vmappedMatmul()) {
			t.Run(string(backend)+"/"+tc.name, func(t *testing.T) {
				want, err := runCall(tc.kernel, tc.spec, tc.args...)
				require.NoError(t, err)
				b := stablehlo.NewBuilder("m")
				types := make([]stablehlo.Type, len(tc.args))
				for i, a := range tc.args {
					types[i] = stablehlo.TensorOf(a.Shape)
				}
				fb := b.NewFunction("main", types...)
				spec := tc.spec
				spec.Backend = backend
				fb.Return(Call(fb, tc.kernel, spec, fb.Args()...)...)
				m, err := b.Build()
				require.NoError(t, err)
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
				for i := range want {
					assertCloseTol(t, want[i], got[i], 1e-4)
				}
			})
		}
	}
}
