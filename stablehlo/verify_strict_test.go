package stablehlo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVerifyConstantValueType: a constant's value must have the result's
// type exactly (element type and shape; a splat's type is the whole
// tensor's), while a result type halo keeps as text (quantized) is left
// alone.
func TestVerifyConstantValueType(t *testing.T) {
	for _, c := range []verifyCase{
		{"ok", `%0 = "stablehlo.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>`, ""},
		{"splat ok", `%0 = "stablehlo.constant"() <{value = dense<1.0> : tensor<2x3xf32>}> : () -> tensor<2x3xf32>`, ""},
		{"list ok", `%0 = "stablehlo.constant"() <{value = dense<[1, 2]> : tensor<2xi32>}> : () -> tensor<2xi32>`, ""},
		{"pretty ok", `%0 = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>`, ""},
		{"element type", `%0 = "stablehlo.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<i32>`,
			"value is tensor<f32>, the result is tensor<i32>"},
		{"splat shape", `%0 = "stablehlo.constant"() <{value = dense<1.0> : tensor<2x3xf32>}> : () -> tensor<3x2xf32>`,
			"value is tensor<2x3xf32>, the result is tensor<3x2xf32>"},
		{"splat rank", `%0 = "stablehlo.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<2x3xf32>`,
			"value is tensor<f32>, the result is tensor<2x3xf32>"},
		{"list shape", `%0 = "stablehlo.constant"() <{value = dense<[1, 2]> : tensor<2xi32>}> : () -> tensor<1x2xi32>`,
			"value is tensor<2xi32>"},
		{"dynamic result", `%0 = "stablehlo.constant"() <{value = dense<[1, 2]> : tensor<2xi32>}> : () -> tensor<?xi32>`,
			"value is tensor<2xi32>"},
		{"quantized result", `%0 = "stablehlo.constant"() <{value = dense<[1, 2]> : tensor<2xi8>}> : () -> tensor<2x!quant.uniform<i8:f32, 1.000000e+00>>`, ""},
	} {
		verifyOne(t, c)
	}
}

// TestVerifyBranchSelector: Verify refuses an if whose pred is not a
// tensor<i1> and a case whose index is not a tensor<i32>, as the builder
// does.
func TestVerifyBranchSelector(t *testing.T) {
	ifOp := func(pred string) string {
		return `%pr = stablehlo.constant dense<true> : ` + pred + `
  %0 = "stablehlo.if"(%pr) ({
    stablehlo.return %s : tensor<f32>
  }, {
    stablehlo.return %s : tensor<f32>
  }) : (` + pred + `) -> tensor<f32>`
	}
	caseOp := func(index, value string) string {
		return `%ix = stablehlo.constant dense<` + value + `> : ` + index + `
  %0 = "stablehlo.case"(%ix) ({
    stablehlo.return %s : tensor<f32>
  }, {
    stablehlo.return %s : tensor<f32>
  }) : (` + index + `) -> tensor<f32>`
	}
	for _, c := range []verifyCase{
		{"if ok", ifOp("tensor<i1>"), ""},
		{"if pred rank 1", ifOp("tensor<2xi1>"), "pred must be tensor<i1>, got tensor<2xi1>"},
		{"if pred i32", `%0 = "stablehlo.if"(%i) ({
    stablehlo.return %s : tensor<f32>
  }, {
    stablehlo.return %s : tensor<f32>
  }) : (tensor<2x3xi32>) -> tensor<f32>`, "pred must be tensor<i1>"},
		{"case ok", caseOp("tensor<i32>", "1"), ""},
		{"case index f32", caseOp("tensor<f32>", "1.0"), "index must be tensor<i32>, got tensor<f32>"},
		{"case index i64", caseOp("tensor<i64>", "1"), "index must be tensor<i32>, got tensor<i64>"},
		{"case index rank 1", caseOp("tensor<1xi32>", "1"), "index must be tensor<i32>, got tensor<1xi32>"},
	} {
		verifyOne(t, c)
	}
}

// TestVerifyRegionBlocks: every region of a StableHLO op has exactly one
// block; the error names the op and the region. Ops of other dialects may
// have regions of several blocks.
func TestVerifyRegionBlocks(t *testing.T) {
	for _, c := range []verifyCase{
		{"while cond two blocks", `%0 = "stablehlo.while"(%s) ({
  ^bb0(%x: tensor<f32>):
    %t = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %t : tensor<i1>
  ^bb1(%y: tensor<f32>):
    %f = stablehlo.constant dense<false> : tensor<i1>
    stablehlo.return %f : tensor<i1>
  }, {
  ^bb0(%x: tensor<f32>):
    stablehlo.return %x : tensor<f32>
  }) : (tensor<f32>) -> tensor<f32>`, "stablehlo.while (line 2): region cond has 2 blocks, want exactly 1"},
		{"if false branch two blocks", `%t = stablehlo.constant dense<true> : tensor<i1>
  %0 = "stablehlo.if"(%t) ({
    stablehlo.return %s : tensor<f32>
  }, {
    stablehlo.return %s : tensor<f32>
  ^bb1:
    stablehlo.return %s : tensor<f32>
  }) : (tensor<i1>) -> tensor<f32>`, "stablehlo.if (line 3): region false_branch has 2 blocks"},
		{"case second branch two blocks", `%k = stablehlo.constant dense<0> : tensor<i32>
  %0 = "stablehlo.case"(%k) ({
    stablehlo.return %s : tensor<f32>
  }, {
    stablehlo.return %s : tensor<f32>
  ^bb1:
    stablehlo.return %s : tensor<f32>
  }) : (tensor<i32>) -> tensor<f32>`, "stablehlo.case (line 3): region branches[1] has 2 blocks"},
		{"reduce body two blocks", `%0 = "stablehlo.reduce"(%a, %s) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %r = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %r : tensor<f32>
  ^bb1(%u: tensor<f32>, %v: tensor<f32>):
    stablehlo.return %u : tensor<f32>
  }) {dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>`, "stablehlo.reduce (line 2): region body has 2 blocks"},
		{"sort comparator two blocks", `%0 = "stablehlo.sort"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %r = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %r : tensor<i1>
  ^bb1(%u: tensor<f32>, %v: tensor<f32>):
    %g = stablehlo.compare GT, %u, %v : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %g : tensor<i1>
  }) {dimension = 1 : i64, is_stable = false} : (tensor<2x3xf32>) -> tensor<2x3xf32>`, "stablehlo.sort (line 2): region comparator has 2 blocks"},
		{"other dialect two blocks", `%0 = "test.region_op"(%s) ({
  ^bb0(%x: tensor<f32>):
    "test.yield"(%x) : (tensor<f32>) -> ()
  ^bb1(%y: tensor<f32>):
    "test.yield"(%y) : (tensor<f32>) -> ()
  }) : (tensor<f32>) -> tensor<f32>`, ""},
	} {
		verifyOne(t, c)
	}

	// Built by hand: an empty region is refused too.
	m, err := Parse([]byte(`func.func @main(%s: tensor<f32>) -> tensor<f32> {
  %0 = "stablehlo.while"(%s) ({
  ^bb0(%x: tensor<f32>):
    %t = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %t : tensor<i1>
  }, {
  ^bb0(%x: tensor<f32>):
    stablehlo.return %x : tensor<f32>
  }) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}`))
	require.NoError(t, err)
	require.NoError(t, m.Verify())
	m.Funcs[0].Body.Blocks[0].Ops[0].Regions[1].Blocks = nil
	assert.ErrorContains(t, m.Verify(), "stablehlo.while (line 2): region body has 0 blocks, want exactly 1")
}

// TestVerifyAttrWidthAndDialect: an integer attribute must have the
// width the spec gives it, and an enum attribute (or a precision_config
// element) must be of the op's dialect.
func TestVerifyAttrWidthAndDialect(t *testing.T) {
	for _, c := range []verifyCase{
		{"reduce_precision i32 ok", `%0 = "stablehlo.reduce_precision"(%a) {exponent_bits = 5 : i32, mantissa_bits = 10 : i32} : (tensor<2x3xf32>) -> tensor<2x3xf32>`, ""},
		{"reduce_precision i64", `%0 = "stablehlo.reduce_precision"(%a) {exponent_bits = 5 : i64, mantissa_bits = 10 : i32} : (tensor<2x3xf32>) -> tensor<2x3xf32>`,
			"stablehlo.reduce_precision (line 2): attribute exponent_bits must be an i32 integer, got 5 : i64"},
		{"reduce_precision untyped", `%0 = "stablehlo.reduce_precision"(%a) {exponent_bits = 5 : i32, mantissa_bits = 10} : (tensor<2x3xf32>) -> tensor<2x3xf32>`,
			"attribute mantissa_bits must be an i32 integer, got 10 : i64"},
		{"iota i64 ok", `%0 = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<4xi32>`, ""},
		{"iota i32", `%0 = "stablehlo.iota"() {iota_dimension = 0 : i32} : () -> tensor<4xi32>`,
			"stablehlo.iota (line 2): attribute iota_dimension must be an i64 integer, got 0 : i32"},
		{"concatenate ui64", `%0 = "stablehlo.concatenate"(%a, %a) {dimension = 0 : ui64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>`,
			"attribute dimension must be an i64 integer, got 0 : ui64"},
		{"get_tuple_element i32 ok", `%t = "stablehlo.tuple"(%a, %s) : (tensor<2x3xf32>, tensor<f32>) -> tuple<tensor<2x3xf32>, tensor<f32>>
  %0 = "stablehlo.get_tuple_element"(%t) {index = 1 : i32} : (tuple<tensor<2x3xf32>, tensor<f32>>) -> tensor<f32>`, ""},
		{"get_tuple_element i64", `%t = "stablehlo.tuple"(%a, %s) : (tensor<2x3xf32>, tensor<f32>) -> tuple<tensor<2x3xf32>, tensor<f32>>
  %0 = "stablehlo.get_tuple_element"(%t) {index = 0 : i64} : (tuple<tensor<2x3xf32>, tensor<f32>>) -> tensor<2x3xf32>`,
			"stablehlo.get_tuple_element (line 3): attribute index must be an i32 integer, got 0 : i64"},
		{"compare stablehlo ok", `%0 = "stablehlo.compare"(%a, %a) {comparison_direction = #stablehlo<comparison_direction GT>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>`, ""},
		{"compare mhlo", `%0 = "stablehlo.compare"(%a, %a) {comparison_direction = #mhlo<comparison_direction GT>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>`,
			"stablehlo.compare (line 2): attribute comparison_direction must be a #stablehlo<comparison_direction ...> enum, got #mhlo<comparison_direction GT>"},
		{"compare type chlo", `%0 = "stablehlo.compare"(%a, %a) {comparison_direction = #stablehlo<comparison_direction GT>, compare_type = #chlo<comparison_type FLOAT>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>`,
			"attribute compare_type must be a #stablehlo<comparison_type ...> enum, got #chlo<comparison_type FLOAT>"},
		{"chlo compare chlo ok", `%0 = "chlo.broadcast_compare"(%a, %a) {comparison_direction = #chlo<comparison_direction GT>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>`, ""},
		{"chlo compare stablehlo", `%0 = "chlo.broadcast_compare"(%a, %a) {comparison_direction = #stablehlo<comparison_direction GT>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>`,
			"chlo.broadcast_compare (line 2): attribute comparison_direction must be a #chlo<comparison_direction ...> enum, got #stablehlo<comparison_direction GT>"},
		{"dot precision mhlo", `%0 = "stablehlo.dot_general"(%q, %q) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #mhlo<precision HIGH>]} : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>`,
			"stablehlo.dot_general (line 2): attribute precision_config must be a #stablehlo<precision ...> enum, got #mhlo<precision HIGH>"},
	} {
		verifyOne(t, c)
	}
}
