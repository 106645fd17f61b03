package interpreter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

// A reduction's body may work in a wider type of the inputs' kind
// (StableHLO's is_promotable); the inputs and init values are promoted and
// the results take the body's type.
func TestReducePromotesToTheBodyType(t *testing.T) {
	ctx := context.Background()
	// i8 values summed in i32: 100 * 4 = 400 (i8 arithmetic would wrap).
	// Fast path (stablehlo.add) and general path (a body of two ops).
	for _, body := range []string{
		`%s = stablehlo.add %x, %y : tensor<i32>`,
		`%p = stablehlo.add %x, %y : tensor<i32>
    %s = stablehlo.maximum %p, %p : tensor<i32>`,
	} {
		src := `func.func @main(%a: tensor<2x4xi8>, %i: tensor<i8>) -> tensor<2xi32> {
  %0 = "stablehlo.reduce"(%a, %i) ({
  ^bb0(%x: tensor<i32>, %y: tensor<i32>):
    ` + body + `
    "stablehlo.return"(%s) : (tensor<i32>) -> ()
  }) {dimensions = array<i64: 1>} : (tensor<2x4xi8>, tensor<i8>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}`
		a := NewTensor(xla.MakeShape(xla.Int8, 2, 4))
		copy(a.Data.([]int8), []int8{100, 100, 100, 100, -100, -100, -100, 1})
		init := NewTensor(xla.MakeShape(xla.Int8))
		init.Data.([]int8)[0] = 7
		out, err := runText(ctx, src, a, init)
		require.NoError(t, err)
		got := out[0].(*Tensor)
		assert.Equal(t, xla.Int32, got.Shape.DType)
		assert.Equal(t, []int32{407, -292}, got.Data.([]int32))
	}

	// bf16 windows summed in f32: 256 + 1 + 1 is 258 in f32, 256 in bf16.
	src := `func.func @main(%a: tensor<4xbf16>, %i: tensor<bf16>) -> tensor<2xf32> {
  %0 = "stablehlo.reduce_window"(%a, %i) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) {window_dimensions = array<i64: 3>} : (tensor<4xbf16>, tensor<bf16>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}`
	a := NewTensor(xla.MakeShape(xla.BFloat16, 4))
	copy(a.Data.([]float32), []float32{256, 1, 1, 1})
	init := NewTensor(xla.MakeShape(xla.BFloat16))
	out, err := runText(ctx, src, a, init)
	require.NoError(t, err)
	assert.Equal(t, []float32{258, 3}, out[0].(*Tensor).Data.([]float32))

	// scatter: input and updates promoted, i8 100 + 100 summed in i32.
	src = `func.func @main(%a: tensor<4xi8>, %idx: tensor<1x1xi32>, %u: tensor<1xi8>) -> tensor<4xi32> {
  %0 = "stablehlo.scatter"(%a, %idx, %u) ({
  ^bb0(%x: tensor<i32>, %y: tensor<i32>):
    %s = stablehlo.add %x, %y : tensor<i32>
    "stablehlo.return"(%s) : (tensor<i32>) -> ()
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<4xi8>, tensor<1x1xi32>, tensor<1xi8>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}`
	in8 := NewTensor(xla.MakeShape(xla.Int8, 4))
	copy(in8.Data.([]int8), []int8{100, 1, 2, 3})
	upd := NewTensor(xla.MakeShape(xla.Int8, 1))
	upd.Data.([]int8)[0] = 100
	out, err = runText(ctx, src, in8, NewTensor(xla.MakeShape(xla.Int32, 1, 1)), upd)
	require.NoError(t, err)
	assert.Equal(t, []int32{200, 1, 2, 3}, out[0].(*Tensor).Data.([]int32))

	// A body in a narrower type, or another kind, is refused.
	for _, bad := range []string{"f16", "i32"} {
		src := `func.func @main(%a: tensor<4xf32>, %i: tensor<f32>) -> tensor<` + bad + `> {
  %0 = "stablehlo.reduce"(%a, %i) ({
  ^bb0(%x: tensor<` + bad + `>, %y: tensor<` + bad + `>):
    %s = stablehlo.add %x, %y : tensor<` + bad + `>
    "stablehlo.return"(%s) : (tensor<` + bad + `>) -> ()
  }) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<f32>) -> tensor<` + bad + `>
  return %0 : tensor<` + bad + `>
}`
		_, err := runText(ctx, src, NewTensor(xla.MakeShape(xla.Float32, 4)), NewTensor(xla.MakeShape(xla.Float32)))
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "not a promotion")
	}
}
