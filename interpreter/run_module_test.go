package interpreter_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// TestRunModule: compile and one run in one call; a compile error (no
// such function) and a run error (an argument of the wrong type) come
// back as errors.
func TestRunModule(t *testing.T) {
	m, err := stablehlo.Parse([]byte(`func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.multiply %x, %x : tensor<3xf32>
  return %0 : tensor<3xf32>
}`))
	require.NoError(t, err)
	x := interpreter.NewTensor(xla.MakeShape(xla.Float32, 3))
	copy(x.Data.([]float32), []float32{1, 2, 3})
	out, err := interpreter.RunModule(context.Background(), m, "main", x)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 4, 9}, out[0].(*interpreter.Tensor).Data)

	_, err = interpreter.RunModule(context.Background(), m, "other", x)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "other")
	_, err = interpreter.RunModule(context.Background(), m, "main", interpreter.NewTensor(xla.MakeShape(xla.Int32, 3)))
	require.Error(t, err)
}
