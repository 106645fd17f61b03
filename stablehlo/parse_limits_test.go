package stablehlo

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAliasExpansionIsBounded: aliases of aliases double at each level;
// a 750-byte text standing for 2^31 types (parsing took longer than a
// minute, printing ran out of memory) is refused, naming the alias, while
// modest nesting parses.
func TestAliasExpansionIsBounded(t *testing.T) {
	bomb := func(levels int, typ bool) string {
		var b strings.Builder
		if typ {
			b.WriteString("!t0 = tuple<f32, f32>\n")
			for i := 1; i <= levels; i++ {
				fmt.Fprintf(&b, "!t%d = tuple<!t%d, !t%d>\n", i, i-1, i-1)
			}
			fmt.Fprintf(&b, "func.func @main(%%a: !t%d) -> !t%d {\n  return %%a : !t%d\n}\n", levels, levels, levels)
		} else {
			b.WriteString("#a0 = [1, 2]\n")
			for i := 1; i <= levels; i++ {
				fmt.Fprintf(&b, "#a%d = [#a%d, #a%d]\n", i, i-1, i-1)
			}
			fmt.Fprintf(&b, "func.func @main() attributes {x = #a%d} {\n  return\n}\n", levels)
		}
		return b.String()
	}
	for _, typ := range []bool{true, false} {
		_, err := Parse([]byte(bomb(30, typ)))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "expands to more than 1048576 types or attributes")
		m, err := Parse([]byte(bomb(6, typ)))
		require.NoError(t, err)
		_, err = Parse([]byte(m.String()))
		require.NoError(t, err)
	}
}

// TestFuncAttributesDoNotRestateSyntax: the attributes dictionary of a
// function may not give what its syntax gives (a second sym_visibility
// was kept by one printer and dropped by the other; sym_name renamed the
// function).
func TestFuncAttributesDoNotRestateSyntax(t *testing.T) {
	for _, attr := range []string{`sym_visibility = "public"`, `sym_name = "x"`, `function_type = (i32) -> f32`, `arg_attrs = [{}]`} {
		_, err := Parse([]byte("func.func private @d(%a: tensor<f32> {x.y}) attributes {" + attr + "} {\n  return\n}\n"))
		require.Error(t, err, attr)
		assert.Contains(t, err.Error(), "is given by the function's own syntax", attr)
	}
	m, err := Parse([]byte("func.func private @d() attributes {my.note = 1 : i32} {\n  return\n}\n"))
	require.NoError(t, err)
	// Without argument attributes in the signature, the dictionary may
	// give them (as MLIR's parser allows).
	_, err = Parse([]byte("func.func private @e(%a: tensor<f32>) attributes {arg_attrs = [{x.y}]} {\n  return\n}\n"))
	require.NoError(t, err)
	assert.Contains(t, m.String(), "my.note = 1 : i32")
}

func TestNULByteIsNamed(t *testing.T) {
	_, err := Parse([]byte("func.func @main() {\n  return\x00\n}\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "2:9: NUL byte: the input is not MLIR text")
}

func TestArgAttrsLengthChecked(t *testing.T) {
	_, err := Parse([]byte("func.func private @e(%a: tensor<f32>) attributes {arg_attrs = []} {\n  return\n}\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "arg_attrs has the wrong length")
	_, err = Parse([]byte("func.func private @e() attributes {arg_attrs = []} {\n  return\n}\n"))
	require.NoError(t, err)
}
