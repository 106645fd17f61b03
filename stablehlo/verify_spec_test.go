package stablehlo

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

// verifyCase is one op, written in generic form inside a function taking
// %a: tensor<2x3xf32>, %i: tensor<2x3xi32>, %p: tensor<2x3xi1>,
// %s: tensor<f32>, %q: tensor<3x3xf32>, %c: tensor<4xcomplex<f32>>; want
// is "" for an op Verify must accept, else a part of its error.
type verifyCase struct{ name, op, want string }

func verifyOne(t *testing.T, c verifyCase) {
	t.Helper()
	src := fmt.Sprintf(`func.func @main(%%a: tensor<2x3xf32>, %%i: tensor<2x3xi32>, %%p: tensor<2x3xi1>, %%s: tensor<f32>, %%q: tensor<3x3xf32>, %%c: tensor<4xcomplex<f32>>) {
  %s
  return
}`, c.op)
	m, err := Parse([]byte(src))
	require.NoError(t, err, c.name)
	err = m.Verify()
	if c.want == "" {
		assert.NoError(t, err, c.name)
	} else {
		assert.ErrorContains(t, err, c.want, c.name)
	}
}

// TestVerifyElementwiseRules: Verify refuses what the builder refuses for
// select, clamp, is_finite, real, imag, abs, reverse, reduce_precision,
// get_dimension_size, pad, cholesky and bitcast_convert written by hand.
func TestVerifyElementwiseRules(t *testing.T) {
	for _, c := range []verifyCase{
		{"select ok", `%0 = "stablehlo.select"(%p, %a, %a) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>`, ""},
		{"select scalar pred", `%t = stablehlo.constant dense<true> : tensor<i1>
  %0 = "stablehlo.select"(%t, %a, %a) : (tensor<i1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>`, ""},
		{"select pred not i1", `%0 = "stablehlo.select"(%i, %a, %a) : (tensor<2x3xi32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>`, "pred must be an i1 tensor"},
		{"select pred shape", `%t = stablehlo.constant dense<true> : tensor<3xi1>
  %0 = "stablehlo.select"(%t, %a, %a) : (tensor<3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>`, "pred must be a scalar or have the shape of on_true"},
		{"select branches differ", `%0 = "stablehlo.select"(%p, %a, %i) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xi32>) -> tensor<2x3xf32>`, "on_true and on_false must have the same type"},
		{"clamp ok", `%0 = "stablehlo.clamp"(%s, %a, %a) : (tensor<f32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>`, ""},
		{"clamp min type", `%0 = "stablehlo.clamp"(%i, %a, %s) : (tensor<2x3xi32>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>`, "min must be a scalar or have the operand's type"},
		{"clamp max shape", `%0 = "stablehlo.clamp"(%s, %a, %q) : (tensor<f32>, tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>`, "max must be a scalar or have the operand's type"},
		{"is_finite int", `%0 = "stablehlo.is_finite"(%i) : (tensor<2x3xi32>) -> tensor<2x3xi1>`, "operand must be a float tensor"},
		{"real int", `%0 = "stablehlo.real"(%i) : (tensor<2x3xi32>) -> tensor<2x3xi32>`, "operand must be a float or complex tensor"},
		{"imag ok", `%0 = "stablehlo.imag"(%c) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>`, ""},
		{"abs bool", `%0 = "stablehlo.abs"(%p) : (tensor<2x3xi1>) -> tensor<2x3xi1>`, "element type i1 is not"},
		{"abs int ok", `%0 = "stablehlo.abs"(%i) : (tensor<2x3xi32>) -> tensor<2x3xi32>`, ""},
		{"reverse dim range", `%0 = "stablehlo.reverse"(%a) {dimensions = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2x3xf32>`, "dimensions"},
		{"reverse dup", `%0 = "stablehlo.reverse"(%a) {dimensions = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>`, "dimensions"},
		{"reverse ok", `%0 = "stablehlo.reverse"(%a) {dimensions = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>`, ""},
		{"reduce_precision int", `%0 = "stablehlo.reduce_precision"(%i) {exponent_bits = 5 : i32, mantissa_bits = 10 : i32} : (tensor<2x3xi32>) -> tensor<2x3xi32>`, "float"},
		{"reduce_precision bits", `%0 = "stablehlo.reduce_precision"(%a) {exponent_bits = 0 : i32, mantissa_bits = 10 : i32} : (tensor<2x3xf32>) -> tensor<2x3xf32>`, "exponent_bits"},
		{"get_dimension_size range", `%0 = "stablehlo.get_dimension_size"(%a) {dimension = 2 : i64} : (tensor<2x3xf32>) -> tensor<i32>`, "dimension 2 out of range"},
		{"get_dimension_size ok", `%0 = "stablehlo.get_dimension_size"(%a) {dimension = 1 : i64} : (tensor<2x3xf32>) -> tensor<i32>`, ""},
		{"pad value type", `%z = stablehlo.constant dense<0> : tensor<i32>
  %0 = "stablehlo.pad"(%a, %z) {edge_padding_low = array<i64: 0, 0>, edge_padding_high = array<i64: 1, 0>, interior_padding = array<i64: 0, 0>} : (tensor<2x3xf32>, tensor<i32>) -> tensor<3x3xf32>`, "padding_value must be a scalar of the operand's element type"},
		{"cholesky non-square", `%0 = "stablehlo.cholesky"(%a) {lower = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>`, "square"},
		{"cholesky ok", `%0 = "stablehlo.cholesky"(%q) {lower = true} : (tensor<3x3xf32>) -> tensor<3x3xf32>`, ""},
		{"bitcast ok", `%0 = "stablehlo.bitcast_convert"(%a) : (tensor<2x3xf32>) -> tensor<2x3xi32>`, ""},
		{"bitcast narrow ok", `%0 = "stablehlo.bitcast_convert"(%a) : (tensor<2x3xf32>) -> tensor<2x3x2xf16>`, ""},
		{"bitcast shape", `%0 = "stablehlo.bitcast_convert"(%a) : (tensor<2x3xf32>) -> tensor<3x2xi32>`, "bitcast_convert"},
		{"bitcast width", `%0 = "stablehlo.bitcast_convert"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf16>`, "bitcast_convert"},
	} {
		verifyOne(t, c)
	}
}

// TestVerifyRegionOps: Verify checks the ops with regions (sort, map,
// reduce, reduce_window, scatter, select_and_scatter) and fft and
// triangular_solve as the builder does: operands, attributes and what
// their regions take and return.
func TestVerifyRegionOps(t *testing.T) {
	sortOp := func(dim, args, ret string) string {
		return fmt.Sprintf(`%%0 = "stablehlo.sort"(%%a) ({
  ^bb0(%%x: %[2]s, %%y: %[2]s):
    %%r = stablehlo.compare LT, %%x, %%y : (%[2]s, %[2]s) -> tensor<i1>
    %%v = stablehlo.convert %%r : (tensor<i1>) -> %[3]s
    stablehlo.return %%v : %[3]s
  }) {dimension = %[1]s : i64, is_stable = false} : (tensor<2x3xf32>) -> tensor<2x3xf32>`, dim, args, ret)
	}
	reduceOp := func(ret string) string {
		return fmt.Sprintf(`%%0 = "stablehlo.reduce"(%%a, %%s) ({
  ^bb0(%%x: tensor<f32>, %%y: tensor<f32>):
    %%r = stablehlo.add %%x, %%y : tensor<f32>
    %%v = stablehlo.convert %%r : (tensor<f32>) -> %[1]s
    stablehlo.return %%v : %[1]s
  }) {dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>`, ret)
	}
	mapOp := func(dims, ret string) string {
		return fmt.Sprintf(`%%0 = "stablehlo.map"(%%a, %%a) ({
  ^bb0(%%x: tensor<f32>, %%y: tensor<f32>):
    %%r = stablehlo.add %%x, %%y : tensor<f32>
    %%v = stablehlo.convert %%r : (tensor<f32>) -> %[2]s
    stablehlo.return %%v : %[2]s
  }) {dimensions = array<i64: %[1]s>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>`, dims, ret)
	}
	sasOp := func(source, selRet string) string {
		return fmt.Sprintf(`%%src = stablehlo.constant dense<1.0> : %[1]s
  %%0 = "stablehlo.select_and_scatter"(%%a, %%src, %%s) ({
  ^bb0(%%x: tensor<f32>, %%y: tensor<f32>):
    %%r = stablehlo.compare GE, %%x, %%y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %%v = stablehlo.convert %%r : (tensor<i1>) -> %[2]s
    stablehlo.return %%v : %[2]s
  }, {
  ^bb0(%%x: tensor<f32>, %%y: tensor<f32>):
    %%r = stablehlo.add %%x, %%y : tensor<f32>
    stablehlo.return %%r : tensor<f32>
  }) {window_dimensions = array<i64: 2, 1>, window_strides = array<i64: 2, 1>} : (tensor<2x3xf32>, %[1]s, tensor<f32>) -> tensor<2x3xf32>`, source, selRet)
	}
	scatterOp := func(updates, ret string) string {
		return fmt.Sprintf(`%%idx = stablehlo.constant dense<[[0], [1]]> : tensor<2x1xi32>
  %%upd = stablehlo.constant dense<1.0> : %[1]s
  %%0 = "stablehlo.scatter"(%%a, %%idx, %%upd) ({
  ^bb0(%%x: tensor<f32>, %%y: tensor<f32>):
    %%r = stablehlo.add %%x, %%y : tensor<f32>
    %%v = stablehlo.convert %%r : (tensor<f32>) -> %[2]s
    stablehlo.return %%v : %[2]s
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<2x3xf32>, tensor<2x1xi32>, %[1]s) -> tensor<2x3xf32>`, updates, ret)
	}
	for _, c := range []verifyCase{
		{"sort ok", sortOp("1", "tensor<f32>", "tensor<i1>"), ""},
		{"sort negative dim ok", sortOp("-1", "tensor<f32>", "tensor<i1>"), ""},
		{"sort dim range", sortOp("2", "tensor<f32>", "tensor<i1>"), "dimension 2 out of range [-2, 2)"},
		{"sort comparator result", sortOp("0", "tensor<f32>", "tensor<i32>"), "the comparator returns (tensor<i32>), want (tensor<i1>)"},
		{"sort comparator args", sortOp("0", "tensor<2xf32>", "tensor<i1>"), "the comparator takes"},
		{"reduce ok", reduceOp("tensor<f32>"), ""},
		{"reduce body result", reduceOp("tensor<f64>"), "the body returns (tensor<f64>), want (tensor<f32>)"},
		{"map ok", mapOp("0, 1", "tensor<f32>"), ""},
		{"map dims", mapOp("1, 0", "tensor<f32>"), "dimensions must be [0, ..., rank-1]"},
		{"map result", mapOp("0, 1", "tensor<i32>"), "the computation returns (tensor<i32>), want (tensor<f32>)"},
		{"select_and_scatter ok", sasOp("tensor<1x3xf32>", "tensor<i1>"), ""},
		{"select_and_scatter source", sasOp("tensor<2x3xf32>", "tensor<i1>"), "source must be tensor<1x3xf32>"},
		{"select_and_scatter select", sasOp("tensor<1x3xf32>", "tensor<f32>"), "select returns (tensor<f32>), want (tensor<i1>)"},
		{"scatter ok", scatterOp("tensor<2x3xf32>", "tensor<f32>"), ""},
		{"scatter updates", scatterOp("tensor<2x4xf32>", "tensor<f32>"), "scatter"},
		{"scatter body", scatterOp("tensor<2x3xf32>", "tensor<f64>"), "the body returns (tensor<f64>), want (tensor<f32>)"},
		{"scatter inserted and batching", `%idx = stablehlo.constant dense<[[0], [1]]> : tensor<2x1xi32>
  %upd = stablehlo.constant dense<1.0> : tensor<2xf32>
  %0 = "stablehlo.scatter"(%a, %idx, %upd) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    stablehlo.return %y : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], input_batching_dims = [0], scatter_indices_batching_dims = [0], scatter_dims_to_operand_dims = [1], index_vector_dim = 1>} : (tensor<2x3xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<2x3xf32>`, "dimension 0 is both an inserted window and a batching dimension"},
		{"fft ok", `%0 = "stablehlo.fft"(%c) {fft_type = #stablehlo<fft_type FFT>, fft_length = array<i64: 4>} : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>`, ""},
		{"fft length", `%0 = "stablehlo.fft"(%c) {fft_type = #stablehlo<fft_type FFT>, fft_length = array<i64: 8>} : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>`, "trailing dimensions"},
		{"fft real operand", `%0 = "stablehlo.fft"(%a) {fft_type = #stablehlo<fft_type FFT>, fft_length = array<i64: 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>`, "complex"},
		{"triangular_solve ok", `%0 = "stablehlo.triangular_solve"(%q, %q) {left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>`, ""},
		{"triangular_solve b", `%0 = "stablehlo.triangular_solve"(%q, %a) {left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<3x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>`, "a is 3x3, b's matching dimension is 2"},
	} {
		verifyOne(t, c)
	}
}

// A collective of a tuple is refused (collectives take tensors); it ran
// until the interpreter's kernel said so.
func TestVerifyCollectiveTuple(t *testing.T) {
	m, err := Parse([]byte(`module attributes {mhlo.num_replicas = 2 : i32} {
  func.func @main(%a: tensor<2xf32>) {
    %t = stablehlo.tuple %a : tuple<tensor<2xf32>>
    %0 = "stablehlo.all_gather"(%t) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tuple<tensor<2xf32>>) -> tuple<tensor<4xf32>>
    return
  }
}`))
	require.NoError(t, err)
	assert.ErrorContains(t, m.Verify(), "operand 0 is a tuple (tuple<tensor<2xf32>>): collectives take tensors")
}

// TestVerifyAcceptsValidForms: programs the spec allows that the
// stricter checks must not refuse (found in review): a select_and_scatter
// whose scatter body works in a promotion of the operand's type,
// get_dimension_size of bounded and quantized operands, an RFFT with a
// dynamic trailing dimension or a length of 0, select of compatible
// branches and a bounded pred, a map to a quantized type, a convolution
// with a dynamic kernel dimension.
func TestVerifyAcceptsValidForms(t *testing.T) {
	for name, src := range map[string]string{
		"select_and_scatter promotable": `func.func @main(%a: tensor<4xf32>, %s: tensor<2xf32>, %i: tensor<f32>) -> tensor<4xf64> {
  %0 = "stablehlo.select_and_scatter"(%a, %s, %i) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%x: tensor<f64>, %y: tensor<f64>):
    %r = stablehlo.add %x, %y : tensor<f64>
    stablehlo.return %r : tensor<f64>
  }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2>} : (tensor<4xf32>, tensor<2xf32>, tensor<f32>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}`,
		"get_dimension_size bounded": `func.func @main(%a: tensor<?xf32, #stablehlo.bounds<4>>) -> tensor<i32> {
  %0 = stablehlo.get_dimension_size %a, dim = 0 : (tensor<?xf32, #stablehlo.bounds<4>>) -> tensor<i32>
  return %0 : tensor<i32>
}`,
		"get_dimension_size quantized": `func.func @main(%a: tensor<4x5x!quant.uniform<i8:f32, 2.0:15>>) -> tensor<i32> {
  %0 = stablehlo.get_dimension_size %a, dim = 1 : (tensor<4x5x!quant.uniform<i8:f32, 2.0:15>>) -> tensor<i32>
  return %0 : tensor<i32>
}`,
		"rfft dynamic": `func.func @main(%a: tensor<3x?xf32>) -> tensor<3x5xcomplex<f32>> {
  %0 = stablehlo.fft %a, type = RFFT, length = [8] : (tensor<3x?xf32>) -> tensor<3x5xcomplex<f32>>
  return %0 : tensor<3x5xcomplex<f32>>
}`,
		"rfft of length 0": `func.func @main(%a: tensor<3x0xf32>) -> tensor<3x0xcomplex<f32>> {
  %0 = stablehlo.fft %a, type = RFFT, length = [0] : (tensor<3x0xf32>) -> tensor<3x0xcomplex<f32>>
  return %0 : tensor<3x0xcomplex<f32>>
}`,
		"select compatible branches": `func.func @main(%p: tensor<4xi1>, %a: tensor<?xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.select"(%p, %a, %b) : (tensor<4xi1>, tensor<?xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}`,
		"select bounded pred": `func.func @main(%p: tensor<?xi1, #stablehlo.bounds<4>>, %a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.select"(%p, %a, %a) : (tensor<?xi1, #stablehlo.bounds<4>>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}`,
		"map to quantized": `func.func @main(%a: tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 2.0:15>> {
  %0 = "stablehlo.map"(%a) ({
  ^bb0(%x: tensor<f32>):
    %q = stablehlo.uniform_quantize %x : (tensor<f32>) -> tensor<!quant.uniform<i8:f32, 2.0:15>>
    stablehlo.return %q : tensor<!quant.uniform<i8:f32, 2.0:15>>
  }) {dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 2.0:15>>
  return %0 : tensor<4x!quant.uniform<i8:f32, 2.0:15>>
}`,
		"convolution dynamic kernel": `func.func @main(%a: tensor<1x4x4x1xf32>, %k: tensor<?x3x1x1xf32>) -> tensor<1x3x2x1xf32> {
  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<?x3x1x1xf32>) -> tensor<1x3x2x1xf32>
  return %0 : tensor<1x3x2x1xf32>
}`,
	} {
		m, err := Parse([]byte(src))
		require.NoError(t, err, name)
		assert.NoError(t, m.Verify(), name)
	}
}

// Typed attribute values the printer would write as text MLIR refuses or
// reads differently are build errors (found in review).
func TestBuilderRefusesMistypedAttrs(t *testing.T) {
	for _, c := range []struct {
		a    Attribute
		want string
	}{
		{IntAttr{Value: 5, Type: xla.Float32}, "integer 5 given type f32"},
		{FloatAttr{Value: 1.5, Type: xla.Int32}, "float 1.5 given type i32"},
		{IntAttr{Value: 2, Type: xla.Bool}, "2 is not an i1"},
		{DenseArrayAttr{DType: xla.Int8, Values: []int64{1, 300}}, "element 1: 300 does not fit i8"},
		{DenseFloatArrayAttr{DType: xla.Int32, Values: []float64{1.5}}, "element 0: float 1.5 given type i32"},
		{FloatAttr{Value: math.NaN(), Type: xla.Float4E2M1FN}, "NaN has no code in f4E2M1FN"},
		{FloatAttr{Value: math.Inf(1), Type: xla.Float8E4M3FN}, "+Inf has no code in f8E4M3FN"},
		{DenseArrayAttr{Values: []int64{1, 0}}, "array attribute without an element type"},
	} {
		b := NewBuilder("m")
		f := b.NewFunction("main")
		f.Op("foo.bar", nil, nil, NamedAttr{Name: "x", Value: c.a})
		f.Return()
		_, err := b.Build()
		assert.ErrorContains(t, err, c.want, "%#v", c.a)
	}
	// What MLIR reads is still taken.
	b := NewBuilder("m")
	f := b.NewFunction("main")
	f.Op("foo.bar", nil, nil, NamedAttr{Name: "a", Value: IntAttr{Value: 1, Type: xla.Bool}},
		NamedAttr{Name: "b", Value: FloatAttr{Value: math.NaN(), Type: xla.Float8E4M3FN}},
		NamedAttr{Name: "c", Value: DenseArrayAttr{DType: xla.Int8, Values: []int64{-128, 127}}})
	f.Return()
	_, err := b.Build()
	assert.NoError(t, err)
}

// TestVerifyDynamicGather: Verify checks dynamic_gather's dimension
// numbers by gather's rules, its slice_sizes operand's type and, where a
// constant gives it, the sizes and the result type (found in review: a
// start_index_map of 2 entries for index vectors of 1 passed Verify and
// was refused only by the interpreter's run).
func TestVerifyDynamicGather(t *testing.T) {
	const (
		idx   = `%k = stablehlo.constant dense<[1]> : tensor<1xi32>` + "\n  "
		sizes = `%z = stablehlo.constant dense<[1, 3]> : tensor<2xi64>` + "\n  "
		iota  = `%z = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<2xi64>` + "\n  "
		dg    = `%0 = "stablehlo.dynamic_gather"(%a, %k, %z) {dimension_numbers = #stablehlo.gather<`
		ty    = ` : (tensor<2x3xf32>, tensor<1xi32>, tensor<2xi64>) -> `
	)
	for _, c := range []verifyCase{
		{"ok", idx + sizes + dg + `offset_dims = [0], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 0>}` + ty + `tensor<3xf32>`, ""},
		{"ok non-constant sizes", idx + iota + dg + `offset_dims = [0], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 0>}` + ty + `tensor<3xf32>`, ""},
		{"start_index_map length", idx + sizes + dg + `offset_dims = [0], collapsed_slice_dims = [0], start_index_map = [0, -1], index_vector_dim = 0>}` + ty + `tensor<3xf32>`,
			"stablehlo.dynamic_gather(tensor<2x3xf32>, tensor<1xi32>, tensor<2xi64>) (line 4): start_index_map has 2 entries, index vectors have 1"},
		{"start_index_map length, non-constant sizes", idx + iota + dg + `offset_dims = [0], collapsed_slice_dims = [0], start_index_map = [0, -1], index_vector_dim = 0>}` + ty + `tensor<3xf32>`,
			"start_index_map has 2 entries, index vectors have 1"},
		{"offset_dims repeated", idx + iota + dg + `offset_dims = [1, 1, 4], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 0>}` + ty + `tensor<3xf32>`,
			"offset_dims must be sorted and unique, got [1 1 4]"},
		{"start_indices_batching_dims range", idx + iota + dg + `offset_dims = [0], operand_batching_dims = [0], start_indices_batching_dims = [4], start_index_map = [1], index_vector_dim = 0>}` + ty + `tensor<3xf32>`,
			"start_indices_batching_dims: dimension 4 out of range [0, 1)"},
		{"collapsed dim of size 3", idx + sizes + dg + `offset_dims = [0], collapsed_slice_dims = [1], start_index_map = [0], index_vector_dim = 0>}` + ty + `tensor<1xf32>`,
			"collapsed dimension 1 has slice size 3 > 1"},
		{"slice size out of range", idx + `%z = stablehlo.constant dense<[1, 4]> : tensor<2xi64>` + "\n  " + dg + `offset_dims = [0], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 0>}` + ty + `tensor<4xf32>`,
			"slice size 4 out of range [0, 3] in dimension 1"},
		{"slice_sizes type", idx + `%z = stablehlo.constant dense<[1.0, 3.0]> : tensor<2xf32>` + "\n  " + dg + `offset_dims = [0], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 0>} : (tensor<2x3xf32>, tensor<1xi32>, tensor<2xf32>) -> tensor<3xf32>`,
			"slice_sizes must be a 1-D integer tensor of 2 elements, got tensor<2xf32>"},
		{"result type", idx + sizes + dg + `offset_dims = [0], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 0>}` + ty + `tensor<2xf32>`,
			"result 0 is tensor<2xf32>, want tensor<3xf32>"},
		{"result rank, non-constant sizes", idx + iota + dg + `offset_dims = [0], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 0>}` + ty + `tensor<3x1xf32>`,
			"result 0 is tensor<3x1xf32>, want tensor<?xf32>"},
	} {
		verifyOne(t, c)
	}
}

// TestVerifyTorchIndexSelect: Verify checks torch_index_select's dim and
// batch_dims, that the leading batch_dims dimensions of operand and index
// agree, a selection from an empty dimension into a non-empty result, and
// the result type (found in review: mismatched batch dimensions and a
// selection from a dimension of size 0 passed Verify and were refused
// only by the interpreter's run).
func TestVerifyTorchIndexSelect(t *testing.T) {
	const (
		k2  = `%k = stablehlo.constant dense<[0, 2]> : tensor<2xi32>` + "\n  "
		k24 = `%k = stablehlo.constant dense<1> : tensor<2x4xi32>` + "\n  "
		k5  = `%k = stablehlo.constant dense<1> : tensor<5xi32>` + "\n  "
		tis = `%0 = "stablehlo.torch_index_select"`
	)
	for _, c := range []verifyCase{
		{"ok", k2 + tis + `(%a, %k) {dim = 1 : i64, batch_dims = 0 : i64} : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<2x2xf32>`, ""},
		{"ok batch", k24 + tis + `(%a, %k) {dim = 1 : i64, batch_dims = 1 : i64} : (tensor<2x3xf32>, tensor<2x4xi32>) -> tensor<2x4xf32>`, ""},
		{"ok negative dim", k24 + tis + `(%a, %k) {dim = -1 : i64, batch_dims = -1 : i64} : (tensor<2x3xf32>, tensor<2x4xi32>) -> tensor<2x4xf32>`, ""},
		{"batch dims differ", k5 + tis + `(%a, %k) {dim = 1 : i64, batch_dims = 1 : i64} : (tensor<2x3xf32>, tensor<5xi32>) -> tensor<2xf32>`,
			"stablehlo.torch_index_select(tensor<2x3xf32>, tensor<5xi32>) (line 3): batch dimension 0 differs: operand tensor<2x3xf32>, index tensor<5xi32>"},
		{"dim out of range", k2 + tis + `(%a, %k) {dim = 2 : i64, batch_dims = 0 : i64} : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<2x3x2xf32>`,
			"dim 2 and batch_dims 0 out of range"},
		{"batch_dims above dim", k24 + tis + `(%a, %k) {dim = 0 : i64, batch_dims = 1 : i64} : (tensor<2x3xf32>, tensor<2x4xi32>) -> tensor<4x3xf32>`,
			"dim 0 and batch_dims 1 out of range"},
		{"batch_dims above index rank", k2 + tis + `(%a, %k) {dim = 1 : i64, batch_dims = 2 : i64} : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<2xf32>`,
			"dim 1 and batch_dims 2 out of range"},
		{"float index", tis + `(%a, %s) {dim = 1 : i64, batch_dims = 0 : i64} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>`,
			"index must be an integer tensor, got tensor<f32>"},
		{"result type", k2 + tis + `(%a, %k) {dim = 1 : i64, batch_dims = 0 : i64} : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<2x3xf32>`,
			"result 0 is tensor<2x3xf32>, want tensor<2x2xf32>"},
		{"empty dim", `%e = stablehlo.constant dense<> : tensor<2x0x1xcomplex<f32>>
  ` + k2 + tis + `(%e, %k) {dim = 1 : i64, batch_dims = 0 : i64} : (tensor<2x0x1xcomplex<f32>>, tensor<2xi32>) -> tensor<2x2x1xcomplex<f32>>`,
			"cannot select from dimension 1 of tensor<2x0x1xcomplex<f32>>: it is empty, and the result tensor<2x2x1xcomplex<f32>> is not"},
		{"empty dim, empty result", `%e = stablehlo.constant dense<> : tensor<2x0x1xcomplex<f32>>
  %k = stablehlo.constant dense<> : tensor<0xi32>
  ` + tis + `(%e, %k) {dim = 1 : i64, batch_dims = 0 : i64} : (tensor<2x0x1xcomplex<f32>>, tensor<0xi32>) -> tensor<2x0x1xcomplex<f32>>`, ""},
	} {
		verifyOne(t, c)
	}
}

// TestVerifyRng: Verify checks rng's operands by the spec (scalars of one
// integer, boolean or float type; floats for NORMAL; a 1-D integer shape)
// and its result against them (found in review: complex operands passed
// Verify and the builder and were refused only by the interpreter's run).
func TestVerifyRng(t *testing.T) {
	const shape = `%sh = stablehlo.constant dense<[2, 3]> : tensor<2xi64>` + "\n  "
	for _, c := range []verifyCase{
		{"ok", shape + `%0 = stablehlo.rng %s, %s, %sh, distribution = NORMAL : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<2x3xf32>`, ""},
		{"ok bool", `%t = stablehlo.constant dense<true> : tensor<i1>
  ` + shape + `%0 = stablehlo.rng %t, %t, %sh, distribution = UNIFORM : (tensor<i1>, tensor<i1>, tensor<2xi64>) -> tensor<2x3xi1>`, ""},
		{"ok non-constant shape", `%sh = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<2xi64>
  %0 = stablehlo.rng %s, %s, %sh, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<2x3xf32>`, ""},
		{"complex", `%z = stablehlo.constant dense<(0.0, 0.0)> : tensor<complex<f32>>
  %sh = stablehlo.constant dense<[2]> : tensor<1xi64>
  %0 = stablehlo.rng %z, %z, %sh, distribution = UNIFORM : (tensor<complex<f32>>, tensor<complex<f32>>, tensor<1xi64>) -> tensor<2xcomplex<f32>>`,
			"stablehlo.rng(tensor<complex<f32>>, tensor<complex<f32>>, tensor<1xi64>) (line 4): a and b must be integer, boolean or float, got complex<f32>"},
		{"normal int", `%n = stablehlo.constant dense<1> : tensor<i32>
  ` + shape + `%0 = stablehlo.rng %n, %n, %sh, distribution = NORMAL : (tensor<i32>, tensor<i32>, tensor<2xi64>) -> tensor<2x3xi32>`,
			"NORMAL needs float operands, got i32"},
		{"a not a scalar", shape + `%0 = stablehlo.rng %a, %s, %sh, distribution = UNIFORM : (tensor<2x3xf32>, tensor<f32>, tensor<2xi64>) -> tensor<2x3xf32>`,
			"a and b must be scalars of one type, got tensor<2x3xf32> and tensor<f32>"},
		{"shape type", `%0 = stablehlo.rng %s, %s, %s, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<2x3xf32>`,
			"shape must be a 1-D integer tensor, got tensor<f32>"},
		{"result shape", shape + `%0 = stablehlo.rng %s, %s, %sh, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<3x2xf32>`,
			"result 0 is tensor<3x2xf32>, want tensor<2x3xf32>"},
		{"result element type", shape + `%0 = stablehlo.rng %s, %s, %sh, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<2x3xf64>`,
			"result 0 is tensor<2x3xf64>, want tensor<2x3xf32>"},
		{"result rank, non-constant shape", `%sh = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<2xi64>
  %0 = stablehlo.rng %s, %s, %sh, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<6xf32>`,
			"result 0 is tensor<6xf32>, want tensor<?x?xf32>"},
		{"negative shape", `%sh = stablehlo.constant dense<[-2]> : tensor<1xi64>
  %0 = stablehlo.rng %s, %s, %sh, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<?xf32>`,
			"negative dimension -2"},
	} {
		verifyOne(t, c)
	}
}
