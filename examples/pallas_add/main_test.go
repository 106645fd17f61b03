package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/mliropt"
	"github.com/halo-ml/halo/internal/plugintest"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pallas"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

func TestAddMatchesDense(t *testing.T) {
	cases := []struct{ x, y []int32 }{
		{[]int32{0, 1, 2, 3, 4, 5, 6, 7}, []int32{8, 9, 10, 11, 12, 13, 14, 15}},
		{[]int32{-5, 7, 1 << 20, 3, 0, 0, 9, -9}, []int32{5, -7, 1, 2, 3, 4, 5, 6}},
	}
	for _, c := range cases {
		got, err := add(c.x, c.y)
		require.NoError(t, err)
		want := make([]int32, len(c.x))
		for i := range want {
			want[i] = c.x[i] + c.y[i]
		}
		require.Equal(t, want, got)
	}
}

// TestAddOnPlugin runs the kernel through the HALO_PLUGIN plugin (as a
// Triton kernel on a GPU) and checks the sums.
func TestAddOnPlugin(t *testing.T) {
	c := plugintest.Open(t, "run the add kernel as a Triton kernel")
	kernel, err := buildAdd(pallas.BackendFor(c.PlatformName()))
	require.NoError(t, err)
	x := interpreter.NewTensor(xla.MakeShape(xla.Int32, 8))
	y := interpreter.NewTensor(xla.MakeShape(xla.Int32, 8))
	copy(x.Data.([]int32), []int32{-5, 7, 1 << 20, 3, 0, 0, 9, -9})
	copy(y.Data.([]int32), []int32{5, -7, 1, 2, 3, 4, 5, 6})
	got, err := plugintest.Run(context.Background(), c, kernel, []interpreter.Value{x, y}, []xla.Shape{xla.MakeShape(xla.Int32, 8)})
	require.NoError(t, err)
	require.Equal(t, []int32{0, 0, 1<<20 + 1, 5, 3, 4, 14, -3}, got[0].Data)
}

// BenchmarkAddOnPlugin times the kernel (as a Triton kernel on a GPU)
// against the plugin's own add, side by side, on the HALO_PLUGIN plugin:
// at (2,) blocks over a (4,) grid this measures what a kernel launch
// costs.
func BenchmarkAddOnPlugin(b *testing.B) {
	c := plugintest.Open(b, "time the add kernel against the plugin's add")
	kernel, err := buildAdd(pallas.BackendFor(c.PlatformName()))
	require.NoError(b, err)
	sb := stablehlo.NewBuilder("dense_add")
	fb := sb.NewFunction("main", stablehlo.Tensor(xla.Int32, 8), stablehlo.Tensor(xla.Int32, 8))
	fb.Return(fb.Add(fb.Arg(0), fb.Arg(1)))
	dense, err := sb.Build()
	require.NoError(b, err)
	x := interpreter.NewTensor(xla.MakeShape(xla.Int32, 8))
	y := interpreter.NewTensor(xla.MakeShape(xla.Int32, 8))
	copy(x.Data.([]int32), []int32{0, 1, 2, 3, 4, 5, 6, 7})
	copy(y.Data.([]int32), []int32{8, 9, 10, 11, 12, 13, 14, 15})
	args := []interpreter.Value{x, y}
	plugintest.Compare(b, c, dense, args, kernel, args, xla.MakeShape(xla.Int32, 8), func(dense, kernel []float32) error {
		return plugintest.Close(kernel, dense, 0)
	})
}

// TestTritonFormMLIROpt: the Triton kernel's TTIR passes mlir-opt's parser
// and verifiers (arith, scf and math checked; tt ops taken as they are).
func TestTritonFormMLIROpt(t *testing.T) {
	m, err := buildAdd(pallas.Triton)
	require.NoError(t, err)
	ks, err := pallas.TritonKernels(m)
	require.NoError(t, err)
	require.Len(t, ks, 1)
	mliropt.Verify(t, ks[0].IR)
}
