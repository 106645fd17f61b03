package pallas

import (
	"math"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
)

// TopK (lax.top_k) of f32 rows with ties, signed zeros, infinities and
// NaNs, of i32 rows at the type's minimum, and of u8 rows. topKCases are
// part of tritonCases (interpret mode against the TTIR evaluator in both
// program orders, mlir-opt, the IR reference evaluator, a real GPU with
// HALO_PLUGIN); TestTopK checks them against a stable sort in Go.

var topKSpecial = []float64{3, math.NaN(), -1, 3, math.Inf(-1), math.Copysign(0, -1), 0, 7, math.Inf(-1), 2, -1, math.NaN(), 5, 0.5, 3, -2}

func topKCase(name string, x *interpreter.Tensor, k int) tritonCase {
	rows := func(n int64) *BlockSpec {
		return &BlockSpec{BlockShape: []int64{4, n}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], 0} })}
	}
	return tritonCase{
		name: name,
		kernel: func(kk *Kernel, r []*Ref) {
			v, i := TopK(r[0].Load(), k)
			r[1].Store(v)
			r[2].Store(i)
		},
		spec: CallSpec{
			Name:      name,
			OutShapes: []xla.Shape{xla.MakeShape(x.Shape.DType, 8, int64(k)), xla.MakeShape(xla.Int32, 8, int64(k))},
			Grid:      []int64{2},
			InSpecs:   []*BlockSpec{rows(16)},
			OutSpecs:  []*BlockSpec{rows(int64(k)), rows(int64(k))},
		},
		args: []*interpreter.Tensor{x},
	}
}

func topKCases() []tritonCase {
	dims := []int64{8, 16}
	return []tritonCase{
		topKCase("top_k_f32", floatTensor(xla.Float32, dims, func(i int) float64 { return topKSpecial[(i*5+i/16)%16] }), 8),
		// All 16: the -infs, equal to what taken elements read as, too.
		topKCase("top_k_f32_all", floatTensor(xla.Float32, dims, func(i int) float64 { return topKSpecial[(i*3+i/16)%16] }), 16),
		topKCase("top_k_i32", intTensor(xla.Int32, dims, func(i int) int64 { return []int64{math.MinInt32, 4, -7, math.MinInt32, 4, 9}[(i*7+i/16)%6] }), 4),
		topKCase("top_k_u8", intTensor(xla.Uint8, dims, func(i int) int64 { return int64((i * 37) % 256) }), 2),
	}
}

// goTopK is, per row of x (rows × n), the indices of its k largest, by a
// stable sort that puts NaNs first and +0 and -0 together.
func goTopK(fs []float64, is []int64, n, k int) [][]int {
	var out [][]int
	rows := (len(fs) + len(is)) / n
	for r := 0; r < rows; r++ {
		idx := make([]int, n)
		for j := range idx {
			idx[j] = j
		}
		less := func(a, b int) bool { // a ranks above b
			if fs != nil {
				x, y := fs[r*n+idx[a]], fs[r*n+idx[b]]
				if math.IsNaN(x) || math.IsNaN(y) {
					return math.IsNaN(x) && !math.IsNaN(y)
				}
				return x > y
			}
			return is[r*n+idx[a]] > is[r*n+idx[b]]
		}
		sort.SliceStable(idx, less)
		out = append(out, idx[:k])
	}
	return out
}

func TestTopK(t *testing.T) {
	for _, c := range topKCases() {
		t.Run(c.name, func(t *testing.T) {
			k := int(c.spec.OutShapes[0].Dims[1])
			xf, xi := scanElems(c.args[0])
			want := goTopK(xf, xi, 16, k)
			checkEveryBackend(t, c, func(backend string, got []*interpreter.Tensor) {
				vf, vi := scanElems(got[0])
				_, gi := scanElems(got[1])
				for r, row := range want {
					for j, at := range row {
						require.Equal(t, int64(at), gi[r*k+j], "%s: row %d, index %d", backend, r, j)
						if xf != nil {
							require.True(t, sameFloat(xf[r*16+at], vf[r*k+j]), "%s: row %d, value %d: %v", backend, r, j, vf[r*k+j])
						} else {
							require.Equal(t, xi[r*16+at], vi[r*k+j], "%s: row %d, value %d", backend, r, j)
						}
					}
				}
			})
		})
	}
}

func TestTopKMisuse(t *testing.T) {
	spec := CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4, 4)}}
	z := func(k *Kernel) *Value { return k.Zeros(xla.Float32, 4, 4) }
	runMisuseCases(t, []misuseCase{
		{name: "k past the axis", kernel: func(k *Kernel, r []*Ref) { TopK(z(k), 5) }, spec: spec,
			want: []string{"top_k at topk_test.go:", "k = 5 of the 4 elements along the last axis of f32[4,4]"}},
		{name: "k of 0", kernel: func(k *Kernel, r []*Ref) { TopK(z(k), 0) }, spec: spec,
			want: []string{"k = 0 of the 4 elements"}},
		{name: "a scalar", kernel: func(k *Kernel, r []*Ref) { TopK(z(k).Sum(), 1) }, spec: spec,
			want: []string{"top_k at topk_test.go:", "a scalar has no axis"}},
		{name: "bools", kernel: func(k *Kernel, r []*Ref) { TopK(k.Zeros(xla.Bool, 4), 1) }, spec: spec,
			want: []string{"top_k at topk_test.go:", "not defined on i1"}},
	})
}

// TopK of a float type without infinities (f8e4m3fn): taken elements read
// as its least finite value, not as -inf (which rounds to NaN there and
// made every round after the first find no maximum). Interpret mode only:
// Triton has no f8 types.
func TestTopKNarrowFloat(t *testing.T) {
	x := floatTensor(xla.Float8E4M3FN, []int64{8}, func(i int) float64 { return []float64{1, 3, 2, 0.5, -448, 3, -1, 0}[i] })
	got, err := runCall(func(k *Kernel, r []*Ref) {
		v, i := TopK(r[0].Load(), 8)
		r[1].Store(v)
		r[2].Store(i)
	}, CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float8E4M3FN, 8), xla.MakeShape(xla.Int32, 8)}}, x)
	require.NoError(t, err)
	vf, _ := scanElems(got[0])
	require.Equal(t, []float64{3, 3, 2, 1, 0.5, 0, -1, -448}, vf)
	require.Equal(t, []int32{1, 5, 2, 0, 3, 7, 6, 4}, got[1].Data)
}
