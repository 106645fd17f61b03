package interpreter

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// refDotGeneral is dot_general straight from the spec's definition: for
// every result index, the sum over all contracting indices of lhs × rhs.
func refDotGeneral(lhs []complex128, ld []int64, rhs []complex128, rd []int64, dn stablehlo.DotDimensionNumbers) ([]complex128, []int64) {
	free := func(rank int, batch, contract []int64) []int {
		used := map[int64]bool{}
		for _, d := range batch {
			used[d] = true
		}
		for _, d := range contract {
			used[d] = true
		}
		var out []int
		for d := 0; d < rank; d++ {
			if !used[int64(d)] {
				out = append(out, d)
			}
		}
		return out
	}
	lf := free(len(ld), dn.LhsBatchingDims, dn.LhsContractingDims)
	rf := free(len(rd), dn.RhsBatchingDims, dn.RhsContractingDims)
	var resDims []int64
	for _, d := range dn.LhsBatchingDims {
		resDims = append(resDims, ld[d])
	}
	for _, d := range lf {
		resDims = append(resDims, ld[d])
	}
	for _, d := range rf {
		resDims = append(resDims, rd[d])
	}
	var cDims []int64
	for _, d := range dn.LhsContractingDims {
		cDims = append(cDims, ld[d])
	}
	size := func(dims []int64) int64 {
		n := int64(1)
		for _, d := range dims {
			n *= d
		}
		return n
	}
	out := make([]complex128, size(resDims))
	ls, rs := Strides(ld), Strides(rd)
	ri := make([]int64, len(resDims))
	for o := range out {
		li, rj := make([]int64, len(ld)), make([]int64, len(rd))
		nb := len(dn.LhsBatchingDims)
		for i := range dn.LhsBatchingDims {
			li[dn.LhsBatchingDims[i]] = ri[i]
			rj[dn.RhsBatchingDims[i]] = ri[i]
		}
		for i, d := range lf {
			li[d] = ri[nb+i]
		}
		for i, d := range rf {
			rj[d] = ri[nb+len(lf)+i]
		}
		ci := make([]int64, len(cDims))
		var sum complex128
		for c := int64(0); c < size(cDims); c++ {
			for i := range cDims {
				li[dn.LhsContractingDims[i]] = ci[i]
				rj[dn.RhsContractingDims[i]] = ci[i]
			}
			sum += lhs[Offset(li, ls)] * rhs[Offset(rj, rs)]
			NextIndex(ci, cDims)
		}
		out[o] = sum
		NextIndex(ri, resDims)
	}
	return out, resDims
}

func dotGeneralSrc(lt, rt, res string, dn stablehlo.DotDimensionNumbers) string {
	batching := ""
	if len(dn.LhsBatchingDims) > 0 {
		batching = fmt.Sprintf("batching_dims = %s x %s, ", laInts(dn.LhsBatchingDims), laInts(dn.RhsBatchingDims))
	}
	return fmt.Sprintf(`func.func @main(%%a: %s, %%b: %s) -> %s {
  %%0 = stablehlo.dot_general %%a, %%b, %scontracting_dims = %s x %s : (%s, %s) -> %s
  return %%0 : %s
}`, lt, rt, res, batching, laInts(dn.LhsContractingDims), laInts(dn.RhsContractingDims), lt, rt, res, res)
}

func TestDotGeneralDimensionNumbers(t *testing.T) {
	dd := func(lb, rb, lc, rc []int64) stablehlo.DotDimensionNumbers {
		return stablehlo.DotDimensionNumbers{LhsBatchingDims: lb, RhsBatchingDims: rb, LhsContractingDims: lc, RhsContractingDims: rc}
	}
	shapes := []struct {
		name   string
		ld, rd []int64
		dn     stablehlo.DotDimensionNumbers
	}{
		{"matmul", []int64{2, 3}, []int64{3, 4}, dd(nil, nil, []int64{1}, []int64{0})},
		{"lhs-transposed", []int64{3, 2}, []int64{3, 4}, dd(nil, nil, []int64{0}, []int64{0})},
		{"rhs-transposed", []int64{2, 3}, []int64{4, 3}, dd(nil, nil, []int64{1}, []int64{1})},
		{"both-transposed", []int64{3, 2}, []int64{4, 3}, dd(nil, nil, []int64{0}, []int64{1})},
		{"vector-dot", []int64{5}, []int64{5}, dd(nil, nil, []int64{0}, []int64{0})},
		{"matvec", []int64{3, 5}, []int64{5}, dd(nil, nil, []int64{1}, []int64{0})},
		{"outer-product", []int64{3}, []int64{4}, dd(nil, nil, nil, nil)},
		{"outer-2d", []int64{2, 2}, []int64{2, 2}, dd(nil, nil, nil, nil)},
		{"batched", []int64{4, 2, 3}, []int64{4, 3, 5}, dd([]int64{0}, []int64{0}, []int64{2}, []int64{1})},
		{"batch-not-leading", []int64{3, 4, 5}, []int64{5, 4, 2}, dd([]int64{1}, []int64{1}, []int64{2}, []int64{0})},
		{"batch-last", []int64{2, 3, 4}, []int64{3, 5, 4}, dd([]int64{2}, []int64{2}, []int64{1}, []int64{0})},
		{"two-batch-swapped", []int64{2, 3, 4, 5}, []int64{3, 2, 5, 6}, dd([]int64{1, 0}, []int64{0, 1}, []int64{3}, []int64{2})},
		{"two-contracting-reversed", []int64{2, 3, 4}, []int64{4, 3, 5}, dd(nil, nil, []int64{2, 1}, []int64{0, 1})},
		{"two-contracting-interleaved", []int64{3, 2, 4, 5}, []int64{4, 6, 3}, dd(nil, nil, []int64{2, 0}, []int64{0, 2})},
		{"free-dims-split", []int64{2, 3, 4}, []int64{5, 3, 6}, dd(nil, nil, []int64{1}, []int64{1})},
		{"batch-and-free-interleaved", []int64{3, 2, 4, 2}, []int64{2, 4, 5, 3}, dd([]int64{0, 3}, []int64{3, 0}, []int64{2}, []int64{1})},
		{"unit-dims", []int64{1, 3, 1}, []int64{1, 3, 4}, dd([]int64{0}, []int64{0}, []int64{1}, []int64{1})},
		{"all-contracted", []int64{2, 3}, []int64{3, 2}, dd(nil, nil, []int64{0, 1}, []int64{1, 0})},
		{"empty-m", []int64{0, 3}, []int64{3, 4}, dd(nil, nil, []int64{1}, []int64{0})},
		{"empty-k", []int64{2, 0}, []int64{0, 3}, dd(nil, nil, []int64{1}, []int64{0})},
		// No result columns with several rows: the loop kernel of the
		// integer, bool and complex types once sliced past its empty result.
		{"empty-n", []int64{2, 3}, []int64{3, 0}, dd(nil, nil, []int64{1}, []int64{0})},
		{"empty-n-transposed", []int64{3, 4}, []int64{0, 3}, dd(nil, nil, []int64{0}, []int64{1})},
		{"empty-batch", []int64{0, 2, 3}, []int64{0, 3, 4}, dd([]int64{0}, []int64{0}, []int64{2}, []int64{1})},
	}
	types := []struct {
		in, out xla.DType
		r       int
	}{
		{xla.Float32, xla.Float32, 4},
		{xla.Float64, xla.Float64, 4},
		{xla.BFloat16, xla.BFloat16, 3},
		{xla.Float16, xla.Float16, 3},
		{xla.BFloat16, xla.Float32, 3},
		{xla.Float8E4M3FN, xla.Float32, 3},
		{xla.Int32, xla.Int32, 9},
		{xla.Int8, xla.Int8, 60},  // wraps
		{xla.Int8, xla.Int32, 60}, // preferred result type
		{xla.Int4, xla.Int4, 7},
		{xla.Uint8, xla.Uint8, 120},
		{xla.Uint64, xla.Uint64, 9},
		{xla.Int64, xla.Int64, 9},
		{xla.Bool, xla.Bool, 1},
		{xla.Complex64, xla.Complex64, 3},
		{xla.Complex128, xla.Complex128, 3},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range shapes {
		for _, ty := range types {
			t.Run(s.name+"/"+ty.in.String()+"->"+ty.out.String(), func(t *testing.T) {
				n := func(d []int64) int {
					k := 1
					for _, x := range d {
						k *= int(x)
					}
					return k
				}
				r := ty.r
				lo := 0
				if ty.in.IsUnsigned() || ty.in == xla.Bool {
					lo = r
				}
				gen := func(k int) []complex128 {
					v := laRandInts(rng, k, r, ty.in.IsComplex())
					if lo > 0 {
						for i := range v {
							v[i] = complex(math.Abs(real(v[i])), 0)
						}
					}
					return v
				}
				lhs := laTensor(ty.in, s.ld, gen(n(s.ld)))
				rhs := laTensor(ty.in, s.rd, gen(n(s.rd)))
				want, resDims := refDotGeneral(laValues(lhs), s.ld, laValues(rhs), s.rd, s.dn)
				if ty.out == xla.Bool {
					for i := range want {
						if want[i] != 0 {
							want[i] = 1
						}
					}
				}
				want = laExpected(ty.out, want)
				src := dotGeneralSrc(laType(ty.in, s.ld), laType(ty.in, s.rd), laType(ty.out, resDims), s.dn)
				out, err := laRun(t, src, lhs, rhs)
				require.NoError(t, err)
				require.Equal(t, xla.MakeShape(ty.out, resDims...), out[0].Shape)
				assert.Equal(t, want, laValues(out[0]))
			})
		}
	}
}

func TestDotGeneralLargeMatchesReference(t *testing.T) {
	// Big enough for the BLAS path to go parallel and for batches to be
	// split across cores.
	rng := rand.New(rand.NewPCG(3, 4))
	cases := []struct {
		ld, rd []int64
		dn     stablehlo.DotDimensionNumbers
	}{
		{[]int64{130, 70}, []int64{70, 150}, stablehlo.DotDimensionNumbers{LhsContractingDims: []int64{1}, RhsContractingDims: []int64{0}}},
		{[]int64{70, 130}, []int64{150, 70}, stablehlo.DotDimensionNumbers{LhsContractingDims: []int64{0}, RhsContractingDims: []int64{1}}},
		{[]int64{9, 20, 16}, []int64{16, 9, 24}, stablehlo.DotDimensionNumbers{LhsBatchingDims: []int64{0}, RhsBatchingDims: []int64{1}, LhsContractingDims: []int64{2}, RhsContractingDims: []int64{0}}},
	}
	for _, dt := range []xla.DType{xla.Float32, xla.Float64, xla.Int64, xla.Complex128} {
		for i, c := range cases {
			t.Run(fmt.Sprint(dt, i), func(t *testing.T) {
				n := func(d []int64) int { return int(xla.MakeShape(dt, d...).Size()) }
				lhs := laTensor(dt, c.ld, laRandInts(rng, n(c.ld), 5, dt.IsComplex()))
				rhs := laTensor(dt, c.rd, laRandInts(rng, n(c.rd), 5, dt.IsComplex()))
				want, resDims := refDotGeneral(laValues(lhs), c.ld, laValues(rhs), c.rd, c.dn)
				out, err := laRun(t, dotGeneralSrc(laType(dt, c.ld), laType(dt, c.rd), laType(dt, resDims), c.dn), lhs, rhs)
				require.NoError(t, err)
				assert.Equal(t, laExpected(dt, want), laValues(out[0]))
			})
		}
	}
}

func TestDotGeneralIEEESpecials(t *testing.T) {
	// No zero element of A is skipped: 0 × Inf must be NaN.
	for _, dt := range []xla.DType{xla.Float32, xla.Float64} {
		lhs := laTensor(dt, []int64{2, 2}, []complex128{0, 1, 2, 0})
		rhs := laTensor(dt, []int64{2, 2}, []complex128{complex(math.Inf(1), 0), 1, 1, 1})
		dn := stablehlo.DotDimensionNumbers{LhsContractingDims: []int64{1}, RhsContractingDims: []int64{0}}
		ty := laType(dt, []int64{2, 2})
		out, err := laRun(t, dotGeneralSrc(ty, ty, ty, dn), lhs, rhs)
		require.NoError(t, err)
		got := laValues(out[0])
		// row 0: [0*inf + 1*1, 0*1 + 1*1] = [NaN, 1]; row 1: [2*inf, 2]
		assert.True(t, math.IsNaN(real(got[0])), "%v", got)
		assert.Equal(t, complex128(1), got[1])
		assert.True(t, math.IsInf(real(got[2]), 1), "%v", got)
		assert.Equal(t, complex128(2), got[3])
	}
}

func TestDotDeprecated(t *testing.T) {
	src := `func.func @main(%a: tensor<2x3xi32>, %b: tensor<3xi32>) -> tensor<2xi32> {
  %0 = stablehlo.dot %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}`
	out, err := laRun(t, src,
		laTensor(xla.Int32, []int64{2, 3}, []complex128{1, 2, 3, 4, 5, 6}),
		laTensor(xla.Int32, []int64{3}, []complex128{1, 0, -1}))
	require.NoError(t, err)
	assert.Equal(t, []int32{-2, -2}, out[0].Data)
}

func TestDotGeneralErrors(t *testing.T) {
	f32 := func(d ...int64) *Tensor { return NewTensor(xla.MakeShape(xla.Float32, d...)) }
	cases := []struct {
		name     string
		lhs, rhs *Tensor
		dn       stablehlo.DotDimensionNumbers
		result   xla.Shape
		want     string
	}{
		{"contracting-size", f32(2, 3), f32(4, 5), stablehlo.DotDimensionNumbers{LhsContractingDims: []int64{1}, RhsContractingDims: []int64{0}},
			xla.MakeShape(xla.Float32, 2, 5), "contracting dimension sizes differ"},
		{"out-of-range", f32(2, 3), f32(3, 5), stablehlo.DotDimensionNumbers{LhsContractingDims: []int64{2}, RhsContractingDims: []int64{0}},
			xla.MakeShape(xla.Float32, 2, 5), "out of range"},
		{"dim-twice", f32(3, 3), f32(3, 3), stablehlo.DotDimensionNumbers{LhsBatchingDims: []int64{0}, RhsBatchingDims: []int64{0}, LhsContractingDims: []int64{0}, RhsContractingDims: []int64{1}},
			xla.MakeShape(xla.Float32, 3), "used twice"},
		{"counts", f32(3, 3), f32(3, 3), stablehlo.DotDimensionNumbers{LhsContractingDims: []int64{0, 1}, RhsContractingDims: []int64{1}},
			xla.MakeShape(xla.Float32), "contracting dimensions"},
		{"result-shape", f32(2, 3), f32(3, 5), stablehlo.DotDimensionNumbers{LhsContractingDims: []int64{1}, RhsContractingDims: []int64{0}},
			xla.MakeShape(xla.Float32, 5, 2), "does not match"},
		{"float-to-int", f32(2, 3), f32(3, 5), stablehlo.DotDimensionNumbers{LhsContractingDims: []int64{1}, RhsContractingDims: []int64{0}},
			xla.MakeShape(xla.Int32, 2, 5), "integer result"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := dotGeneral(c.lhs, c.rhs, c.dn, c.result)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	// A wrong attribute kind is an error naming the attribute, not a panic.
	op := stablehlo.NewOp("stablehlo.dot_general", nil, []stablehlo.Type{stablehlo.Tensor(xla.Float32, 2, 5)},
		stablehlo.NamedAttr{Name: "dot_dimension_numbers", Value: stablehlo.StringAttr("x")})
	_, err := dotGeneralKernel(nil, op, []Value{f32(2, 3), f32(3, 5)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "dot_dimension_numbers")
	_, err = dotGeneralKernel(nil, op, []Value{f32(2, 3), Token{}})
	require.Error(t, err)
}

func TestDotGeneralRandomDimensionNumbers(t *testing.T) {
	// Random ranks, sizes and placements of batching, contracting and free
	// dimensions on both sides, against the reference.
	rng := rand.New(rand.NewPCG(7, 8))
	for iter := 0; iter < 300; iter++ {
		nb, nc := rng.IntN(3), rng.IntN(3)
		lf, rf := rng.IntN(3), rng.IntN(3)
		size := func() int64 { return int64(rng.IntN(4)) + 1 }
		bSizes, cSizes := make([]int64, nb), make([]int64, nc)
		for i := range bSizes {
			bSizes[i] = size()
		}
		for i := range cSizes {
			cSizes[i] = size()
		}
		// place returns dims for one side and where its batch and
		// contracting dimensions went.
		place := func(free int) ([]int64, []int64, []int64) {
			r := nb + nc + free
			perm := rng.Perm(r)
			dims := make([]int64, r)
			var bd, cd []int64
			for i := 0; i < nb; i++ {
				dims[perm[i]] = bSizes[i]
				bd = append(bd, int64(perm[i]))
			}
			for i := 0; i < nc; i++ {
				dims[perm[nb+i]] = cSizes[i]
				cd = append(cd, int64(perm[nb+i]))
			}
			for i := 0; i < free; i++ {
				dims[perm[nb+nc+i]] = size()
			}
			return dims, bd, cd
		}
		ld, lb, lc := place(lf)
		rd, rb, rc := place(rf)
		dn := stablehlo.DotDimensionNumbers{LhsBatchingDims: lb, RhsBatchingDims: rb, LhsContractingDims: lc, RhsContractingDims: rc}
		dt := []xla.DType{xla.Float32, xla.Int32, xla.Float64}[iter%3]
		n := func(d []int64) int { return int(xla.MakeShape(dt, d...).Size()) }
		lhs := laTensor(dt, ld, laRandInts(rng, n(ld), 5, false))
		rhs := laTensor(dt, rd, laRandInts(rng, n(rd), 5, false))
		want, resDims := refDotGeneral(laValues(lhs), ld, laValues(rhs), rd, dn)
		got, err := dotGeneral(lhs, rhs, dn, xla.MakeShape(dt, resDims...))
		require.NoError(t, err, "%v %v %+v", ld, rd, dn)
		require.Equal(t, laExpected(dt, want), laValues(got), "%v %v %+v", ld, rd, dn)
	}
}

func TestGemmMatchesLoops(t *testing.T) {
	// float32 products go through internal/gemm on several cores; with
	// small integer values every layout must give the plain loops' result
	// exactly.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	rng := rand.New(rand.NewPCG(5, 6))
	cases := []struct{ m, n, k int }{
		{64, 64, 64},  // rows
		{70, 40, 100}, // rows, uneven chunks
		{16, 128, 96}, // columns
		{9, 100, 200}, // columns, m below the chunk minimum
	}
	for _, c := range cases {
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			t.Run(fmt.Sprintf("%dx%dx%d_t%v", c.m, c.n, c.k, tr), func(t *testing.T) {
				a := make([]float32, c.m*c.k)
				b := make([]float32, c.k*c.n)
				for i := range a {
					a[i] = float32(rng.IntN(7) - 3)
				}
				for i := range b {
					b[i] = float32(rng.IntN(7) - 3)
				}
				lda, ldb := c.k, c.n
				if tr[0] {
					lda = c.m
				}
				if tr[1] {
					ldb = c.k
				}
				got := make([]float32, c.m*c.n)
				want := make([]float32, c.m*c.n)
				laGemm(tr[0], tr[1], c.m, c.n, c.k, a, lda, b, ldb, got, c.n, false, nil)
				laGemmLoops(tr[0], tr[1], c.m, c.n, c.k, a, lda, b, ldb, want, c.n, false, nil)
				require.Equal(t, want, got)
			})
		}
	}
}
