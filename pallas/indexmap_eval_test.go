package pallas

import (
	"testing"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// traceMap is the traced form of index map f for an output of n blocks of
// one element over grid.
func traceMap(t *testing.T, grid []int64, n int64, f IndexMapFunc, prefetch ...stablehlo.TensorType) *Region {
	t.Helper()
	spec := CallSpec{Name: "map", Grid: grid, NumScalarPrefetch: len(prefetch),
		OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, n)},
		OutSpecs:  []*BlockSpec{{BlockShape: []int64{1}, IndexMap: f}}}
	p, err := Trace(func(k *Kernel, r []*Ref) { r[len(r)-1].Store(k.Zeros(xla.Float32, 1)) }, spec, prefetch)
	require.NoError(t, err)
	return p.IndexMaps[0]
}

// The build-time evaluation of an index map gives the block index the
// kernel computes at each grid point, with Go's truncating division and
// integers wrapped to their width.
func TestIndexMapEvaluation(t *testing.T) {
	grid := []int64{7, 5}
	cases := []struct {
		name string
		f    func(g []*Value) *Value
		want func(g0, g1 int64) int64
	}{
		{"affine", func(g []*Value) *Value { return g[0].Mul(5).Add(g[1]) }, func(a, b int64) int64 { return 5*a + b }},
		{"division of negatives", func(g []*Value) *Value { return g[0].Sub(3).Div(2).Add(g[1].Sub(4).Rem(3)) },
			func(a, b int64) int64 { return (a-3)/2 + (b-4)%3 }},
		{"max, min, neg, abs", func(g []*Value) *Value { return g[0].Neg().Abs().Max(g[1]).Min(4) },
			func(a, b int64) int64 { return min(max(a, b), 4) }},
		{"select and compare", func(g []*Value) *Value { return Where(g[0].Lt(g[1]).Or(g[1].Eq(4)), g[1], g[0].Mul(10)) },
			func(a, b int64) int64 {
				if a < b || b == 4 {
					return b
				}
				return 10 * a
			}},
		{"bits", func(g []*Value) *Value { return g[0].Xor(g[1]).And(6).Or(g[1].And(1)) },
			func(a, b int64) int64 { return (a^b)&6 | b&1 }},
		{"wrapped to i8", func(g []*Value) *Value { return g[0].Mul(50).Astype(xla.Int8).Astype(xla.Int32) },
			func(a, b int64) int64 { return int64(int8(a * 50)) }},
		{"division by zero as the lowerings", func(g []*Value) *Value {
			return g[0].Div(g[1].Sub(g[1])).Mul(10).Add(g[0].Rem(g[1].Mul(0)))
		}, func(a, b int64) int64 { return -10 + a }},
		{"shifts, an amount past the width included", func(g []*Value) *Value {
			return g[0].Shl(g[1]).Add(g[0].Sub(3).Shr(1)).Add(g[0].Shl(g[1].Add(30)).Astype(xla.Int32)).
				Add(g[0].Sub(3).Astype(xla.Uint8).Shr(g[1].Astype(xla.Uint8)).Astype(xla.Int32))
		}, func(a, b int64) int64 {
			shl := func(x, n int64) int64 { return int64(int32(x << n)) }
			if b+30 >= 32 {
				return shl(a, b) + (a-3)>>1 + 0 + int64(uint8(a-3)>>b)
			}
			return shl(a, b) + (a-3)>>1 + shl(a, b+30) + int64(uint8(a-3)>>b)
		}},
		{"unsigned division", func(g []*Value) *Value {
			return g[0].Sub(1).Astype(xla.Uint32).Div(1 << 30).Astype(xla.Int32)
		}, func(a, b int64) int64 { return int64(uint32(a-1) / (1 << 30)) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := traceMap(t, grid, 100, blockMap(func(g []*Value) []any { return []any{c.f(g)} }))
			e, ok := newMapEval(m, grid)
			require.True(t, ok)
			got := []int64{0}
			for a := int64(0); a < grid[0]; a++ {
				for b := int64(0); b < grid[1]; b++ {
					e.at([]int64{a, b}, got)
					assert.Equal(t, c.want(a, b), got[0], "at (%d, %d)", a, b)
				}
			}
		})
	}
}

// sharedBlock finds two grid points an index map sends to one block, on
// the whole of a small grid and on a corner of a large one; one-to-one
// maps, and maps that read prefetched data, give none.
func TestIndexMapSharedBlock(t *testing.T) {
	one := func(f func(g []*Value) *Value) IndexMapFunc {
		return blockMap(func(g []*Value) []any { return []any{f(g)} })
	}
	type want struct {
		found   bool
		a, b, k []int64
	}
	cases := []struct {
		name string
		grid []int64
		f    IndexMapFunc
		want want
	}{
		{"row-major", []int64{3, 4}, one(func(g []*Value) *Value { return g[0].Mul(4).Add(g[1]) }), want{}},
		{"sum", []int64{3, 4}, one(func(g []*Value) *Value { return g[0].Add(g[1]) }), want{true, []int64{0, 1}, []int64{1, 0}, []int64{1}}},
		{"an axis times zero", []int64{2, 3}, one(func(g []*Value) *Value { return g[0].Add(g[1].Mul(0)) }), want{true, []int64{0, 0}, []int64{0, 1}, []int64{0}}},
		{"clamped", []int64{6}, one(func(g []*Value) *Value { return g[0].Min(4) }), want{true, []int64{4}, []int64{5}, []int64{4}}},
		{"a corner of 2^20 programs, one-to-one", []int64{1024, 1024}, one(func(g []*Value) *Value { return g[0].Mul(1024).Add(g[1]) }), want{}},
		// The limit: (0, 1000) and (1, 0) share block 1000, outside the
		// 256x256 corner visited.
		{"a corner of 2^20 programs, shared outside it", []int64{1024, 1024}, one(func(g []*Value) *Value { return g[0].Mul(1000).Add(g[1]) }), want{}},
		{"a corner of 2^20 programs, shared in it", []int64{1024, 1024}, one(func(g []*Value) *Value { return g[0].Mul(100).Add(g[1]) }),
			want{true, []int64{0, 100}, []int64{1, 0}, []int64{100}}},
		{"two dims", []int64{4, 4}, blockMap(func(g []*Value) []any { return []any{g[0].Div(2), g[1].Add(g[0].Rem(2).Mul(4))} }), want{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := int64(1 << 21)
			var m *Region
			if len(c.want.k) > 1 || c.name == "two dims" {
				spec := CallSpec{Name: "map", Grid: c.grid, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2, 8)},
					OutSpecs: []*BlockSpec{{BlockShape: []int64{1, 1}, IndexMap: c.f}}}
				p, err := Trace(func(k *Kernel, r []*Ref) { r[0].Store(k.Zeros(xla.Float32, 1, 1)) }, spec, nil)
				require.NoError(t, err)
				m = p.IndexMaps[0]
			} else {
				m = traceMap(t, c.grid, n, c.f)
			}
			a, b, k, found := sharedBlock(m, c.grid, 0)
			require.Equal(t, c.want.found, found, "%v %v %v", a, b, k)
			if found {
				assert.Equal(t, c.want.a, a)
				assert.Equal(t, c.want.b, b)
				assert.Equal(t, c.want.k, k)
			}
		})
	}
	// A map reading prefetched data is judged from its code only.
	m := traceMap(t, []int64{4}, 8, func(g []*Value, pf []*Ref) []any { return []any{pf[0].Load(g[0])} }, stablehlo.Tensor(xla.Int32, 4))
	_, ok := newMapEval(m, []int64{4})
	assert.False(t, ok)
	_, _, _, found := sharedBlock(m, []int64{4}, 0)
	assert.False(t, found)
}
