package stablehlo

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChloScanRoundTrip(t *testing.T) {
	src := `module {
  func.func @f(%arg0: tensor<2x3xi32>, %arg1: tensor<2xi32>) -> (tensor<2x3xi32>, tensor<2xi32>) {
    %0:2 = chlo.scan(%arg0) inits(%arg1) dimension=1 attributes {is_reverse = true} {
    ^bb0(%arg2: tensor<2xi32>, %arg3: tensor<2xi32>):
      %2 = stablehlo.add %arg2, %arg3 : tensor<2xi32>
      stablehlo.return %2, %2 : tensor<2xi32>, tensor<2xi32>
    } : (tensor<2x3xi32>, tensor<2xi32>) -> (tensor<2x3xi32>, tensor<2xi32>)
    %1 = "chlo.mulhi"(%arg1, %arg1) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    return %0#0, %1 : tensor<2x3xi32>, tensor<2xi32>
  }
}
`
	m, err := Parse([]byte(src))
	require.NoError(t, err)
	require.NoError(t, m.Verify())
	assert.Equal(t, src, m.String())
	var g bytes.Buffer
	require.NoError(t, Print(&g, m, PrintOptions{Generic: true}))
	assert.Contains(t, g.String(), "operandSegmentSizes = array<i32: 1, 1>")
	m2, err := Parse(g.Bytes())
	require.NoError(t, err)
	assert.Equal(t, src, m2.String())

	_, err = Parse([]byte(strings.Replace(src, "inits(%arg1)", "(%arg1)", 1)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "inits")
}
