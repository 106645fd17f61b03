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
