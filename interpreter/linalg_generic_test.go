package interpreter

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

// The spec's examples in the generic op form, with attributes spelled the
// older ways (dense<...> instead of array<...>) that printers still emit.
func TestLinalgGenericFormSpecExamples(t *testing.T) {
	conv := `func.func @main(%lhs: tensor<1x4x4x1xi64>, %rhs: tensor<3x3x1x1xi64>) -> tensor<1x2x2x1xi64> {
  %result = "stablehlo.convolution"(%lhs, %rhs) {
    window_strides = array<i64: 4, 4>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = dense<2> : tensor<2xi64>,
    rhs_dilation = array<i64: 1, 1>,
    window_reversal = dense<false> : tensor<2xi1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    batch_group_count = 1 : i64,
    feature_group_count = 1 : i64,
    precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]
  } : (tensor<1x4x4x1xi64>, tensor<3x3x1x1xi64>) -> tensor<1x2x2x1xi64>
  func.return %result : tensor<1x2x2x1xi64>
}`
	out, err := laRun(t, conv,
		laTensor(xla.Int64, []int64{1, 4, 4, 1}, []complex128{1, 2, 5, 6, 3, 4, 7, 8, 10, 11, 14, 15, 12, 13, 16, 17}),
		laTensor(xla.Int64, []int64{3, 3, 1, 1}, []complex128{1, 1, 1, 1, 1, 1, 1, 1, 1}))
	require.NoError(t, err)
	assert.Equal(t, []int64{10, 26, 46, 62}, out[0].Data)

	fft := `func.func @main(%operand: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %result = "stablehlo.fft"(%operand) {
    fft_type = #stablehlo<fft_type FFT>,
    fft_length = dense<4> : tensor<1xi64>
  } : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  func.return %result : tensor<4xcomplex<f32>>
}`
	out, err = laRun(t, fft, laTensor(xla.Complex64, []int64{4}, []complex128{1, 0, 0, 0}))
	require.NoError(t, err)
	assert.Equal(t, []complex64{1, 1, 1, 1}, out[0].Data)

	dot := `func.func @main(%lhs: tensor<2x2x2xi64>, %rhs: tensor<2x2x2xi64>) -> tensor<2x2x2xi64> {
  %result = "stablehlo.dot_general"(%lhs, %rhs) {
    dot_dimension_numbers = #stablehlo.dot<
      lhs_batching_dimensions = [0],
      rhs_batching_dimensions = [0],
      lhs_contracting_dimensions = [2],
      rhs_contracting_dimensions = [1]
    >,
    precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]
  } : (tensor<2x2x2xi64>, tensor<2x2x2xi64>) -> tensor<2x2x2xi64>
  func.return %result : tensor<2x2x2xi64>
}`
	out, err = laRun(t, dot,
		laTensor(xla.Int64, []int64{2, 2, 2}, []complex128{1, 2, 3, 4, 5, 6, 7, 8}),
		laTensor(xla.Int64, []int64{2, 2, 2}, []complex128{1, 0, 0, 1, 1, 0, 0, 1}))
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7, 8}, out[0].Data)

	chol := `func.func @main(%a: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %result = "stablehlo.cholesky"(%a) {lower = true} : (tensor<3x3xf32>) -> tensor<3x3xf32>
  func.return %result : tensor<3x3xf32>
}`
	out, err = laRun(t, chol, laTensor(xla.Float32, []int64{3, 3}, []complex128{1, 2, 3, 2, 20, 26, 3, 26, 70}))
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 0, 0, 2, 4, 0, 3, 5, 6}, out[0].Data)

	rng := `func.func @main(%s: tensor<2xui64>) -> (tensor<2xui64>, tensor<2x2xui64>) {
  %output_state, %output = "stablehlo.rng_bit_generator"(%s) {
    rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>
  } : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x2xui64>)
  func.return %output_state, %output : tensor<2xui64>, tensor<2x2xui64>
}`
	st := NewTensor(xla.MakeShape(xla.Uint64, 2))
	copy(st.Data.([]uint64), []uint64{1, 2})
	out, err = laRun(t, rng, st)
	require.NoError(t, err)
	assert.Equal(t, []uint64{1, 6}, out[0].Data)
	assert.Equal(t, []uint64{9236835810183407956, 16087790271692313299, 18212823393184779219, 2658481902456610144}, out[1].Data)
}
