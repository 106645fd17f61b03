package pallas

import (
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

func TestBackendFor(t *testing.T) {
	assert.Equal(t, Triton, BackendFor("cuda"))
	assert.Equal(t, Interpret, BackendFor("rocm"), "the Triton lowering is NVIDIA's")
	assert.Equal(t, Interpret, BackendFor("interpreter"))
	assert.Equal(t, Interpret, BackendFor("cpu"))
	assert.Equal(t, Interpret, BackendFor("tpu"), "Mosaic is not written yet")
}
