package stablehlo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

// The forms MLIR prints: properties with every field, and the multi-line
// attribute dictionary of upstream's tests with an empty list.
func TestChloRaggedDotParsePrint(t *testing.T) {
	src := `func.func @main(%arg0: tensor<2x11x5xf32>, %arg1: tensor<3x2x5x7xf32>, %arg2: tensor<3xi64>, %l: tensor<2x11x5xf32>, %r: tensor<2x5x7xf32>) -> (tensor<2x11x7xf32>, tensor<3x2x11x7xf32>) {
  %0 = "chlo.ragged_dot"(%arg0, %arg1, %arg2) <{precision_config = [#chlo<precision DEFAULT>, #chlo<precision DEFAULT>], ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2], lhs_ragged_dimensions = [1], rhs_group_dimensions = [0]>}> : (tensor<2x11x5xf32>, tensor<3x2x5x7xf32>, tensor<3xi64>) -> tensor<2x11x7xf32>
  %1 = "chlo.ragged_dot"(%l, %r, %arg2) {
    ragged_dot_dimension_numbers = #chlo.ragged_dot<
      lhs_batching_dimensions = [0],
      rhs_batching_dimensions = [0],
      lhs_contracting_dimensions = [2],
      rhs_contracting_dimensions = [1],
      lhs_ragged_dimensions = [2],
      rhs_group_dimensions = []
    >,
    precision_config = [#chlo<precision DEFAULT>, #chlo<precision DEFAULT>]
  } : (tensor<2x11x5xf32>, tensor<2x5x7xf32>, tensor<3xi64>) -> tensor<3x2x11x7xf32>
  return %0, %1 : tensor<2x11x7xf32>, tensor<3x2x11x7xf32>
}`
	m, err := Parse([]byte(src))
	require.NoError(t, err)
	require.NoError(t, m.Verify())
	var ops []*Op
	m.Walk(func(op *Op) bool {
		if op.Name == "chlo.ragged_dot" {
			ops = append(ops, op)
		}
		return true
	})
	require.Len(t, ops, 2)
	d, ok := ops[0].Attr("ragged_dot_dimension_numbers").(RaggedDotDimensionNumbers)
	require.True(t, ok)
	assert.Equal(t, RaggedDotDimensionNumbers{LhsBatchingDims: []int64{0}, RhsBatchingDims: []int64{1},
		LhsContractingDims: []int64{2}, RhsContractingDims: []int64{2}, LhsRaggedDims: []int64{1}, RhsGroupDims: []int64{0}}, d)
	d2 := ops[1].Attr("ragged_dot_dimension_numbers").(RaggedDotDimensionNumbers)
	assert.Nil(t, d2.RhsGroupDims)
	text := m.String()
	assert.Contains(t, text, "ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [2], rhs_group_dimensions = []>")
	m2, err := Parse([]byte(text))
	require.NoError(t, err)
	assert.Equal(t, text, m2.String())

	// Inference: the modes and result shapes of upstream's examples.
	f32 := func(d ...int64) TensorType { return Tensor(xla.Float32, d...) }
	p, err := PlanRaggedDot(f32(2, 11, 5), f32(3, 2, 5, 7), Tensor(xla.Int64, 3), d)
	require.NoError(t, err)
	assert.Equal(t, RaggedNonContracting, p.Mode)
	assert.Equal(t, []int64{2, 11, 7}, p.Dims)
	p, err = PlanRaggedDot(f32(2, 11, 5), f32(2, 5, 7), Tensor(xla.Int64, 3), d2)
	require.NoError(t, err)
	assert.Equal(t, RaggedContracting, p.Mode)
	assert.Equal(t, []int64{3, 2, 11, 7}, p.Dims)
	assert.Equal(t, "ragged contracting", p.Mode.String())
	// A preferred result element type is kept.
	rt, err := InferRaggedDot(Tensor(xla.BFloat16, 2, 11, 5), Tensor(xla.BFloat16, 3, 2, 5, 7), Tensor(xla.Int32, 2, 3), d, xla.Float32)
	require.NoError(t, err)
	assert.Equal(t, f32(2, 11, 7), rt)
	// A bad precision_config is an error of Verify.
	bad, err := Parse([]byte(`func.func @main(%a: tensor<11x5xf32>, %b: tensor<3x5x7xf32>, %g: tensor<3xi64>) -> tensor<11x7xf32> {
  %0 = "chlo.ragged_dot"(%a, %b, %g) {precision_config = [#chlo<precision DEFAULT>], ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>} : (tensor<11x5xf32>, tensor<3x5x7xf32>, tensor<3xi64>) -> tensor<11x7xf32>
  return %0 : tensor<11x7xf32>
}`))
	require.NoError(t, err)
	err = bad.Verify()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "precision_config")
}
