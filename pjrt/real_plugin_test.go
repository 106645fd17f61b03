package pjrt

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/halo-ml/halo/internal/pairbench"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// realPlugin returns a real PJRT plugin for tests: the one HALO_PLUGIN
// names, else the best one discovery finds; it skips, saying why, when
// there is none.
func realPlugin(t testing.TB) *Plugin {
	t.Helper()
	name := os.Getenv("HALO_PLUGIN")
	if name == "" {
		if c := Candidates(); c[0].Path != "" {
			name = c[0].Path
		}
	}
	if name == "" {
		t.Skip("no real PJRT plugin: set HALO_PLUGIN to a plugin path or name (cpu, cuda, tpu) to run this test; discovery found none")
	}
	p, err := LoadPlugin(name)
	require.NoError(t, err, "loading real plugin %q", name)
	return p
}

const addTwoVectors = `module @add_two_vectors {
  func.func public @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %a, %b : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
`

func TestRealPluginAddTwoVectors(t *testing.T) {
	p := realPlugin(t)
	c, err := p.NewClient()
	require.NoError(t, err)
	defer c.Close()
	t.Logf("plugin %s: platform %s %s, %d devices", p, c.PlatformName(), c.PlatformVersion(), len(c.AddressableDevices()))
	exe, err := c.Compile(MLIRText(addTwoVectors), nil)
	require.NoError(t, err)
	defer exe.Close()
	outs, err := exe.Outputs()
	require.NoError(t, err)
	require.Len(t, outs, 1)
	assert.Equal(t, []int64{4}, outs[0].Shape.Dims)
	a, err := BufferFrom(c, []float32{1, 2, 3, 4}, []int64{4})
	require.NoError(t, err)
	b, err := BufferFrom(c, []float32{10, 20, 30, 40}, []int64{4})
	require.NoError(t, err)
	res, err := exe.Run(a, b)
	require.NoError(t, err)
	got, err := ToSlice[float32](ctxT(t), res[0])
	require.NoError(t, err)
	assert.Equal(t, []float32{11, 22, 33, 44}, got)

	// Serialize and reload: what an executable cache does.
	ser, err := exe.Serialize()
	require.NoError(t, err)
	exe2, err := c.DeserializeAndLoad(ser, nil)
	require.NoError(t, err)
	defer exe2.Close()
	res2, err := exe2.Run(a, b)
	require.NoError(t, err)
	got2, err := ToSlice[float32](ctxT(t), res2[0])
	require.NoError(t, err)
	assert.Equal(t, got, got2)

	// A malformed program is a compile error, not a crash.
	_, err = c.Compile(MLIRText("module { this is not mlir }"), nil)
	assert.Error(t, err)
}

// BenchmarkAwaitOnPlugin times one execution of an f32 add and the wait
// for its result, waiting on the completion callback (the base) and
// blocking in the plugin (PJRT_Event_Await, what Await does with a context
// that cannot be cancelled), side by side, for 4 elements and for
// 8192x4096 (128 MiB results); on a GPU this is the dispatch and
// synchronization cost of a program (benchmarks/gpu/pallas_jax.py times
// the same adds in JAX).
func BenchmarkAwaitOnPlugin(b *testing.B) {
	p := realPlugin(b)
	c, err := p.NewClient()
	require.NoError(b, err)
	defer c.Close()
	for _, dims := range [][]int64{{4}, {8192, 4096}} {
		shape := xla.MakeShape(xla.Float32, dims...)
		b.Run(strings.Trim(strings.ReplaceAll(fmt.Sprint(dims), " ", "x"), "[]"), func(b *testing.B) {
			ty := stablehlo.TensorOf(shape).String()
			text := fmt.Sprintf("module @add {\n  func.func public @main(%%a: %s, %%b: %s) -> %s {\n    %%0 = stablehlo.add %%a, %%b : %s\n    return %%0 : %s\n  }\n}\n", ty, ty, ty, ty, ty)
			exe, err := c.Compile(MLIRText(text), nil)
			require.NoError(b, err)
			defer exe.Close()
			x, err := c.BufferFromHost(make([]byte, shape.HostBytes()), shape, WaitForTransfer())
			require.NoError(b, err)
			defer x.Close()
			run := func(callback bool) func() error {
				return func() error {
					forceReadyCallback = callback
					defer func() { forceReadyCallback = false }()
					out, err := exe.Run(x, x)
					if err != nil {
						return err
					}
					defer out[0].Close()
					return out[0].Await(context.Background())
				}
			}
			pairbench.Run(b, "callback", run(true), "blocking", run(false))
		})
	}
}
