package stablehlo

import (
	"fmt"
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

// StableHLO prints convolution dimension numbers it cannot show compactly
// as "#stablehlo.conv<raw field = value, ...>"; that form reads into the
// same attribute as the compact one.
func TestParseConvDimsRaw(t *testing.T) {
	const compact = `#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>`
	const raw = `#stablehlo.conv<raw
      input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1, 2],
      kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1],
      output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 2]>`
	src := func(dims string) []byte {
		return []byte(`func.func @main(%a: tensor<1x4x4x1xf32>, %k: tensor<2x2x1x1xf32>) -> tensor<1x3x3x1xf32> {
  %0 = "stablehlo.convolution"(%a, %k) {dimension_numbers = ` + dims + `, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<2x2x1x1xf32>) -> tensor<1x3x3x1xf32>
  return %0 : tensor<1x3x3x1xf32>
}`)
	}
	want, err := Parse(src(compact))
	require.NoError(t, err)
	got, err := Parse(src(raw))
	require.NoError(t, err)
	require.NoError(t, got.Verify())
	dn := got.Funcs[0].Body.Blocks[0].Ops[0].Attr("dimension_numbers")
	assert.Equal(t, want.Funcs[0].Body.Blocks[0].Ops[0].Attr("dimension_numbers"), dn)
	assert.Equal(t, int64(3), dn.(ConvDimensionNumbers).InputFeatureDim)

	_, err = Parse(src(`#stablehlo.conv<raw input_batch_dimension = 0, bogus = 1>`))
	assert.ErrorContains(t, err, `field "bogus"`)
	_, err = Parse(src(`#stablehlo.conv<rawinput_batch_dimension = 0>`))
	assert.Error(t, err)
}

// Large boolean constants print as lists, which every MLIR reads (the hex
// form changed from packed bits to a byte each in LLVM 2026-02, and each
// version refuses the other's); the parser reads both hex forms.
func TestBoolConstantForms(t *testing.T) {
	vals := make([]bool, 130)
	for i := range vals {
		vals[i] = i%3 == 1
	}
	b := NewBuilder("m")
	f := b.NewFunction("main")
	f.Return(Constant(f, vals, 130))
	m, err := b.Build()
	require.NoError(t, err)
	text := m.String()
	assert.Contains(t, text, "dense<[false, true, false, false, true")
	assert.NotContains(t, text, `dense<"0x`)

	packed := make([]byte, 17)
	bytewise := make([]byte, 130)
	for i, v := range vals {
		if v {
			packed[i/8] |= 1 << (i % 8)
			bytewise[i] = 1
		}
	}
	for name, raw := range map[string][]byte{"packed bits": packed, "a byte each": bytewise} {
		m, err := Parse([]byte(fmt.Sprintf(`module @m {
func.func @main() -> tensor<130xi1> {
  %%0 = stablehlo.constant dense<"0x%X"> : tensor<130xi1>
  return %%0 : tensor<130xi1>
}
}`, raw)))
		require.NoError(t, err, name)
		assert.Equal(t, text, m.String(), name)
	}
}

// Forms upstream reads (found in review): func.return's attributes come
// before its operands (stablehlo.return's after), and convolution
// dimension numbers the compact form cannot show print as the raw field
// form.
func TestUpstreamForms(t *testing.T) {
	m, err := Parse([]byte(`func.func @f(%a: tensor<i32>) -> tensor<i32> {
  return {x} %a : tensor<i32>
}`))
	require.NoError(t, err)
	assert.Contains(t, m.String(), "return {x} %arg0 : tensor<i32>")
	m2, err := Parse([]byte(m.String()))
	require.NoError(t, err)
	assert.Equal(t, m.String(), m2.String())

	m, err = Parse([]byte(`func.func @main(%a: tensor<1x4x4x1xf32>, %k: tensor<2x2x1x1xf32>) -> tensor<1x3x3x1xf32> {
  %0 = "stablehlo.convolution"(%a, %k) {dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 0, input_spatial_dimensions = [1], kernel_input_feature_dimension = 0, kernel_output_feature_dimension = 0, kernel_spatial_dimensions = [], output_batch_dimension = 0, output_feature_dimension = 0, output_spatial_dimensions = []>, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<2x2x1x1xf32>) -> tensor<1x3x3x1xf32>
  return %0 : tensor<1x3x3x1xf32>
}`))
	require.NoError(t, err)
	assert.Contains(t, m.String(), "#stablehlo.conv<raw input_batch_dimension = 0")
}

// The compact reduce form reads bounded and quantized inputs, as upstream
// prints them (it refused them: "reduce input must be a ranked tensor").
func TestCompactReduceOfTextTypes(t *testing.T) {
	for _, c := range []struct{ in, out, body, dim string }{
		{"tensor<?x4xf32, #stablehlo.bounds<8, ?>>", "tensor<?xf32, #stablehlo.bounds<8>>", "tensor<f32>", "1"},
		{"tensor<4x!quant.uniform<i8:f32, 2.0:15>>", "tensor<!quant.uniform<i8:f32, 2.0:15>>", "tensor<!quant.uniform<i8:f32, 2.0:15>>", "0"},
	} {
		m, err := Parse([]byte(fmt.Sprintf(`func.func @main(%%a: %[1]s, %%z: %[3]s) -> %[2]s {
  %%r = stablehlo.reduce(%%a init: %%z) applies stablehlo.add across dimensions = [%[4]s] : (%[1]s, %[3]s) -> %[2]s
  return %%r : %[2]s
}`, c.in, c.out, c.body, c.dim)))
		require.NoError(t, err, c.in)
		body := m.Funcs[0].Body.Blocks[0].Ops[0].Regions[0].Blocks[0]
		assert.Equal(t, c.body, body.Args[0].Type.String(), c.in)
		m2, err := Parse([]byte(m.String()))
		require.NoError(t, err, m.String())
		assert.Equal(t, m.String(), m2.String())
	}
	_, err := Parse([]byte(`func.func @main(%a: tensor<*xf32>, %z: tensor<f32>) -> tensor<*xf32> {
  %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<*xf32>, tensor<f32>) -> tensor<*xf32>
  return %r : tensor<*xf32>
}`))
	assert.ErrorContains(t, err, "reduce input must be a ranked tensor")
}
