package pallas

import (
	"fmt"
	"math"
	"math/bits"
	"testing"

	"github.com/halo-ml/halo/internal/special"
	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/xla"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// moreMath are the unary float ops of exp2 ... erf_inv: their methods, the
// reference (Go's math, or internal/special's form where math is
// inaccurate in float64), and 16 arguments each over the op's domain and its edges
// (where the result is ±inf or NaN, and tiny arguments, where a careless
// formula loses the digits).
var moreMath = []struct {
	name   string
	method func(*Value) *Value
	want   func(float64) float64
	in     []float64
}{
	{"exp2", (*Value).Exp2, math.Exp2, []float64{0, 1, -1, 0.5, 10, -10, 3.3, -0.25, 20, 1e-7, -1e-7, 7, 100, -126, 2.5, -3.5}},
	{"log2", (*Value).Log2, special.RealLog2, []float64{1, 2, 8, 0.5, 1024, 3, 10, 0.1, 1e-3, 7.5, 1e6, 0.75, 0, -1, math.Inf(1), 1.5}},
	{"asin", (*Value).Asin, special.RealAsin, []float64{-1, 1, 0, 0.5, -0.5, 0.99, -0.99, 1e-6, 0.3, -0.7, 0.1, 0.9, 2, -1.5, 0.75, -0.25}},
	{"acos", (*Value).Acos, special.RealAcos, []float64{-1, 1, 0, 0.5, -0.5, 0.99, -0.99, 1e-6, 0.3, -0.7, 0.1, 0.9, 2, -1.5, 0.75, -0.25}},
	{"atan", (*Value).Atan, math.Atan, []float64{0, 1, -1, 1e-6, 10, -10, 1e10, -1e10, math.Inf(1), math.Inf(-1), 0.5, 2, -3, 0.1, 100, math.NaN()}},
	{"sinh", (*Value).Sinh, special.RealSinh, []float64{0, 1e-6, -1e-6, 0.5, -0.5, 1, -1, 2, 5, -5, 10, -10, 20, 0.1, 3, -3}},
	{"cosh", (*Value).Cosh, special.RealCosh, []float64{0, 1e-6, -1e-6, 0.5, -0.5, 1, -1, 2, 5, -5, 10, -10, 20, 0.1, 3, -3}},
	{"asinh", (*Value).Asinh, math.Asinh, []float64{0, 1e-6, -1e-6, 0.5, -0.5, 1, -1, 10, -10, 1e4, -1e4, 100, 2, 0.1, 3, -3}},
	{"acosh", (*Value).Acosh, math.Acosh, []float64{1, 1.5, 2, 10, 100, 1e4, 1.01, 3, 5, 0.5, 0, 1.1, 7, 50, 1.25, 20}},
	{"atanh", (*Value).Atanh, math.Atanh, []float64{0, 1e-6, -1e-6, 0.5, -0.5, 0.9, -0.9, 0.99, 1, -1, 2, 0.1, -0.1, 0.25, 0.75, -0.75}},
	{"cbrt", (*Value).Cbrt, math.Cbrt, []float64{0, 1, -1, 8, -8, 27, 1e-3, 1e-9, -1e-9, 2, 3, 1e6, -1e6, 0.5, math.Inf(1), math.Copysign(0, -1)}},
	{"erf_inv", (*Value).ErfInv, special.ErfInv, []float64{0, 0.5, -0.5, 0.9, -0.9, 0.99, -0.99, 1e-6, 0.1, -0.1, 0.3, 0.7, 1, -1, 0.999, 2}},
	{"erfc", (*Value).Erfc, math.Erfc, []float64{0, 0.5, -0.5, 1, -1, 2, -2, 3, 5, 9, 0.1, -3, 30, 1e-6, 0.25, 4}},
	{"lgamma", (*Value).Lgamma, special.Lgamma, []float64{1, 2, 0.5, 3.5, 10, 100, 0.1, 1e-3, -0.5, -1.5, 2.5, 1.5, 20, 0, -1, 5}},
}

// ulpOf is the unit in the last place at 1 of each float dtype.
var ulpOf = map[xla.DType]float64{xla.Float32: 0x1p-23, xla.Float64: 0x1p-52, xla.BFloat16: 0x1p-7, xla.Float16: 0x1p-10}

// assertNear checks got against want (Go's result, rounded here to dt):
// NaN for NaN, the same infinity, else within ulps units in the last place
// of want (or of the dtype's smallest normal, for results near zero).
func assertNear(t *testing.T, dt xla.DType, want, got float64, ulps float64, msg string, args ...any) {
	t.Helper()
	if dt != xla.Float64 {
		want = float64(interpreter.RoundNarrow64(dt, want))
	}
	switch {
	case math.IsNaN(want):
		assert.True(t, math.IsNaN(got), "%s = %v, want NaN", fmt.Sprintf(msg, args...), got)
	case math.IsInf(want, 0):
		assert.Equal(t, want, got, fmt.Sprintf(msg, args...))
	default:
		tol := ulps * ulpOf[dt] * max(math.Abs(want), 0x1p-14)
		assert.InDelta(t, want, got, tol, "%s = %v, want %v", fmt.Sprintf(msg, args...), got, want)
	}
}

// TestMoreMathOps: exp2, log2, the inverse trigonometric and the
// hyperbolic functions and their inverses, cbrt and erf_inv in f32, f64,
// bf16 and f16, on each backend (interpret mode through the interpreter,
// the TTIR evaluator, the IR contract's evaluator), against Go's math
// within 4 ulps: NaN outside the domain, infinities at its edges.
func TestMoreMathOps(t *testing.T) {
	for _, op := range moreMath {
		for _, dt := range []xla.DType{xla.Float32, xla.Float64, xla.BFloat16, xla.Float16} {
			t.Run(fmt.Sprintf("%s/%v", op.name, dt), func(t *testing.T) {
				x := floatTensor(dt, []int64{16}, func(i int) float64 { return op.in[i] })
				xs := floats(x)
				c := tritonCase{name: "math_" + op.name, kernel: func(k *Kernel, r []*Ref) { r[1].Store(op.method(r[0].Load())) },
					spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(dt, 16)}}, args: []*interpreter.Tensor{x}}
				checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
					for i, got := range floats(outs[0]) {
						assertNear(t, dt, op.want(xs[i]), got, 4, "%s: %s(%v)", backend, op.name, xs[i])
					}
				})
			})
		}
	}
}

// TestMoreMathF64Edges: f64 arguments where Go's math package is wrong
// (sinh and cosh past its overflow at 709.78, exp past 709.44 on amd64,
// asin and acos near 1, log2 near 1) give the true values, to 200 bits
// (mpmath), on every backend within 4 ulps.
func TestMoreMathF64Edges(t *testing.T) {
	cases := []struct {
		name string
		f    func(*Value) *Value
		x    float64
		want float64
	}{
		{"sinh", (*Value).Sinh, 709.6, 7.487457372484647e+307},
		{"cosh", (*Value).Cosh, -709.6, 7.487457372484647e+307},
		{"exp", (*Value).Exp, 709.5, 1.3549863193146328e+308},
		{"asin", (*Value).Asin, 0.9999999, 1.5703491131957876},
		{"acos", (*Value).Acos, 0.9999999, 0.00044721359910904126},
		{"acos", (*Value).Acos, -0.9999999, 3.141145439990684},
		{"log2", (*Value).Log2, 1 + 0x1p-23, 1.7198264061184464e-07},
		{"erf_inv", (*Value).ErfInv, 0.9999999, 3.7665625816384707},
	}
	x := floatTensor(xla.Float64, []int64{8}, func(i int) float64 { return cases[i].x })
	c := tritonCase{name: "f64_edges", kernel: func(k *Kernel, r []*Ref) {
		for i, cs := range cases {
			r[1].Store(cs.f(r[0].Load(DS(i, 1))), DS(i, 1))
		}
	}, spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float64, 8)}}, args: []*interpreter.Tensor{x}}
	checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
		for i, got := range floats(outs[0]) {
			assertNear(t, xla.Float64, cases[i].want, got, 4, "%s: %s(%v)", backend, cases[i].name, cases[i].x)
		}
	})
}

// TestLog2OfPowersOfTwo: log2 of 2^k is k exactly on every backend for
// f32 (a kernel that takes log2 to count bits, then floors it, must not
// see 2.9999998).
func TestLog2OfPowersOfTwo(t *testing.T) {
	x := floatTensor(xla.Float32, []int64{64}, func(i int) float64 { return math.Ldexp(1, i-32) })
	c := tritonCase{name: "log2_pow2", kernel: func(k *Kernel, r []*Ref) { r[1].Store(r[0].Load().Log2()) },
		spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 64)}}, args: []*interpreter.Tensor{x}}
	checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
		for i, got := range floats(outs[0]) {
			assert.Equal(t, float64(i-32), got, "%s: log2(2^%d)", backend, i-32)
		}
	})
}

// TestAtan2: the angle of (x, y) in each quadrant, on the axes, at signed
// zeros (atan2(±0, -1) is ±π, atan2(±0, +1) is ±0) and infinities, with y
// the receiver as in jnp.arctan2(y, x); a Go number as x.
func TestAtan2(t *testing.T) {
	inf := math.Inf(1)
	negZero := math.Copysign(0, -1)
	ys := []float64{1, 1, -1, -1, 0, negZero, 0, negZero, 1, -1, inf, inf, -inf, 3, 0, math.NaN()}
	xs := []float64{1, -1, 1, -1, -1, -1, 1, 1, 0, 0, inf, -inf, 1, 4, 0, 1}
	for _, dt := range []xla.DType{xla.Float32, xla.Float64, xla.BFloat16, xla.Float16} {
		t.Run(dt.String(), func(t *testing.T) {
			y := floatTensor(dt, []int64{16}, func(i int) float64 { return ys[i] })
			x := floatTensor(dt, []int64{16}, func(i int) float64 { return xs[i] })
			c := tritonCase{name: "atan2", kernel: func(k *Kernel, r []*Ref) {
				r[2].Store(r[0].Load().Atan2(r[1].Load()))
				r[3].Store(r[0].Load().Atan2(-2.0))
			}, spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(dt, 16), xla.MakeShape(dt, 16)}}, args: []*interpreter.Tensor{y, x}}
			checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
				for i, got := range floats(outs[0]) {
					want := math.Atan2(ys[i], xs[i])
					assertNear(t, dt, want, got, 4, "%s: atan2(%v, %v)", backend, ys[i], xs[i])
					if want == 0 {
						assert.Equal(t, math.Signbit(want), math.Signbit(got), "%s: the sign of atan2(%v, %v)", backend, ys[i], xs[i])
					}
				}
				for i, got := range floats(outs[1]) {
					assertNear(t, dt, math.Atan2(ys[i], -2), got, 4, "%s: atan2(%v, -2)", backend, ys[i])
				}
			})
		})
	}
}

// TestIsFinite: false for ±inf and NaN, true for every finite value (the
// largest, the smallest subnormal, -0) in each float dtype.
func TestIsFinite(t *testing.T) {
	for _, dt := range []xla.DType{xla.Float32, xla.Float64, xla.BFloat16, xla.Float16} {
		t.Run(dt.String(), func(t *testing.T) {
			big := map[xla.DType]float64{xla.Float32: math.MaxFloat32, xla.Float64: math.MaxFloat64, xla.BFloat16: 0x1.fep127, xla.Float16: 65504}[dt]
			tiny := map[xla.DType]float64{xla.Float32: 0x1p-149, xla.Float64: 0x1p-1074, xla.BFloat16: 0x1p-133, xla.Float16: 0x1p-24}[dt]
			in := []float64{0, math.Copysign(0, -1), 1, -1, big, -big, tiny, -tiny, math.Inf(1), math.Inf(-1), math.NaN(), 3.5,
				math.NaN(), 1e-3, -2.5, math.Inf(1)}
			x := floatTensor(dt, []int64{16}, func(i int) float64 { return in[i] })
			require.Equal(t, in[4], floats(x)[4], "the largest %v", dt)
			require.Equal(t, in[6], floats(x)[6], "the smallest %v", dt)
			c := tritonCase{name: "is_finite", kernel: func(k *Kernel, r []*Ref) {
				v := r[0].Load()
				r[1].Store(v.IsFinite())
				r[2].Store(Where(v.IsFinite(), v, 0.0)) // the use: zero the overflowed
			}, spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Bool, 16), xla.MakeShape(dt, 16)}}, args: []*interpreter.Tensor{x}}
			checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
				fin, kept := outs[0].Data.([]bool), floats(outs[1])
				for i, v := range floats(x) {
					want := !math.IsInf(v, 0) && !math.IsNaN(v)
					assert.Equal(t, want, fin[i], "%s: isfinite(%v)", backend, v)
					if want {
						assert.Equal(t, math.Float64bits(v), math.Float64bits(kept[i]), "%s: %v kept", backend, v)
					} else {
						assert.Equal(t, 0.0, kept[i], "%s: %v zeroed", backend, v)
					}
				}
			})
		})
	}
}

// TestBitCounts: PopCount and CountLeadingZeros of every integer dtype
// (8 to 64 bits, signed and unsigned: the count is of the dtype's bits,
// so -1 has all of them set and 0 has width leading zeros) against
// math/bits, on each backend.
func TestBitCounts(t *testing.T) {
	vals := []int64{0, 1, -1, 2, 3, 127, 128, 255, 256, 0x5555, -0x8000, 0x7fffffff, -0x80000000, 0x123456789, math.MinInt64, math.MaxInt64}
	for _, dt := range []xla.DType{xla.Int8, xla.Uint8, xla.Int16, xla.Uint16, xla.Int32, xla.Uint32, xla.Int64, xla.Uint64} {
		t.Run(dt.String(), func(t *testing.T) {
			x := intTensor(dt, []int64{16}, func(i int) int64 { return vals[i] })
			xs := ints(t, x)
			c := tritonCase{name: "bit_counts", kernel: func(k *Kernel, r []*Ref) {
				v := r[0].Load()
				r[1].Store(v.PopCount())
				r[2].Store(v.CountLeadingZeros())
			}, spec: CallSpec{OutShapes: []xla.Shape{xla.MakeShape(dt, 16), xla.MakeShape(dt, 16)}}, args: []*interpreter.Tensor{x}}
			w := dt.Bits()
			checkEveryBackend(t, c, func(backend string, outs []*interpreter.Tensor) {
				pop, clz := ints(t, outs[0]), ints(t, outs[1])
				for i, v := range xs {
					u := uint64(v) & (^uint64(0) >> (64 - w)) // v's bits in the dtype
					assert.Equal(t, int64(bits.OnesCount64(u)), pop[i], "%s: popcount(%d)", backend, v)
					assert.Equal(t, int64(bits.LeadingZeros64(u)-(64-w)), clz[i], "%s: clz(%d)", backend, v)
				}
			})
		})
	}
}

// TestMoreMathErrors: each op refuses the dtypes it is not defined on,
// naming the op and what to convert to.
func TestMoreMathErrors(t *testing.T) {
	cases := []struct {
		name string
		dt   xla.DType
		f    func(*Value) *Value
		want []string
	}{
		{"exp2 of i32", xla.Int32, (*Value).Exp2, []string{"exp2 at math_more_test.go:", "not defined on i32 (integer) values (convert with Astype to a float type first)"}},
		{"erf_inv of bool", xla.Bool, (*Value).ErfInv, []string{"erf_inv at math_more_test.go:", "not defined on bool values (convert with Astype to a float type first)"}},
		{"is_finite of i32", xla.Int32, (*Value).IsFinite, []string{"is_finite at math_more_test.go:", "not defined on i32 (integer) values"}},
		{"popcount of f32", xla.Float32, (*Value).PopCount, []string{"popcnt at math_more_test.go:", "not defined on f32 (float) values (convert with Astype to an integer type first)"}},
		{"clz of bool", xla.Bool, (*Value).CountLeadingZeros, []string{"clz at math_more_test.go:", "not defined on bool values (convert with Astype to an integer type first)"}},
		{"atan2 of i32", xla.Int32, func(v *Value) *Value { return v.Atan2(v) }, []string{"atan2 at math_more_test.go:", "not defined on i32"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := runCall(func(k *Kernel, r []*Ref) {
				v := k.Zeros(c.dt, 4)
				r[0].Store(c.f(v).Astype(xla.Float32))
			}, CallSpec{OutShapes: []xla.Shape{xla.MakeShape(xla.Float32, 4)}})
			require.Error(t, err)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// moreMathCase is the ops of this file in one kernel for tritonCases: each
// float op in f32 (and a few in bf16), atan2, is_finite, the bit counts of
// i8, i32 and i64.
func moreMathCase() tritonCase {
	rows := int64(len(moreMath))
	x := fTensor([]int64{rows, 16}, func(i int) float64 { return moreMath[i/16].in[i%16] })
	xb := floatTensor(xla.BFloat16, []int64{16}, func(i int) float64 { return moreMath[0].in[i] })
	n := intTensor(xla.Int32, []int64{16}, func(i int) int64 { return int64(int32(uint32(i * 0x9e3779b1))) })
	f32 := func(dims ...int64) xla.Shape { return xla.MakeShape(xla.Float32, dims...) }
	return tritonCase{
		name: "math_more",
		kernel: func(k *Kernel, r []*Ref) {
			for i, op := range moreMath {
				r[3].Store(op.method(r[0].Load(i, All)), i, All)
			}
			b := r[1].Load()
			r[4].Store(b.Exp2().Add(b.Atan().Mul(b.Cosh().Log2())))
			v := r[0].Load(1, All)
			r[5].Store(Where(v.IsFinite(), v.Atan2(r[0].Load(4, All)), -7.0))
			m := r[2].Load()
			r[6].Store(m.PopCount().Add(m.CountLeadingZeros()).Add(m.Astype(xla.Int8).PopCount().Astype(xla.Int32)).
				Add(m.Astype(xla.Int64).Mul(int64(1) << 33).CountLeadingZeros().Astype(xla.Int32)))
		},
		spec: CallSpec{Name: "math_more", OutShapes: []xla.Shape{f32(rows, 16), xla.MakeShape(xla.BFloat16, 16), f32(16), xla.MakeShape(xla.Int32, 16)}},
		args: []*interpreter.Tensor{x, xb, n},
	}
}
