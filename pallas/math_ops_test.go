package pallas

import (
	"fmt"
	"math"
	"testing"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mathInputs are 16 values of each unary op's domain that show what the op
// is for: tiny arguments (where log(1+x) and exp(x)-1 lose every digit),
// halves (ties of round), signed zeros and NaN (sign).
var mathInputs = map[string][]float64{
	"log1p": {0, 1e-10, -1e-7, 3e-5, 0.25, -0.5, 1, 2.5, 10, 1e3, -0.999, 7e-3, 0.1, -0.1, 5, 100},
	"expm1": {0, 1e-10, -1e-7, 3e-5, 0.25, -0.5, 1, 2.5, 10, -20, -0.999, 7e-3, 0.1, -0.1, 5, -1e-3},
	"tan":   {0, 1e-6, -1e-6, 0.5, -0.5, 1, -1, 1.2, -1.2, 0.785, 3, -3, 0.1, 2, -2, 1.5},
	"round": {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49, 0.51, -0.51, 3, -7.25, 1e6 + 0.5, 255.5, math.Copysign(0, -1), math.Inf(1), math.NaN()},
	"sign":  {-3, 4, 0, math.Copysign(0, -1), math.NaN(), math.Inf(-1), math.Inf(1), 1e-30, -1e-30, 0.5, -0.5, 7, -7, 100, -100, 2},
}

// mathWant is what each op gives in Go's math, the reference the
// backends must meet (rounded to the result type by the caller).
var mathWant = map[string]func(float64) float64{
	"log1p": math.Log1p,
	"expm1": math.Expm1,
	"tan":   math.Tan,
	"round": math.RoundToEven,
	"sign": func(v float64) float64 {
		switch {
		case v > 0:
			return 1
		case v < 0:
			return -1
		}
		return v // ±0 and NaN kept
	},
}

var mathMethod = map[string]func(*Value) *Value{
	"log1p": (*Value).Log1p, "expm1": (*Value).Expm1, "tan": (*Value).Tan, "round": (*Value).Round, "sign": (*Value).Sign,
}

// TestUnaryMathOps: log1p, expm1, tan, round and sign in f32, f64, bf16
// and f16 against Go's math, in interpret mode, as Triton (the TTIR
// evaluator) and on the IR contract's evaluator. log1p and expm1 must keep
// the digits of tiny arguments (a relative tolerance of a few ulps);
// round and sign are exact.
func TestUnaryMathOps(t *testing.T) {
	for _, name := range []string{"log1p", "expm1", "tan", "round", "sign"} {
		for _, dt := range []xla.DType{xla.Float32, xla.Float64, xla.BFloat16, xla.Float16} {
			t.Run(fmt.Sprintf("%s/%v", name, dt), func(t *testing.T) {
				in := mathInputs[name]
				x := floatTensor(dt, []int64{16}, func(i int) float64 { return in[i] })
				xs := floats(x)
				c := tritonCase{name: "math_" + name, kernel: func(k *Kernel, r []*Ref) { r[1].Store(mathMethod[name](r[0].Load())) },
					spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(dt, 16)}}, args: []*interpreter.Tensor{x}}
				ulp := map[xla.DType]float64{xla.Float32: 0x1p-23, xla.Float64: 0x1p-52, xla.BFloat16: 0x1p-7, xla.Float16: 0x1p-10}[dt]
				checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
					got := floats(outs[0])
					for i, v := range xs {
						want := float64(interpreter.RoundNarrow64(dt, mathWant[name](v)))
						if dt == xla.Float64 {
							want = mathWant[name](v)
						}
						switch {
						case math.IsNaN(want):
							assert.True(t, math.IsNaN(got[i]), "%s: %s(%v) = %v, want NaN", backend, name, v, got[i])
						case name == "round" || name == "sign" || math.IsInf(want, 0):
							assert.Equal(t, math.Float64bits(want), math.Float64bits(got[i]), "%s: %s(%v) = %v, want %v", backend, name, v, got[i], want)
						default:
							assert.InDelta(t, want, got[i], 4*ulp*math.Abs(want), "%s: %s(%v) = %v, want %v", backend, name, v, got[i], want)
						}
					}
				})
			})
		}
	}
}

// TestSignOfIntegers: -1, 0, 1 for signed integers, 0 and 1 for unsigned
// ones (stablehlo.sign takes signed types only: interpret mode compares).
func TestSignOfIntegers(t *testing.T) {
	vals := []int64{-5, 0, 7, math.MinInt32, math.MaxInt32, -1, 1, 300}
	for _, dt := range []xla.DType{xla.Int32, xla.Int8, xla.Int64, xla.Uint32, xla.Uint8} {
		t.Run(dt.String(), func(t *testing.T) {
			x := intTensor(dt, []int64{8}, func(i int) int64 { return vals[i] })
			c := tritonCase{name: "sign_ints", kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load().Sign()) },
				spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(dt, 8)}}, args: []*interpreter.Tensor{x}}
			xs := ints(t, x)
			checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
				for i, v := range ints(t, outs[0]) {
					want := int64(0)
					switch {
					case xs[i] > 0:
						want = 1
					case xs[i] < 0:
						want = -1
					}
					assert.Equal(t, want, v, "%s: sign(%d)", backend, xs[i])
				}
			})
		})
	}
}

// TestClipMeanProd: Clip on either side or both; Mean over an axis and
// over all (f32, an i32 input giving f32, bf16 summed in f32); Prod of
// floats, wrapping i32, bools (an i32 of all-true) and bf16.
func TestClipMeanProd(t *testing.T) {
	x := fTensor([]int64{4, 8}, func(i int) float64 { return float64(i%7) - 2.5 })
	xs := floats(x)
	c := tritonCase{name: "clip_mean_prod", kernel: func(k *Kernel, r []*Ref) {
		v := r[0].Load()
		r[1].Store(v.Clip(-1.0, 2.0))
		r[2].Store(v.Clip(nil, 0.0).Add(v.Clip(k.Full(xla.Float32, 1.5), nil)))
		r[3].Store(v.Mean(1))
		r[4].Store(v.Mean().BroadcastTo(1))
		r[5].Store(v.Prod(0))
		r[6].Store(v.Astype(xla.Int32).Mean(-1))
	}, spec: CallSpec{OutShapes: []xla.Shape{
		xla.MakeShape(xla.Float32, 4, 8), xla.MakeShape(xla.Float32, 4, 8), xla.MakeShape(xla.Float32, 4),
		xla.MakeShape(xla.Float32, 1), xla.MakeShape(xla.Float32, 8), xla.MakeShape(xla.Float32, 4)}},
		args: []*interpreter.Tensor{x}}
	checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
		clip, both := floats(outs[0]), floats(outs[1])
		var all float64
		for i, v := range xs {
			assert.Equal(t, math.Min(math.Max(v, -1), 2), clip[i], "%s: clip(%v)", backend, v)
			assert.Equal(t, math.Min(v, 0)+math.Max(v, 1.5), both[i], "%s: one-sided clips of %v", backend, v)
			all += v
		}
		rows, prods, intMeans := floats(outs[2]), floats(outs[4]), floats(outs[5])
		for i := 0; i < 4; i++ {
			s, si := 0.0, 0
			for j := 0; j < 8; j++ {
				s += xs[i*8+j]
				si += int(xs[i*8+j]) // toward zero, as Astype
			}
			assert.InDelta(t, s/8, rows[i], 1e-6, "%s: mean of row %d", backend, i)
			assert.InDelta(t, float64(si)/8, intMeans[i], 1e-6, "%s: mean of i32 row %d", backend, i)
		}
		assert.InDelta(t, all/32, floats(outs[3])[0], 1e-6, "%s: mean of all", backend)
		for j := 0; j < 8; j++ {
			p := 1.0
			for i := 0; i < 4; i++ {
				p *= xs[i*8+j]
			}
			assert.InDelta(t, p, prods[j], 1e-5*math.Max(1, math.Abs(p)), "%s: product of column %d", backend, j)
		}
	})

	// Integer products wrap; a bool product is all-true as an i32; bf16
	// products and means accumulate in f32 and round once.
	ix := intTensor(xla.Int32, []int64{8, 4}, func(i int) int64 { return int64(i%5 + 97) })
	bx := floatTensor(xla.BFloat16, []int64{8, 4}, func(i int) float64 { return 1 + float64(i%3)/128 })
	c = tritonCase{name: "prod_wrap_bool_bf16", kernel: func(k *Kernel, r []*Ref) {
		v := r[0].Load()
		r[2].Store(v.Prod(0))
		r[3].Store(v.Gt(97).Prod(0))
		b := r[1].Load()
		r[4].Store(b.Prod(0))
		r[5].Store(b.Mean(0))
	}, spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Int32, 4), xla.MakeShape(xla.Int32, 4),
		xla.MakeShape(xla.BFloat16, 4), xla.MakeShape(xla.BFloat16, 4)}},
		args: []*interpreter.Tensor{ix, bx}}
	iv, bv := ints(t, ix), floats(bx)
	checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
		for j := 0; j < 4; j++ {
			p, all, bp, bm := int32(1), int64(1), 1.0, 0.0
			for i := 0; i < 8; i++ {
				p *= int32(iv[i*4+j])
				if iv[i*4+j] <= 97 {
					all = 0
				}
				bp *= bv[i*4+j]
				bm += bv[i*4+j]
			}
			assert.Equal(t, int64(p), ints(t, outs[0])[j], "%s: i32 product of column %d wraps", backend, j)
			assert.Equal(t, all, ints(t, outs[1])[j], "%s: bool product of column %d", backend, j)
			assert.Equal(t, float64(interpreter.RoundNarrow64(xla.BFloat16, bp)), floats(outs[2])[j], "%s: bf16 product of column %d, rounded once", backend, j)
			assert.Equal(t, float64(interpreter.RoundNarrow64(xla.BFloat16, bm/8)), floats(outs[3])[j], "%s: bf16 mean of column %d, rounded once", backend, j)
		}
	})
}

// TestVar: the variance (two passes: the mean, then the mean of the
// squared differences) along each axis and over all, of f32 values far
// from zero (where a one-pass E[x²]-E[x]² loses the digits), of i32 (an
// f32 result) and of bf16 (computed in f32, rounded once), against Go.
func TestVar(t *testing.T) {
	x := fTensor([]int64{4, 8}, func(i int) float64 { return 1000 + float64(i*i%13)/4 })
	n := intTensor(xla.Int32, []int64{4, 8}, func(i int) int64 { return int64(i*7%9 - 3) })
	b := floatTensor(xla.BFloat16, []int64{4, 8}, func(i int) float64 { return float64(i%5) / 2 })
	c := tritonCase{name: "var", kernel: func(k *Kernel, r []*Ref) {
		v := r[0].Load()
		r[3].Store(v.Var(1))
		r[4].Store(v.Var(0))
		r[5].Store(v.Var().BroadcastTo(1))
		r[6].Store(r[1].Load().Var(-1))
		r[7].Store(r[2].Load().Var(0))
	}, spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4), xla.MakeShape(xla.Float32, 8),
		xla.MakeShape(xla.Float32, 1), xla.MakeShape(xla.Float32, 4), xla.MakeShape(xla.BFloat16, 8)}},
		args: []*interpreter.Tensor{x, n, b}}
	// variance of the elements at[i] of vals, in float64.
	variance := func(vals []float64, at []int) float64 {
		m, s := 0.0, 0.0
		for _, i := range at {
			m += vals[i]
		}
		m /= float64(len(at))
		for _, i := range at {
			s += (vals[i] - m) * (vals[i] - m)
		}
		return s / float64(len(at))
	}
	span := func(start, stride, count int) []int {
		out := make([]int, count)
		for i := range out {
			out[i] = start + i*stride
		}
		return out
	}
	xs, ns, bs := floats(x), ints(t, n), floats(b)
	nf := make([]float64, len(ns))
	for i, v := range ns {
		nf[i] = float64(v)
	}
	checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
		for i := 0; i < 4; i++ {
			assert.InDelta(t, variance(xs, span(i*8, 1, 8)), floats(outs[0])[i], 1e-3, "%s: row %d", backend, i)
			assert.InDelta(t, variance(nf, span(i*8, 1, 8)), floats(outs[3])[i], 1e-5, "%s: i32 row %d", backend, i)
		}
		for j := 0; j < 8; j++ {
			assert.InDelta(t, variance(xs, span(j, 8, 4)), floats(outs[1])[j], 1e-3, "%s: column %d", backend, j)
			want := float64(interpreter.RoundNarrow64(xla.BFloat16, variance(bs, span(j, 8, 4))))
			assert.Equal(t, want, floats(outs[4])[j], "%s: bf16 column %d, rounded once", backend, j)
		}
		assert.InDelta(t, variance(xs, span(0, 1, 32)), floats(outs[2])[0], 1e-3, "%s: all", backend)
	})
}

// TestBitcast: the same bits read as another type of the width, each
// way, in every backend: floats' bit patterns (1.0 is 0x3f800000, -0 the
// sign bit alone), signed and unsigned integers, f16 and bf16 to 16-bit
// integers and back.
func TestBitcast(t *testing.T) {
	type pair struct {
		from, to xla.DType
		bits     func(v float64) uint64 // of a float from value
	}
	f32 := func(v float64) uint64 { return uint64(math.Float32bits(float32(v))) }
	pairs := []pair{
		{xla.Float32, xla.Int32, f32},
		{xla.Float32, xla.Uint32, f32},
		{xla.Float64, xla.Int64, math.Float64bits},
		{xla.BFloat16, xla.Int16, func(v float64) uint64 { return uint64(xla.BF16FromFloat64(v)) }},
		{xla.Float16, xla.Uint16, func(v float64) uint64 { return uint64(xla.F16FromFloat64(v)) }},
	}
	vals := []float64{1, -2.5, 0, math.Copysign(0, -1), 0.1, 3e4, -7, 0.5}
	for _, p := range pairs {
		t.Run(fmt.Sprintf("%v_%v", p.from, p.to), func(t *testing.T) {
			x := floatTensor(p.from, []int64{8}, func(i int) float64 { return vals[i] })
			xs := floats(x)
			c := tritonCase{name: "bitcast", kernel: func(k *Kernel, r []*Ref) {
				b := r[0].Load().Bitcast(p.to)
				r[1].Store(b)
				r[2].Store(b.Bitcast(p.from).Mul(2)) // back, then used as floats
			}, spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(p.to, 8), xla.MakeShape(p.from, 8)}},
				args: []*interpreter.Tensor{x}}
			w := uint(p.from.Bits())
			checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
				for i, v := range ints(t, outs[0]) {
					want := p.bits(xs[i])
					assert.Equal(t, want, uint64(v)&(1<<w-1), "%s: bits of %v", backend, xs[i])
					assert.Equal(t, 2*xs[i], floats(outs[1])[i], "%s: %v back", backend, xs[i])
				}
			})
		})
	}
	// Integers of one width, signed to unsigned and back.
	x := intTensor(xla.Int8, []int64{4}, func(i int) int64 { return []int64{-1, 127, -128, 5}[i] })
	c := tritonCase{name: "bitcast_ints", kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load().Bitcast(xla.Uint8)) },
		spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Uint8, 4)}}, args: []*interpreter.Tensor{x}}
	checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
		assert.Equal(t, []int64{255, 127, 128, 5}, ints(t, outs[0]), backend)
	})
}

// TestMathOpErrors: the new ops name what they do not take.
func TestMathOpErrors(t *testing.T) {
	one := []xla.Shape{xla.MakeShape(xla.Float32, 4)}
	cases := []struct {
		name   string
		kernel KernelFunc
		out    []xla.Shape
		want   []string
	}{
		{"round of an integer", func(k *Kernel, r []*Ref) { k.Iota(xla.Int32, 0, 4).Round() }, one,
			[]string{"round at math_ops_test.go:", "i32"}},
		{"sign of a bool", func(k *Kernel, r []*Ref) { k.Iota(xla.Int32, 0, 4).Gt(1).Sign() }, one,
			[]string{"sign at math_ops_test.go:", "bool"}},
		{"log1p of an integer", func(k *Kernel, r []*Ref) { k.Iota(xla.Int32, 0, 4).Log1p() }, one,
			[]string{"log1p at math_ops_test.go:"}},
		{"bitcast to a wider type, the last dim not its parts", func(k *Kernel, r []*Ref) { k.Iota(xla.Int32, 0, 4).Bitcast(xla.Float64) }, one,
			[]string{"bitcast at math_ops_test.go:", "bitcast of i32[4] to f64 (64 bits) joins the 2 parts of its last dim into one element: the last dim must be 2"}},
		{"bitcast of a scalar to a wider type", func(k *Kernel, r []*Ref) { k.Const(xla.Int32, 1).Bitcast(xla.Int64) }, one,
			[]string{"bitcast at math_ops_test.go:", "the last dim must be 2"}},
		{"bitcast to a 4-bit type", func(k *Kernel, r []*Ref) { k.Iota(xla.Int8, 0, 4).Bitcast(xla.Int4) }, one,
			[]string{"bitcast at math_ops_test.go:", "bitcast from i8 (8 bits) to i4 (4 bits): types of different widths need 8, 16, 32 or 64 bits"}},
		{"bitcast of a bool", func(k *Kernel, r []*Ref) { k.Iota(xla.Int32, 0, 4).Gt(1).Bitcast(xla.Uint8) }, one,
			[]string{"bitcast at math_ops_test.go:", "bitcast from i1 to ui8"}},
		{"bitcast to complex", func(k *Kernel, r []*Ref) { k.Iota(xla.Int64, 0, 4).Bitcast(xla.Complex64) }, one,
			[]string{"bitcast at math_ops_test.go:", "bitcast from i64 to complex<f32>: only integer and float types"}},
		{"clip with a bound of another dtype", func(k *Kernel, r []*Ref) { k.Iota(xla.Float32, 0, 4).Clip(k.Iota(xla.Int32, 0, 4), nil) }, one,
			[]string{"clip at math_ops_test.go:", "operand dtypes differ: f32[4] and i32[4]"}},
		{"clip of an integer to a fraction", func(k *Kernel, r []*Ref) { k.Iota(xla.Int32, 0, 4).Clip(nil, 1.5) }, one,
			[]string{"clip at math_ops_test.go:", "constant 1.5 is not an integer (dtype i32)"}},
		{"clip of bools", func(k *Kernel, r []*Ref) { k.Iota(xla.Int32, 0, 4).Gt(1).Clip(false, true) }, one,
			[]string{"clip at math_ops_test.go:", "not defined on bool values"}},
		{"mean of complex", func(k *Kernel, r []*Ref) { r[0].Load().Mean() }, []xla.Shape{xla.MakeShape(xla.Complex64, 4)},
			[]string{"mean at math_ops_test.go:", "mean not defined on"}},
		{"prod along a bad axis", func(k *Kernel, r []*Ref) { k.Iota(xla.Float32, 0, 4).Prod(1) }, one,
			[]string{"reduce at math_ops_test.go:", "bad axes [1] for rank 1"}},
		{"mean along a bad axis", func(k *Kernel, r []*Ref) { k.Iota(xla.Float32, 0, 4).Mean(-2) }, one,
			[]string{"mean at math_ops_test.go:", "bad axes [-2] for rank 1"}},
		{"var along an axis twice", func(k *Kernel, r []*Ref) { k.Full(xla.Float32, 1, 4, 4).Var(0, -2) }, one,
			[]string{"var at math_ops_test.go:", "bad axes [0 -2] for rank 2"}},
		{"var of complex", func(k *Kernel, r []*Ref) { r[0].Load().Var() }, []xla.Shape{xla.MakeShape(xla.Complex64, 4)},
			[]string{"var at math_ops_test.go:", "var not defined on"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := runCall(c.kernel, CallSpec{OutShapes: c.out})
			require.Error(t, err)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// mathCases are the ops of this file in tritonCases (so that the TTIR goes
// through mlir-opt, and through the real plugin on a GPU): each unary op
// of f32 and of bf16, sign of an i32, clip, mean, var, prod, bitcasts.
func mathCases() []tritonCase {
	x := fTensor([]int64{4, 16}, func(i int) float64 { return mathInputs[[]string{"log1p", "expm1", "tan", "round"}[i/16]][i%16] })
	xb := floatTensor(xla.BFloat16, []int64{16}, func(i int) float64 { return mathInputs["expm1"][i] })
	n := intTensor(xla.Int32, []int64{16}, func(i int) int64 { return int64(i*37%11 - 5) })
	f32 := func(dims ...int64) xla.Shape { return xla.MakeShape(xla.Float32, dims...) }
	return []tritonCase{{
		name: "math_ops",
		kernel: func(k *Kernel, r []*Ref) {
			row := func(i int) *Value { return r[0].Load(i, All) }
			r[3].Store(row(0).Log1p(), 0, All)
			r[3].Store(row(1).Expm1(), 1, All)
			r[3].Store(row(2).Tan(), 2, All)
			r[3].Store(row(3).Round().Add(row(2).Sign()), 3, All)
			r[4].Store(r[1].Load().Expm1().Add(r[1].Load().Log1p().Clip(-1.0, 1.0)))
			v := r[2].Load()
			r[5].Store(v.Sign().Mul(v.Bitcast(xla.Float32).Bitcast(xla.Uint32).Bitcast(xla.Int32)))
			all := r[0].Load()
			r[6].Store(all.Clip(-3.0, 3.0).Mean(1).Add(all.Clip(0.5, 1.5).Prod(1)).Add(all.Clip(-5.0, 5.0).Var(1)))
		},
		spec: CallSpec{Name: "math_ops", OutShapes: []xla.Shape{f32(4, 16), xla.MakeShape(xla.BFloat16, 16), xla.MakeShape(xla.Int32, 16), f32(4)}},
		args: []*interpreter.Tensor{x, xb, n},
	}}
}

// TestRaceCheckFollowsSignAndBitcast: the race check computes block
// indices and positions through Sign and integer Bitcast (it judged them
// by dependence alone, and took g.Sign(), which sends programs 1 to 3 to
// block 1: found in review), computes them through a small reduction,
// and refuses an output index map that goes through an op it does not
// compute while reading no data (a reduction past its bound), as it
// refuses one through floats.
func TestRaceCheckFollowsSignAndBitcast(t *testing.T) {
	x := fTensor([]int64{16}, func(i int) float64 { return float64(i) })
	blocks := func(grid int64, m func(g *Value) *Value) tritonCase {
		return tritonCase{name: "map", kernel: func(k *Kernel, r []*Ref) {
			r[1].Store(r[0].Load().Add(k.ProgramID(0).Astype(xla.Float32)))
		}, spec: CallSpec{Grid: []int64{grid},
			InSpecs:   []*BlockSpec{{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{g[0]} })}},
			OutSpecs:  []*BlockSpec{{BlockShape: []int64{4}, IndexMap: blockMap(func(g []*Value) []any { return []any{m(g[0])} })}},
			OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 16)}}, args: []*interpreter.Tensor{x}}
	}
	u32 := func(g *Value) *Value { return g.Bitcast(xla.Uint32).Min(1).Bitcast(xla.Int32) }
	for name, m := range map[string]func(*Value) *Value{"sign": (*Value).Sign, "bitcast": u32} {
		err := lowerTritonErr(t, blocks(4, m))
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "its index map sends grid points (1) and (2) to the same block (1)", name)
		require.NoError(t, lowerTritonErr(t, blocks(2, m)), "%s: programs 0 and 1 get blocks 0 and 1", name)
	}
	// Through a small reduction: computed (0, 2, 2, 2); through one past
	// the check's bound for a scalar (2^14 elements): refused unfollowed.
	err := lowerTritonErr(t, blocks(4, func(g *Value) *Value { return g.Min(1).BroadcastTo(2).Sum() }))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "its index map sends grid points (1) and (2) to the same block (2)")
	err = lowerTritonErr(t, blocks(4, func(g *Value) *Value { return g.Min(1).BroadcastTo(1 << 15).Sum().Div(1 << 15) }))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "its index map computes block indices through reduce at math_ops_test.go:")

	// A store's position through Sign: programs 1 to 3 all store element 4.
	c := tritonCase{name: "pos", kernel: func(k *Kernel, r []*Ref) {
		p := k.ProgramID(0)
		r[1].Store(r[0].Load(DS(p.Mul(4), 4)).Add(p.Astype(xla.Float32)), DS(p.Sign().Mul(4), 4))
	}, spec: CallSpec{Grid: []int64{4}, OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 16)}}, args: []*interpreter.Tensor{x}}
	err = lowerTritonErr(t, c)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "grid points (1) and (2) both reach its element (4)")
}

// TestFloorDivMod: FloorDiv and Mod are Python's // and % (floor, the
// remainder of the divisor's sign) for signed integers and floats, and
// Div and Rem for unsigned ones, on each backend, over every sign
// combination and exact divisions; float results against math.Floor and
// a remainder of the divisor's sign.
func TestFloorDivMod(t *testing.T) {
	var xs, ys []int64
	for x := int64(-7); x <= 8; x++ {
		for _, y := range []int64{3, -3, 2, -2, 7, -1, 1, 5} {
			xs, ys = append(xs, x), append(ys, y)
		}
	}
	n := int64(len(xs)) // 128
	pyDiv := func(x, y int64) int64 {
		q := x / y
		if x%y != 0 && (x < 0) != (y < 0) {
			q--
		}
		return q
	}
	for _, dt := range []xla.DType{xla.Int32, xla.Int8, xla.Int64, xla.Uint32, xla.Float32, xla.Float64, xla.BFloat16} {
		t.Run(dt.String(), func(t *testing.T) {
			ux, uy := xs, ys
			if dt.IsUnsigned() {
				ux, uy = make([]int64, n), make([]int64, n)
				for i := range ux {
					ux[i], uy[i] = xs[i]+7, max(ys[i], 1)
				}
			}
			mk := func(v []int64) *interpreter.Tensor {
				if dt.IsFloat() {
					return floatTensor(dt, []int64{n}, func(i int) float64 { return float64(v[i]) / 2 })
				}
				return intTensor(dt, []int64{n}, func(i int) int64 { return v[i] })
			}
			c := tritonCase{name: "floordiv_mod", kernel: func(k *Kernel, r []*Ref) {
				a, b := r[0].Load(), r[1].Load()
				r[2].Store(a.FloorDiv(b))
				r[3].Store(a.Mod(b))
			}, spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(dt, n), xla.MakeShape(dt, n)}}, args: []*interpreter.Tensor{mk(ux), mk(uy)}}
			checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
				if dt.IsFloat() {
					a, b := floats(c.args[0]), floats(c.args[1])
					q, m := floats(outs[0]), floats(outs[1])
					for i := range a {
						wantQ := math.Floor(a[i] / b[i])
						wantM := a[i] - wantQ*b[i]
						assert.Equal(t, wantQ, q[i], "%s: %v // %v", backend, a[i], b[i])
						assert.Equal(t, wantM, m[i], "%s: %v %% %v", backend, a[i], b[i])
					}
					return
				}
				q, m := ints(t, outs[0]), ints(t, outs[1])
				for i := range ux {
					wantQ := pyDiv(ux[i], uy[i])
					assert.Equal(t, wantQ, q[i], "%s: %d // %d", backend, ux[i], uy[i])
					assert.Equal(t, ux[i]-wantQ*uy[i], m[i], "%s: %d %% %d", backend, ux[i], uy[i])
				}
			})
		})
	}
	// Zero divisors, as jnp: a float's quotient is x / 0 (±Inf, NaN for
	// 0/0) and its remainder NaN; an integer's quotient what XLA gives,
	// -2 (-1 for 0), and its remainder 0 (halo's Rem gives x: found in
	// review).
	for _, dt := range []xla.DType{xla.Float32, xla.Int32, xla.Uint8} {
		x := []float64{5, 3, 0, 7}
		var a, b *interpreter.Tensor
		if dt.IsFloat() {
			x[1] = -5
			a = floatTensor(dt, []int64{4}, func(i int) float64 { return x[i] })
			b = floatTensor(dt, []int64{4}, func(i int) float64 { return []float64{0, 0, 0, math.Copysign(0, -1)}[i] })
		} else {
			a = intTensor(dt, []int64{4}, func(i int) int64 { return int64(x[i]) })
			b = intTensor(dt, []int64{4}, func(int) int64 { return 0 })
		}
		c := tritonCase{name: "by_zero", kernel: func(k *Kernel, r []*Ref) {
			p, q := r[0].Load(), r[1].Load()
			r[2].Store(p.FloorDiv(q))
			r[3].Store(p.Mod(q))
		}, spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(dt, 4), xla.MakeShape(dt, 4)}}, args: []*interpreter.Tensor{a, b}}
		checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
			switch {
			case dt.IsFloat():
				q := floats(outs[0])
				assert.Equal(t, []float64{math.Inf(1), math.Inf(-1)}, q[:2], backend)
				assert.True(t, math.IsNaN(q[2]), backend)
				assert.Equal(t, math.Inf(-1), q[3], backend)
				for _, m := range floats(outs[1]) {
					assert.True(t, math.IsNaN(m), backend)
				}
			case dt.IsUnsigned():
				assert.Equal(t, []int64{255, 255, 255, 255}, ints(t, outs[0]), "%s: Div's x / 0", backend)
				assert.Equal(t, []int64{0, 0, 0, 0}, ints(t, outs[1]), backend)
			default:
				assert.Equal(t, []int64{-2, -2, -1, -2}, ints(t, outs[0]), backend)
				assert.Equal(t, []int64{0, 0, 0, 0}, ints(t, outs[1]), backend)
			}
		})
	}
	_, err := runCall(func(k *Kernel, r []*Ref) { k.Iota(xla.Int32, 0, 4).Gt(1).FloorDiv(true) }, CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "floordiv at math_ops_test.go:")
}
