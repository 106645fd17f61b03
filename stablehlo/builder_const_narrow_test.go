package stablehlo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

// TestScalarOfNarrowTypes makes constants of the narrow float kinds and
// the sub-byte integers: one byte each, the type's code for the value.
func TestScalarOfNarrowTypes(t *testing.T) {
	for _, c := range []struct {
		dt   xla.DType
		v    float64
		want byte
	}{
		{xla.Float8E4M3FN, 1, 0x38},
		{xla.Float8E4M3FN, -448, 0xfe},
		{xla.Float8E5M2, 0.5, 0x38},
		{xla.Float4E2M1FN, 6, 0x07},
		{xla.Float6E3M2FN, -1, 0x2c},
		{xla.Float8E8M0FNU, 2, 0x80},
		{xla.Int4, -3, 0xfd},
		{xla.Int4, 9, 0xf9}, // wraps to -7
		{xla.Uint4, 17, 0x01},
		{xla.Int2, 1, 0x01},
	} {
		b := NewBuilder("m")
		fb := b.NewFunction("main")
		fb.Return(fb.ScalarOf(c.dt, c.v))
		m, err := b.Build()
		require.NoError(t, err, "%v", c.dt)
		a := m.Funcs[0].Body.Blocks[0].Ops[0].Attr("value").(DenseElementsAttr)
		assert.Equal(t, []byte{c.want}, a.Data, "%v %v", c.dt, c.v)
		// The printed module parses back to the same constant.
		m2, err := Parse([]byte(m.String()))
		require.NoError(t, err, "%v:\n%s", c.dt, m.String())
		assert.Equal(t, a.Data, m2.Funcs[0].Body.Blocks[0].Ops[0].Attr("value").(DenseElementsAttr).Data, "%v round trip", c.dt)
	}
}
