package pjrt

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// realPlugin returns a real PJRT plugin for tests: the one HALO_PLUGIN
// names, else the best one discovery finds; it skips, saying why, when
// there is none.
func realPlugin(t *testing.T) *Plugin {
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
