package pallas

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
)

// Batched dots: 3-D operands [b,m,k] by [b,k,n], two batch elements a
// program, as f32, bf16 into f32, i8 into i32 (tt.dot), i32 (products and
// sums on Triton), with a transposed operand. dotBatchedCase is part of
// tritonCases (interpret mode against the TTIR evaluator in both program
// orders, mlir-opt, the IR reference evaluator, a real GPU with
// HALO_PLUGIN); TestDotBatched checks it against Go.

// dotBatchedKernel stores, for blocks a[2,16,32] and b[2,32,16]: out 0
// a@b (f32); out 1 a@aᵀ per batch element (DotTransposed); out 2 a@b in
// bf16 into f32; out 3 round(4a)@round(4b) in i8 into i32; out 4 the
// same in i32.
func dotBatchedKernel(k *Kernel, r []*Ref) {
	a, b := r[0].Load(), r[1].Load()
	r[2].Store(Dot(a, b, xla.Float32))
	r[3].Store(DotTransposed(a, a, false, true, xla.Float32))
	r[4].Store(Dot(a.Astype(xla.BFloat16), b.Astype(xla.BFloat16), xla.Float32))
	ai, bi := a.Mul(4).Round().Astype(xla.Int8), b.Mul(4).Round().Astype(xla.Int8)
	r[5].Store(Dot(ai, bi, xla.Int32))
	r[6].Store(Dot(ai.Astype(xla.Int32), bi.Astype(xla.Int32), xla.Int32))
}

func dotBatchedCase() tritonCase {
	block := func(dims ...int64) *BlockSpec {
		return &BlockSpec{BlockShape: dims, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], 0, 0} })}
	}
	out := func(dt xla.DType) xla.Shape { return xla.MakeShape(dt, 4, 16, 16) }
	return tritonCase{
		name:   "dot_batched",
		kernel: dotBatchedKernel,
		spec: CallSpec{
			Name:      "dot_batched",
			OutShapes: []xla.Shape{out(xla.Float32), out(xla.Float32), out(xla.Float32), out(xla.Int32), out(xla.Int32)},
			Grid:      []int64{2},
			InSpecs:   []*BlockSpec{block(2, 16, 32), block(2, 32, 16)},
			OutSpecs:  []*BlockSpec{block(2, 16, 16), block(2, 16, 16), block(2, 16, 16), block(2, 16, 16), block(2, 16, 16)},
		},
		args: []*interpreter.Tensor{
			fTensor([]int64{4, 16, 32}, func(i int) float64 { return math.Sin(float64(i)) }),
			fTensor([]int64{4, 32, 16}, func(i int) float64 { return math.Cos(float64(3 * i)) }),
		},
	}
}

func TestDotBatched(t *testing.T) {
	c := dotBatchedCase()
	a, b := c.args[0].Data.([]float32), c.args[1].Data.([]float32)
	bf := func(x float32) float64 { return float64(interpreter.RoundNarrow64(xla.BFloat16, float64(x))) }
	i8 := func(x float32) float64 { return math.RoundToEven(float64(4 * x)) }
	// want[o][bb][i][j] in float64 (exact for the integer outputs).
	want := make([][]float64, 5)
	for o := range want {
		want[o] = make([]float64, 4*16*16)
	}
	for bb := 0; bb < 4; bb++ {
		for i := 0; i < 16; i++ {
			for j := 0; j < 16; j++ {
				var s [5]float64
				for kk := 0; kk < 32; kk++ {
					x, y := a[bb*512+i*32+kk], b[bb*512+kk*16+j]
					s[0] += float64(x) * float64(y)
					s[1] += float64(x) * float64(a[bb*512+j*32+kk])
					s[2] += bf(x) * bf(y)
					s[3] += i8(x) * i8(y)
				}
				s[4] = s[3]
				for o := range s {
					want[o][bb*256+i*16+j] = s[o]
				}
			}
		}
	}
	checkEveryBackend(t, c, func(backend string, got []*interpreter.Tensor) {
		for o := range want {
			fs, is := scanElems(got[o])
			for j, w := range want[o] {
				if fs != nil {
					require.InDelta(t, w, fs[j], 1e-4*math.Max(1, math.Abs(w)), "%s: output %d element %d", backend, o, j)
				} else {
					require.Equal(t, int64(w), is[j], "%s: output %d element %d", backend, o, j)
				}
			}
		}
	})
}

// The Triton form: one 3-D tt.dot per tensor-core dot, the transposed
// operand through tt.trans of its last two dims.
func TestDotBatchedTTIR(t *testing.T) {
	c := dotBatchedCase()
	p, err := Trace(c.kernel, c.spec, argTypes(c.args))
	require.NoError(t, err)
	k, err := LowerTriton(p, CompilerParams{})
	require.NoError(t, err)
	require.Regexp(t, `"tt.dot"\(%\w+, %\w+, %\w+\) <\{inputPrecision = 2 : i32\}> : \(tensor<2x16x32xf32>, tensor<2x32x16xf32>, tensor<2x16x16xf32>\) -> tensor<2x16x16xf32>`, k.IR)
	require.Regexp(t, `"tt.trans"\(%\w+\) <\{order = array<i32: 0, 2, 1>\}> : \(tensor<2x16x32xf32>\) -> tensor<2x32x16xf32>`, k.IR)
	require.Regexp(t, `"tt.dot"\(%\w+, %\w+, %\w+\) : \(tensor<2x16x32xi8>, tensor<2x32x16xi8>, tensor<2x16x16xi32>\) -> tensor<2x16x16xi32>`, k.IR)
}

func TestDotBatchedMisuse(t *testing.T) {
	spec := CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2, 4, 4)}}
	z := func(k *Kernel, dims ...int64) *Value { return k.Zeros(xla.Float32, dims...) }
	runMisuseCases(t, []misuseCase{
		{name: "ranks differ", kernel: func(k *Kernel, r []*Ref) { Dot(z(k, 2, 4, 4), z(k, 4, 4), xla.Float32) }, spec: spec,
			want: []string{"dot at dot_batched_test.go:", "operands must be both 2-D (matrices) or both of one rank above 2 (batches of them), got f32[2,4,4] and f32[4,4]"}},
		{name: "1-D", kernel: func(k *Kernel, r []*Ref) { Dot(z(k, 4), z(k, 4), xla.Float32) }, spec: spec,
			want: []string{"operands must be both 2-D (matrices) or both of one rank above 2"}},
		{name: "4-D batches differ", kernel: func(k *Kernel, r []*Ref) { Dot(z(k, 2, 2, 4, 4), z(k, 1, 4, 4, 4), xla.Float32) }, spec: spec,
			want: []string{"dot at dot_batched_test.go:", "batch dims differ: f32[2,2,4,4] and f32[1,4,4,4]"}},
		{name: "4-D contracting dims differ", kernel: func(k *Kernel, r []*Ref) { Dot(z(k, 2, 2, 4, 8), z(k, 2, 2, 4, 4), xla.Float32) }, spec: spec,
			want: []string{"dot at dot_batched_test.go:", "contracting dims differ: f32[2,2,4,8] and f32[2,2,4,4]"}},
		{name: "batches differ", kernel: func(k *Kernel, r []*Ref) { Dot(z(k, 2, 4, 4), z(k, 3, 4, 4), xla.Float32) }, spec: spec,
			want: []string{"dot at dot_batched_test.go:", "batch dims differ: f32[2,4,4] and f32[3,4,4]"}},
		{name: "contracting dims differ", kernel: func(k *Kernel, r []*Ref) { Dot(z(k, 2, 4, 8), z(k, 2, 4, 4), xla.Float32) }, spec: spec,
			want: []string{"contracting dims differ: f32[2,4,8] and f32[2,4,4]"}},
	})
}

// TestDotFourD: operands of 4 dims [b,h,m,k] by [b,h,k,n] (attention's
// batch and heads) give a product per (b, h), as jnp.matmul; 5 dims too;
// a transposed operand; on every backend against Go; on Triton one 3-D
// tt.dot over the folded batch.
func TestDotFourD(t *testing.T) {
	const bb, h, m, kk, n = 2, 2, 16, 16, 16
	a := fTensor([]int64{bb, h, m, kk}, func(i int) float64 { return math.Sin(float64(i)) })
	b := fTensor([]int64{bb, h, kk, n}, func(i int) float64 { return math.Cos(float64(5 * i)) })
	c := tritonCase{name: "dot_4d", kernel: func(k *Kernel, r []*Ref) {
		x, y := r[0].Load(), r[1].Load()
		r[2].Store(Dot(x, y, xla.Float32))
		r[3].Store(DotTransposed(x, x, false, true, xla.Float32))
		x5 := x.Reshape(1, bb, h, m, kk)
		r[4].Store(Dot(x5, y.Reshape(1, bb, h, kk, n), xla.Float32).Reshape(bb, h, m, n))
	}, spec: CallSpec{Name: "dot_4d", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, bb, h, m, n),
		xla.MakeShape(xla.Float32, bb, h, m, m), xla.MakeShape(xla.Float32, bb, h, m, n)}},
		args: []*interpreter.Tensor{a, b}}
	av, bv := a.Data.([]float32), b.Data.([]float32)
	want := [2][]float64{make([]float64, bb*h*m*n), make([]float64, bb*h*m*m)}
	for p := 0; p < bb*h; p++ {
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var s, st float64
				for l := 0; l < kk; l++ {
					s += float64(av[p*m*kk+i*kk+l]) * float64(bv[p*kk*n+l*n+j])
					st += float64(av[p*m*kk+i*kk+l]) * float64(av[p*m*kk+j*kk+l])
				}
				want[0][p*m*n+i*n+j], want[1][p*m*m+i*m+j] = s, st
			}
		}
	}
	checkEveryBackend(t, c, func(backend string, got []*interpreter.Tensor) {
		for o, w := range [][]float64{want[0], want[1], want[0]} {
			for j, g := range floats(got[o]) {
				require.InDelta(t, w[j], g, 1e-4*math.Max(1, math.Abs(w[j])), "%s: output %d element %d", backend, o, j)
			}
		}
	})
	p, err := Trace(c.kernel, c.spec, argTypes(c.args))
	require.NoError(t, err)
	k, err := LowerTriton(p, CompilerParams{})
	require.NoError(t, err)
	require.Regexp(t, `"tt.dot"\(%\w+, %\w+, %\w+\) <\{inputPrecision = 2 : i32\}> : \(tensor<4x16x16xf32>, tensor<4x16x16xf32>, tensor<4x16x16xf32>\) -> tensor<4x16x16xf32>`, k.IR)
}
