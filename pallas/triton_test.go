package pallas

import (
	"bytes"
	"context"
	"flag"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/mliropt"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

var updateTriton = flag.Bool("update-triton", false, "rewrite pallas/testdata/triton goldens")

// tritonCase is a kernel with its call and inputs, run through the Triton
// lowering and (for comparison) interpret mode.
type tritonCase struct {
	name   string
	kernel KernelFunc
	spec   CallSpec
	args   []*interpreter.Tensor
	golden bool // keep the TTIR as testdata/triton/<name>.ttir
}

// module is main(args...) = the case's call with the given backend.
func (c tritonCase) module(t *testing.T, backend Backend) *stablehlo.Module {
	t.Helper()
	b := stablehlo.NewBuilder("m")
	types := make([]stablehlo.Type, len(c.args))
	for i, a := range c.args {
		types[i] = stablehlo.TensorOf(a.Shape)
	}
	fb := b.NewFunction("main", types...)
	spec := c.spec
	spec.Backend = backend
	fb.Return(Call(fb, c.kernel, spec, fb.Args()...)...)
	m, err := b.Build()
	require.NoError(t, err)
	return m
}

func blockMap(f func(g []*Value) []any) IndexMapFunc {
	return func(g []*Value, _ []*Ref) []any { return f(g) }
}

func fTensor(dims []int64, f func(i int) float64) *interpreter.Tensor {
	x := interpreter.NewTensor(xla.MakeShape(xla.Float32, dims...))
	d := x.Data.([]float32)
	for i := range d {
		d[i] = float32(f(i))
	}
	return x
}

func iTensor(dims []int64, vals ...int32) *interpreter.Tensor {
	x := interpreter.NewTensor(xla.MakeShape(xla.Int32, dims...))
	copy(x.Data.([]int32), vals)
	return x
}

// gelu is the tanh approximation, a fused activation for the matmul.
func gelu(x *Value) *Value {
	inner := x.Add(x.Mul(x).Mul(x).Mul(0.044715)).Mul(math.Sqrt(2 / math.Pi))
	return x.Mul(0.5).Mul(inner.Tanh().Add(1))
}

// matmulKernel is seed 000's templated matmul: x block [bm, K], y block
// [K, bn], a ForLoop over K in steps of bk with an f32 accumulator, and a
// fused activation.
func matmulKernel(bm, bn, bk, nk int64, act func(*Value) *Value) KernelFunc {
	return func(k *Kernel, refs []*Ref) {
		x, y, o := refs[0], refs[1], refs[2]
		acc := k.Zeros(xla.Float32, bm, bn)
		out := k.ForLoop(0, nk, []*Value{acc}, func(i *Value, c []*Value) []*Value {
			a := x.Load(All, DS(i.Mul(bk), bk))
			b := y.Load(DS(i.Mul(bk), bk), All)
			return []*Value{c[0].Add(Dot(a, b, xla.Float32))}
		})
		o.Store(act(out[0]))
	}
}

func tritonCases() []tritonCase {
	const M, N, K, bm, bn, bk = 32, 32, 64, 16, 16, 16
	cases := []tritonCase{
		{
			name: "vector_add", golden: true,
			kernel: func(k *Kernel, refs []*Ref) { refs[2].Store(refs[0].Load().Add(refs[1].Load())) },
			spec: CallSpec{
				Name:      "vector_add",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)},
				Grid:      []int64{4},
				InSpecs: []*BlockSpec{
					{BlockShape: []int64{2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })},
					{BlockShape: []int64{2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })},
				},
				OutSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}},
			},
			args: []*interpreter.Tensor{
				fTensor([]int64{8}, func(i int) float64 { return float64(i) }),
				fTensor([]int64{8}, func(i int) float64 { return float64(10 * i) }),
			},
		},
		{
			name: "matmul_gelu", golden: true,
			kernel: matmulKernel(bm, bn, bk, K/bk, gelu),
			spec: CallSpec{
				Name:      "matmul_gelu",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, M, N)},
				Grid:      []int64{M / bm, N / bn},
				InSpecs: []*BlockSpec{
					{BlockShape: []int64{bm, K}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], 0} })},
					{BlockShape: []int64{K, bn}, IndexMap: blockMap(func(g []*Value) []any { return []any{0, g[1]} })},
				},
				OutSpecs: []*BlockSpec{{BlockShape: []int64{bm, bn}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], g[1]} })}},
			},
			args: []*interpreter.Tensor{
				fTensor([]int64{M, K}, func(i int) float64 { return math.Sin(float64(i)) / 4 }),
				fTensor([]int64{K, N}, func(i int) float64 { return math.Cos(float64(3*i)) / 4 }),
			},
		},
		{
			// Seed 000's masked load (other = -inf) through an index array,
			// and a masked store.
			name: "masked_gather", golden: true,
			kernel: func(k *Kernel, refs []*Ref) {
				idx := k.Arange(8)
				mask := idx.Lt(5)
				x := Load(refs[0], []any{idx}, mask, math.Inf(-1))
				Store(refs[2], []any{idx}, x.Max(0), nil)
				Store(refs[3], []any{idx}, x.Mul(2), mask)
			},
			spec: CallSpec{
				Name:               "masked_gather",
				OutShapes:          []xla.Shape{xla.MakeShape(xla.Float32, 8), xla.MakeShape(xla.Float32, 8)},
				InputOutputAliases: map[int]int{1: 1},
			},
			args: []*interpreter.Tensor{
				fTensor([]int64{8}, func(i int) float64 { return float64(i) - 2 }),
				fTensor([]int64{8}, func(i int) float64 { return 100 }),
			},
		},
		{
			// Blocks of 4 over 10 elements: the last block is padded and
			// its loads and stores are masked.
			name: "padded_edges", golden: true,
			kernel: func(k *Kernel, refs []*Ref) {
				refs[1].Store(refs[0].Load().Mul(2).Add(k.ProgramID(0).Astype(xla.Float32)))
			},
			spec: CallSpec{
				Name:      "padded_edges",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 3, 10)},
				Grid:      []int64{3, 3},
				InSpecs:   []*BlockSpec{{BlockShape: []int64{Squeezed, 4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], g[1]} })}},
				OutSpecs:  []*BlockSpec{{BlockShape: []int64{Squeezed, 4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], g[1]} })}},
			},
			args: []*interpreter.Tensor{fTensor([]int64{3, 10}, func(i int) float64 { return float64(i) })},
		},
		{
			// Seed 001's block-aligned dynamic slice: the prefetched block
			// indices pick the input rows each program copies.
			name: "prefetch_rows", golden: true,
			kernel: func(k *Kernel, refs []*Ref) {
				refs[2].Store(refs[1].Load().Add(refs[0].Load(k.ProgramID(0)).Astype(xla.Float32)))
			},
			spec: CallSpec{
				Name:              "prefetch_rows",
				NumScalarPrefetch: 1,
				OutShapes:         []xla.Shape{xla.MakeShape(xla.Float32, 8, 8)},
				Grid:              []int64{2},
				InSpecs: []*BlockSpec{{BlockShape: []int64{4, 8}, IndexMap: func(g []*Value, pf []*Ref) []any {
					return []any{pf[0].Load(g[0]), 0}
				}}},
				OutSpecs: []*BlockSpec{{BlockShape: []int64{4, 8}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], 0} })}},
			},
			args: []*interpreter.Tensor{
				iTensor([]int64{2}, 3, 1),
				fTensor([]int64{16, 8}, func(i int) float64 { return float64(i) }),
			},
		},
		{
			name: "when_while", golden: true,
			kernel: func(k *Kernel, refs []*Ref) {
				x, o := refs[0], refs[1]
				i := k.ProgramID(0)
				v := x.Load()
				k.When(i.Eq(0), func() { o.Store(v.Add(100)) })
				k.When(i.Ne(0), func() {
					res := k.While([]*Value{v, k.Const(xla.Int32, 0)},
						func(c []*Value) *Value { return c[0].Sum().Lt(1000) },
						func(c []*Value) []*Value { return []*Value{c[0].Mul(2), c[1].Add(1)} })
					o.Store(res[0].Add(res[1].Astype(xla.Float32)))
				})
			},
			spec: CallSpec{
				Name:      "when_while",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2, 4)},
				Grid:      []int64{2},
				InSpecs:   []*BlockSpec{{BlockShape: []int64{Squeezed, 4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], 0} })}},
				OutSpecs:  []*BlockSpec{{BlockShape: []int64{Squeezed, 4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], 0} })}},
			},
			args: []*interpreter.Tensor{fTensor([]int64{2, 4}, func(i int) float64 { return float64(i + 1) })},
		},
		{
			// Row softmax: reductions, reshape, broadcasting, exp, div.
			name: "softmax",
			kernel: func(k *Kernel, refs []*Ref) {
				x := refs[0].Load()
				m := x.ReduceMax(1).Reshape(4, 1)
				e := x.Sub(m).Exp()
				refs[1].Store(e.Div(e.Sum(1).Reshape(4, 1)))
			},
			spec: CallSpec{
				Name:      "softmax",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8, 8)},
				Grid:      []int64{2},
				InSpecs:   []*BlockSpec{{BlockShape: []int64{4, 8}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], 0} })}},
				OutSpecs:  []*BlockSpec{{BlockShape: []int64{4, 8}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], 0} })}},
			},
			args: []*interpreter.Tensor{fTensor([]int64{8, 8}, func(i int) float64 { return math.Sin(float64(i)) * 3 })},
		},
		{
			// A 4-D grid: the leading axes fold into x, recovered by div/rem.
			name: "grid4d",
			kernel: func(k *Kernel, refs []*Ref) {
				lin := k.ProgramID(0).Mul(3).Add(k.ProgramID(1)).Mul(2).Add(k.ProgramID(2)).Mul(2).Add(k.ProgramID(3))
				v := k.Iota(xla.Float32, 0, 2).Add(lin.Astype(xla.Float32).Mul(10))
				refs[1].Store(v.Add(refs[0].Load().Sum()))
			},
			spec: CallSpec{
				Name:      "grid4d",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2, 3, 2, 4)},
				Grid:      []int64{2, 3, 2, 2},
				OutSpecs: []*BlockSpec{{BlockShape: []int64{Squeezed, Squeezed, Squeezed, 2},
					IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], g[1], g[2], g[3]} })}},
			},
			args: []*interpreter.Tensor{fTensor([]int64{4}, func(i int) float64 { return float64(i) })},
		},
		{
			// Edge blocks of 4 over 10 elements read their padding as NaN on
			// both backends: the block sum of the last block is NaN; a
			// masked load gives other where the mask is off, NaN where it
			// is on over the padding.
			name: "padded_reads",
			kernel: func(k *Kernel, refs []*Ref) {
				x := refs[0].Load()
				on := k.Iota(xla.Int32, 0, 4).Lt(3)
				m := Load(refs[0], []any{Slice(0, 4)}, on, -1.0)
				refs[1].Store(x.Add(x.Sum()))
				refs[2].Store(m)
			},
			spec: CallSpec{
				Name:      "padded_reads",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 10), xla.MakeShape(xla.Float32, 10)},
				Grid:      []int64{3},
				InSpecs:   []*BlockSpec{{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}},
				OutSpecs: []*BlockSpec{{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })},
					{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}},
			},
			args: []*interpreter.Tensor{fTensor([]int64{10}, func(i int) float64 { return float64(i) })},
		},
		{
			// The unary math functions and pow (see TestKernelMathMatchesGo).
			name:   "math",
			kernel: mathKernel,
			spec: CallSpec{
				Name:      "math",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, int64(len(mathFuncs)), 8)},
				Grid:      []int64{int64(len(mathFuncs))},
				InSpecs:   []*BlockSpec{{BlockShape: []int64{8}, IndexMap: blockMap(func(g []*Value) []any { return []any{0} })}},
				OutSpecs:  []*BlockSpec{{BlockShape: []int64{Squeezed, 8}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], 0} })}},
			},
			args: []*interpreter.Tensor{mathInput()},
		},
		{
			// Two prefetch arrays: one picks the block row, the other the
			// block column, of the block each program copies.
			name: "two_prefetch",
			kernel: func(k *Kernel, refs []*Ref) {
				refs[3].Store(refs[2].Load().Add(refs[1].Load(k.ProgramID(0)).Astype(xla.Float32).Mul(1000)))
			},
			spec: CallSpec{
				Name:              "two_prefetch",
				NumScalarPrefetch: 2,
				OutShapes:         []xla.Shape{xla.MakeShape(xla.Float32, 3, 4, 4)},
				Grid:              []int64{3},
				InSpecs: []*BlockSpec{{BlockShape: []int64{4, 4}, IndexMap: func(g []*Value, pf []*Ref) []any {
					return []any{pf[0].Load(g[0]), pf[1].Load(g[0])}
				}}},
				OutSpecs: []*BlockSpec{{BlockShape: []int64{Squeezed, 4, 4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], 0, 0} })}},
			},
			args: []*interpreter.Tensor{
				iTensor([]int64{3}, 1, 0, 1),
				iTensor([]int64{3}, 0, 1, 1),
				fTensor([]int64{8, 8}, func(i int) float64 { return float64(i) }),
			},
		},
		{
			// A GPU-style block-sparse product: each program loops over the
			// blocks of its block row (bounds from prefetched row pointers),
			// loads a block by a dynamic index and a window of y by dynamic
			// slices of whole-array refs; a row without blocks takes the
			// other When.
			name: "row_loop",
			kernel: func(k *Kernel, refs []*Ref) {
				rowPtr, colIdx, blocks, y, o := refs[0], refs[1], refs[2], refs[3], refs[4]
				i, j := k.ProgramID(0), k.ProgramID(1)
				lo, hi := rowPtr.Load(i), rowPtr.Load(i.Add(1))
				k.When(hi.Gt(lo), func() {
					acc := k.ForLoop(lo, hi, []*Value{k.Zeros(xla.Float32, 4, 4)}, func(b *Value, c []*Value) []*Value {
						yb := y.Load(DS(colIdx.Load(b).Mul(4), 4), DS(j.Mul(4), 4))
						return []*Value{c[0].Add(Dot(blocks.Load(b, All, All), yb, xla.Float32))}
					})
					o.Store(acc[0])
				})
				k.When(hi.Le(lo), func() { o.Store(-1.0) })
			},
			spec: CallSpec{
				Name:              "row_loop",
				NumScalarPrefetch: 2,
				OutShapes:         []xla.Shape{xla.MakeShape(xla.Float32, 12, 8)},
				Grid:              []int64{3, 2},
				OutSpecs:          []*BlockSpec{{BlockShape: []int64{4, 4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], g[1]} })}},
			},
			args: []*interpreter.Tensor{
				iTensor([]int64{4}, 0, 2, 2, 3),
				iTensor([]int64{3}, 0, 1, 1),
				fTensor([]int64{3, 4, 4}, func(i int) float64 { return math.Cos(float64(i)) }),
				fTensor([]int64{8, 8}, func(i int) float64 { return float64(i%9) - 4 }),
			},
		},
		{
			// NumPy's rule for advanced indices apart: x[1, :, arr] puts
			// arr's dim first.
			name: "advanced_apart",
			kernel: func(k *Kernel, refs []*Ref) {
				arr := k.Arange(4).Mul(3).Rem(4) // [0 3 2 1]
				refs[1].Store(refs[0].Load(1, All, arr).Mul(2))
			},
			spec: CallSpec{
				Name:      "advanced_apart",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4, 2)},
			},
			args: []*interpreter.Tensor{fTensor([]int64{2, 2, 4}, func(i int) float64 { return float64(i) })},
		},
		{
			// Integer and bool refs, casts, transposed dot operands.
			name: "ints_bools",
			kernel: func(k *Kernel, refs []*Ref) {
				a := refs[0].Load() // i32 [4,4]
				flags := refs[1].Load()
				f := a.Astype(xla.Float32)
				d := DotTransposed(f, f, true, false, xla.Float32) // a^T a
				refs[2].Store(Where(flags, d.Astype(xla.Int32), a.Rem(3).Neg()))
				refs[3].Store(a.Gt(4).Xor(flags))
			},
			spec: CallSpec{
				Name:      "ints_bools",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 4, 4), xla.MakeShape(xla.Bool, 4, 4)},
			},
			args: []*interpreter.Tensor{
				iTensor([]int64{4, 4}, 1, -2, 3, 4, 5, 6, -7, 8, 9, 10, 11, 12, 13, -14, 15, 16),
				func() *interpreter.Tensor {
					x := interpreter.NewTensor(xla.MakeShape(xla.Bool, 4, 4))
					for i := range x.Data.([]bool) {
						x.Data.([]bool)[i] = i%3 == 0
					}
					return x
				}(),
			},
		},
		{
			// Float to integer conversions saturate (NaN gives 0) on both
			// backends: values at and past 2^31 are not handed to fptosi,
			// which would make poison of them.
			name: "float_to_int_saturates",
			kernel: func(k *Kernel, refs []*Ref) {
				x := refs[0].Load()
				refs[1].Store(x.Astype(xla.Int32))
				refs[2].Store(x.Astype(xla.Uint8).Astype(xla.Int32))
				refs[3].Store(x.Astype(xla.Int8).Astype(xla.Int32))
			},
			spec: CallSpec{
				Name: "float_to_int",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 16), xla.MakeShape(xla.Int32, 16),
					xla.MakeShape(xla.Int32, 16)},
			},
			args: []*interpreter.Tensor{fTensor([]int64{16}, func(i int) float64 {
				return []float64{3e9, math.Inf(1), math.Inf(-1), math.NaN(), -3e9, 1.5, -2.7, 300,
					2147483520, 2147483648, -2147483648, 127.9, -128.5, 255.5, 256, -0.5}[i]
			})},
		},
		{
			// Max and min propagate NaN past an infinity (found by
			// TestTritonRandomKernels: the evaluator took Go's math.Min,
			// whose Min(NaN, -Inf) is -Inf, for arith.minimumf), also as
			// reductions, and order -0 below +0.
			name: "nan_min_max",
			kernel: func(k *Kernel, refs []*Ref) {
				x, y := refs[0].Load(), refs[1].Load()
				refs[2].Store(x.Max(y))
				refs[3].Store(x.Min(y))
				refs[4].Store(x.Reshape(2, 4).ReduceMin(1))
				refs[5].Store(x.Reshape(2, 4).ReduceMax(1))
				refs[6].Store(Dot(x.Reshape(8, 1).BroadcastTo(8, 16).Min(0.0), k.Full(xla.Float32, 1.0, 16, 16), xla.Float32).Min(-1.0).ReduceMax())
			},
			spec: CallSpec{
				Name: "nan_min_max",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8), xla.MakeShape(xla.Float32, 8), xla.MakeShape(xla.Float32, 2),
					xla.MakeShape(xla.Float32, 2), xla.MakeShape(xla.Float32)},
			},
			args: []*interpreter.Tensor{
				fTensor([]int64{8}, func(i int) float64 {
					return []float64{math.NaN(), math.NaN(), 1, math.Inf(-1), math.Copysign(0, -1), 0, math.NaN(), 2}[i]
				}),
				fTensor([]int64{8}, func(i int) float64 {
					return []float64{math.Inf(-1), math.Inf(1), math.NaN(), math.NaN(), 0, math.Copysign(0, -1), 3, -1}[i]
				}),
			},
		},
		{
			// Loads from an output's edge block read its padding as NaN
			// (the minimum integer) on both backends, whatever the kernel
			// stored there: a GPU keeps nothing past the array (found by
			// TestTritonRandomKernels's design; interpret mode read back
			// the stored values).
			name: "output_padding_reads",
			kernel: func(k *Kernel, refs []*Ref) {
				o, oi := refs[1], refs[3]
				o.Store(k.Iota(xla.Float32, 0, 4).Add(1))
				oi.Store(k.Iota(xla.Int32, 0, 4))
				refs[2].Store(o.Load().Sum().BroadcastTo(4))
				refs[4].Store(Load(oi, []any{k.Arange(4)}, nil, nil).Add(oi.Load(DS(k.ProgramID(0).Rem(2), 2)).ReduceMin()))
				refs[5].Store(Load(o, []any{k.Arange(4)}, k.Arange(4).Lt(3), -1.0).Add(refs[0].Load()))
			},
			spec: CallSpec{
				Name: "output_padding_reads",
				Grid: []int64{3},
				InSpecs: []*BlockSpec{
					{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })},
				},
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 10), xla.MakeShape(xla.Float32, 10),
					xla.MakeShape(xla.Int32, 9), xla.MakeShape(xla.Int32, 12), xla.MakeShape(xla.Float32, 10)},
				OutSpecs: []*BlockSpec{
					{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })},
					{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })},
					{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })},
					{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })},
					{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })},
				},
			},
			args: []*interpreter.Tensor{fTensor([]int64{10}, func(i int) float64 { return float64(i) })},
		},
		{
			// A While whose condition loads an output the body's barriers
			// do not cover at the loop's exit: the store after the loop
			// waits at a barrier (the condition runs last).
			name: "while_condition_load",
			kernel: func(k *Kernel, refs []*Ref) {
				x, o, b := refs[0], refs[1], refs[2]
				o.Store(x.Load())
				b.Store(x.Load())
				_ = b.Load()
				res := k.While([]*Value{k.Const(xla.Int32, 0)},
					func(c []*Value) *Value { return c[0].Lt(3).And(o.Load(0).Gt(-1000)) },
					func(c []*Value) []*Value { b.Store(b.Load().Add(1)); return []*Value{c[0].Add(1)} })
				o.Store(x.Load().Add(res[0].Astype(xla.Float32)))
			},
			spec: CallSpec{
				Name:      "while_condition_load",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8), xla.MakeShape(xla.Float32, 8)},
			},
			args: []*interpreter.Tensor{fTensor([]int64{8}, func(i int) float64 { return float64(i) })},
		},
		{
			// Loads of what the program stored, through other views (a
			// scalar, which one thread stores and all load; a transposed
			// block; an output aliased to an input, its memory), and
			// stores after loads: on a GPU each waits at a gpu.barrier
			// for the other threads (the evaluator fails without one).
			name: "store_then_load",
			kernel: func(k *Kernel, refs []*Ref) {
				x, io, s, b, acc, o := refs[0], refs[1], refs[2], refs[3], refs[4], refs[5]
				s.Store(x.Load(0).Sum(), 0)
				b.Store(s.Load(0).BroadcastTo(8, 8).Add(x.Load()))
				b.Store(b.Load().T())
				acc.Store(k.Zeros(xla.Float32, 8, 8))
				k.ForLoop(0, 3, nil, func(i *Value, _ []*Value) []*Value {
					acc.Store(acc.Load().Add(b.Load(DS(i, 2), All).Sum().BroadcastTo(8, 8)))
					return nil
				})
				v := io.Load() // read before the output it shares memory with is written
				o.Store(v.Mul(2))
				o.Store(o.Load().Add(v))
			},
			spec: CallSpec{
				Name: "store_then_load",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 1), xla.MakeShape(xla.Float32, 8, 8),
					xla.MakeShape(xla.Float32, 8, 8), xla.MakeShape(xla.Float32, 8)},
				InputOutputAliases: map[int]int{1: 3},
			},
			args: []*interpreter.Tensor{
				fTensor([]int64{8, 8}, func(i int) float64 { return float64(i%13) - 6 }),
				fTensor([]int64{8}, func(i int) float64 { return float64(i) + 0.5 }),
			},
		},
		{
			// Several output blocks per program in one loop (the DSD's
			// many-tile form): a dot per K part, each block stored under
			// a When after its last part, the accumulator restarted by a
			// Where on a scalar; a whole-array output.
			name: "tiles_loop",
			kernel: func(k *Kernel, refs []*Ref) {
				a, y, o := refs[0], refs[1], refs[2]
				g := k.ProgramID(0)
				const tiles, parts, step, bn = 2, 2, 8, 16
				zeros := k.Zeros(xla.Float32, 16, bn)
				k.ForLoop(0, tiles*parts, []*Value{zeros}, func(t *Value, c []*Value) []*Value {
					h := t.Rem(parts).Mul(step)
					cols := DS(g.Mul(tiles).Add(t.Div(parts)).Mul(bn), bn)
					acc := c[0].Add(Dot(a.Load(All, DS(h, step)), y.Load(DS(h, step), cols), xla.Float32))
					last := t.Rem(parts).Eq(parts - 1)
					k.When(last, func() { o.Store(acc, All, cols) })
					return []*Value{Where(last, zeros, acc)}
				})
			},
			spec: CallSpec{
				Name:      "tiles_loop",
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 16, 64)},
				Grid:      []int64{2},
			},
			args: []*interpreter.Tensor{
				fTensor([]int64{16, 16}, func(i int) float64 { return float64(i%7) - 3 }),
				fTensor([]int64{16, 64}, func(i int) float64 { return float64(i%11)/4 - 1 }),
			},
		},
	}
	cases = append(cases, tritonCase{
		// Masked slices longer than their dim (the semantics case of the
		// same name), so that a GPU runs them too.
		name: "masked_longer_slices",
		kernel: func(k *Kernel, r []*Ref) {
			start := k.ProgramID(0).Sub(1)
			at := k.Arange(8).Add(start)
			in := at.Ge(0).And(at.Lt(4))
			a := Load(r[0], []any{DS(start, 8)}, in, 7.0)
			b := Load(r[0], []any{Slice(0, 8)}, k.Arange(8).Lt(4), -1.0)
			r[1].Store(a.Add(b))
			Store(r[2], []any{DS(start, 8)}, a.Mul(10), in)
		},
		spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8), xla.MakeShape(xla.Float32, 4)}, Grid: []int64{1}},
		args: []*interpreter.Tensor{fTensor([]int64{4}, func(i int) float64 { return float64(i + 1) })},
	})
	cases = append(cases, dsdTilesCase(false), dsdTilesCase(true))
	cases = append(cases, atomicCases()...)
	cases = append(cases, mathCases()...)
	cases = append(cases, moreMathCase())
	cases = append(cases, scanCases()...)
	cases = append(cases, condCases()...)
	cases = append(cases, concatCases()...)
	cases = append(cases, dotBatchedCase(), splitCase(), sliceAxisCase(), gatherCase(), assocScanCase())
	cases = append(cases, topKCases()...)
	cases = append(cases, bitcastWidthCases()...)
	cases = append(cases, einsumCase())
	cases = append(cases, attentionCase(false), attentionCase(true))
	return append(cases, tritonDTypeCases()...)
}

// dsdTilesCase is the DSD's many-tile form (examples/pallas_dsd
// dsdTilesKernel): trip counts from prefetched row pointers, Div/Rem by
// them, K in two parts per block, a block row without blocks (its zeros
// stored in a loop), two programs per block row of the sparse matrix (8
// of its 16 rows each). With heavyFirst (DSDTiling.HeavyRowsFirst) the
// programs run in order of decreasing work: grid axis 0 is a position in
// that order, the row from a third prefetch array.
func dsdTilesCase(heavyFirst bool) tritonCase {
	name, grid, prefetch := "dsd_tiles", []int64{6, 2}, 2
	args := []*interpreter.Tensor{
		iTensor([]int64{4}, 0, 2, 2, 3), // block row 1 has no blocks
		iTensor([]int64{4}, 1, 0, 1, 0),
	}
	if heavyFirst {
		name, prefetch = "dsd_heavy_first", 3
		args = append(args, iTensor([]int64{6}, 0, 1, 4, 5, 2, 3)) // block rows 0, 2, 1 (2, 1, 0 blocks)
	}
	args = append(args,
		fTensor([]int64{3, 16, 16}, func(i int) float64 { return float64(i%9) - 4 }),
		fTensor([]int64{32, 64}, func(i int) float64 { return float64(i%13)/4 - 1.5 }))
	return tritonCase{
		name: name,
		kernel: func(k *Kernel, refs []*Ref) {
			rowPtr, colIdx := refs[0], refs[1]
			const sbm, bm, bk, bn, step, tiles = 16, 8, 16, 16, 8, 2
			i, g := k.ProgramID(0), k.ProgramID(1)
			if heavyFirst {
				i = refs[2].Load(i)
				refs = refs[1:]
			}
			blocks, y, o := refs[2], refs[3], refs[4]
			row, xRows := i.Div(sbm/bm), DS(i.Rem(sbm/bm).Mul(bm), bm)
			lo, hi := rowPtr.Load(row), rowPtr.Load(row.Add(1))
			per := hi.Sub(lo).Mul(bk / step)
			zeros := k.Zeros(xla.Float32, bm, bn)
			rows := DS(i.Mul(bm), bm)
			k.When(per.Eq(0), func() {
				k.ForLoop(0, tiles, nil, func(t *Value, _ []*Value) []*Value {
					o.Store(0.0, rows, DS(g.Mul(tiles).Add(t).Mul(bn), bn))
					return nil
				})
			})
			k.ForLoop(0, per.Mul(tiles), []*Value{zeros}, func(t *Value, c []*Value) []*Value {
				r := t.Rem(per)
				b := lo.Add(r.Div(bk / step))
				h := r.Rem(bk / step).Mul(step)
				cols := DS(g.Mul(tiles).Add(t.Div(per)).Mul(bn), bn)
				acc := c[0].Add(Dot(blocks.Load(b, xRows, DS(h, step)), y.Load(DS(colIdx.Load(b).Mul(bk).Add(h), step), cols), xla.Float32))
				last := r.Eq(per.Sub(1))
				k.When(last, func() { o.Store(acc, rows, cols) })
				return []*Value{Where(last, zeros, acc)}
			})
		},
		spec: CallSpec{
			Name:              name,
			OutShapes:         []xla.Shape{xla.MakeShape(xla.Float32, 48, 64)},
			Grid:              grid,
			NumScalarPrefetch: prefetch,
		},
		args: args,
	}
}

// vmappedMatmul is the matmul batched by Vmap over 3 pairs of operands
// (a new leading grid axis; a 3-D grid).
func vmappedMatmul() tritonCase {
	c := tritonCases()[1]
	k, spec, err := Vmap(c.kernel, c.spec, 3, []bool{true, true})
	if err != nil {
		panic(err)
	}
	spec.Name = "vmapped_matmul"
	x, y := c.args[0], c.args[1]
	bx := fTensor(append([]int64{3}, x.Shape.Dims...), func(i int) float64 { return math.Sin(float64(i)) / 4 })
	by := fTensor(append([]int64{3}, y.Shape.Dims...), func(i int) float64 { return math.Cos(float64(7*i)) / 4 })
	return tritonCase{name: "vmapped_matmul", kernel: k, spec: spec, args: []*interpreter.Tensor{bx, by}}
}

// vmappedRowLoop is row_loop batched by Vmap over 2 block-sparse
// matrices, each with its own row pointers and block columns (batched
// scalar prefetch), against one dense y.
func vmappedRowLoop() tritonCase {
	var c tritonCase
	for _, tc := range tritonCases() {
		if tc.name == "row_loop" {
			c = tc
		}
	}
	k, spec, err := Vmap(c.kernel, c.spec, 2, []bool{true, true, true, false})
	if err != nil {
		panic(err)
	}
	spec.Name = "vmapped_row_loop"
	rowPtr := iTensor([]int64{2, 4}, 0, 2, 2, 3, 0, 0, 1, 3)
	colIdx := iTensor([]int64{2, 3}, 0, 1, 1, 1, 0, 1)
	blocks := fTensor([]int64{2, 3, 4, 4}, func(i int) float64 { return math.Sin(float64(i)) })
	return tritonCase{name: "vmapped_row_loop", kernel: k, spec: spec, args: []*interpreter.Tensor{rowPtr, colIdx, blocks, c.args[3]}}
}

// vmappedCases are the kernels batched by Vmap that the Triton tests run
// besides tritonCases.
func vmappedCases() []tritonCase { return []tritonCase{vmappedMatmul(), vmappedRowLoop()} }

func argTypes(args []*interpreter.Tensor) []stablehlo.TensorType {
	ts := make([]stablehlo.TensorType, len(args))
	for i, a := range args {
		ts[i] = stablehlo.TensorOf(a.Shape)
	}
	return ts
}

// toBuf is newTevBuf, failing t on an error.
func toBuf(t *testing.T, x *interpreter.Tensor, elem string) *tevBuf {
	b, err := newTevBuf(x, elem)
	require.NoError(t, err)
	return b
}

// fromBuf is tevTensor, failing t on an error.
func fromBuf(t *testing.T, b *tevBuf, shape xla.Shape) *interpreter.Tensor {
	x, err := tevTensor(b, shape)
	require.NoError(t, err)
	return x
}

// runTritonEval lowers c with the Triton backend and runs the TTIR on the
// reference evaluator; outputs start as NaN / -1 (or their aliased input).
// The programs run in row-major order and again in reverse, which must
// give the same outputs to the bit (a GPU runs them in any order).
func runTritonEval(t *testing.T, c tritonCase) []*interpreter.Tensor {
	t.Helper()
	checkErr, outs, back := tevOrders(t, c)
	require.NoError(t, checkErr)
	for i := range outs {
		require.True(t, sameBits(outs[i], back[i]), "output %d depends on the order the programs run in:\nrow-major %v\nreversed  %v",
			i, outs[i].Data, back[i].Data)
	}
	return outs
}

// assertTritonMatchesInterpret runs case c in interpret mode and as TTIR
// on the evaluator (in both program orders, runTritonEval) and compares
// every output.
func assertTritonMatchesInterpret(t *testing.T, c tritonCase) {
	t.Helper()
	want, err := runCall(c.kernel, c.spec, c.args...)
	require.NoError(t, err)
	got := runTritonEval(t, c)
	require.Len(t, got, len(want))
	for i := range want {
		assertClose(t, want[i], got[i])
	}
}

// tevOrders traces c, runs the race check (its error: checkErr) and runs
// the TTIR on the evaluator with the programs in row-major order (outs)
// and reversed (back; outs again for a single program).
func tevOrders(t *testing.T, c tritonCase) (checkErr error, outs, back []*interpreter.Tensor) {
	t.Helper()
	p, err := Trace(c.kernel, c.spec, argTypes(c.args))
	require.NoError(t, err)
	checkErr = checkParallelPrograms(p)
	f, grid, err := lowerTritonFunc(p)
	require.NoError(t, err)
	outs, err = evalTritonRun(context.Background(), p, f, grid, c.args, false, nil)
	require.NoError(t, err)
	back = outs
	if grid[0]*grid[1]*grid[2] > 1 {
		back, err = evalTritonRun(context.Background(), p, f, grid, c.args, true, nil)
		require.NoError(t, err)
	}
	return checkErr, outs, back
}

// sameBits is sameTensorBits.
func sameBits(a, b *interpreter.Tensor) bool { return sameTensorBits(a, b) }

func assertClose(t *testing.T, want, got *interpreter.Tensor) {
	t.Helper()
	assertCloseTol(t, want, got, 1e-5)
}

// assertCloseTol compares floats to rel (relative, absolute below 1; f16
// and bf16 too, as the float32 values they are kept as), f64 to rel·1e-7
// (about the same margin over its precision), and everything else
// exactly. NaN matches NaN.
func assertCloseTol(t *testing.T, want, got *interpreter.Tensor, rel float64) {
	t.Helper()
	require.Equal(t, want.Shape, got.Shape)
	switch w := want.Data.(type) {
	case []float32:
		g := got.Data.([]float32)
		for i := range w {
			tol := rel * math.Max(1, math.Abs(float64(w[i])))
			if math.IsInf(float64(w[i]), 0) {
				tol = 0 // an infinite tolerance would take any value
			}
			require.InDelta(t, w[i], g[i], tol, "element %d: want %v got %v", i, w[i], g[i])
		}
	case []float64:
		g := got.Data.([]float64)
		for i := range w {
			tol := rel * 1e-7 * math.Max(1, math.Abs(w[i]))
			if math.IsInf(w[i], 0) {
				tol = 0
			}
			require.InDelta(t, w[i], g[i], tol, "element %d: want %v got %v", i, w[i], g[i])
		}
	default:
		require.Equal(t, want.Data, got.Data)
	}
}

// TestTritonMatchesInterpret runs each kernel's TTIR on the reference
// evaluator and compares with interpret mode on the interpreter.
func TestTritonMatchesInterpret(t *testing.T) {
	for _, c := range append(tritonCases(), vmappedCases()...) {
		t.Run(c.name, func(t *testing.T) {
			assertTritonMatchesInterpret(t, c)
		})
	}
}

// TestTritonGolden compares the TTIR with testdata/triton/<case>.ttir
// (go test -run TestTritonGolden -update-triton rewrites them).
func TestTritonGolden(t *testing.T) {
	for _, c := range tritonCases() {
		if !c.golden {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			p, err := Trace(c.kernel, c.spec, argTypes(c.args))
			require.NoError(t, err)
			k, err := LowerTriton(p, c.spec.CompilerParams)
			require.NoError(t, err)
			path := filepath.Join("testdata", "triton", c.name+".ttir")
			if *updateTriton {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte(k.IR), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "missing golden: run with -update-triton")
			require.Equal(t, string(want), k.IR)
		})
	}
}

// TestTritonMLIROpt parses and verifies every kernel's TTIR with mlir-opt
// (tt ops unregistered, arith/math/scf verified), and checks that it
// rejects a broken module (so the check can fail).
func TestTritonMLIROpt(t *testing.T) {
	opt := mliropt.Path()
	if opt == "" {
		t.Skip(mliropt.Missing)
	}
	run := func(text string) (string, error) { return mliropt.Run(opt, text) }
	for _, c := range tritonCases() {
		t.Run(c.name, func(t *testing.T) {
			p, err := Trace(c.kernel, c.spec, argTypes(c.args))
			require.NoError(t, err)
			k, err := LowerTriton(p, CompilerParams{})
			require.NoError(t, err)
			out, err := run(k.IR)
			require.NoError(t, err, "mlir-opt rejected:\n%s\n--- input ---\n%s", out, k.IR)
		})
	}
	// A type error in an arith op must be caught.
	p, err := Trace(tritonCases()[0].kernel, tritonCases()[0].spec, argTypes(tritonCases()[0].args))
	require.NoError(t, err)
	k, err := LowerTriton(p, CompilerParams{})
	require.NoError(t, err)
	bad := strings.Replace(k.IR, "arith.addf", "arith.addi", 1)
	require.NotEqual(t, k.IR, bad)
	_, err = run(bad)
	require.Error(t, err, "mlir-opt accepted arith.addi on floats")
}

// TestTritonStructure checks the shape of the emitted kernel and of the
// custom call: one pointer per operand then output, program ids per grid
// axis, the config dictionary's keys and types, layouts, aliases.
func TestTritonStructure(t *testing.T) {
	c := tritonCases()[4] // prefetch_rows: 1 prefetch + 1 input + 1 output
	p, err := Trace(c.kernel, c.spec, argTypes(c.args))
	require.NoError(t, err)
	k, err := LowerTriton(p, CompilerParams{NumWarps: 8})
	require.NoError(t, err)
	assert.Equal(t, [3]int64{2, 1, 1}, k.Grid)
	assert.Equal(t, 8, k.NumWarps)
	assert.Equal(t, DefaultNumStages, k.NumStages)
	assert.Contains(t, k.IR, `function_type = (!tt.ptr<i32>, !tt.ptr<f32>, !tt.ptr<f32>) -> (), sym_name = "prefetch_rows", sym_visibility = "public"`)
	assert.Equal(t, 3, strings.Count(k.IR, "{tt.divisibility = 32 : i32}"))
	assert.Equal(t, 1, strings.Count(k.IR, `"tt.get_program_id"() <{axis = 0 : i32}>`))
	assert.NotContains(t, k.IR, "axis = 1 : i32}> : () -> i32")
	// The index map loads the block index from the prefetch pointer.
	assert.Regexp(t, regexp.MustCompile(`"tt.addptr"\(%arg0, %0\) : \(!tt.ptr<i32>, i32\)`), k.IR)

	// The custom call.
	b := stablehlo.NewBuilder("m")
	fb := b.NewFunction("main", stablehlo.TensorOf(c.args[0].Shape), stablehlo.TensorOf(c.args[1].Shape))
	spec := c.spec
	spec.Backend = Triton
	outs := Call(fb, c.kernel, spec, fb.Args()...)
	fb.Return(outs...)
	m, err := b.Build()
	require.NoError(t, err)
	var call *stablehlo.Op
	m.Walk(func(op *stablehlo.Op) bool {
		if op.Name == "stablehlo.custom_call" {
			call = op
		}
		return true
	})
	require.NotNil(t, call)
	assert.Equal(t, stablehlo.StringAttr(TritonTarget), call.Attr("call_target_name"))
	assert.Nil(t, call.Attr("api_version"))
	assert.Nil(t, call.Attr("backend_config"))
	cfg, ok := call.Attr("mhlo.backend_config").(stablehlo.DictAttr)
	require.True(t, ok)
	for _, key := range []string{"grid_x", "grid_y", "grid_z", "num_stages", "num_warps"} {
		v, ok := cfg.Get(key).(stablehlo.IntAttr)
		require.True(t, ok, key)
		assert.Equal(t, xla.Int32, v.Type, key)
	}
	for _, key := range []string{"name", "ir"} {
		_, ok := cfg.Get(key).(stablehlo.StringAttr)
		require.True(t, ok, key)
	}
	assert.Equal(t, stablehlo.IntAttr{Value: 2, Type: xla.Int32}, cfg.Get("grid_x"))
	assert.Equal(t, stablehlo.StringAttr("prefetch_rows"), cfg.Get("name"))
	assert.Equal(t, stablehlo.StringAttr(k.IR), cfg.Get("ir"))
	assert.Len(t, call.Operands, 2)
	assert.Equal(t, stablehlo.ArrayAttr{stablehlo.OpaqueAttr("dense<0> : tensor<1xindex>"), stablehlo.OpaqueAttr("dense<[1, 0]> : tensor<2xindex>")}, call.Attr("operand_layouts"))

	// Same attribute names, and same kinds of config values, as JAX's
	// recorded export (the Pallas Triton add_one of JAX's export tests,
	// kept as stablehlo's test data).
	rec, err := os.ReadFile("../stablehlo/testdata/add_one.stablehlo.mlir")
	require.NoError(t, err)
	jm, err := stablehlo.Parse(rec)
	require.NoError(t, err)
	var jcall *stablehlo.Op
	jm.Walk(func(op *stablehlo.Op) bool {
		if op.Name == "stablehlo.custom_call" {
			jcall = op
		}
		return true
	})
	require.NotNil(t, jcall)
	names := func(op *stablehlo.Op) []string {
		var out []string
		for _, a := range op.Attrs {
			out = append(out, a.Name)
		}
		return out
	}
	assert.ElementsMatch(t, names(jcall), names(call))
	jcfg := jcall.Attr("mhlo.backend_config").(stablehlo.DictAttr)
	require.Len(t, cfg, len(jcfg))
	for i := range jcfg {
		assert.Equal(t, jcfg[i].Name, cfg[i].Name)
		assert.IsType(t, jcfg[i].Value, cfg[i].Value, jcfg[i].Name)
	}
}

// TestTritonModuleRoundTrip prints the StableHLO module holding Triton
// calls (pretty and generic) and parses it back: the TTIR text survives
// byte for byte.
func TestTritonModuleRoundTrip(t *testing.T) {
	for _, c := range tritonCases() {
		t.Run(c.name, func(t *testing.T) {
			m := c.module(t, Triton)
			for _, generic := range []bool{false, true} {
				var buf bytes.Buffer
				require.NoError(t, stablehlo.Print(&buf, m, stablehlo.PrintOptions{Generic: generic}))
				m2, err := stablehlo.Parse(buf.Bytes())
				require.NoError(t, err, buf.String())
				var irs []string
				for _, mm := range []*stablehlo.Module{m, m2} {
					mm.Walk(func(op *stablehlo.Op) bool {
						if op.Name == "stablehlo.custom_call" {
							irs = append(irs, string(op.Attr("mhlo.backend_config").(stablehlo.DictAttr).Get("ir").(stablehlo.StringAttr)))
						}
						return true
					})
				}
				require.Len(t, irs, 2)
				assert.Equal(t, irs[0], irs[1])
				assert.Contains(t, irs[0], "tt.func")
			}
		})
	}
}

func TestTritonGridCollapse(t *testing.T) {
	store := func(k *Kernel, refs []*Ref) { refs[0].Store(k.Zeros(xla.Float32)) }
	for _, tc := range []struct {
		grid []int64
		want [3]int64
	}{
		{nil, [3]int64{1, 1, 1}},
		{[]int64{5}, [3]int64{5, 1, 1}},
		{[]int64{5, 6, 7}, [3]int64{5, 6, 7}},
		{[]int64{2, 3, 4, 5}, [3]int64{6, 4, 5}},
		{[]int64{3, 70000}, [3]int64{210000, 1, 1}},
		{[]int64{3, 70000, 2}, [3]int64{210000, 2, 1}},
	} {
		spec := CallSpec{Name: "z", Grid: tc.grid, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32)}}
		p, err := Trace(store, spec, nil)
		require.NoError(t, err)
		k, err := LowerTriton(p, CompilerParams{})
		require.NoError(t, err)
		assert.Equal(t, tc.want, k.Grid, "grid %v", tc.grid)
	}
}

// TestTritonErrors checks the build-time errors: they name the kernel, the
// op and the user's line, and are recorded on the builder by Call.
func TestTritonErrors(t *testing.T) {
	f32 := func(d ...int64) stablehlo.TensorType { return stablehlo.Tensor(xla.Float32, d...) }
	cases := []struct {
		name   string
		kernel KernelFunc
		spec   CallSpec
		args   []stablehlo.TensorType
		want   []string
	}{
		{
			name:   "non power of two block",
			kernel: func(k *Kernel, refs []*Ref) { refs[1].Store(refs[0].Load()) },
			spec: CallSpec{Name: "k3", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 6)}, Grid: []int64{2},
				InSpecs:  []*BlockSpec{{BlockShape: []int64{3}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}},
				OutSpecs: []*BlockSpec{{BlockShape: []int64{3}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}}},
			args: []stablehlo.TensorType{f32(6)},
			want: []string{`kernel "k3"`, "input 0", "power-of-two block dims"},
		},
		{
			name:   "non power of two value",
			kernel: func(k *Kernel, refs []*Ref) { refs[1].Store(refs[0].Load(Slice(0, 3)).Sum()) },
			spec:   CallSpec{Name: "k5", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32)}},
			args:   []stablehlo.TensorType{f32(8)},
			want:   []string{`kernel "k5"`, "triton: load", "triton_test.go:", "f32[3]", "power-of-two dims"},
		},
		{
			name:   "scratch",
			kernel: func(k *Kernel, refs []*Ref) { refs[2].Store(refs[0].Load()); refs[1].Store(refs[2].Load()) },
			spec: CallSpec{Name: "ks", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)},
				ScratchShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}},
			args: []stablehlo.TensorType{f32(4)},
			want: []string{`kernel "ks"`, "triton: store", "triton_test.go:", "scratch refs have no Triton lowering"},
		},
		{
			name:   "dtype",
			kernel: func(k *Kernel, refs []*Ref) { refs[1].Store(refs[0].Load()) },
			spec:   CallSpec{Name: "kd", OutShapes: []xla.Shape{xla.MakeShape(xla.Float8E4M3FN, 4)}},
			args:   []stablehlo.TensorType{stablehlo.Tensor(xla.Float8E4M3FN, 4)},
			want:   []string{`kernel "kd"`, "has no Triton type"},
		},
		{
			name:   "num warps",
			kernel: func(k *Kernel, refs []*Ref) { refs[1].Store(refs[0].Load()) },
			spec:   CallSpec{Name: "kw", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, CompilerParams: CompilerParams{NumWarps: 3}},
			args:   []stablehlo.TensorType{f32(4)},
			want:   []string{`kernel "kw"`, "NumWarps 3"},
		},
		{
			name: "dot dtype",
			kernel: func(k *Kernel, refs []*Ref) {
				x := refs[0].Load()
				refs[1].Store(Dot(x, x, xla.Float32))
			},
			spec: CallSpec{Name: "kdot", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 16, 16)}},
			args: []stablehlo.TensorType{stablehlo.Tensor(xla.Int32, 16, 16)},
			want: []string{`kernel "kdot"`, "triton: dot", "triton_test.go:", "not i32 into f32"},
		},
		{
			// Below the tensor cores' K and too large for products.
			name: "small-K dot too large to expand",
			kernel: func(k *Kernel, refs []*Ref) {
				refs[2].Store(Dot(refs[0].Load(), refs[1].Load(), xla.Float32))
			},
			spec: CallSpec{Name: "kbig", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 512, 512)}},
			args: []stablehlo.TensorType{stablehlo.Tensor(xla.Float16, 512, 8), stablehlo.Tensor(xla.Float16, 8, 512)},
			want: []string{`kernel "kbig"`, "triton: dot", "512x8 by 8x512 dot is below the tensor cores' sizes", "2097152 products"},
		},
		{
			// Rejected when traced, for every backend (as JAX does).
			name: "dot of floats to an integer",
			kernel: func(k *Kernel, refs []*Ref) {
				x := refs[0].Load()
				refs[1].Store(Dot(x, x, xla.Int32))
			},
			spec: CallSpec{Name: "kdoti", OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 16, 16)}},
			args: []stablehlo.TensorType{f32(16, 16)},
			want: []string{`kernel "kdoti"`, "dot at triton_test.go:", "float operands (f32) with integer preferred type i32"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := stablehlo.NewBuilder("m")
			types := make([]stablehlo.Type, len(tc.args))
			for i, a := range tc.args {
				types[i] = a
			}
			fb := b.NewFunction("main", types...)
			spec := tc.spec
			spec.Backend = Triton
			outs := Call(fb, tc.kernel, spec, fb.Args()...)
			fb.Return(outs...)
			_, err := b.Build()
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}

	// An op the lowering does not know (a later addition to the IR).
	c := tritonCases()[0]
	p, err := Trace(c.kernel, c.spec, argTypes(c.args))
	require.NoError(t, err)
	var add *Op
	for _, op := range p.Body.Ops {
		if op.Name == "add" {
			add = op
		}
	}
	require.NotNil(t, add)
	add.Name = "fancy_add"
	_, err = LowerTriton(p, CompilerParams{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `op "fancy_add" has no Triton lowering`)
	assert.Contains(t, err.Error(), "triton_test.go:")
}

// TestTritonModuleMLIROpt feeds the generic form of a StableHLO module
// holding a Triton call to mlir-opt: the TTIR string's escapes are MLIR's,
// and mlir-opt's re-print parses back to the same TTIR.
func TestTritonModuleMLIROpt(t *testing.T) {
	opt := mliropt.Path()
	if opt == "" {
		t.Skip(mliropt.Missing)
	}
	c := tritonCases()[1]
	b := stablehlo.NewBuilder("m")
	fb := b.NewFunction("main", stablehlo.TensorOf(c.args[0].Shape), stablehlo.TensorOf(c.args[1].Shape))
	spec := c.spec
	spec.Backend = Triton
	fb.Return(Call(fb, c.kernel, spec, fb.Args()...)...)
	m, err := b.Build()
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, stablehlo.Print(&buf, m, stablehlo.PrintOptions{Generic: true}))
	out, err := mliropt.Run(opt, buf.String(), "--mlir-print-op-generic")
	require.NoError(t, err, buf.String())
	m2, err := stablehlo.Parse([]byte(out))
	require.NoError(t, err, out)
	irOf := func(m *stablehlo.Module) string {
		var ir string
		m.Walk(func(op *stablehlo.Op) bool {
			if op.Name == "stablehlo.custom_call" {
				ir = string(op.Attr("mhlo.backend_config").(stablehlo.DictAttr).Get("ir").(stablehlo.StringAttr))
			}
			return true
		})
		return ir
	}
	require.NotEmpty(t, irOf(m))
	assert.Equal(t, irOf(m), irOf(m2))
}

// mathFuncs are the kernel language's float functions, each with Go's.
var mathFuncs = []struct {
	name string
	k    func(*Value) *Value
	g    func(float64) float64
}{
	{"exp", (*Value).Exp, math.Exp},
	{"log", (*Value).Log, math.Log},
	{"sqrt", (*Value).Sqrt, math.Sqrt},
	{"rsqrt", (*Value).Rsqrt, func(x float64) float64 { return 1 / math.Sqrt(x) }},
	{"tanh", (*Value).Tanh, math.Tanh},
	{"erf", (*Value).Erf, math.Erf},
	{"sin", (*Value).Sin, math.Sin},
	{"cos", (*Value).Cos, math.Cos},
	{"floor", (*Value).Floor, math.Floor},
	{"ceil", (*Value).Ceil, math.Ceil},
	{"sigmoid", (*Value).Sigmoid, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }},
	{"abs", func(v *Value) *Value { return v.Neg().Abs() }, math.Abs},
	{"pow 1.5", func(v *Value) *Value { return v.Pow(1.5) }, func(x float64) float64 { return math.Pow(x, 1.5) }},
}

// mathKernel writes function program_id(0) of mathFuncs applied to the
// input row.
func mathKernel(k *Kernel, refs []*Ref) {
	x := refs[0].Load()
	for i, f := range mathFuncs {
		k.When(k.ProgramID(0).Eq(i), func() { refs[1].Store(f.k(x)) })
	}
}

// mathInput is 8 positive values, none an integer.
func mathInput() *interpreter.Tensor {
	return fTensor([]int64{8}, func(i int) float64 { return 0.3 + 0.7*float64(i) })
}

func TestKernelMathMatchesGo(t *testing.T) {
	var c tritonCase
	for _, tc := range tritonCases() {
		if tc.name == "math" {
			c = tc
		}
	}
	out, err := runCall(c.kernel, c.spec, c.args...)
	require.NoError(t, err)
	got := out[0].Data.([]float32)
	in := c.args[0].Data.([]float32)
	for i, f := range mathFuncs {
		for j, x := range in {
			want := f.g(float64(x))
			assert.InDelta(t, want, got[i*8+j], 2e-6*math.Max(1, math.Abs(want)), "%s(%v)", f.name, x)
		}
	}
}

// TestTritonOutputOperandAliases: an output aliased to an operand
// (InputOutputAliases) tells XLA so on the custom call, with the output's
// tuple index when the call has several results.
func TestTritonOutputOperandAliases(t *testing.T) {
	blk := &BlockSpec{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}
	kernel := func(k *Kernel, refs []*Ref) {
		refs[3].Store(refs[0].Load().Add(refs[1].Load()))
		refs[4].Store(refs[2].Load().Mul(2))
	}
	for _, c := range []struct {
		name    string
		outs    int
		aliases map[int]int
		want    string
	}{
		{"one result", 1, map[int]int{2: 0}, "output_operand_alias<output_tuple_indices = [], operand_index = 2"},
		{"second of two results", 2, map[int]int{2: 1}, "output_operand_alias<output_tuple_indices = [1], operand_index = 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := kernel
			if c.outs == 1 {
				k = func(k *Kernel, refs []*Ref) { refs[3].Store(refs[0].Load().Add(refs[1].Load()).Add(refs[2].Load())) }
			}
			b := stablehlo.NewBuilder("alias")
			f32x8 := stablehlo.Tensor(xla.Float32, 8)
			fb := b.NewFunction("main", f32x8, f32x8, f32x8)
			spec := CallSpec{Name: "alias", Grid: []int64{2}, Backend: Triton, InSpecs: []*BlockSpec{blk, blk, blk},
				InputOutputAliases: c.aliases}
			for i := 0; i < c.outs; i++ {
				spec.OutShapes = append(spec.OutShapes, xla.MakeShape(xla.Float32, 8))
				spec.OutSpecs = append(spec.OutSpecs, blk)
			}
			fb.Return(Call(fb, k, spec, fb.Args()...)...)
			m, err := b.Build()
			require.NoError(t, err)
			text := m.String()
			assert.Contains(t, text, c.want)
			assert.Equal(t, 1, strings.Count(text, "output_operand_alias<"), text)
		})
	}
}

// Kernels whose programs would race on a GPU are refused by the Triton
// lowering: an output block several programs store (seed 000's matmul with
// K as a grid axis, accumulating in its output), an aliased input loaded
// at blocks other programs write. Without the check the TTIR gives other
// results when its programs run in another order (the evaluator shows it);
// the same kernels are fine in interpret mode.
func TestTritonRefusesRaces(t *testing.T) {
	fill := func(n int64) *interpreter.Tensor {
		return fTensor([]int64{n}, func(i int) float64 { return float64(i) })
	}
	ident := blockMap(func(g []*Value) []any { return []any{g[0]} })
	cases := []struct {
		name string
		c    tritonCase
		want string
	}{
		{
			name: "output block stored by the programs of a grid axis",
			c: tritonCase{
				kernel: func(k *Kernel, r []*Ref) {
					x, o := r[0], r[1]
					k.When(k.ProgramID(1).Eq(0), func() { o.Store(k.Zeros(xla.Float32, 2)) })
					o.Store(o.Load().Add(x.Load()))
				},
				spec: CallSpec{Name: "acc", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2, 3},
					InSpecs:  []*BlockSpec{{BlockShape: []int64{2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0].Add(g[1]).Rem(2)} })}},
					OutSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: ident}}},
				args: []*interpreter.Tensor{fill(4)},
			},
			want: "its index map ignores grid axis 1 (3 steps)",
		},
		{
			// Every axis is in the map, yet (0, 1) and (1, 0) share block 1.
			name: "output block stored by two programs of a map on every axis",
			c: tritonCase{
				kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[1].Load().Mul(2).Add(r[0].Load())) },
				spec: CallSpec{Name: "diagonal", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2, 2},
					InSpecs:  []*BlockSpec{{BlockShape: []int64{2}, IndexMap: ident}},
					OutSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0].Add(g[1]).Rem(2)} })}}},
				args: []*interpreter.Tensor{fill(4)},
			},
			want: "its index map sends grid points (0, 1) and (1, 0) to the same block (1)",
		},
		{
			// The same through the input aliased to the output.
			name: "aliased output block read and written by two programs",
			c: tritonCase{
				kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load().Mul(2).Add(k.ProgramID(0).Astype(xla.Float32))) },
				spec: CallSpec{Name: "diagonal_alias", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2, 2},
					InputOutputAliases: map[int]int{0: 0},
					InSpecs:            []*BlockSpec{{BlockShape: []int64{2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0].Add(g[1]).Rem(2)} })}},
					OutSpecs:           []*BlockSpec{{BlockShape: []int64{2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0].Add(g[1]).Rem(2)} })}}},
				args: []*interpreter.Tensor{fill(4)},
			},
			want: "its index map sends grid points (0, 1) and (1, 0) to the same block (1)",
		},
		{
			name: "aliased input read at another program's block",
			c: tritonCase{
				kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load().Add(1)) },
				spec: CallSpec{Name: "shift", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}, Grid: []int64{4},
					InputOutputAliases: map[int]int{0: 0},
					InSpecs:            []*BlockSpec{{BlockShape: []int64{2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0].Sub(1).Max(0)} })}},
					OutSpecs:           []*BlockSpec{{BlockShape: []int64{2}, IndexMap: ident}}},
				args: []*interpreter.Tensor{fill(8)},
			},
			want: "loaded through another block spec",
		},
		{
			// A block that happens to be the whole array is still one
			// block for every program of the axis its map ignores.
			name: "whole-array block accumulated along a grid axis",
			c: tritonCase{
				kernel: func(k *Kernel, r []*Ref) {
					x, o := r[0], r[1]
					k.When(k.ProgramID(0).Eq(0), func() { o.Store(k.Zeros(xla.Float32, 4)) })
					o.Store(o.Load().Add(x.Load()))
				},
				spec: CallSpec{Name: "acc_whole_block", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2},
					OutSpecs: []*BlockSpec{{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{0} })}}},
				args: []*interpreter.Tensor{fill(4)},
			},
			want: "the 2 programs along grid axis 0, which its index map ignores, all load and store the same elements",
		},
		{
			// The same with no spec: the kernel reads and writes the
			// whole array in every program.
			name: "whole-array output read and written whole by every program",
			c: tritonCase{
				kernel: func(k *Kernel, r []*Ref) {
					x, o := r[0], r[1]
					k.When(k.ProgramID(0).Eq(0), func() { o.Store(k.Zeros(xla.Float32, 4)) })
					o.Store(o.Load().Add(x.Load()))
				},
				spec: CallSpec{Name: "acc_whole", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2}},
				args: []*interpreter.Tensor{fill(4)},
			},
			want: "the 2 programs along grid axis 0, which its index map ignores, all load and store the same elements",
		},
		{
			// Dynamic indices are not each program's part when they do
			// not depend on the program id: here a loop counter (found in
			// review).
			name: "whole-array output read and written at a loop's indices by every program",
			c: tritonCase{
				kernel: func(k *Kernel, r []*Ref) {
					o := r[1]
					k.ForLoop(0, 2, nil, func(i *Value, _ []*Value) []*Value {
						part := DS(i.Mul(2), 2)
						o.Store(o.Load(part).Mul(2).Add(k.ProgramID(0).Astype(xla.Float32)), part)
						return nil
					})
				},
				spec: CallSpec{Name: "loop_rmw", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2},
					InputOutputAliases: map[int]int{0: 0}},
				args: []*interpreter.Tensor{fill(4)},
			},
			want: "the 2 programs along grid axis 0, which its index map ignores, all load and store the same elements",
		},
		{
			// Stored only, by every step of the axis its map ignores:
			// interpret mode keeps the last step's block, a GPU any
			// program's (found in review).
			name: "output block stored by every step of an axis its map ignores",
			c: tritonCase{
				kernel: func(k *Kernel, r []*Ref) {
					r[1].Store(r[0].Load().Add(k.ProgramID(1).Astype(xla.Float32)))
				},
				spec: CallSpec{Name: "store_only", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2, 3},
					InSpecs:  []*BlockSpec{{BlockShape: []int64{2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}},
					OutSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}}},
				args: []*interpreter.Tensor{fill(4)},
			},
			want: "the 3 programs along grid axis 1, which its index map ignores, all store the same elements",
		},
		{
			// A value loaded from a block the axis picks differs between
			// the programs, though no program id is in sight (OutSpecs
			// forgotten; found in review).
			name: "each program's input block stored at the same elements",
			c: tritonCase{
				kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(), Slice(0, 2)) },
				spec: CallSpec{Name: "forgot_outspecs", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2},
					InSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: ident}}},
				args: []*interpreter.Tensor{fill(4)},
			},
			want: "the 2 programs along grid axis 0, which its index map ignores, all store the same elements",
		},
		{
			name: "input block picked by an axis the output's map ignores",
			c: tritonCase{
				kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load().BroadcastTo(2)) },
				spec: CallSpec{Name: "ignored_input_axis", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2, 2},
					InSpecs:  []*BlockSpec{{BlockShape: []int64{1}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0].Mul(2).Add(g[1])} })}},
					OutSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: ident}}},
				args: []*interpreter.Tensor{fill(4)},
			},
			want: "the 2 programs along grid axis 1, which its index map ignores, all store the same elements",
		},
		{
			// Each When leaves its store to one program, but not the same
			// one (found in review).
			name: "stores under Whens on different programs",
			c: tritonCase{
				kernel: func(k *Kernel, r []*Ref) {
					k.When(k.ProgramID(0).Eq(0), func() { r[1].Store(k.Full(xla.Float32, 1.0, 4)) })
					k.When(k.ProgramID(0).Eq(1), func() { r[1].Store(k.Full(xla.Float32, 2.0, 4)) })
				},
				spec: CallSpec{Name: "two_whens", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2}},
				args: []*interpreter.Tensor{fill(4)},
			},
			want: "run in different programs along grid axis 0",
		},
		{
			name: "a load under a When on another program than the store's",
			c: tritonCase{
				kernel: func(k *Kernel, r []*Ref) {
					k.When(k.ProgramID(0).Eq(0), func() { r[1].Store(r[0].Load()) })
					k.When(k.ProgramID(0).Eq(1), func() { r[1].Store(r[1].Load(Slice(0, 2)).Mul(3), Slice(0, 2)) })
				},
				spec: CallSpec{Name: "when_load", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2}},
				args: []*interpreter.Tensor{fill(4)},
			},
			want: "run in different programs along grid axis 0",
		},
		{
			// Stored only: g/2 sends programs 0 and 1 to block 0 (found
			// in review).
			name: "output block of a map that is not one to one, stored only",
			c: tritonCase{
				kernel: func(k *Kernel, r []*Ref) { r[1].Store(k.ProgramID(0).Astype(xla.Float32).BroadcastTo(2)) },
				spec: CallSpec{Name: "halved", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{4},
					OutSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0].Div(2)} })}}},
				args: []*interpreter.Tensor{fill(4)},
			},
			want: "its index map sends grid points (0) and (1) to the same block (0), and the store at",
		},
		{
			// Each program stores its half of a shared output and reads
			// the other's (found in review).
			name: "shared output read at another program's elements",
			c: tritonCase{
				kernel: func(k *Kernel, r []*Ref) {
					p := k.ProgramID(0)
					r[1].Store(r[1].Load(DS(p.Neg().Add(1).Mul(2), 2)).Add(100), DS(p.Mul(2), 2))
				},
				spec: CallSpec{Name: "read_other_half", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2}},
				args: []*interpreter.Tensor{fill(4)},
			},
			want: "reads it (or the input aliased to it) at other indices than any store of it",
		},
		{
			name: "aliased input read at another program's elements",
			c: tritonCase{
				kernel: func(k *Kernel, r []*Ref) {
					p := k.ProgramID(0)
					r[1].Store(r[0].Load(DS(p.Neg().Add(1).Mul(2), 2)).Add(100), DS(p.Mul(2), 2))
				},
				spec: CallSpec{Name: "read_other_half_alias", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2},
					InputOutputAliases: map[int]int{0: 0}},
				args: []*interpreter.Tensor{fill(4)},
			},
			want: "reads it (or the input aliased to it) at other indices than any store of it",
		},
		{
			// Program 0 zeroes the shared output, each program writes its
			// own element: the zeros may land after another's element
			// (found in review).
			name: "one program fills the shared output, every program its elements",
			c: tritonCase{
				kernel: func(k *Kernel, r []*Ref) {
					p := k.ProgramID(0)
					k.When(p.Eq(0), func() { r[1].Store(k.Zeros(xla.Float32, 4)) })
					r[1].Store(r[0].Load(DS(p, 1)), DS(p, 1))
				},
				spec: CallSpec{Name: "fill_then_own", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2}},
				args: []*interpreter.Tensor{fill(4)},
			},
			want: "runs in one program along grid axis 0 while the store at",
		},
		{
			// A When on a loop's index is no pin: every program runs it
			// at some iteration (found in review).
			name: "a When on a loop index taken in turns",
			c: tritonCase{
				kernel: func(k *Kernel, r []*Ref) {
					p := k.ProgramID(0)
					k.ForLoop(0, k.NumPrograms(0), nil, func(i *Value, _ []*Value) []*Value {
						k.When(p.Eq(i), func() { r[1].Store(r[1].Load().Mul(2).Add(r[0].Load().Add(p.Astype(xla.Float32)))) })
						return nil
					})
				},
				spec: CallSpec{Name: "turns", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2}},
				args: []*interpreter.Tensor{fill(4)},
			},
			want: "under no When(ProgramID(0) == …)",
		},
		{
			// A row a program with Squeezed blocks, the grid past the rows
			// and the map clamped: programs 1 and 2 store row 1 (found in
			// review; squeezed blocks skipped the shared-block check).
			name: "squeezed output block stored by two programs",
			c: tritonCase{
				kernel: func(k *Kernel, r []*Ref) {
					r[1].Store(r[0].Load().Add(k.ProgramID(0).Astype(xla.Float32).Mul(100)))
				},
				spec: CallSpec{Name: "clamped_rows", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2, 2)}, Grid: []int64{3},
					InSpecs:  []*BlockSpec{{BlockShape: []int64{Squeezed, 2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0].Min(1), 0} })}},
					OutSpecs: []*BlockSpec{{BlockShape: []int64{Squeezed, 2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0].Min(1), 0} })}}},
				args: []*interpreter.Tensor{fTensor([]int64{2, 2}, func(i int) float64 { return float64(i) })},
			},
			want: "its index map sends grid points (1) and (2) to the same block (1, 0)",
		},
		{
			// A pin through a convert to bool: programs 1, 2 and 3 all
			// pass it (found in review).
			name: "a pin on a program id converted to bool",
			c: tritonCase{
				kernel: func(k *Kernel, r []*Ref) {
					p := k.ProgramID(0)
					k.When(p.Astype(xla.Bool).Eq(true), func() { r[1].Store(r[0].Load().Add(p.Astype(xla.Float32))) })
				},
				spec: CallSpec{Name: "bool_pin", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{4}},
				args: []*interpreter.Tensor{fill(4)},
			},
			want: "under no When(ProgramID(0) == …)",
		},
		{
			// Each axis pinned to the other's id: (0, 0) and (1, 1) both
			// store (found in review).
			name: "pins on each other's program id",
			c: tritonCase{
				kernel: func(k *Kernel, r []*Ref) {
					p0, p1 := k.ProgramID(0), k.ProgramID(1)
					k.When(p0.Eq(p1).And(p1.Eq(p0)), func() { r[1].Store(r[0].Load().Add(p0.Astype(xla.Float32))) })
				},
				spec: CallSpec{Name: "cycle_pin", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2, 2}},
				args: []*interpreter.Tensor{fill(4)},
			},
			want: "under no When(ProgramID(0) == …)",
		},
		{
			// Program 0 alone stores element 3, which program 1 stores
			// as its own (found in review).
			name: "one program's store in another program's elements",
			c: tritonCase{
				kernel: func(k *Kernel, r []*Ref) {
					p := k.ProgramID(0)
					r[1].Store(r[0].Load(DS(p.Mul(2), 2)), DS(p.Mul(2), 2))
					k.When(p.Eq(0), func() { r[1].Store(k.Full(xla.Float32, -5.0, 1), Slice(3, 4)) })
				},
				spec: CallSpec{Name: "pinned_part", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2}},
				args: []*interpreter.Tensor{fill(4)},
			},
			want: "runs in one program along grid axis 0 while the store at",
		},
		{
			// max(g0, g1): (0, 1) and (1, 0) share block 1 and differ on
			// both axes, but (0, 1) and (1, 1) differ on axis 0 only,
			// which the store's position ignores (found in review: only
			// the first pair was looked at).
			name: "a later pair of programs sharing a block",
			c: tritonCase{
				kernel: func(k *Kernel, r []*Ref) {
					p0, p1 := k.ProgramID(0), k.ProgramID(1)
					r[1].Store(r[0].Load(DS(p1, 1)).Add(p0.Astype(xla.Float32).Mul(10)), DS(p1, 1))
				},
				spec: CallSpec{Name: "max_map", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2, 2},
					InSpecs:  []*BlockSpec{{BlockShape: []int64{2}, IndexMap: blockMap(func(g []*Value) []any { return []any{0} })}},
					OutSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0].Max(g[1])} })}}},
				args: []*interpreter.Tensor{fill(4)},
			},
			want: "and the store at",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			spec := c.spec
			spec.Backend = Triton
			p, err := Trace(c.kernel, spec, argTypes(c.args))
			require.NoError(t, err, "tracing is backend-neutral")
			_, err = LowerTriton(p, CompilerParams{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			// What the check prevents: the TTIR's result depends on the
			// programs' order.
			f, grid, err := lowerTritonFunc(p)
			require.NoError(t, err)
			run := func(reverse bool) []float64 {
				bufs := []*tevBuf{toBuf(t, c.args[0], "f32")}
				if spec.InputOutputAliases == nil {
					bufs = append(bufs, toBuf(t, fill(4), "f32"))
				} else {
					bufs = append(bufs, bufs[0])
				}
				require.NoError(t, tevRunOrder(context.Background(), f, grid, bufs, reverse, nil))
				return append([]float64(nil), bufs[len(bufs)-1].f...)
			}
			assert.NotEqual(t, run(false), run(true))
			// Interpret mode runs it.
			_, err = runCall(c.kernel, c.spec, c.args...)
			require.NoError(t, err)
		})
	}
}

// TestTritonRefusesOrderDependentKernels: more kernels whose result on a
// GPU depends on the order of the programs (found in a second review),
// each refused with its message; the evaluator shows the two orders'
// results differ.
func TestTritonRefusesOrderDependentKernels(t *testing.T) {
	fill := func(n int64) *interpreter.Tensor {
		return fTensor([]int64{n}, func(i int) float64 { return float64(i) })
	}
	f4 := []xla.Shape{xla.MakeShape(xla.Float32, 4)}
	half := blockMap(func(g []*Value) []any { return []any{g[0].Div(2)} })
	cases := []struct {
		c    tritonCase
		want string
	}{
		{
			// Each program stores element p through a mask, then reads
			// 0..p: the masked store counted as covering the whole row.
			c: tritonCase{name: "masked_store_then_prefix",
				kernel: func(k *Kernel, r []*Ref) {
					x, o, s := r[0], r[1], r[2]
					p := k.ProgramID(0)
					io := k.Iota(xla.Int32, 0, 4)
					Store(o, []any{All}, x.Load().Add(1.0), io.Eq(p.BroadcastTo(4)))
					v := Load(o, []any{All}, io.Le(p.BroadcastTo(4)), 0.0)
					s.Store(v.Sum().Reshape(1), DS(p, 1))
				},
				spec: CallSpec{Name: "masked_prefix", Grid: []int64{4}, OutShapes: append(f4, f4...)},
				args: []*interpreter.Tensor{fill(4)}},
			want: "reads it (or the input aliased to it) at other indices than any store of it",
		},
		{
			// The same masked store, and program 0 alone writes element
			// 3, program 3's.
			c: tritonCase{name: "masked_store_fixup",
				kernel: func(k *Kernel, r []*Ref) {
					x, o := r[0], r[1]
					p := k.ProgramID(0)
					io := k.Iota(xla.Int32, 0, 4)
					Store(o, []any{All}, x.Load().Mul(11.0), io.Eq(p.BroadcastTo(4)))
					k.When(p.Eq(0), func() { o.Store(k.Full(xla.Float32, -5.0, 1), Slice(3, 4)) })
				},
				spec: CallSpec{Name: "masked_fixup", Grid: []int64{4}, OutShapes: f4},
				args: []*interpreter.Tensor{fill(4)}},
			want: "runs in one program along grid axis 0 while",
		},
		{
			// g/2 sends programs 0 and 1 to one block; each stores its
			// half, and program 0 alone an element of program 1's.
			c: tritonCase{name: "half_map_fixup",
				kernel: func(k *Kernel, r []*Ref) {
					x, o := r[0], r[1]
					p := k.ProgramID(0)
					h := p.Rem(2).Mul(2)
					o.Store(x.Load(DS(h, 2)).Add(p.Astype(xla.Float32).Mul(10)), DS(h, 2))
					k.When(p.Eq(0), func() { o.Store(k.Full(xla.Float32, -5.0, 1), Slice(2, 3)) })
				},
				spec: CallSpec{Name: "half_fixup", Grid: []int64{2}, OutShapes: f4,
					InSpecs:  []*BlockSpec{{BlockShape: []int64{4}, IndexMap: half}},
					OutSpecs: []*BlockSpec{{BlockShape: []int64{4}, IndexMap: half}}},
				args: []*interpreter.Tensor{fill(4)}},
			want: "its index map sends several programs to one block, and the store at",
		},
		{
			// g/2 again: programs 0 and 1 each store element 0, under
			// Whens on different ids.
			c: tritonCase{name: "half_map_two_pins",
				kernel: func(k *Kernel, r []*Ref) {
					o := r[1]
					p := k.ProgramID(0)
					k.When(p.Eq(0), func() { o.Store(k.Full(xla.Float32, 1.0, 1), Slice(0, 1)) })
					k.When(p.Eq(1), func() { o.Store(k.Full(xla.Float32, 2.0, 1), Slice(0, 1)) })
				},
				spec: CallSpec{Name: "half_pins", Grid: []int64{2}, OutShapes: f4,
					InSpecs:  []*BlockSpec{{BlockShape: []int64{4}, IndexMap: half}},
					OutSpecs: []*BlockSpec{{BlockShape: []int64{4}, IndexMap: half}}},
				args: []*interpreter.Tensor{fill(4)}},
			want: "its index map sends several programs to one block, and the store at",
		},
		{
			// Both Whens pin axis 0 to p1, written alike, but (0, 0) and
			// (1, 1) both pass one of them: element 0 twice.
			c: tritonCase{name: "pins_on_another_axis",
				kernel: func(k *Kernel, r []*Ref) {
					o := r[1]
					p0, p1 := k.ProgramID(0), k.ProgramID(1)
					k.When(p0.Eq(p1).And(p1.Eq(0)), func() { o.Store(k.Full(xla.Float32, 1.0, 1), Slice(0, 1)) })
					k.When(p0.Eq(p1).And(p1.Eq(1)), func() { o.Store(k.Full(xla.Float32, 2.0, 1), Slice(0, 1)) })
				},
				spec: CallSpec{Name: "other_axis_pins", Grid: []int64{2, 2}, OutShapes: f4},
				args: []*interpreter.Tensor{fill(4)}},
			want: "run in different programs along grid axis",
		},
		{
			// Program 0's store under When(p == 0) at p + 3: program 3's
			// element, though its index mentions p.
			c: tritonCase{name: "pinned_index_on_p",
				kernel: func(k *Kernel, r []*Ref) {
					x, o := r[0], r[1]
					p := k.ProgramID(0)
					o.Store(x.Load(DS(p.Mul(2), 2)), DS(p.Mul(2), 2))
					k.When(p.Eq(0), func() { o.Store(k.Full(xla.Float32, -5.0, 1), DS(p.Add(3), 1)) })
				},
				spec: CallSpec{Name: "pinned_p_index", Grid: []int64{4}, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}},
				args: []*interpreter.Tensor{fill(8)}},
			want: "runs in one program along grid axis 0 while",
		},
	}
	cases = append(cases, []struct {
		c    tritonCase
		want string
	}{
		{
			// Program 0's fix-up outside its elements, stored twice: each
			// pinned store counted as the other's own elements (third
			// review).
			c: tritonCase{name: "pinned_twice",
				kernel: func(k *Kernel, r []*Ref) {
					x, o := r[0], r[1]
					p := k.ProgramID(0)
					o.Store(x.Load(DS(p.Mul(2), 2)), DS(p.Mul(2), 2))
					k.When(p.Eq(0), func() {
						o.Store(k.Full(xla.Float32, -5.0, 1), DS(p.Add(3), 1))
						o.Store(k.Full(xla.Float32, -6.0, 1), DS(p.Add(3), 1))
					})
				},
				spec: CallSpec{Name: "pinned_twice", Grid: []int64{4}, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}},
				args: []*interpreter.Tensor{fill(8)}},
			want: "runs in one program along grid axis 0 while",
		},
		{
			// g/2: program 0's fix-up at p + 2, program 1's half.
			c: tritonCase{name: "half_map_fixup_on_p",
				kernel: func(k *Kernel, r []*Ref) {
					x, o := r[0], r[1]
					p := k.ProgramID(0)
					h := p.Rem(2).Mul(2)
					o.Store(x.Load(DS(h, 2)).Add(p.Astype(xla.Float32).Mul(10)), DS(h, 2))
					k.When(p.Eq(0), func() { o.Store(k.Full(xla.Float32, -5.0, 1), DS(p.Add(2), 1)) })
				},
				spec: CallSpec{Name: "half_fixup_p", Grid: []int64{2}, OutShapes: f4,
					InSpecs:  []*BlockSpec{{BlockShape: []int64{4}, IndexMap: half}},
					OutSpecs: []*BlockSpec{{BlockShape: []int64{4}, IndexMap: half}}},
				args: []*interpreter.Tensor{fill(4)}},
			want: "its index map sends several programs to one block, and the store at",
		},
	}...)
	// Positions that depend on the program id yet meet across programs,
	// which only computing them shows.
	f8 := []xla.Shape{xla.MakeShape(xla.Float32, 8)}
	cases = append(cases, []struct {
		c    tritonCase
		want string
	}{
		{
			// Program p stores elements p and 3-p: programs 0 and 3 both
			// store 0 and 3.
			c: tritonCase{name: "mirrored_stores",
				kernel: func(k *Kernel, r []*Ref) {
					x, o := r[0], r[1]
					p := k.ProgramID(0)
					o.Store(x.Load(DS(p, 1)), DS(p, 1))
					o.Store(x.Load(DS(p, 1)).Mul(10.0), DS(k.Const(xla.Int32, 3).Sub(p), 1))
				},
				spec: CallSpec{Name: "mirrored", Grid: []int64{4}, OutShapes: f4},
				args: []*interpreter.Tensor{fill(4)}},
			want: "grid points (0) and (3) both reach its element (0), the store at",
		},
		{
			// p % 2: programs 0 and 2 store element 0.
			c: tritonCase{name: "parity_store",
				kernel: func(k *Kernel, r []*Ref) {
					x, o := r[0], r[1]
					p := k.ProgramID(0)
					o.Store(x.Load(DS(p, 1)), DS(p.Rem(2), 1))
				},
				spec: CallSpec{Name: "parity", Grid: []int64{4}, OutShapes: f4},
				args: []*interpreter.Tensor{fill(4)}},
			want: "grid points (0) and (2) both reach its element (0)",
		},
		{
			// Windows of 4 at a stride of 2: neighbours share 2 elements.
			c: tritonCase{name: "wide_windows",
				kernel: func(k *Kernel, r []*Ref) {
					x, o := r[0], r[1]
					p := k.ProgramID(0)
					o.Store(x.Load(DS(p.Mul(2), 4)).Add(p.Astype(xla.Float32)), DS(p.Mul(2), 4))
				},
				spec: CallSpec{Name: "windows", Grid: []int64{3}, OutShapes: f8},
				args: []*interpreter.Tensor{fill(8)}},
			want: "grid points (0) and (1) both reach its element (2)",
		},
		{
			// Each program stores its row of a 4x2 block, but the rows
			// are p/2: programs 0 and 1 store row 0 (a 2-D grid, the
			// block picked by its second axis).
			c: tritonCase{name: "rows_by_half_id",
				kernel: func(k *Kernel, r []*Ref) {
					x, o := r[0], r[1]
					p := k.ProgramID(0)
					o.Store(x.Load(DS(p, 1), All).Add(p.Astype(xla.Float32)), DS(p.Div(2), 1), All)
				},
				spec: CallSpec{Name: "half_rows", Grid: []int64{4, 2},
					OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4, 4)},
					InSpecs:   []*BlockSpec{{BlockShape: []int64{4, 2}, IndexMap: blockMap(func(g []*Value) []any { return []any{0, g[1]} })}},
					OutSpecs:  []*BlockSpec{{BlockShape: []int64{4, 2}, IndexMap: blockMap(func(g []*Value) []any { return []any{0, g[1]} })}}},
				args: []*interpreter.Tensor{fTensor([]int64{4, 4}, func(i int) float64 { return float64(i) })}},
			want: "grid points (0, 0) and (1, 0) both reach its element (0, 0)",
		},
		{
			// A one-hot mask at p % 2: programs 0 and 2 store element 0.
			c: tritonCase{name: "one_hot_mask_parity",
				kernel: func(k *Kernel, r []*Ref) {
					x, o := r[0], r[1]
					p := k.ProgramID(0)
					io := k.Iota(xla.Int32, 0, 4)
					Store(o, []any{All}, x.Load().Add(p.Astype(xla.Float32)), io.Eq(p.Rem(2).BroadcastTo(4)))
				},
				spec: CallSpec{Name: "one_hot_parity", Grid: []int64{4}, OutShapes: f4},
				args: []*interpreter.Tensor{fill(4)}},
			want: "grid points (0) and (2) both reach its element (0)",
		},
		{
			// Program p stores element (p + i) % 4 at step i of a loop:
			// every program reaches every element.
			c: tritonCase{name: "rotating_stores",
				kernel: func(k *Kernel, r []*Ref) {
					x, o := r[0], r[1]
					p := k.ProgramID(0)
					v := x.Load(DS(p, 1))
					k.ForLoop(0, 4, nil, func(i *Value, _ []*Value) []*Value {
						o.Store(v.Mul(i.Add(1).Astype(xla.Float32)), DS(p.Add(i).Rem(4), 1))
						return nil
					})
				},
				spec: CallSpec{Name: "rotating", Grid: []int64{4}, OutShapes: f4},
				args: []*interpreter.Tensor{fill(4)}},
			want: "grid points (0) and (1) both reach its element (0)",
		},
		{
			// Strides of 4 over 5 programs: program 4's element i*4 + 4
			// is program 0's at the next step.
			c: tritonCase{name: "strided_loop_overlap",
				kernel: func(k *Kernel, r []*Ref) {
					x, o := r[0], r[1]
					p := k.ProgramID(0)
					k.ForLoop(0, 2, nil, func(i *Value, _ []*Value) []*Value {
						at := DS(i.Mul(4).Add(p), 1)
						o.Store(x.Load(at).Add(p.Astype(xla.Float32)), at)
						return nil
					})
				},
				spec: CallSpec{Name: "strided_overlap", Grid: []int64{5}, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 9)}},
				args: []*interpreter.Tensor{fill(9)}},
			want: "grid points (0) and (4) both reach its element (4)",
		},
	}...)
	for _, tc := range cases {
		t.Run(tc.c.name, func(t *testing.T) {
			require.ErrorContains(t, lowerTritonErr(t, tc.c), tc.want)
			checkErr, outs, back := tevOrders(t, tc.c)
			require.Error(t, checkErr)
			differ := false
			for i := range outs {
				differ = differ || !sameBits(outs[i], back[i])
			}
			assert.True(t, differ, "the evaluator should show the race: %v", outs[0].Data)
		})
	}
	// Grids of more axes than the check tells apart are refused.
	grid := make([]int64, 64)
	for i := range grid {
		grid[i] = 1
	}
	grid[62], grid[63] = 2, 2
	p, err := Trace(func(k *Kernel, r []*Ref) {
		q := k.ProgramID(63)
		r[1].Store(r[0].Load(DS(q, 1)), DS(q, 1))
	}, CallSpec{Name: "many_axes", Grid: grid, OutShapes: f4}, argTypes([]*interpreter.Tensor{fill(4)}))
	require.NoError(t, err)
	_, err = LowerTriton(p, CompilerParams{})
	require.ErrorContains(t, err, "a grid of 64 axes: the race check follows at most 61")
}

// TestTritonMaskedStoreThenUnmaskedLoad: each program stores its own
// element through a mask (iota == p), then reads it back unmasked. The
// check by dependence cannot tell which elements a mask leaves (a masked
// store covers only an access with the same mask) and refused this, having
// once panicked on the load's missing mask (third review); the check that
// computes positions reads such masks as boxes and accepts it, and the
// results match interpret mode in both program orders.
func TestTritonMaskedStoreThenUnmaskedLoad(t *testing.T) {
	x8 := []*interpreter.Tensor{fTensor([]int64{8}, func(i int) float64 { return float64(i) })}
	f8 := xla.MakeShape(xla.Float32, 8)
	for name, read := range map[string]func(k *Kernel, o, s *Ref, p *Value){
		"spread": func(k *Kernel, o, s *Ref, p *Value) { s.Store(o.Load(DS(p, 1)), DS(p, 1)) },
		"pinned": func(k *Kernel, o, s *Ref, p *Value) {
			k.When(p.Eq(0), func() { s.Store(o.Load(Slice(0, 1)), Slice(0, 1)) })
		},
	} {
		t.Run(name, func(t *testing.T) {
			c := tritonCase{name: "masked_then_read",
				kernel: func(k *Kernel, r []*Ref) {
					x, o, s := r[0], r[1], r[2]
					p := k.ProgramID(0)
					Store(o, []any{All}, x.Load().Add(1.0), k.Iota(xla.Int32, 0, 8).Eq(p.BroadcastTo(8)))
					read(k, o, s, p)
				},
				spec: CallSpec{Name: "masked_then_read", Grid: []int64{8}, OutShapes: []xla.Shape{f8, f8}},
				args: x8}
			assertTritonMatchesInterpret(t, c)
		})
	}
}

// TestTritonAcceptsRaceFreeForms: kernels the race check refused though
// no two programs reach the same elements (found in review), run on the
// TTIR evaluator against interpret mode.
func TestTritonAcceptsRaceFreeForms(t *testing.T) {
	cases := []tritonCase{
		{
			// Each program stores its row whole, then reads parts of it
			// back (a dynamic slice, a point) inside the row it stored.
			name: "row_then_parts",
			kernel: func(k *Kernel, r []*Ref) {
				x, o, s := r[0], r[1], r[2]
				p := k.ProgramID(0)
				o.Store(x.Load(p, All).Mul(2), p, All)
				tot := k.ForLoop(0, 4, []*Value{k.Zeros(xla.Float32)}, func(j *Value, c []*Value) []*Value {
					return []*Value{c[0].Add(o.Load(p, DS(j.Mul(2), 2)).Sum())}
				})
				s.Store(tot[0].Add(o.Load(p, p)), p)
			},
			spec: CallSpec{Name: "row_then_parts", Grid: []int64{4},
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4, 8), xla.MakeShape(xla.Float32, 4)}},
			args: []*interpreter.Tensor{fTensor([]int64{4, 8}, func(i int) float64 { return float64(i) })},
		},
		{
			// ProgramID(0) == ProgramID(1) pins axis 1 (the map's block
			// is g0): only program (i, i) stores block i, whichever way
			// round the comparison is written.
			name: "diagonal_pin",
			kernel: func(k *Kernel, r []*Ref) {
				p0, p1 := k.ProgramID(0), k.ProgramID(1)
				k.When(p0.Eq(p1), func() { r[1].Store(r[0].Load().Add(p1.Astype(xla.Float32))) })
			},
			spec: CallSpec{Name: "diagonal_pin", Grid: []int64{4, 4}, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)},
				InSpecs:  []*BlockSpec{{BlockShape: []int64{2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}},
				OutSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}}},
			args: []*interpreter.Tensor{fTensor([]int64{8}, func(i int) float64 { return float64(i) })},
		},
		{
			// The first program stores element 0, the last element 1.
			name: "disjoint_pins",
			kernel: func(k *Kernel, r []*Ref) {
				x, o := r[0], r[1]
				p := k.ProgramID(0)
				k.When(p.Eq(0), func() { o.Store(x.Load(Slice(0, 1)), Slice(0, 1)) })
				k.When(p.Eq(k.NumPrograms(0).Sub(1)), func() { o.Store(x.Load(Slice(7, 8)), Slice(1, 2)) })
			},
			spec: CallSpec{Name: "disjoint_pins", Grid: []int64{4}, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2)}},
			args: []*interpreter.Tensor{fTensor([]int64{8}, func(i int) float64 { return float64(i) })},
		},
	}
	io := func(k *Kernel) *Value { return k.Iota(xla.Int32, 0, 8) }
	x8 := []*interpreter.Tensor{fTensor([]int64{8}, func(i int) float64 { return float64(i) })}
	f8 := xla.MakeShape(xla.Float32, 8)
	cases = append(cases,
		tritonCase{
			// Program 0 rewrites its own element through the same mask.
			name: "pinned_masked_fixup",
			kernel: func(k *Kernel, r []*Ref) {
				x, o := r[0], r[1]
				p := k.ProgramID(0)
				m := io(k).Eq(p.BroadcastTo(8))
				Store(o, []any{All}, x.Load().Add(1.0), m)
				k.When(p.Eq(0), func() { Store(o, []any{All}, k.Full(xla.Float32, -5.0, 8), m) })
			},
			spec: CallSpec{Name: "pinned_masked_fixup", Grid: []int64{8}, OutShapes: []xla.Shape{f8}},
			args: x8,
		},
		tritonCase{
			// Only program (i, i) stores and reads back part i.
			name: "diagonal_read_back",
			kernel: func(k *Kernel, r []*Ref) {
				x, o := r[0], r[1]
				p0, p1 := k.ProgramID(0), k.ProgramID(1)
				k.When(p0.Eq(p1), func() {
					part := DS(p0.Mul(2), 2)
					o.Store(x.Load(part), part)
					o.Store(o.Load(part).Mul(2), part)
				})
			},
			spec: CallSpec{Name: "diagonal_read_back", Grid: []int64{4, 4}, OutShapes: []xla.Shape{f8}},
			args: x8,
		},
		tritonCase{
			// Only program (0, 0) runs it: p1 == 0, then p0 == p1.
			name: "chained_pins_read_back",
			kernel: func(k *Kernel, r []*Ref) {
				x, o := r[0], r[1]
				p0, p1 := k.ProgramID(0), k.ProgramID(1)
				k.When(p1.Eq(0).And(p0.Eq(p1)), func() {
					o.Store(x.Load())
					o.Store(o.Load().Mul(2))
				})
			},
			spec: CallSpec{Name: "chained_pins_read_back", Grid: []int64{4, 4}, OutShapes: []xla.Shape{f8}},
			args: x8,
		},
		tritonCase{
			// g/2: program 0 writes a header inside its own half.
			name: "half_map_header",
			kernel: func(k *Kernel, r []*Ref) {
				x, o := r[0], r[1]
				p := k.ProgramID(0)
				h := p.Rem(2).Mul(2)
				o.Store(x.Load(DS(h, 2)).Add(p.Astype(xla.Float32).Mul(10)), DS(h, 2))
				k.When(p.Eq(0), func() { o.Store(k.Full(xla.Float32, -5.0, 1), Slice(0, 1)) })
			},
			spec: CallSpec{Name: "half_map_header", Grid: []int64{2}, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)},
				InSpecs:  []*BlockSpec{{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0].Div(2)} })}},
				OutSpecs: []*BlockSpec{{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0].Div(2)} })}}},
			args: []*interpreter.Tensor{fTensor([]int64{4}, func(i int) float64 { return float64(i) })},
		},
	)
	cases = append(cases, tritonCase{
		// The last step along axis 1 (which the map ignores) alone
		// stores the block and reads it back.
		name: "last_step_reads_back",
		kernel: func(k *Kernel, r []*Ref) {
			x, o := r[0], r[1]
			k.When(k.ProgramID(1).Eq(k.NumPrograms(1).Sub(1)), func() {
				o.Store(x.Load())
				o.Store(o.Load().Mul(2))
			})
		},
		spec: CallSpec{Name: "last_step_reads_back", Grid: []int64{2, 3}, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)},
			InSpecs:  []*BlockSpec{{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}},
			OutSpecs: []*BlockSpec{{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}}},
		args: []*interpreter.Tensor{fTensor([]int64{8}, func(i int) float64 { return float64(i) })},
	})
	// Positions that would meet across programs but for a When the check
	// computes, or that meet only in loads.
	cases = append(cases,
		tritonCase{
			// p % 4 over 8 programs, but only programs 0-3 store.
			name: "parity_under_when",
			kernel: func(k *Kernel, r []*Ref) {
				x, o := r[0], r[1]
				p := k.ProgramID(0)
				k.When(p.Lt(4), func() { o.Store(x.Load(DS(p, 1)).Mul(3.0), DS(p.Rem(4), 1)) })
			},
			spec: CallSpec{Name: "parity_under_when", Grid: []int64{8}, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}},
			args: x8,
		},
		tritonCase{
			// Program p stores elements p and p + 4 at the steps of a loop.
			name: "interleaved_loop",
			kernel: func(k *Kernel, r []*Ref) {
				x, o := r[0], r[1]
				p := k.ProgramID(0)
				k.ForLoop(0, 2, nil, func(i *Value, _ []*Value) []*Value {
					at := DS(i.Mul(4).Add(p), 1)
					o.Store(x.Load(at).Add(p.Astype(xla.Float32)), at)
					return nil
				})
			},
			spec: CallSpec{Name: "interleaved_loop", Grid: []int64{4}, OutShapes: []xla.Shape{f8}},
			args: x8,
		},
		tritonCase{
			// A loop over every element, each program storing at the step
			// that a When leaves to it.
			name: "loop_step_per_program",
			kernel: func(k *Kernel, r []*Ref) {
				x, o := r[0], r[1]
				p := k.ProgramID(0)
				k.ForLoop(0, 8, nil, func(i *Value, _ []*Value) []*Value {
					k.When(i.Eq(p), func() { o.Store(x.Load(DS(i, 1)).Mul(5.0), DS(i, 1)) })
					return nil
				})
			},
			spec: CallSpec{Name: "loop_step_per_program", Grid: []int64{8}, OutShapes: []xla.Shape{f8}},
			args: x8,
		},
		tritonCase{
			// A scalar output that the last program alone stores.
			name: "scalar_by_last",
			kernel: func(k *Kernel, r []*Ref) {
				x, o := r[0], r[1]
				p := k.ProgramID(0)
				k.When(p.Eq(k.NumPrograms(0).Sub(1)), func() { o.Store(x.Load().Sum()) })
			},
			spec: CallSpec{Name: "scalar_by_last", Grid: []int64{8}, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32)}},
			args: x8,
		},
		tritonCase{
			// A 2-D grid whose second axis picks a row of a whole-array
			// output: each program (i, j) stores element (j, i).
			name: "transposed_points",
			kernel: func(k *Kernel, r []*Ref) {
				o := r[1]
				i, j := k.ProgramID(0), k.ProgramID(1)
				o.Store(i.Mul(10).Add(j).Astype(xla.Float32).Reshape(1, 1), DS(j, 1), DS(i, 1))
			},
			spec: CallSpec{Name: "transposed_points", Grid: []int64{4, 2}, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2, 4)}},
			args: x8,
		},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assertTritonMatchesInterpret(t, c)
		})
	}
	// The same diagonal with the comparison written the other way round.
	c := cases[1]
	c.kernel = func(k *Kernel, r []*Ref) {
		p0, p1 := k.ProgramID(0), k.ProgramID(1)
		k.When(p1.Eq(p0), func() { r[1].Store(r[0].Load().Add(p1.Astype(xla.Float32))) })
	}
	assertTritonMatchesInterpret(t, c)
}

// A -0 comes out of a kernel with the same sign on both backends: 0 + x
// and x - 0 with a zero constant are x on both (interpret mode folds them,
// as XLA does, and so does the Triton lowering); an accumulator zeroed by
// a When and then added to holds 0 + x, +0 for a -0 x, on both.
// A whole-array output that each program reads and writes at its own
// (dynamic) indices is the kernel's to split: not a race.
func TestTritonAcceptsWholeOutputSplitByPrograms(t *testing.T) {
	c := tritonCase{
		kernel: func(k *Kernel, r []*Ref) {
			x, o := r[0], r[1]
			part := DS(k.ProgramID(0).Mul(2), 2)
			o.Store(k.Zeros(xla.Float32, 2), part)
			o.Store(o.Load(part).Add(x.Load(part)), part)
		},
		spec: CallSpec{Name: "split_whole", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2}},
		args: []*interpreter.Tensor{fTensor([]int64{4}, func(i int) float64 { return float64(i) })},
	}
	assertTritonMatchesInterpret(t, c)
	// A static access that a When on the program id leaves to one
	// program is not every program's (it was refused as a race).
	c.kernel = func(k *Kernel, r []*Ref) {
		x, o := r[0], r[1]
		part := DS(k.ProgramID(0).Mul(2), 2)
		o.Store(x.Load(part), part)
		k.When(k.ProgramID(0).Eq(0), func() { o.Store(o.Load(0).Add(x.Load(3)), 0) })
	}
	c.spec.Name = "split_whole_fixup"
	assertTritonMatchesInterpret(t, c)
	// An output block left to one step of an axis its map ignores (a When
	// on that axis's program id), and one that every program stores the
	// same zeros to once, are not races either.
	row := blockMap(func(g []*Value) []any { return []any{g[0]} })
	c = tritonCase{
		kernel: func(k *Kernel, r []*Ref) {
			k.When(k.ProgramID(1).Eq(2), func() { r[1].Store(r[0].Load().Add(k.ProgramID(1).Astype(xla.Float32))) })
			r[2].Store(k.Zeros(xla.Float32, 2))
		},
		spec: CallSpec{Name: "last_step", Grid: []int64{2, 3},
			OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4), xla.MakeShape(xla.Float32, 2)},
			InSpecs:   []*BlockSpec{{BlockShape: []int64{2}, IndexMap: row}},
			OutSpecs:  []*BlockSpec{{BlockShape: []int64{2}, IndexMap: row}, nil}},
		args: []*interpreter.Tensor{fTensor([]int64{4}, func(i int) float64 { return float64(i) })},
	}
	assertTritonMatchesInterpret(t, c)
	// Two programs sent to one block (g/2) that store their own halves
	// of it, and accesses left to the same program by two Whens.
	c = tritonCase{
		kernel: func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			r[1].Store(p.Astype(xla.Float32).BroadcastTo(1), DS(p.Rem(2), 1))
			k.When(p.Eq(3), func() { r[2].Store(r[0].Load()) })
			k.When(p.Eq(3), func() { r[2].Store(r[2].Load(Slice(0, 2)).Mul(2), Slice(0, 2)) })
		},
		spec: CallSpec{Name: "halves", Grid: []int64{4},
			OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4), xla.MakeShape(xla.Float32, 4)},
			OutSpecs:  []*BlockSpec{{BlockShape: []int64{2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0].Div(2)} })}, nil}},
		args: []*interpreter.Tensor{fTensor([]int64{4}, func(i int) float64 { return float64(i) + 1 })},
	}
	assertTritonMatchesInterpret(t, c)
}

func TestTritonSignedZeros(t *testing.T) {
	negZero := func(n int64) *interpreter.Tensor {
		return fTensor([]int64{n}, func(int) float64 { return math.Copysign(0, -1) })
	}
	row := blockMap(func(g []*Value) []any { return []any{g[0]} })
	cases := []struct {
		c    tritonCase
		sign []bool // of each output's first element
	}{
		{tritonCase{name: "zero_constants",
			kernel: func(k *Kernel, r []*Ref) {
				r[1].Store(k.Zeros(xla.Float32, 4).Add(r[0].Load()))
				r[2].Store(r[0].Load().Add(k.Zeros(xla.Float32, 4)))
				r[3].Store(r[0].Load().Sub(0.0).Add(0.0))
				r[4].Store(r[0].Load().Add(k.Full(xla.Int32, 0, 4).Astype(xla.Float32)))
			},
			spec: CallSpec{Name: "zero_constants", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4), xla.MakeShape(xla.Float32, 4),
				xla.MakeShape(xla.Float32, 4), xla.MakeShape(xla.Float32, 4)}},
			args: []*interpreter.Tensor{negZero(4)}}, []bool{true, true, true, true}},
		{tritonCase{name: "reset_accumulator",
			kernel: func(k *Kernel, r []*Ref) {
				x, o := r[0], r[2]
				k.When(k.ProgramID(0).Eq(0), func() { o.Store(k.Zeros(xla.Float32, 1024)) })
				o.Store(o.Load().Add(x.Load()))
			},
			spec: CallSpec{Name: "reset_accumulator", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2048)}, Grid: []int64{2},
				InSpecs:            []*BlockSpec{{BlockShape: []int64{1024}, IndexMap: row}, {BlockShape: []int64{1024}, IndexMap: row}},
				OutSpecs:           []*BlockSpec{{BlockShape: []int64{1024}, IndexMap: row}},
				InputOutputAliases: map[int]int{1: 0}},
			args: []*interpreter.Tensor{negZero(2048), fTensor([]int64{2048}, func(int) float64 { return 1 })}}, []bool{false}},
		// Added to a dot, whose sum starts from +0 on both backends
		// (products of -0 give +0), interpret mode skips the add at the
		// step that zeroed the accumulator: the same bits.
		{tritonCase{name: "reset_accumulator_dot",
			kernel: func(k *Kernel, r []*Ref) {
				x, y, o := r[0], r[1], r[3]
				k.When(k.ProgramID(0).Eq(0), func() { o.Store(k.Zeros(xla.Float32, 32, 32)) })
				o.Store(o.Load().Add(Dot(x.Load(), y.Load(), xla.Float32)))
			},
			spec: CallSpec{Name: "reset_accumulator_dot", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 64, 32)}, Grid: []int64{2},
				InSpecs: []*BlockSpec{{BlockShape: []int64{32, 32}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], 0} })},
					{BlockShape: []int64{32, 32}, IndexMap: blockMap(func(g []*Value) []any { return []any{0, 0} })},
					{BlockShape: []int64{32, 32}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], 0} })}},
				OutSpecs:           []*BlockSpec{{BlockShape: []int64{32, 32}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0], 0} })}},
				InputOutputAliases: map[int]int{2: 0}},
			args: []*interpreter.Tensor{fTensor([]int64{64, 32}, func(int) float64 { return -1 }), fTensor([]int64{32, 32}, func(int) float64 { return 0 }),
				fTensor([]int64{64, 32}, func(int) float64 { return 1 })}}, []bool{false}},
		// Zeros that only interpret mode knows (stored, then loaded) add
		// as IEEE does: +0 + -0 is +0 on both (interpret mode gave -0;
		// found in review).
		{tritonCase{name: "stored_zeros",
			kernel: func(k *Kernel, r []*Ref) {
				o := r[1]
				o.Store(k.Zeros(xla.Float32, 4))
				o.Store(o.Load().Add(r[0].Load()))
			},
			spec: CallSpec{Name: "stored_zeros", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}},
			args: []*interpreter.Tensor{negZero(4)}}, []bool{false}},
		// Sums start from +0 on both: a row of -0 sums to +0, over an axis
		// of one and of four, and so do the products of a dot too small
		// for the tensor cores (Triton gave -0; found in review).
		{tritonCase{name: "sums_of_negative_zeros",
			kernel: func(k *Kernel, r []*Ref) {
				x := r[0].Load()
				r[1].Store(x.Reshape(4, 1).Sum(1))
				r[2].Store(x.Reshape(1, 4).Sum(1).BroadcastTo(4))
				f := x.Astype(xla.Float16).Reshape(4, 1)
				r[3].Store(Dot(f, k.Full(xla.Float16, 1.0, 1, 1), xla.Float32).Reshape(4))
			},
			spec: CallSpec{Name: "sums_of_negative_zeros", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4), xla.MakeShape(xla.Float32, 4),
				xla.MakeShape(xla.Float32, 4)}},
			args: []*interpreter.Tensor{negZero(4)}}, []bool{false, false, false}},
	}
	for _, tc := range cases {
		t.Run(tc.c.name, func(t *testing.T) {
			want, err := runCall(tc.c.kernel, tc.c.spec, tc.c.args...)
			require.NoError(t, err)
			got := runTritonEval(t, tc.c)
			for i := range want {
				assert.True(t, sameBits(want[i], got[i]), "output %d: interpret %v, Triton %v", i, want[i].Data, got[i].Data)
				assert.Equal(t, tc.sign[i], math.Signbit(float64(want[i].Data.([]float32)[0])), "output %d", i)
			}
		})
	}
}

// Float remainders are libdevice's exact fmod on every float type (f16
// and bf16 through f32), as interpret mode's: 1e10 % 3 is 1, where
// x - trunc(x/y)*y in f32 is far off.
func TestTritonFloatRemIsExact(t *testing.T) {
	for _, dt := range []xla.DType{xla.Float32, xla.Float64, xla.BFloat16} {
		t.Run(dt.String(), func(t *testing.T) {
			c := tritonCase{
				kernel: func(k *Kernel, r []*Ref) { r[2].Store(r[0].Load().Rem(r[1].Load())) },
				spec:   CallSpec{Name: "rem", OutShapes: []xla.Shape{xla.MakeShape(dt, 4)}},
			}
			x := interpreter.NewTensor(xla.MakeShape(dt, 4))
			y := interpreter.NewTensor(xla.MakeShape(dt, 4))
			xs, ys := []float64{1e10, -7.5, 5, 3e38}, []float64{3, 2, -0.75, 7}
			switch d := x.Data.(type) {
			case []float64:
				copy(d, xs)
				copy(y.Data.([]float64), ys)
			case []float32:
				for i := range d {
					d[i], y.Data.([]float32)[i] = float32(xs[i]), float32(ys[i])
				}
			}
			c.args = []*interpreter.Tensor{x, y}
			want, err := runCall(c.kernel, c.spec, c.args...)
			require.NoError(t, err)
			got := runTritonEval(t, c)
			assert.True(t, sameBits(want[0], got[0]), "want %v got %v", want[0].Data, got[0].Data)
			p, err := Trace(c.kernel, c.spec, argTypes(c.args))
			require.NoError(t, err)
			k, err := LowerTriton(p, CompilerParams{})
			require.NoError(t, err)
			assert.Contains(t, k.IR, "__nv_fmod")
			assert.NotContains(t, k.IR, "arith.remf")
		})
	}
}

// Integers wider than 24 bits become bf16 rounded once, as in interpret
// mode, though Triton converts through f32 (the evaluator rounds twice as
// Triton does): 2^24+2^16+1 is 2^24+2^17, not 2^24.
func TestTritonIntToBF16RoundsOnce(t *testing.T) {
	vals := []int64{1<<24 + 1<<16 + 1, -(1<<24 + 1<<16 + 1), 1<<24 + 1<<16, 1<<24 + 1<<16 - 1, 1<<31 - 1, -1 << 31,
		1<<40 + 1<<32 + 1, 1<<63 - 1, -1 << 63, 3, -5, 0, 1<<25 + 1<<17 + 1<<16, 123456789, -987654321, 1<<32 + 1}
	for _, dt := range []xla.DType{xla.Int32, xla.Uint32, xla.Int64, xla.Uint64} {
		t.Run(dt.String(), func(t *testing.T) {
			x := interpreter.NewTensor(xla.MakeShape(dt, 16))
			switch d := x.Data.(type) {
			case []int32:
				for i, v := range vals {
					d[i] = int32(v)
				}
			case []uint32:
				for i, v := range vals {
					d[i] = uint32(v)
				}
			case []int64:
				copy(d, vals)
			case []uint64:
				for i, v := range vals {
					d[i] = uint64(v)
				}
			}
			c := tritonCase{
				kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load().Astype(xla.BFloat16)) },
				spec:   CallSpec{Name: "to_bf16", OutShapes: []xla.Shape{xla.MakeShape(xla.BFloat16, 16)}},
				args:   []*interpreter.Tensor{x},
			}
			want, err := runCall(c.kernel, c.spec, c.args...)
			require.NoError(t, err)
			got := runTritonEval(t, c)
			assert.Equal(t, want[0].Data, got[0].Data)
		})
	}
}

// What the race check leaves to the kernel, accepted: an output block
// several programs only store to (here one of them, under a When), a
// whole-array output split by the programs, and the same kernel under Vmap
// (whose output spec squeezes the batch dim); each gives the same bits in
// either program order on the evaluator and matches interpret mode.
func TestTritonRaceCheckAcceptsSplitOutputs(t *testing.T) {
	fill := func(n int64) *interpreter.Tensor {
		return fTensor([]int64{n}, func(i int) float64 { return float64(i) })
	}
	half := func(k *Kernel, r []*Ref) {
		i := k.ProgramID(0)
		r[1].Store(r[0].Load(DS(i.Mul(8), 8)).Add(1), DS(i.Mul(8), 8))
	}
	halfSpec := CallSpec{Name: "half", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 16)}, Grid: []int64{2}}
	vk, vspec, err := Vmap(half, halfSpec, 2, []bool{true})
	require.NoError(t, err)
	cases := []tritonCase{
		{
			name: "one_writer",
			kernel: func(k *Kernel, r []*Ref) {
				k.When(k.ProgramID(1).Eq(0), func() { r[1].Store(r[0].Load().Mul(2)) })
			},
			spec: CallSpec{Name: "one_writer", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}, Grid: []int64{2, 2},
				InSpecs:  []*BlockSpec{{BlockShape: []int64{2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}},
				OutSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}}},
			args: []*interpreter.Tensor{fill(4)},
		},
		{name: "whole_split", kernel: half, spec: halfSpec, args: []*interpreter.Tensor{fill(16)}},
		{name: "vmapped_whole_split", kernel: vk, spec: vspec,
			args: []*interpreter.Tensor{fTensor([]int64{2, 16}, func(i int) float64 { return float64(3 * i) })}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assertTritonMatchesInterpret(t, c)
		})
	}
}

// Sigmoid on Triton keeps the results below exp's range (1/(1+exp(-x))
// gave 0 at x = -100, interpret mode 3.8e-44) and saturates cleanly.
func TestTritonSigmoidTails(t *testing.T) {
	xs := []float64{-100, -90, -87, -20, -1, 0, 1, 20, 90, 100, math.Inf(-1), math.Inf(1)}
	c := tritonCase{
		kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load().Sigmoid()) },
		spec:   CallSpec{Name: "sigmoid", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 16)}},
		args:   []*interpreter.Tensor{fTensor([]int64{16}, func(i int) float64 { return xs[i%len(xs)] })},
	}
	want, err := runCall(c.kernel, c.spec, c.args...)
	require.NoError(t, err)
	got := runTritonEval(t, c)
	assertCloseTol(t, want[0], got[0], 1e-6)
	assert.NotZero(t, got[0].Data.([]float32)[0], "sigmoid(-100) is subnormal, not 0")
}

// TestTritonKernels reads back the kernels of a module built with Call and
// of JAX's recorded export, and names what a malformed config lacks.
func TestTritonKernels(t *testing.T) {
	c := tritonCases()[1]
	p, err := Trace(c.kernel, c.spec, argTypes(c.args))
	require.NoError(t, err)
	want, err := LowerTriton(p, CompilerParams{NumWarps: 8, NumStages: 2})
	require.NoError(t, err)
	b := stablehlo.NewBuilder("m")
	fb := b.NewFunction("main", stablehlo.TensorOf(c.args[0].Shape), stablehlo.TensorOf(c.args[1].Shape))
	spec := c.spec
	spec.Backend = Triton
	spec.CompilerParams = CompilerParams{NumWarps: 8, NumStages: 2}
	out := Call(fb, c.kernel, spec, fb.Args()...)
	fb.Return(append(out, Call(fb, c.kernel, spec, fb.Args()...)...)...) // two calls
	m, err := b.Build()
	require.NoError(t, err)
	ks, err := TritonKernels(m)
	require.NoError(t, err)
	require.Len(t, ks, 2)
	assert.Equal(t, want, ks[0])
	assert.Equal(t, want, ks[1])

	rec, err := os.ReadFile("../stablehlo/testdata/add_one.stablehlo.mlir")
	require.NoError(t, err)
	jm, err := stablehlo.Parse(rec)
	require.NoError(t, err)
	ks, err = TritonKernels(jm)
	require.NoError(t, err)
	require.Len(t, ks, 1)
	assert.Equal(t, "add_one", ks[0].Name)
	assert.Equal(t, [3]int64{8, 1, 1}, ks[0].Grid)
	assert.Equal(t, []int{4, 3}, []int{ks[0].NumWarps, ks[0].NumStages})
	assert.NotEmpty(t, ks[0].IR) // MLIR bytecode, as JAX writes it

	var call *stablehlo.Op
	m.Walk(func(op *stablehlo.Op) bool {
		if op.Name == "stablehlo.custom_call" && call == nil {
			call = op
		}
		return true
	})
	cfg := call.Attr("mhlo.backend_config").(stablehlo.DictAttr)
	var cut stablehlo.DictAttr
	for _, a := range cfg {
		if a.Name != "grid_y" {
			cut = append(cut, a)
		}
	}
	call.SetAttr("mhlo.backend_config", cut)
	_, err = TritonKernels(m)
	require.ErrorContains(t, err, "@main: Triton custom call: backend config key grid_y is <nil>, want an integer")
	_, err = TritonKernels(nil)
	require.Error(t, err)
}

// TestTritonSelectOnScalar: a Where on a scalar condition over blocks
// selects the blocks on the scalar itself (arith.select %c : tensor<..>),
// the form in which Triton folds an accumulator reset into the scf.if of
// the same condition or into its dot's use-accumulator flag (a splat
// condition hides it: the DSD's many-block loops then select the whole
// accumulator every step); a block condition stays elementwise. Both agree with interpret mode on the evaluator.
func TestTritonSelectOnScalar(t *testing.T) {
	selects := func(r *ttRegion) (scalar, tensor int) {
		var walk func(r *ttRegion)
		walk = func(r *ttRegion) {
			for _, op := range r.ops {
				if op.name == "arith.select" && !op.results[0].t.scalar() {
					if op.operands[0].t.scalar() {
						scalar++
					} else {
						tensor++
					}
				}
				for _, sub := range op.regions {
					walk(sub)
				}
			}
		}
		walk(r)
		return scalar, tensor
	}
	lower := func(c tritonCase) *ttFunc { return lowerCaseFunc(t, c) }
	c := caseNamed(t, "tiles_loop")
	s, v := selects(lower(c).body)
	require.Equal(t, [2]int{1, 0}, [2]int{s, v}, "selects on a scalar and on a block")
	assertTritonMatchesInterpret(t, c)

	block := tritonCase{
		name: "select_block",
		kernel: func(k *Kernel, r []*Ref) {
			x := r[0].Load()
			r[1].Store(Where(x.Gt(0), x, x.Neg()))
		},
		spec: CallSpec{Name: "select_block", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 16)}},
		args: []*interpreter.Tensor{fTensor([]int64{16}, func(i int) float64 { return float64(i) - 7.5 })},
	}
	s, v = selects(lower(block).body)
	require.Equal(t, [2]int{0, 1}, [2]int{s, v}, "selects on a scalar and on a block")
	assertTritonMatchesInterpret(t, block)
}

// A shared output loaded at indices written out again (the same
// arithmetic on the same values, a prefetched index loaded twice) is
// loaded where the program stores it: not a race.
func TestTritonRaceCheckSeesRecomputedIndices(t *testing.T) {
	c := tritonCase{
		kernel: func(k *Kernel, r []*Ref) {
			at, x, o := r[0], r[1], r[2]
			p := k.ProgramID(0)
			o.Store(x.Load(DS(p.Mul(2), 2)), DS(p.Mul(2), 2))
			o.Store(o.Load(DS(k.ProgramID(0).Mul(2), 2)).Mul(3), DS(p.Mul(2), 2))
			j := DS(at.Load(p).Mul(2).Add(4), 2)
			o.Store(x.Load(j), j)
			o.Store(o.Load(DS(at.Load(p).Mul(2).Add(4), 2)).Add(1), DS(at.Load(k.ProgramID(0)).Mul(2).Add(4), 2))
		},
		spec: CallSpec{Name: "recomputed", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}, Grid: []int64{2}, NumScalarPrefetch: 1},
		args: []*interpreter.Tensor{iTensor([]int64{2}, 1, 0), fTensor([]int64{8}, func(i int) float64 { return float64(i) })},
	}
	assertTritonMatchesInterpret(t, c)
	// A load of the output at another index, computed alike from a
	// different value, is still refused.
	c.kernel = func(k *Kernel, r []*Ref) {
		x, o := r[1], r[2]
		p := k.ProgramID(0)
		o.Store(x.Load(DS(p.Mul(2), 2)), DS(p.Mul(2), 2))
		o.Store(o.Load(DS(p.Add(1).Rem(2).Mul(2), 2)), DS(p.Mul(2), 2))
	}
	p, err := Trace(c.kernel, c.spec, argTypes(c.args))
	require.NoError(t, err)
	_, err = LowerTriton(p, CompilerParams{})
	require.ErrorContains(t, err, "at other indices than any store of it")
}

// Race-free kernels the check takes: pins written as one term of an And,
// on a converted program id, or on a value computed twice alike; loads of
// part of what the same program stored; a load left to one program when
// every access of the output is that program's.
func TestTritonRaceCheckAcceptsPinsAndOwnParts(t *testing.T) {
	x := fTensor([]int64{8}, func(i int) float64 { return float64(i) + 1 })
	for _, c := range []tritonCase{
		{name: "and_pin", kernel: func(k *Kernel, r []*Ref) {
			k.When(k.ProgramID(0).Eq(0).And(k.ProgramID(1).Eq(1)), func() { r[1].Store(r[0].Load()) })
		}, spec: CallSpec{Name: "and_pin", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}, Grid: []int64{2, 3}}},
		{name: "converted_pin", kernel: func(k *Kernel, r []*Ref) {
			k.When(k.ProgramID(0).Astype(xla.Int64).Eq(1), func() { r[1].Store(r[0].Load().Mul(2)) })
		}, spec: CallSpec{Name: "converted_pin", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}, Grid: []int64{3}}},
		{name: "last_program_twice", kernel: func(k *Kernel, r []*Ref) {
			k.When(k.ProgramID(0).Eq(k.NumPrograms(0).Sub(1)), func() { r[1].Store(r[0].Load()) })
			k.When(k.ProgramID(0).Eq(k.NumPrograms(0).Sub(1)), func() { r[1].Store(r[1].Load(Slice(0, 4)).Add(1), Slice(0, 4)) })
		}, spec: CallSpec{Name: "last_program_twice", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}, Grid: []int64{3}}},
		{name: "own_part_reread", kernel: func(k *Kernel, r []*Ref) {
			p := k.ProgramID(0)
			r[1].Store(r[0].Load(DS(p.Mul(4), 4)), DS(p.Mul(4), 4))
			r[1].Store(r[1].Load(DS(p.Mul(4), 2)).Sum().BroadcastTo(4), DS(p.Mul(4), 4))
		}, spec: CallSpec{Name: "own_part_reread", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}, Grid: []int64{2}}},
		{name: "one_program_alone", kernel: func(k *Kernel, r []*Ref) {
			k.When(k.ProgramID(0).Eq(0), func() {
				r[1].Store(r[0].Load())
				r[2].Store(r[1].Load(Slice(1, 3)))
			})
		}, spec: CallSpec{Name: "one_program_alone", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8), xla.MakeShape(xla.Float32, 2)}, Grid: []int64{2}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.args = []*interpreter.Tensor{x}
			assertTritonMatchesInterpret(t, c)
		})
	}
}
