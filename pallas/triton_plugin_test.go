package pallas

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
)

// TestTritonRealPlugin runs every Triton test kernel through a real XLA
// GPU plugin (HALO_PLUGIN: a path, or "cuda") and compares with interpret
// mode on the built-in interpreter. Without HALO_PLUGIN it skips.
func TestTritonRealPlugin(t *testing.T) {
	name := os.Getenv("HALO_PLUGIN")
	if name == "" {
		t.Skip("set HALO_PLUGIN to the CUDA PJRT plugin (path or cuda) to run the Triton kernels on a GPU")
	}
	c, err := pjrt.Open(name)
	require.NoError(t, err)
	defer c.Close()
	for _, tc := range tritonCases() {
		t.Run(tc.name, func(t *testing.T) {
			want, err := runCall(tc.kernel, tc.spec, tc.args...)
			require.NoError(t, err)
			b := stablehlo.NewBuilder("m")
			types := make([]stablehlo.Type, len(tc.args))
			for i, a := range tc.args {
				types[i] = stablehlo.TensorOf(a.Shape)
			}
			fb := b.NewFunction("main", types...)
			spec := tc.spec
			spec.Backend = Triton
			fb.Return(Call(fb, tc.kernel, spec, fb.Args()...)...)
			m, err := b.Build()
			require.NoError(t, err)
			var text bytes.Buffer
			require.NoError(t, stablehlo.Print(&text, m, stablehlo.PrintOptions{}))
			exe, err := c.Compile(pjrt.MLIRText(text.String()), nil)
			require.NoError(t, err, text.String())
			args := make([]*pjrt.Buffer, len(tc.args))
			for i, a := range tc.args {
				args[i] = upload(t, c, a)
			}
			outs, err := exe.Run(args...)
			require.NoError(t, err)
			require.Len(t, outs, len(want))
			for i, o := range outs {
				got := interpreter.NewTensor(want[i].Shape)
				ctx := context.Background()
				switch want[i].Data.(type) {
				case []float32:
					got.Data, err = pjrt.ToSlice[float32](ctx, o)
				case []int32:
					got.Data, err = pjrt.ToSlice[int32](ctx, o)
				case []bool:
					got.Data, err = pjrt.ToSlice[bool](ctx, o)
				}
				require.NoError(t, err)
				assertCloseTol(t, want[i], got, 1e-4)
			}
		})
	}
}

func upload(t *testing.T, c *pjrt.Client, x *interpreter.Tensor) *pjrt.Buffer {
	t.Helper()
	var b *pjrt.Buffer
	var err error
	switch d := x.Data.(type) {
	case []float32:
		b, err = pjrt.BufferFrom(c, d, x.Shape.Dims, pjrt.CopyDuringCall())
	case []int32:
		b, err = pjrt.BufferFrom(c, d, x.Shape.Dims, pjrt.CopyDuringCall())
	case []bool:
		b, err = pjrt.BufferFrom(c, d, x.Shape.Dims, pjrt.CopyDuringCall())
	default:
		t.Fatalf("unsupported tensor %T", x.Data)
	}
	require.NoError(t, err)
	return b
}
