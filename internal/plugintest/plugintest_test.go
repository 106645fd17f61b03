package plugintest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/pjrt"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

func TestRunOnTheInterpreterBackend(t *testing.T) {
	// Run works with any client; the built-in interpreter stands in for a
	// plugin here.
	c, err := pjrt.Open("interpreter")
	require.NoError(t, err)
	defer c.Close()
	b := stablehlo.NewBuilder("m")
	fb := b.NewFunction("main", stablehlo.Tensor(xla.Float32, 4), stablehlo.Tensor(xla.Int32, 4))
	fb.Return(fb.Add(fb.Arg(0), fb.Arg(0)), fb.Compare(fb.Arg(1), fb.Arg(1), stablehlo.CompareEQ, stablehlo.CompareAuto))
	m, err := b.Build()
	require.NoError(t, err)
	x := interpreter.NewTensor(xla.MakeShape(xla.Float32, 4))
	copy(x.Data.([]float32), []float32{1, 2, 3, 4})
	y := interpreter.NewTensor(xla.MakeShape(xla.Int32, 4))
	out, err := Run(context.Background(), c, m, []interpreter.Value{x, y},
		[]xla.Shape{xla.MakeShape(xla.Float32, 4), xla.MakeShape(xla.Bool, 4)})
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 4, 6, 8}, out[0].Data)
	assert.Equal(t, []bool{true, true, true, true}, out[1].Data)

	_, err = Run(context.Background(), c, m, []interpreter.Value{x, y}, []xla.Shape{xla.MakeShape(xla.Float32, 4)})
	assert.ErrorContains(t, err, "2 results, want 1")
}

func TestOpenSkipsWithoutPlugin(t *testing.T) {
	t.Setenv("HALO_PLUGIN", "")
	var skipped bool
	t.Run("needs a plugin", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Open(t, "test the skip")
	})
	assert.True(t, skipped)
}
