package stablehlo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The upstream interpreter tests put check parameters after the literal's
// type; both placements read into the same attribute.
func TestCheckConstToleranceAfterType(t *testing.T) {
	m, err := Parse([]byte(`func.func @main() {
  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf64>
  check.expect_almost_eq_const %0, dense<[1.0, 2.0]> : tensor<2xf64>, tolerance = 1.0e-12
  return
}`))
	require.NoError(t, err)
	op := m.Funcs[0].Body.Blocks[0].Ops[1]
	assert.Equal(t, "check.expect_almost_eq_const", op.Name)
	tol, ok := op.Attr("tolerance").(FloatAttr)
	require.True(t, ok)
	assert.Equal(t, 1e-12, tol.Value)
	_, err = Parse([]byte(`func.func @main() {
  %0 = stablehlo.constant dense<1.0> : tensor<f64>
  check.expect_almost_eq_const %0, dense<1.0> : tensor<f64>, bogus = 1
  return
}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown check.expect_almost_eq_const parameter "bogus"`)
}
