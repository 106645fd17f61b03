package stablehlo

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBuilderOutputRoundTrips prints what the builder makes (every op of
// the table), parses it back, and checks that the parsed module verifies
// and prints the same text, in both the pretty and the generic form.
func TestBuilderOutputRoundTrips(t *testing.T) {
	m, err := kitchenSink()
	require.NoError(t, err)
	for _, generic := range []bool{false, true} {
		var first bytes.Buffer
		require.NoError(t, Print(&first, m, PrintOptions{Generic: generic}))
		parsed, err := Parse(first.Bytes())
		require.NoError(t, err, "generic=%v", generic)
		require.NoError(t, parsed.Verify(), "generic=%v", generic)
		var second bytes.Buffer
		require.NoError(t, Print(&second, parsed, PrintOptions{Generic: generic}))
		assert.Equal(t, first.String(), second.String(), "generic=%v", generic)
	}
}
