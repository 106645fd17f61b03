package pallas

import (
	"math"
	"strings"
	"testing"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVisitsEachBlockOnce(t *testing.T) {
	g0 := func(g []*Value, _ []*Ref) []any { return []any{g[0], g[1]} }
	cases := []struct {
		name  string
		grid  []int64
		block []int64
		imap  IndexMapFunc
		want  bool
	}{
		{"grid indices in order", []int64{2, 3}, []int64{2, 2}, g0, true},
		{"transposed grid indices", []int64{3, 2}, []int64{2, 2}, func(g []*Value, _ []*Ref) []any { return []any{g[1], g[0]} }, true},
		{"trailing reduction axis", []int64{2, 3, 5}, []int64{2, 2}, g0, true},
		{"one block along a dim", []int64{2}, []int64{2, 6}, func(g []*Value, _ []*Ref) []any { return []any{g[0], 0} }, true},
		{"squeezed dim", []int64{4, 3}, []int64{Squeezed, 2}, g0, true},
		{"revisited: leading axis unused", []int64{2, 3}, []int64{4, 2}, func(g []*Value, _ []*Ref) []any { return []any{0, g[1]} }, false},
		{"split runs: middle axis unused", []int64{2, 5, 3}, []int64{2, 2}, func(g []*Value, _ []*Ref) []any { return []any{g[0], g[2]} }, false},
		{"too few steps for the blocks", []int64{2, 2}, []int64{2, 2}, g0, false},
		{"one axis twice", []int64{2, 2}, []int64{2, 3}, func(g []*Value, _ []*Ref) []any { return []any{g[0], g[0]} }, false},
		{"computed index", []int64{2, 3}, []int64{2, 2}, func(g []*Value, _ []*Ref) []any { return []any{g[0], g[1].Add(0)} }, false},
		{"prefetched index", []int64{2, 3}, []int64{2, 2}, func(g []*Value, pf []*Ref) []any { return []any{g[0], pf[0].Load(g[1])} }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := CallSpec{
				OutShapes:         []xla.Shape{xla.MakeShape(xla.Float32, 4, 6)},
				Grid:              c.grid,
				NumScalarPrefetch: 1,
				OutSpecs:          []*BlockSpec{{BlockShape: c.block, IndexMap: c.imap}},
			}
			p, err := Trace(func(k *Kernel, r []*Ref) { r[1].Store(0.0) }, spec, []stablehlo.TensorType{stablehlo.Tensor(xla.Int32, 3)})
			require.NoError(t, err)
			r := p.Refs[p.NumPrefetch+p.NumInputs]
			assert.Equal(t, c.want, visitsEachBlockOnce(p.IndexMaps[p.NumInputs], r, p.Grid))
		})
	}
}

// An output whose blocks are each visited once is not filled before the
// loop, yet what the kernel leaves unwritten still reads as NaN (or the
// minimum integer), and a block it reads before writing is NaN too.
func TestBlocksVisitedOnceStartUninitialized(t *testing.T) {
	kernel := func(k *Kernel, r []*Ref) {
		i, j := k.ProgramID(0), k.ProgramID(1)
		f, n, re := r[0], r[1], r[2]
		id := i.Mul(3).Add(j)
		k.When(j.Ne(1), func() { f.Store(id.Astype(xla.Float32).BroadcastTo(2), 0, All) })
		n.Store(id, 1, 1)
		re.Store(id.Astype(xla.Float32), 0, 0)           // (0, 0) of the block
		re.Store(re.Load(0, 0).Add(re.Load(1, 1)), 1, 0) // NaN + NaN
	}
	blk := &BlockSpec{BlockShape: []int64{2, 2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0], g[1]} }}
	spec := CallSpec{
		OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4, 6), xla.MakeShape(xla.Int32, 4, 6), xla.MakeShape(xla.Float32, 4, 6)},
		Grid:      []int64{2, 3},
		OutSpecs:  []*BlockSpec{blk, blk, blk},
	}
	out, err := runCall(kernel, spec)
	require.NoError(t, err)
	f, n, re := out[0].Data.([]float32), out[1].Data.([]int32), out[2].Data.([]float32)
	for row := 0; row < 4; row++ {
		for col := 0; col < 6; col++ {
			e := row*6 + col
			id := (row/2)*3 + col/2
			if row%2 == 0 && col/2 != 1 {
				assert.Equal(t, float32(id), f[e], "f element %d", e)
			} else {
				assert.True(t, math.IsNaN(float64(f[e])), "f element %d: want NaN, got %v", e, f[e])
			}
			if row%2 == 1 && col%2 == 1 {
				assert.Equal(t, int32(id), n[e], "n element %d", e)
			} else {
				assert.Equal(t, int32(math.MinInt32), n[e], "n element %d", e)
			}
			if row%2 == 0 && col%2 == 0 {
				assert.Equal(t, float32(id), re[e], "re element %d", e)
			} else {
				assert.True(t, math.IsNaN(float64(re[e])), "re element %d: want NaN, got %v", e, re[e])
			}
		}
	}

	// The lowering fills blocks, never a whole output, with NaN.
	b := stablehlo.NewBuilder("once")
	fb := b.NewFunction("main")
	fb.Return(Call(fb, kernel, spec)...)
	m, err := b.Build()
	require.NoError(t, err)
	text := m.String()
	assert.NotContains(t, text, "dense<0x7FC00000> : tensor<4x6xf32>", text)
	assert.True(t, strings.Contains(text, "dense<0x7FC00000> : tensor<2x2xf32>") || strings.Contains(text, "tensor<f32>) -> tensor<2x2xf32>"), text)
}
