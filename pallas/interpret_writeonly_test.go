package pallas

import (
	"strings"
	"testing"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An output the kernel only overwrites is never read: a visit that stores
// nothing leaves the block as the array had it (the aliased operand here,
// or what an earlier visit stored), and the lowering slices no block out
// of it.
func TestWriteOnlyOutputsAreNotRead(t *testing.T) {
	// Output 0 is aliased to operand 0 and visited once per block; the
	// kernel stores only where j != 1. Output 1 (aliased to operand 1)
	// has column blocks visited twice, on the grid's two rows: the first
	// row stores, the second does not, so the first row's values stay.
	kernel := func(k *Kernel, r []*Ref) {
		i, j := k.ProgramID(0), k.ProgramID(1)
		o0, o1 := r[2], r[3]
		id := i.Mul(10).Add(j).Astype(xla.Float32)
		k.When(j.Ne(1), func() { o0.Store(id.BroadcastTo(2, 2)) })
		k.When(i.Eq(0), func() { o1.Store(id.Add(100).BroadcastTo(4, 2), All, All) })
	}
	blk := func(g []*Value, _ []*Ref) []any { return []any{g[0], g[1]} }
	col := func(g []*Value, _ []*Ref) []any { return []any{0, g[1]} }
	spec := CallSpec{
		OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4, 6), xla.MakeShape(xla.Float32, 4, 6)},
		Grid:      []int64{2, 3},
		InSpecs: []*BlockSpec{
			{BlockShape: []int64{2, 2}, IndexMap: blk},
			{BlockShape: []int64{4, 2}, IndexMap: col},
		},
		OutSpecs: []*BlockSpec{
			{BlockShape: []int64{2, 2}, IndexMap: blk},
			{BlockShape: []int64{4, 2}, IndexMap: col},
		},
		InputOutputAliases: map[int]int{0: 0, 1: 1},
	}
	in0, in1 := interpreter.NewTensor(xla.MakeShape(xla.Float32, 4, 6)), interpreter.NewTensor(xla.MakeShape(xla.Float32, 4, 6))
	for e := range 24 {
		in0.Data.([]float32)[e] = float32(-1 - e)
		in1.Data.([]float32)[e] = float32(-100 - e)
	}
	out, err := runCall(kernel, spec, in0, in1)
	require.NoError(t, err)
	o0, o1 := out[0].Data.([]float32), out[1].Data.([]float32)
	for row := range 4 {
		for c := range 6 {
			e := row*6 + c
			if j := c / 2; j != 1 {
				assert.Equal(t, float32((row/2)*10+j), o0[e], "output 0 element %d", e)
			} else {
				assert.Equal(t, float32(-1-e), o0[e], "output 0 element %d keeps the operand", e)
			}
			assert.Equal(t, float32(100+c/2), o1[e], "output 1 element %d keeps the first visit's store", e)
		}
	}

	b := stablehlo.NewBuilder("write_only")
	fb := b.NewFunction("main", stablehlo.Tensor(xla.Float32, 4, 6), stablehlo.Tensor(xla.Float32, 4, 6))
	fb.Return(Call(fb, kernel, spec, fb.Args()...)...)
	m, err := b.Build()
	require.NoError(t, err)
	for _, line := range strings.Split(m.String(), "\n") {
		assert.False(t, strings.Contains(line, "stablehlo.dynamic_slice") && strings.Contains(line, "tensor<4x6xf32>"),
			"a block is sliced out of an output or operand: %s", line)
	}
}

func TestWriteOnly(t *testing.T) {
	cases := []struct {
		name   string
		kernel KernelFunc
		want   bool
	}{
		{"whole-block store", func(k *Kernel, r []*Ref) { r[0].Store(0.0) }, true},
		{"whole block by full slices", func(k *Kernel, r []*Ref) { r[0].Store(0.0, Slice(0, 4), All) }, true},
		{"store under When", func(k *Kernel, r []*Ref) { k.When(k.ProgramID(0).Eq(0), func() { r[0].Store(1.0) }) }, true},
		{"partial store", func(k *Kernel, r []*Ref) { r[0].Store(0.0, Slice(0, 2), All) }, false},
		{"dynamic start", func(k *Kernel, r []*Ref) { r[0].Store(0.0, DS(k.ProgramID(0).Mul(0), 4), All) }, false},
		{"masked store", func(k *Kernel, r []*Ref) {
			Store(r[0], []any{All, All}, 0.0, k.Iota(xla.Int32, 0, 4, 8).Lt(2))
		}, false},
		{"load", func(k *Kernel, r []*Ref) { r[0].Store(r[0].Load().Add(1.0)) }, false},
		{"load in a loop", func(k *Kernel, r []*Ref) {
			r[0].Store(0.0)
			k.ForLoop(0, 2, nil, func(i *Value, _ []*Value) []*Value { r[0].Store(r[0].Load().Mul(2.0)); return nil })
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := CallSpec{
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8, 8)},
				Grid:      []int64{2, 2},
				OutSpecs:  []*BlockSpec{{BlockShape: []int64{4, 8}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0], 0} }}},
			}
			p, err := Trace(c.kernel, spec, nil)
			require.NoError(t, err)
			assert.Equal(t, c.want, writeOnly(p.Body, p.Body.Args[0], []int64{4, 8}))
		})
	}
}
