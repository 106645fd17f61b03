package pallas

import (
	"math"
	"testing"

	"github.com/halo-ml/halo/xla"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func addKernel(k *Kernel, refs []*Ref) {
	x, y, o := refs[0], refs[1], refs[2]
	o.Store(x.Load().Add(y.Load()))
}

func TestVectorAddBlocks(t *testing.T) {
	spec := CallSpec{
		OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 8)},
		Grid:      []int64{4},
		InSpecs: []*BlockSpec{
			{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }},
			{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }},
		},
		OutSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}},
	}
	x := tensor(t, xla.Int32, i32s(8, func(i int) int32 { return int32(i) }), 8)
	y := tensor(t, xla.Int32, i32s(8, func(i int) int32 { return int32(8 + i) }), 8)
	out, err := runCall(addKernel, spec, x, y)
	require.NoError(t, err)
	require.Equal(t, []int32{8, 10, 12, 14, 16, 18, 20, 22}, out[0].Data)
}

// TestCDiv: rounded up for positive operands, without overflowing.
func TestCDiv(t *testing.T) {
	for _, c := range [][3]int64{{0, 4, 0}, {1, 4, 1}, {4, 4, 1}, {5, 4, 2}, {1000, 128, 8}, {math.MaxInt64, 2, 1 << 62}, {math.MaxInt64, math.MaxInt64, 1}, {-5, 4, -1}} {
		assert.Equal(t, c[2], CDiv(c[0], c[1]), "CDiv(%d, %d)", c[0], c[1])
	}
}

func TestBackendFor(t *testing.T) {
	assert.Equal(t, Triton, BackendFor("cuda"))
	assert.Equal(t, Interpret, BackendFor("rocm"), "the Triton lowering is NVIDIA's")
	assert.Equal(t, Interpret, BackendFor("interpreter"))
	assert.Equal(t, Interpret, BackendFor("cpu"))
	assert.Equal(t, Interpret, BackendFor("tpu"), "Mosaic is not written yet")
	assert.Equal(t, Triton, BackendFor("CUDA"), "platform names in any case")
}

// Removing Interpret's lowering restores the built-in one: interpret mode
// is never missing.
func TestInterpretCannotBeUnregistered(t *testing.T) {
	RegisterBackend(Interpret, nil)
	assert.Contains(t, Backends(), Interpret)
	spec := CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2)}}
	out, err := runCall(func(k *Kernel, refs []*Ref) { refs[0].Store(2.0) }, spec)
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 2}, out[0].Data)
}

// Two Go scalars in Where are f32 when either is a float, as 1 and 2.5
// in jnp.where.
func TestWhereOfTwoGoNumbers(t *testing.T) {
	spec := CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}}
	out, err := runCall(func(k *Kernel, refs []*Ref) {
		refs[0].Store(Where(k.Arange(4).Lt(2), 1, 2.5))
	}, spec)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 1, 2.5, 2.5}, out[0].Data)
}
