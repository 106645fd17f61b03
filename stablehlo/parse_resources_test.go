package stablehlo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

// A module printed with its large constants as dense_resource reads their
// data from the {-# dialect_resources #-} section after it: the
// constants become dense elements (booleans and sub-byte integers in host
// form); other dialects' resources and other sections are skipped.
func TestParseDenseResources(t *testing.T) {
	m, err := Parse([]byte(`module @res {
  func.func @main() -> (tensor<4xf32>, tensor<3xi1>, tensor<2xi4>, tensor<2xf32>) {
    %a = stablehlo.constant dense_resource<blob1> : tensor<4xf32>
    %b = stablehlo.constant dense_resource<"flags.1"> : tensor<3xi1>
    %c = stablehlo.constant dense_resource<nib> : tensor<2xi4>
    %d = stablehlo.constant dense_resource<__elided__> : tensor<2xf32>
    return %a, %b, %c, %d : tensor<4xf32>, tensor<3xi1>, tensor<2xi4>, tensor<2xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      blob1: "0x040000000000803F000000400000404000008040",
      "flags.1": "0x01000000010001",
      nib: "0x010000000F07"
    },
    other: { thing: "0x00", x: true }
  },
  external_resources: { mlir_reproducer: { pipeline: "builtin.module(x)" } }
#-}
`))
	require.NoError(t, err)
	ops := m.Func("main").Body.Blocks[0].Ops
	value := func(i int) Attribute { return ops[i].Attr("value") }
	assert.Equal(t, DenseElementsAttr{Type: Tensor(xla.Float32, 4), Data: []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40, 0, 0, 0x80, 0x40}}, value(0))
	assert.Equal(t, DenseElementsAttr{Type: Tensor(xla.Bool, 3), Data: []byte{1, 0, 1}}, value(1))
	assert.Equal(t, DenseElementsAttr{Type: Tensor(xla.Int4, 2), Data: []byte{0xff, 7}}, value(2))
	// No data for it: kept as written, printed back as such.
	assert.Equal(t, OpaqueAttr("dense_resource<__elided__> : tensor<2xf32>"), value(3))
	text := m.String()
	assert.Contains(t, text, "dense_resource<__elided__> : tensor<2xf32>")
	assert.Contains(t, text, "dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>")
	again, err := Parse([]byte(text))
	require.NoError(t, err)
	assert.Equal(t, value(0), again.Func("main").Body.Blocks[0].Ops[0].Attr("value"))
}

func TestParseDenseResourceErrors(t *testing.T) {
	const use = "func.func @main() -> tensor<2xf32> {\n  %a = stablehlo.constant dense_resource<b> : tensor<2xf32>\n  return %a : tensor<2xf32>\n}\n"
	for _, c := range []struct{ meta, want string }{
		{`{-# dialect_resources: { builtin: { b: "0x04000000000080" } } #-}`, "dense_resource<b>: the blob holds 3 bytes, tensor<2xf32> needs 8"},
		{`{-# dialect_resources: { builtin: { b: "0x030000000000803F0000803F" } } #-}`, `resource "b": the blob's alignment is not a power of two`},
		{`{-# dialect_resources: { builtin: { b: "0x0400" } } #-}`, `resource "b": a blob starts with its 4-byte alignment`},
		{`{-# dialect_resources: { builtin: { b: "0x04zz" } } #-}`, `resource "b": invalid hex data`},
		{`{-# dialect_resources: { builtin: { b: "0x04000000" }`, "at end of input"},
		{`{-# `, "unterminated file metadata"},
		{`{-# dialect_resources: { builtin: { b: "0x04000000" x } } #-}`, "expected ',' or '}' in dialect_resources"},
		{`{ "not metadata" }`, "expected"},
	} {
		_, err := Parse([]byte(use + c.meta))
		require.ErrorContains(t, err, c.want, c.meta)
	}
}
