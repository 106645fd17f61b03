package chlo

import (
	"testing"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Expand checks each op as Verify does before rewriting it: a parsed op
// with too few operands or results, a missing attribute or a wrong
// element type is an error naming the op, not a panic or a rewrite of
// something else.
func TestExpandRefusesMalformedOps(t *testing.T) {
	for _, c := range []struct{ op, want string }{
		{`%0 = "chlo.next_after"(%a) : (tensor<3xf32>) -> tensor<3xf32>`, "chlo.next_after (line 2): has 1 operands, want 2"},
		{`%0 = "chlo.igamma"(%a) : (tensor<3xf32>) -> tensor<3xf32>`, "has 1 operands, want 2"},
		{`%0 = "chlo.broadcast_add"(%a) : (tensor<3xf32>) -> tensor<3xf32>`, "has 1 operands, want 2"},
		{`%0 = "chlo.erf"() : () -> tensor<3xf32>`, "chlo.erf (line 2): has 0 operands, want 1"},
		{`%0:2 = "chlo.top_k"() {k = 1 : i64} : () -> (tensor<1xf32>, tensor<1xi32>)`, "has 0 operands, want 1"},
		{`%0 = "chlo.broadcast_select"(%p, %a, %a, %a) : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>`, "has 4 operands, want 3"},
		{`%0 = "chlo.ragged_dot"(%a, %a) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>`, "has 2 operands, want 3"},
		{`"chlo.broadcast_add"(%a, %a) : (tensor<3xf32>, tensor<3xf32>) -> ()`, "has 0 results, want 1"},
		{`"chlo.constant_like"(%a) {value = 1.0 : f32} : (tensor<3xf32>) -> ()`, "has 0 results, want 1"},
		{`%0:2 = "chlo.top_k"(%a) : (tensor<3xf32>) -> (tensor<1xf32>, tensor<1xi32>)`, "missing attribute k"},
		{`%0:2 = "chlo.top_k"(%a) {k = 5 : i64} : (tensor<3xf32>) -> (tensor<5xf32>, tensor<5xi32>)`, "k = 5 is not in [0, 3]"},
		{`%0 = "chlo.conj"(%i) : (tensor<3xi32>) -> tensor<3xi32>`, "element type i32 is not float or complex"},
		{`%0 = "chlo.square"(%p) : (tensor<3xi1>) -> tensor<3xi1>`, "element type i1 is not"},
		{`%0 = "chlo.constant_like"() {value = 1.0 : f32} : () -> tensor<3xf32>`, "has 0 operands, want 1"},
	} {
		m, err := stablehlo.Parse([]byte(`func.func @main(%a: tensor<3xf32>, %p: tensor<3xi1>, %i: tensor<3xi32>) {
  ` + c.op + `
  return
}`))
		require.NoError(t, err, c.op)
		assert.NotPanics(t, func() {
			err = Expand(m, ExpandOptions{})
		}, c.op)
		assert.ErrorContains(t, err, "chlo: Expand", c.op)
		assert.ErrorContains(t, err, c.want, c.op)
	}
}
