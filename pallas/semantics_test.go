package pallas

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/internal/mliropt"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// semanticsCase is a kernel with its inputs and expected outputs.
type semanticsCase struct {
	name   string
	kernel KernelFunc
	spec   CallSpec
	args   []*interpreter.Tensor
	want   any
}

// semanticsCases are kernels on an f32[4,4] input x = 0..15 (one
// whole-array ref unless the case says otherwise). Cases whose shapes are
// not powers of two have a power-of-two variant for the Triton lowering
// (TestKernelSemanticsOnTriton).
func semanticsCases(t *testing.T) []semanticsCase {
	x44 := f32s(16, func(i int) float32 { return float32(i) })
	nan, negZero := float32(math.NaN()), float32(math.Copysign(0, -1))
	return []semanticsCase{
		{
			name: "masked load with other, masked store",
			kernel: func(k *Kernel, r []*Ref) {
				idx := k.Arange(8)
				v := Load(r[0], []any{idx}, idx.Lt(5), -1.0)
				Store(r[1], []any{idx}, v.Mul(2), idx.Ne(3))
			},
			spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}, InSpecs: []*BlockSpec{nil}},
			args: []*interpreter.Tensor{tensor(t, xla.Float32, f32s(8, func(i int) float32 { return float32(i + 1) }), 8)},
			// element 3 is never written: NaN
			want: []float32{2, 4, 6, float32(math.NaN()), 10, -2, -2, -2},
		},
		{
			// Masked-off elements are not read or written, so a masked
			// access may start outside the ref with static indices too, as
			// with dynamic ones.
			name: "masked static slices and indices outside the ref",
			kernel: func(k *Kernel, r []*Ref) {
				m := k.Arange(4).Add(6).Lt(8) // DS(6, 4): elements 6 and 7 are in
				a := Load(r[0], []any{DS(6, 4)}, m, -1.0)
				b := Load(r[0], []any{Slice(-2, 2)}, k.Arange(4).Ge(2), -2.0)
				c := Load(r[0], []any{9}, k.Const(xla.Bool, false), -3.0)
				Store(r[1], []any{Slice(-2, 2)}, b, k.Arange(4).Ge(2))
				r[1].Store(c.BroadcastTo(4), Slice(2, 6))
				Store(r[1], []any{DS(6, 4)}, a, m)
			},
			spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}},
			args: []*interpreter.Tensor{tensor(t, xla.Float32, f32s(8, func(i int) float32 { return float32(i + 1) }), 8)},
			want: []float32{1, 2, -3, -3, -3, -3, 7, 8},
		},
		{
			// A masked slice may be longer than its dim (a block of 8
			// over a 4-element ref), with a dynamic start or a static one,
			// in loads and stores.
			name: "masked slices longer than the ref",
			kernel: func(k *Kernel, r []*Ref) {
				start := k.ProgramID(0).Sub(1) // -1
				at := k.Arange(8).Add(start)
				in := at.Ge(0).And(at.Lt(4))
				a := Load(r[0], []any{DS(start, 8)}, in, 7.0)                // x[j-1], else 7
				b := Load(r[0], []any{Slice(0, 8)}, k.Arange(8).Lt(4), -1.0) // x[j], else -1
				r[1].Store(a.Add(b))
				Store(r[2], []any{DS(start, 8)}, a.Mul(10), in) // out1[i] = a[i+1] * 10
			},
			spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8), xla.MakeShape(xla.Float32, 4)}, Grid: []int64{1}},
			args: []*interpreter.Tensor{tensor(t, xla.Float32, f32s(4, func(i int) float32 { return float32(i + 1) }), 4)},
			want: [][]float32{{8, 3, 5, 7, 3, 6, 6, 6}, {10, 20, 30, 40}},
		},
		{
			name: "gather with broadcast index arrays",
			kernel: func(k *Kernel, r []*Ref) {
				rows := k.Iota(xla.Int32, 0, 2, 1).Add(1)
				cols := k.Iota(xla.Int32, 1, 1, 3)
				r[1].Store(r[0].Load(rows, cols))
			},
			spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2, 3)}},
			args: []*interpreter.Tensor{tensor(t, xla.Float32, x44, 4, 4)},
			want: []float32{4, 5, 6, 8, 9, 10},
		},
		{
			// As in NumPy: the integer 1 and the array are advanced indices
			// separated by a slice, so the array's dim comes first.
			name: "point and array apart: array dims first",
			kernel: func(k *Kernel, r []*Ref) {
				arr := k.Arange(2).Mul(-3).Add(3) // [3 0]
				r[1].Store(r[0].Load(1, All, arr))
			},
			spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2, 3)}},
			args: []*interpreter.Tensor{tensor(t, xla.Float32, f32s(24, func(i int) float32 { return float32(i) }), 2, 3, 4)},
			want: []float32{15, 19, 23, 12, 16, 20},
		},
		{
			name: "point and array adjacent: array dims in place",
			kernel: func(k *Kernel, r []*Ref) {
				arr := k.Arange(2).Mul(-3).Add(3) // [3 0]
				r[1].Store(r[0].Load(All, 1, arr))
			},
			spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2, 2)}},
			args: []*interpreter.Tensor{tensor(t, xla.Float32, f32s(24, func(i int) float32 { return float32(i) }), 2, 3, 4)},
			want: []float32{7, 4, 19, 16},
		},
		{
			name: "scatter rows with an index array, point and slice indices",
			kernel: func(k *Kernel, r []*Ref) {
				r[1].Store(0.0)
				r[1].Store(r[0].Load(2, Slice(1, 3)), k.Arange(2).Mul(2), 0)
				r[1].Store(7.0, 1, DS(k.ProgramID(0), 2))
			},
			spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4, 3)}, Grid: []int64{1}},
			args: []*interpreter.Tensor{tensor(t, xla.Float32, x44, 4, 4)},
			want: []float32{9, 0, 0, 7, 7, 0, 10, 0, 0, 0, 0, 0},
		},
		{
			name: "reductions, where, math",
			kernel: func(k *Kernel, r []*Ref) {
				x := r[0].Load()
				s := x.Sum(1)                          // [6 22 38 54]
				m := x.ReduceMax(0)                    // [12 13 14 15]
				w := Where(s.Gt(20), s, m.Neg())       // [-12 22 38 54]
				r[1].Store(w.Add(x.ReduceMin().Exp())) // + e^0
			},
			spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}},
			args: []*interpreter.Tensor{tensor(t, xla.Float32, x44, 4, 4)},
			want: []float32{-11, 23, 39, 55},
		},
		{
			name: "dot with f32 accumulator and transposed operand",
			kernel: func(k *Kernel, r []*Ref) {
				x := r[0].Load()
				r[1].Store(DotTransposed(x, x, false, true, xla.Float32).Sub(Dot(x, x.T(), xla.Invalid)))
				r[2].Store(Dot(r[0].Load(Slice(0, 2)), x, xla.Float32))
			},
			spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4, 4), xla.MakeShape(xla.Float32, 2, 4)}},
			args: []*interpreter.Tensor{tensor(t, xla.Float32, x44, 4, 4)},
			want: [][]float32{make([]float32, 16), {56, 62, 68, 74, 152, 174, 196, 218}},
		},
		{
			name: "for loop with carry and stores, when on a traced condition",
			kernel: func(k *Kernel, r []*Ref) {
				r[1].Store(0.0)
				acc := k.ForLoop(0, 4, []*Value{k.Zeros(xla.Float32, 4)}, func(i *Value, c []*Value) []*Value {
					row := r[0].Load(i)
					k.When(i.Rem(2).Eq(1), func() { r[1].Store(row, i) })
					return []*Value{c[0].Add(row)}
				})
				r[2].Store(acc[0])
			},
			spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4, 4), xla.MakeShape(xla.Float32, 4)}},
			args: []*interpreter.Tensor{tensor(t, xla.Float32, x44, 4, 4)},
			want: [][]float32{{0, 0, 0, 0, 4, 5, 6, 7, 0, 0, 0, 0, 12, 13, 14, 15}, {24, 28, 32, 36}},
		},
		{
			name: "while loop (first power of two above 100)",
			kernel: func(k *Kernel, r []*Ref) {
				res := k.While([]*Value{k.Const(xla.Int32, 1)}, func(c []*Value) *Value { return c[0].Le(100) },
					func(c []*Value) []*Value { return []*Value{c[0].Mul(2)} })
				r[0].Store(res[0])
			},
			spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Int32)}},
			want: []int32{128},
		},
		{
			name: "program ids, num programs, squeezed block dim, scratch kept across steps",
			kernel: func(k *Kernel, r []*Ref) {
				i, j := k.ProgramID(0), k.ProgramID(1)
				k.When(i.Eq(0).And(j.Eq(0)), func() { r[2].Store(0) })
				r[2].Store(r[2].Load().Add(1))
				r[1].Store(r[0].Load().Add(i.Mul(k.NumPrograms(1)).Add(j).Mul(100).Astype(xla.Float32)).Add(r[2].Load().Astype(xla.Float32)))
			},
			spec: CallSpec{
				OutShapes:     []xla.Shape{xla.MakeShape(xla.Float32, 4, 4)},
				Grid:          []int64{4, 2},
				InSpecs:       []*BlockSpec{{BlockShape: []int64{Squeezed, 2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0], g[1]} }}},
				OutSpecs:      []*BlockSpec{{BlockShape: []int64{Squeezed, 2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0], g[1]} }}},
				ScratchShapes: []xla.Shape{xla.MakeShape(xla.Int32)},
			},
			args: []*interpreter.Tensor{tensor(t, xla.Float32, x44, 4, 4)},
			want: f32s(16, func(e int) float32 { step := e / 2; return float32(e + step*100 + step + 1) }),
		},
		{
			name: "operands padded to whole blocks, unwritten outputs NaN and min int",
			kernel: func(k *Kernel, r []*Ref) {
				r[1].Store(r[0].Load().Mul(2))
			},
			spec: CallSpec{
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 5), xla.MakeShape(xla.Int32, 2)},
				Grid:      []int64{2},
				InSpecs:   []*BlockSpec{{BlockShape: []int64{3}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}},
				OutSpecs:  []*BlockSpec{{BlockShape: []int64{3}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}, nil},
			},
			args: []*interpreter.Tensor{tensor(t, xla.Float32, []float32{1, 2, 3, 4, 5}, 5)},
			want: [][]any{{[]float32{2, 4, 6, 8, 10}}, {[]int32{math.MinInt32, math.MinInt32}}},
		},
		{
			name: "aliased output starts as its input; scalar prefetch drives the index map",
			kernel: func(k *Kernel, r []*Ref) {
				r[3].Store(r[1].Load().Add(r[0].Load(k.ProgramID(0)).Astype(xla.Float32)))
			},
			spec: CallSpec{
				OutShapes:          []xla.Shape{xla.MakeShape(xla.Float32, 4, 2)},
				Grid:               []int64{2},
				NumScalarPrefetch:  1,
				InSpecs:            []*BlockSpec{{BlockShape: []int64{1, 2}, IndexMap: func(g []*Value, pf []*Ref) []any { return []any{pf[0].Load(g[0]), 0} }}, nil},
				OutSpecs:           []*BlockSpec{{BlockShape: []int64{1, 2}, IndexMap: func(g []*Value, pf []*Ref) []any { return []any{pf[0].Load(g[0]), 0} }}},
				InputOutputAliases: map[int]int{2: 0},
			},
			args: []*interpreter.Tensor{
				tensor(t, xla.Int32, []int32{3, 1}, 2),
				tensor(t, xla.Float32, f32s(8, func(i int) float32 { return float32(i) }), 4, 2),
				tensor(t, xla.Float32, f32s(8, func(i int) float32 { return -1 }), 4, 2),
			},
			want: []float32{-1, -1, 3, 4, -1, -1, 9, 10},
		},

		// Power-of-two variants of the cases above that Triton rejects
		// for their shapes.
		{
			name: "gather with broadcast index arrays, power-of-two shape",
			kernel: func(k *Kernel, r []*Ref) {
				rows := k.Iota(xla.Int32, 0, 2, 1).Add(1)
				cols := k.Iota(xla.Int32, 1, 1, 4)
				r[1].Store(r[0].Load(rows, cols))
			},
			spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2, 4)}},
			args: []*interpreter.Tensor{tensor(t, xla.Float32, x44, 4, 4)},
			want: []float32{4, 5, 6, 7, 8, 9, 10, 11},
		},
		{
			name: "point and array apart: array dims first, power-of-two shape",
			kernel: func(k *Kernel, r []*Ref) {
				arr := k.Arange(2).Mul(-3).Add(3) // [3 0]
				r[1].Store(r[0].Load(1, All, arr))
			},
			spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2, 4)}},
			args: []*interpreter.Tensor{tensor(t, xla.Float32, f32s(32, func(i int) float32 { return float32(i) }), 2, 4, 4)},
			want: []float32{19, 23, 27, 31, 16, 20, 24, 28},
		},
		{
			name: "scatter rows with an index array, point and slice indices, power-of-two shape",
			kernel: func(k *Kernel, r []*Ref) {
				r[1].Store(0.0)
				r[1].Store(r[0].Load(2, Slice(1, 3)), k.Arange(2).Mul(2), 0)
				r[1].Store(7.0, 1, DS(k.ProgramID(0), 2))
			},
			spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4, 4)}, Grid: []int64{1}},
			args: []*interpreter.Tensor{tensor(t, xla.Float32, x44, 4, 4)},
			want: []float32{9, 0, 0, 0, 7, 7, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0},
		},
		{
			// Argmax and Argmin take the first of equal elements (-0 and 0
			// too) and, in floats, the first NaN; Reshape infers a -1 dim
			// and ExpandDims keeps a reduced axis, as keepdims does.
			name: "argmax, argmin, reshape -1, expand dims",
			kernel: func(k *Kernel, r []*Ref) {
				x := r[0].Load()
				ints := k.Iota(xla.Int32, 1, 4, 4).Mul(3).Rem(4) // rows 0 3 2 1
				r[1].Store(x.Argmax(1))
				r[2].Store(x.Argmin(-1))
				r[3].Store(ints.Argmax(1).Add(ints.Argmin(0).Mul(10)).Add(x.Gt(3.0).Argmin(1).Mul(100)))
				r[4].Store(x.Sub(x.ReduceMin(1).Reshape(-1, 1)))
				r[5].Store(x.Sum(0).ExpandDims(0).BroadcastTo(4, 4))
			},
			spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 4), xla.MakeShape(xla.Int32, 4), xla.MakeShape(xla.Int32, 4),
				xla.MakeShape(xla.Float32, 4, 4), xla.MakeShape(xla.Float32, 4, 4)}},
			args: []*interpreter.Tensor{tensor(t, xla.Float32, []float32{
				1, 3, 3, 2,
				5, nan, 7, nan,
				negZero, 0, -1, -1,
				4, 4, 4, 4}, 4, 4)},
			want: [][]any{
				{[]int32{1, 1, 0, 0}},
				{[]int32{0, 1, 2, 0}},
				{[]int32{1, 101, 1, 1}}, // + 100 * the first x not above 3 (none: 0)
				{[]float32{0, 2, 2, 1, nan, nan, nan, nan, 1, 1, 0, 0, 0, 0, 0, 0}},
				{[]float32{10, nan, 13, nan, 10, nan, 13, nan, 10, nan, 13, nan, 10, nan, 13, nan}},
			},
		},
		{
			// (No unwritten output: on a GPU it holds whatever was there.)
			name: "operands padded to whole power-of-two blocks",
			kernel: func(k *Kernel, r []*Ref) {
				r[1].Store(r[0].Load().Mul(2).Add(r[0].Load().Sum()))
			},
			spec: CallSpec{
				OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 5)},
				Grid:      []int64{2},
				InSpecs:   []*BlockSpec{{BlockShape: []int64{4}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}},
				OutSpecs:  []*BlockSpec{{BlockShape: []int64{4}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}},
			},
			args: []*interpreter.Tensor{tensor(t, xla.Float32, []float32{1, 2, 3, 4, 5}, 5)},
			// The last block's padding reads as NaN, so its sum is NaN.
			want: []float32{12, 14, 16, 18, float32(math.NaN())},
		},
	}
}

// semanticsTritonRejects are the semanticsCases the Triton lowering
// rejects, with the reason its error gives.
var semanticsTritonRejects = map[string]string{
	// Tensors of 3 elements along a dim: the column iota i32[1,3], the
	// loaded f32[2,3], the zeros splatted to the whole f32[4,3] output.
	"gather with broadcast index arrays":                        "power-of-two dims",
	"point and array apart: array dims first":                   "power-of-two dims",
	"scatter rows with an index array, point and slice indices": "power-of-two dims",
	// Grid steps run in parallel on a GPU: no state carried across them.
	"program ids, num programs, squeezed block dim, scratch kept across steps": "scratch refs have no Triton lowering",
	// Blocks of 3.
	"operands padded to whole blocks, unwritten outputs NaN and min int": "power-of-two block dims",
}

// TestKernelSemanticsOnTriton runs every semanticsCase the Triton lowering
// takes through the TTIR reference evaluator and compares it with
// interpret mode (as TestTritonMatchesInterpret does), and checks that the
// others are rejected for the reason semanticsTritonRejects gives. With
// mlir-opt present, each kernel's TTIR is verified too.
func TestKernelSemanticsOnTriton(t *testing.T) {
	opt := mliropt.Path()
	seen := map[string]bool{}
	for _, c := range semanticsCases(t) {
		seen[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			p, err := Trace(c.kernel, c.spec, argTypes(c.args))
			require.NoError(t, err)
			k, err := LowerTriton(p, CompilerParams{})
			if why, ok := semanticsTritonRejects[c.name]; ok {
				require.Error(t, err, "the Triton lowering takes this case now: remove it from semanticsTritonRejects")
				assert.Contains(t, err.Error(), why)
				t.Logf("Triton rejects it: %v", err)
				return
			}
			require.NoError(t, err)
			want, err := runCall(c.kernel, c.spec, c.args...)
			require.NoError(t, err)
			got := runTritonEval(t, tritonCase{name: c.name, kernel: c.kernel, spec: c.spec, args: c.args})
			require.Len(t, got, len(want))
			for i := range want {
				assertClose(t, want[i], got[i])
			}
			if opt != "" {
				_, err := mliropt.Run(opt, k.IR)
				require.NoError(t, err, "--- input ---\n%s", k.IR)
			}
		})
	}
	for name := range semanticsTritonRejects {
		assert.True(t, seen[name], "semanticsTritonRejects names no case %q", name)
	}
}

// TestKernelSemantics runs semanticsCases in interpret mode and checks
// them element by element.
func TestKernelSemantics(t *testing.T) {
	for _, c := range semanticsCases(t) {
		t.Run(c.name, func(t *testing.T) {
			out, err := runCall(c.kernel, c.spec, c.args...)
			require.NoError(t, err)
			switch w := c.want.(type) {
			case []float32:
				assertFloats(t, w, out[0].Data.([]float32))
			case []int32:
				assert.Equal(t, w, out[0].Data)
			case [][]float32:
				for i := range w {
					assertFloats(t, w[i], out[i].Data.([]float32))
				}
			case [][]any:
				for i := range w {
					if f, ok := w[i][0].([]float32); ok {
						assertFloats(t, f, out[i].Data.([]float32))
					} else {
						assert.Equal(t, w[i][0], out[i].Data)
					}
				}
			}
		})
	}
}

func assertFloats(t *testing.T, want, got []float32) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		if math.IsNaN(float64(want[i])) {
			assert.True(t, math.IsNaN(float64(got[i])), "element %d: want NaN, got %v", i, got[i])
			continue
		}
		assert.InDelta(t, want[i], got[i], 1e-4*math.Max(1, math.Abs(float64(want[i]))), "element %d", i)
	}
}

func TestErfMatchesGo(t *testing.T) {
	xs := f32s(41, func(i int) float32 { return float32(i-20) / 5 })
	out, err := runCall(func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load().Erf()) },
		CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 41)}}, tensor(t, xla.Float32, xs, 41))
	require.NoError(t, err)
	for i, x := range xs {
		assert.InDelta(t, math.Erf(float64(x)), out[0].Data.([]float32)[i], 3e-7, "erf(%v)", x)
	}
	// float64 to its own precision (chlo.erf, as JAX lowers lax.erf).
	x64 := interpreter.NewTensor(xla.MakeShape(xla.Float64, 41))
	for i := range x64.Data.([]float64) {
		x64.Data.([]float64)[i] = float64(i-20) / 7
	}
	out, err = runCall(func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load().Erf()) },
		CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float64, 41)}}, x64)
	require.NoError(t, err)
	for i, x := range x64.Data.([]float64) {
		assert.InDelta(t, math.Erf(x), out[0].Data.([]float64)[i], 1e-15, "erf(%v)", x)
	}
}

func TestBoundsCheckErrors(t *testing.T) {
	x := tensor(t, xla.Float32, f32s(8, func(i int) float32 { return float32(i) }), 8)
	blk := []*BlockSpec{{BlockShape: []int64{4}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}}
	spec := CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 8)}, Grid: []int64{2}, InSpecs: blk, OutSpecs: blk}
	cases := []struct {
		name   string
		kernel KernelFunc
		noChk  bool
		want   []string
	}{
		{"dynamic slice load past the block", func(k *Kernel, r []*Ref) {
			r[1].Store(r[0].Load(DS(k.ProgramID(0).Mul(2), 3)).Sum(), Slice(0, 1))
			r[1].Store(0.0, Slice(1, 4))
		}, false, []string{`kernel "oob"`, "grid point (1)", "load from input 0", "semantics_test.go:", "starting at (2) does not fit in (4)"}},
		{"index array store past the block", func(k *Kernel, r []*Ref) {
			r[1].Store(1.0, k.Arange(4).Add(k.ProgramID(0)))
		}, false, []string{"grid point (1)", "store to output 0", "element index (4) outside [0, 4)"}},
		{"block index out of range", func(k *Kernel, r []*Ref) {
			r[1].Store(r[0].Load())
		}, false, nil},
		{"masked accesses are not checked", func(k *Kernel, r []*Ref) {
			idx := k.Arange(4).Add(k.ProgramID(0).Mul(3))
			Store(r[1], []any{k.Arange(4)}, Load(r[0], []any{idx}, idx.Lt(4), 0.0), nil)
		}, false, nil},
		{"masked static slice with an element past the block", func(k *Kernel, r []*Ref) {
			// DS(2, 4) of a block of 4 with three elements unmasked: the
			// third, element 4, is outside.
			r[1].Store(Load(r[0], []any{DS(2, 4)}, k.Arange(4).Lt(3), 0.0))
		}, false, []string{"grid point (0)", "load from input 0", "element index (4) outside [0, 4)"}},
		{"masked static index past the block", func(k *Kernel, r []*Ref) {
			Store(r[1], []any{5}, 1.0, k.ProgramID(0).Eq(1))
			r[1].Store(0.0)
		}, false, []string{"grid point (1)", "store to output 0", "element index (5) outside [0, 4)"}},
		{"dynamic integer index past the block", func(k *Kernel, r []*Ref) {
			r[1].Store(r[0].Load(k.ProgramID(0).Add(3)).BroadcastTo(4))
		}, false, []string{"grid point (1)", "load from input 0", ": element index (4) outside [0, 4)"}},
		{"checks off", func(k *Kernel, r []*Ref) {
			r[1].Store(r[0].Load(DS(k.ProgramID(0).Mul(2), 3)).Sum(), Slice(0, 1))
			r[1].Store(0.0, Slice(1, 4))
		}, true, nil},
		{"load in a While condition past the block", func(k *Kernel, r []*Ref) {
			// c = 0, 1, 2, 3: the load at c = 3 reads elements 3 and 4.
			c := k.While([]*Value{k.Const(xla.Int32, 0)}, func(c []*Value) *Value {
				return r[0].Load(DS(c[0], 2)).Sum().Lt(1000.0).And(c[0].Lt(3))
			}, func(c []*Value) []*Value { return []*Value{c[0].Add(1)} })
			r[1].Store(c[0].Astype(xla.Float32).BroadcastTo(4))
		}, false, []string{"grid point (0)", "load from input 0", "starting at (3) does not fit in (4)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := spec
			s.Name = "oob"
			s.CompilerParams.NoBoundsChecks = c.noChk
			if c.name == "block index out of range" {
				bad := []*BlockSpec{{BlockShape: []int64{4}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0].Add(1)} }}}
				s.InSpecs = bad
				c.want = []string{"grid point (1)", "index map of input 0", "block index (2) outside [0, 2)"}
			}
			_, err := runCall(c.kernel, s, x)
			if c.want == nil {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			var be *BoundsError
			require.True(t, errors.As(err, &be), "want a *BoundsError, got %T: %v", err, err)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestTraceErrors(t *testing.T) {
	one := []xla.Shape{xla.MakeShape(xla.Float32, 4)}
	cases := []struct {
		name   string
		kernel KernelFunc
		spec   CallSpec
		want   []string
	}{
		{"mixed dtypes", func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load().Add(k.ProgramID(0))) },
			CallSpec{OutShapes: one, Grid: []int64{1}}, []string{`kernel "bad"`, "add at semantics_test.go:", "dtypes differ"}},
		{"shapes do not broadcast", func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load().Add(k.Zeros(xla.Float32, 3))) },
			CallSpec{OutShapes: one}, []string{"add at semantics_test.go:", "do not broadcast"}},
		{"static index out of range", func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load(4)) },
			CallSpec{OutShapes: one}, []string{"load at semantics_test.go:", "outside dim 0"}},
		{"store to an input", func(k *Kernel, r []*Ref) { r[0].Store(1.0) },
			CallSpec{OutShapes: one}, []string{"store", "read-only"}},
		{"store to a scalar-prefetch array", func(k *Kernel, r []*Ref) { r[0].Store(1.0, 0) },
			CallSpec{OutShapes: one, NumScalarPrefetch: 1}, []string{"store", "read-only"}},
		{"program id axis", func(k *Kernel, r []*Ref) { k.ProgramID(1) },
			CallSpec{OutShapes: one, Grid: []int64{2}}, []string{"program_id", "axis 1 outside the grid of rank 1"}},
		{"value from a closed region", func(k *Kernel, r []*Ref) {
			var leaked *Value
			k.ForLoop(0, 2, []*Value{k.Zeros(xla.Float32)}, func(i *Value, c []*Value) []*Value { leaked = c[0].Add(1); return []*Value{leaked} })
			r[1].Store(leaked)
		}, CallSpec{OutShapes: one}, []string{"closed region"}},
		{"loop body returns the wrong type", func(k *Kernel, r []*Ref) {
			k.ForLoop(0, 2, []*Value{k.Zeros(xla.Float32)}, func(i *Value, c []*Value) []*Value { return []*Value{i} })
		}, CallSpec{OutShapes: one}, []string{"for", "carry 0"}},
		{"bad grid", func(k *Kernel, r []*Ref) {}, CallSpec{OutShapes: one, Grid: []int64{0}}, []string{"dim 0 is not positive"}},
		{"index map rank", func(k *Kernel, r []*Ref) {},
			CallSpec{OutShapes: one, InSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{0, 0} }}}},
			[]string{"index map of input 0", "2 block indices for an array of rank 1"}},
		{"unknown backend", func(k *Kernel, r []*Ref) {}, CallSpec{OutShapes: one, Backend: "tpu9"}, []string{`backend "tpu9" is not available`}},
		{"constant overflows its dtype", func(k *Kernel, r []*Ref) { k.Full(xla.Int8, 300) },
			CallSpec{OutShapes: one}, []string{"const at semantics_test.go:", "constant 300 overflows i8"}},
		{"Go scalar operand overflows", func(k *Kernel, r []*Ref) { k.Zeros(xla.Uint8, 4).Add(-1) },
			CallSpec{OutShapes: one}, []string{"add at semantics_test.go:", "constant -1 overflows ui8"}},
		{"kernel panics", func(k *Kernel, r []*Ref) { _ = r[5] }, CallSpec{OutShapes: one},
			[]string{"kernel at semantics_test.go:", "panicked while tracing", "index out of range"}},
		{"nil value in an op", func(k *Kernel, r []*Ref) { var v *Value; r[1].Store(r[0].Load().Add(v)) }, CallSpec{OutShapes: one},
			[]string{"add at semantics_test.go:", "operand 1 is nil"}},
		{"index map panics", func(k *Kernel, r []*Ref) {},
			CallSpec{OutShapes: one, InSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[3]} }}}},
			[]string{"index map of input 0 (f32[2] block of f32[4]) at semantics_test.go:", "panicked while tracing"}},
		{"two -1 dims", func(k *Kernel, r []*Ref) { k.Zeros(xla.Float32, 4).Reshape(-1, -1) },
			CallSpec{OutShapes: one}, []string{"reshape at semantics_test.go:", "more than one -1 dim in shape [-1 -1]"}},
		{"no size for a -1 dim", func(k *Kernel, r []*Ref) { k.Zeros(xla.Float32, 4).Reshape(3, -1) },
			CallSpec{OutShapes: one}, []string{"cannot reshape f32[4] to [3 -1]: no size for the -1 dim"}},
		{"expand dims axis", func(k *Kernel, r []*Ref) { r[0].Load().ExpandDims(3) },
			CallSpec{OutShapes: one}, []string{"expand_dims at semantics_test.go:", "bad axes [3] to insert into f32[4] (each in [-2, 2), once)"}},
		{"argmax axis", func(k *Kernel, r []*Ref) { r[0].Load().Argmax(1) },
			CallSpec{OutShapes: one}, []string{"argmax at semantics_test.go:", "axis 1 for rank 1"}},
		{"argmax of no elements", func(k *Kernel, r []*Ref) { k.Zeros(xla.Float32, 2, 0).Argmax(-1) },
			CallSpec{OutShapes: one}, []string{"argmax at semantics_test.go:", "axis -1 of f32[2,0] has no elements"}},
		{"argmax axis as given", func(k *Kernel, r []*Ref) { r[0].Load().Argmax(-3) },
			CallSpec{OutShapes: one}, []string{"axis -3 for rank 1"}},
		{"a reduced axis lines up from the last", func(k *Kernel, r []*Ref) { k.Zeros(xla.Float32, 4, 2).Add(r[0].Load()) },
			CallSpec{OutShapes: one}, []string{"shapes [4 2] and [4] do not broadcast (dims line up from the last, as in NumPy: ExpandDims(1) on the [4] operand"}},
		{"index map returns a float", func(k *Kernel, r []*Ref) {},
			CallSpec{OutShapes: one, InSpecs: []*BlockSpec{{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{1.5} }}}},
			[]string{"index map of input 0 (f32[2] block of f32[4]) at semantics_test.go:", "1.5"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := stablehlo.NewBuilder("t")
			fb := b.NewFunction("main", stablehlo.Tensor(xla.Float32, 4))
			c.spec.Name = "bad"
			_, _, callLine, _ := runtime.Caller(0)
			outs := Call(fb, c.kernel, c.spec, fb.Arg(0))
			require.Len(t, outs, 1)
			fb.Return(outs...)
			_, err := b.Build()
			require.Error(t, err)
			var pe *Error
			require.True(t, errors.As(err, &pe), "want a *pallas.Error inside %v", err)
			assert.Equal(t, "bad", pe.Kernel)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
			// The error is placed in the kernel or index map, not at Call.
			assert.NotContains(t, pe.Error(), fmt.Sprintf("semantics_test.go:%d: ", callLine+1))
		})
	}
}

// Abs of unsigned integers is the value itself (StableHLO's abs takes only
// signed ones); signed ones are negated below zero, the minimum wrapping.
func TestAbsOfIntegers(t *testing.T) {
	u := interpreter.NewTensor(xla.MakeShape(xla.Uint8, 4))
	copy(u.Data.([]uint8), []uint8{200, 0, 5, 255})
	s := interpreter.NewTensor(xla.MakeShape(xla.Int8, 4))
	copy(s.Data.([]int8), []int8{-128, -5, 0, 7})
	out, err := runCall(func(k *Kernel, r []*Ref) {
		r[2].Store(r[0].Load().Abs())
		r[3].Store(r[1].Load().Abs())
	}, CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Uint8, 4), xla.MakeShape(xla.Int8, 4)}}, u, s)
	require.NoError(t, err)
	assert.Equal(t, []uint8{200, 0, 5, 255}, out[0].Data)
	assert.Equal(t, []int8{-128, 5, 0, 7}, out[1].Data)
}

// Sums of bf16 and f16 accumulate in f32 and round once: 512 ones are 512
// (added one by one in bf16 they stop at 256, where 257 rounds back).
func TestHalfFloatSumsAccumulateInF32(t *testing.T) {
	for _, dt := range []xla.DType{xla.BFloat16, xla.Float16} {
		x := interpreter.NewTensor(xla.MakeShape(dt, 2, 512))
		for i := range x.Data.([]float32) {
			x.Data.([]float32)[i] = 1
		}
		out, err := runCall(func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load().Sum(1)) },
			CallSpec{OutShapes: []xla.Shape{xla.MakeShape(dt, 2)}}, x)
		require.NoError(t, err)
		assert.Equal(t, []float32{512, 512}, out[0].Data, "%v", dt)
	}
}

// TestGoIntegerIndices: ref indices, slice starts and block indices of
// any Go integer kind mean what an int does.
func TestGoIntegerIndices(t *testing.T) {
	x := tensor(t, xla.Float32, f32s(16, func(i int) float32 { return float32(i) }), 4, 4)
	spec := CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 2, 4)}, Grid: []int64{1},
		InSpecs: []*BlockSpec{{BlockShape: []int64{2, 4}, IndexMap: func([]*Value, []*Ref) []any { return []any{uint32(1), uint8(0)} }}}}
	out, err := runCall(func(k *Kernel, r []*Ref) {
		// Block rows 2..3 of x; row uint16(1) is x's row 3.
		r[1].Store(r[0].Load(uint16(1), DS(uint64(1), 2)), int8(0), DS(uint(0), 2))
		r[1].Store(r[0].Load(int16(0), Slice(0, 2)), uintptr(1), DS(uint32(2), 2))
		r[1].Store(0.0, uint8(0), Slice(2, 4))
		r[1].Store(0.0, int64(1), Slice(0, 2))
	}, spec, x)
	require.NoError(t, err)
	assert.Equal(t, []float32{13, 14, 0, 0, 0, 0, 8, 9}, out[0].Data)
}

// Complex outputs never written read as NaN in both parts, as float
// outputs read as NaN (0+0i would look written).
func TestUnwrittenComplexIsNaN(t *testing.T) {
	for _, dt := range []xla.DType{xla.Complex64, xla.Complex128} {
		blk := &BlockSpec{BlockShape: []int64{2}, IndexMap: func(g []*Value, _ []*Ref) []any { return []any{g[0]} }}
		spec := CallSpec{OutShapes: []xla.Shape{xla.MakeShape(dt, 4)}, Grid: []int64{2},
			InSpecs: []*BlockSpec{blk}, OutSpecs: []*BlockSpec{blk}}
		out, err := runCall(func(k *Kernel, r []*Ref) {
			k.When(k.ProgramID(0).Eq(0), func() { r[1].Store(r[0].Load()) })
		}, spec, interpreter.NewTensor(xla.MakeShape(dt, 4)))
		require.NoError(t, err, "%v", dt)
		switch d := out[0].Data.(type) {
		case []complex64:
			assert.Equal(t, complex64(0), d[0])
			assert.True(t, math.IsNaN(float64(real(d[2]))) && math.IsNaN(float64(imag(d[3]))), "%v", d)
		case []complex128:
			assert.Equal(t, complex128(0), d[1])
			assert.True(t, math.IsNaN(real(d[3])) && math.IsNaN(imag(d[2])), "%v", d)
		default:
			t.Fatalf("%v: data %T", dt, d)
		}
	}
}

// A zero-size output whose (whole, zero-size) block the kernel loads:
// Vmap's spec of it is [Squeezed, 0], and a block of 0 for a dim of 0 is
// a user's spec too. Interpret mode's padding of edge blocks divided by
// the block size: the call panicked (found in review).
func TestZeroSizeBlocksLoaded(t *testing.T) {
	kernel := func(k *Kernel, r []*Ref) {
		r[1].Store(r[0].Load())
		r[1].Store(r[1].Load().Add(1.0))
	}
	spec := CallSpec{Name: "empty_load", OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 0)}}
	vk, vspec, err := Vmap(kernel, spec, 2, []bool{true})
	require.NoError(t, err)
	got, err := runCall(vk, vspec, interpreter.NewTensor(xla.MakeShape(xla.Float32, 2, 0)))
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 0}, got[0].Shape.Dims)

	spec.InSpecs = []*BlockSpec{{BlockShape: []int64{0}}}
	spec.OutSpecs = []*BlockSpec{{BlockShape: []int64{0}}}
	got, err = runCall(kernel, spec, interpreter.NewTensor(xla.MakeShape(xla.Float32, 0)))
	require.NoError(t, err)
	assert.Equal(t, []int64{0}, got[0].Shape.Dims)
}
