package interpreter

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
)

// TestTooLargeResultsAreErrors: results that cannot be allocated fail
// their op with an *AllocError naming the type (a failed allocation is
// fatal in Go: 4 TiB took the process down).
func TestTooLargeResultsAreErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`func.func @main() -> tensor<f32> {
  %c = stablehlo.constant dense<1.0> : tensor<f32>
  %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<1099511627776xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%0 init: %z) applies stablehlo.add across dimensions = [0] : (tensor<1099511627776xf32>, tensor<f32>) -> tensor<f32>
  return %s : tensor<f32>
}`, "stablehlo.broadcast_in_dim: tensor<1099511627776xf32> needs 4.0 TiB, more than the"},
		{`func.func @main(%a: tensor<0x4294967296x4294967296xf32>) -> tensor<1x1xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<0x4294967296x4294967296xf32>, tensor<f32>) -> tensor<4294967296x4294967296xf32>
  %s = stablehlo.slice %r [5:6, 7:8] : (tensor<4294967296x4294967296xf32>) -> tensor<1x1xf32>
  return %s : tensor<1x1xf32>
}`, "stablehlo.reduce: tensor<4294967296x4294967296xf32> is too large to hold"},
	} {
		m, err := stablehlo.Parse([]byte(c.src))
		require.NoError(t, err)
		p, err := Compile(m, "")
		require.NoError(t, err)
		var args []Value
		if len(p.Main.ArgTypes()) > 0 {
			args = []Value{NewTensor(p.Main.ArgTypes()[0].(stablehlo.TensorType).Shape())}
		}
		_, err = p.Run(context.Background(), Device{}, args)
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
		var ae *AllocError
		assert.True(t, errors.As(err, &ae), "%v", err)
	}
}
