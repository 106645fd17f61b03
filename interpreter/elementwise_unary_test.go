package interpreter

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/halo-ml/halo/xla"
)

type ewtCase struct {
	op   string
	dt   xla.DType // operand element type
	rdt  xla.DType // result element type (Invalid: dt)
	in   []any
	want []any
	tol  float64
}

func TestUnaryOps(t *testing.T) {
	const i32min, i32max = int64(math.MinInt32), int64(math.MaxInt32)
	tests := []ewtCase{
		// abs
		{op: "abs", dt: xla.Float32, in: []any{-2.5, ewtNegZ, 0.0, ewtInf, -ewtInf, ewtNaN}, want: []any{2.5, 0.0, 0.0, ewtInf, ewtInf, ewtNaN}},
		{op: "abs", dt: xla.Int32, in: []any{-3, 0, i32min, i32max}, want: []any{3, 0, i32min, i32max}},
		{op: "abs", dt: xla.Int4, in: []any{-8, -1, 7}, want: []any{-8, 1, 7}},
		{op: "abs", dt: xla.Int2, in: []any{-2, -1, 1}, want: []any{-2, 1, 1}},
		{op: "abs", dt: xla.Complex64, rdt: xla.Float32, in: []any{3 + 4i, -5 - 12i}, want: []any{5.0, 13.0}},
		{op: "abs", dt: xla.Complex128, rdt: xla.Float64, in: []any{complex(ewtInf, ewtNaN)}, want: []any{ewtInf}},
		{op: "abs", dt: xla.BFloat16, in: []any{-1.5}, want: []any{1.5}},
		{op: "abs", dt: xla.Float8E4M3FN, in: []any{-448.0}, want: []any{448.0}},
		// negate
		{op: "negate", dt: xla.Int8, in: []any{-128, 1, 0}, want: []any{-128, -1, 0}},
		{op: "negate", dt: xla.Uint8, in: []any{1, 0, 255}, want: []any{255, 0, 1}},
		{op: "negate", dt: xla.Int2, in: []any{-2, 1}, want: []any{-2, -1}},
		{op: "negate", dt: xla.Uint2, in: []any{1, 3}, want: []any{3, 1}},
		{op: "negate", dt: xla.Uint4, in: []any{1, 0}, want: []any{15, 0}},
		{op: "negate", dt: xla.Float32, in: []any{0.0, ewtNegZ, ewtInf}, want: []any{ewtNegZ, 0.0, -ewtInf}},
		{op: "negate", dt: xla.Complex128, in: []any{1 + 2i}, want: []any{-1 - 2i}},
		{op: "negate", dt: xla.Float8E4M3FNUZ, in: []any{0.0, 1.0}, want: []any{0.0, -1.0}}, // no -0
		{op: "negate", dt: xla.Float8E8M0FNU, in: []any{2.0}, want: []any{ewtNaN}},          // no sign
		// square: the real part of a complex square is exactly 0 when
		// |re| == |im| is finite, so huge values give (0, Inf), not NaN.
		{op: "square", dt: xla.Float32, in: []any{-3.0, ewtNegZ, ewtInf, ewtNaN, 1e20}, want: []any{9.0, 0.0, ewtInf, ewtNaN, ewtInf}},
		{op: "square", dt: xla.BFloat16, in: []any{1.5}, want: []any{2.25}},
		{op: "square", dt: xla.Complex128, in: []any{1i, 2 + 1i, complex(1e308, 1e308), complex(1e308, -1e308), complex(1e155, 2e155), complex(ewtInf, ewtInf)},
			want: []any{-1 + 0i, 3 + 4i, complex(0, ewtInf), complex(0, -ewtInf), complex(-ewtInf, ewtInf), complex(ewtNaN, ewtInf)}},
		// not
		{op: "not", dt: xla.Bool, in: []any{true, false}, want: []any{false, true}},
		{op: "not", dt: xla.Int32, in: []any{0, -1, 5}, want: []any{-1, 0, -6}},
		{op: "not", dt: xla.Uint4, in: []any{0, 15, 5}, want: []any{15, 0, 10}},
		{op: "not", dt: xla.Int4, in: []any{0, 7, -8}, want: []any{-1, -8, 7}},
		{op: "not", dt: xla.Uint8, in: []any{0}, want: []any{255}},
		{op: "not", dt: xla.Uint64, in: []any{0}, want: []any{uint64(math.MaxUint64)}},
		// sign
		{op: "sign", dt: xla.Int32, in: []any{-5, 0, 7, i32min}, want: []any{-1, 0, 1, -1}},
		{op: "sign", dt: xla.Int4, in: []any{-8, 3, 0}, want: []any{-1, 1, 0}},
		{op: "sign", dt: xla.Uint8, in: []any{0, 5}, want: []any{0, 1}},
		{op: "sign", dt: xla.Float32, in: []any{ewtNaN, -2.0, ewtNegZ, 0.0, 3.0, -ewtInf}, want: []any{ewtNaN, -1.0, ewtNegZ, 0.0, 1.0, -1.0}},
		{op: "sign", dt: xla.Complex128, in: []any{3 + 4i, 0i, complex(ewtNaN, 1), complex(ewtInf, 0)},
			want: []any{0.6 + 0.8i, 0i, complex(ewtNaN, ewtNaN), 1 + 0i}},
		{op: "sign", dt: xla.BFloat16, in: []any{-0.5}, want: []any{-1.0}},
		// count_leading_zeros and popcnt
		{op: "count_leading_zeros", dt: xla.Int64, in: []any{0, 1, 128, -1}, want: []any{64, 63, 56, 0}},
		{op: "count_leading_zeros", dt: xla.Int32, in: []any{0, 1, -1, 128}, want: []any{32, 31, 0, 24}},
		{op: "count_leading_zeros", dt: xla.Uint8, in: []any{0, 1, 255}, want: []any{8, 7, 0}},
		{op: "count_leading_zeros", dt: xla.Int4, in: []any{0, 1, -1, 7}, want: []any{4, 3, 0, 1}},
		{op: "count_leading_zeros", dt: xla.Uint2, in: []any{0, 1, 2, 3}, want: []any{2, 1, 0, 0}},
		{op: "popcnt", dt: xla.Int64, in: []any{0, 1, 2, 127}, want: []any{0, 1, 1, 7}},
		{op: "popcnt", dt: xla.Int8, in: []any{-1, -128}, want: []any{8, 1}},
		{op: "popcnt", dt: xla.Int4, in: []any{-1, 7, -8}, want: []any{4, 3, 1}},
		{op: "popcnt", dt: xla.Uint16, in: []any{65535}, want: []any{16}},
		// rounding
		{op: "ceil", dt: xla.Float32, in: []any{-0.8166, -0.2530, 0.2530, 0.8166, 2.0}, want: []any{ewtNegZ, ewtNegZ, 1.0, 1.0, 2.0}},
		{op: "floor", dt: xla.Float32, in: []any{-0.8166, -0.2530, 0.2530, 0.8166, 2.0, ewtNegZ}, want: []any{-1.0, -1.0, 0.0, 0.0, 2.0, ewtNegZ}},
		{op: "round_nearest_afz", dt: xla.Float64, in: []any{-2.5, 0.4, 0.5, 0.6, 2.5, -0.4}, want: []any{-3.0, 0.0, 1.0, 1.0, 3.0, ewtNegZ}},
		{op: "round_nearest_even", dt: xla.Float64, in: []any{-2.5, 0.4, 0.5, 0.6, 2.5, -0.4}, want: []any{-2.0, 0.0, 0.0, 1.0, 2.0, ewtNegZ}},
		{op: "round_nearest_even", dt: xla.Float16, in: []any{1.5, 2.5, ewtInf}, want: []any{2.0, 2.0, ewtInf}},
		{op: "round_nearest_afz", dt: xla.Float8E5M2, in: []any{2.5}, want: []any{3.0}},
		// roots and powers of e
		{op: "sqrt", dt: xla.Float32, in: []any{4.0, -1.0, ewtNegZ, ewtInf}, want: []any{2.0, ewtNaN, ewtNegZ, ewtInf}},
		{op: "sqrt", dt: xla.Float16, in: []any{2.0}, want: []any{1.4140625}},
		{op: "sqrt", dt: xla.Complex128, in: []any{-4 + 0i, complex(-4, ewtNegZ)}, want: []any{2i, -2i}},
		{op: "rsqrt", dt: xla.Float32, in: []any{1.0, 4.0, 9.0, 25.0}, want: []any{1.0, 0.5, 0.33333334, 0.2}, tol: 1e-7},
		{op: "rsqrt", dt: xla.Float64, in: []any{0.0, ewtNegZ, ewtInf, -1.0}, want: []any{ewtInf, -ewtInf, 0.0, ewtNaN}},
		{op: "cbrt", dt: xla.Float64, in: []any{0.0, 1.0, 8.0, 27.0, -8.0}, want: []any{0.0, 1.0, 2.0, 3.0, -2.0}},
		{op: "cbrt", dt: xla.Complex128, in: []any{8 + 0i, 0i}, want: []any{2 + 0i, 0i}, tol: 1e-15},
		{op: "exponential", dt: xla.Float32, in: []any{0.0, 1.0, -ewtInf, ewtInf, ewtNaN, 100.0}, want: []any{1.0, math.E, 0.0, ewtInf, ewtNaN, ewtInf}, tol: 1e-7},
		{op: "exponential", dt: xla.BFloat16, in: []any{1.0}, want: []any{2.71875}},
		{op: "exponential", dt: xla.Float8E5M2, in: []any{3.0}, want: []any{20.0}},
		{op: "exponential", dt: xla.Complex128, in: []any{complex(0, math.Pi)}, want: []any{-1 + 0i}, tol: 1e-15},
		{op: "exponential_minus_one", dt: xla.Float64, in: []any{0.0, 1e-10, ewtNegZ, -ewtInf}, want: []any{0.0, 1.00000000005e-10, ewtNegZ, -1.0}, tol: 1e-15},
		{op: "exponential_minus_one", dt: xla.Complex128, in: []any{complex(1e-10, 1e-10), complex(1, 2)},
			want: []any{complex(1e-10, 1e-10), complex(math.E*math.Cos(2)-1, math.E*math.Sin(2))}, tol: 1e-9},
		{op: "log", dt: xla.Float64, in: []any{1.0, 2.0, 0.0, -1.0, ewtInf}, want: []any{0.0, math.Ln2, -ewtInf, ewtNaN, ewtInf}, tol: 1e-15},
		{op: "log", dt: xla.Complex128, in: []any{-1 + 0i}, want: []any{complex(0, math.Pi)}, tol: 1e-15},
		{op: "log_plus_one", dt: xla.Float64, in: []any{0.0, -0.999, 7.0, 6.38905621, 15.0, -1.0},
			want: []any{0.0, math.Log(0.001), 2.07944155, 2.0, 2.77258873, -ewtInf}, tol: 1e-8},
		{op: "log_plus_one", dt: xla.Complex128, in: []any{complex(1e-10, 0), complex(1, 1)},
			want: []any{complex(1e-10, 0), complex(0.5*math.Log(5), math.Atan2(1, 2))}, tol: 1e-9},
		{op: "logistic", dt: xla.Float64, in: []any{0.0, 1.0, 2.0, 3.0, -ewtInf, ewtInf, -1000.0},
			want: []any{0.5, 0.73105858, 0.88079708, 0.95257413, 0.0, 1.0, 0.0}, tol: 1e-8},
		{op: "logistic", dt: xla.Complex64, in: []any{0i}, want: []any{0.5 + 0i}},
		{op: "sine", dt: xla.Float32, in: []any{0.0, math.Pi / 2, ewtInf}, want: []any{0.0, 1.0, ewtNaN}, tol: 1e-7},
		{op: "cosine", dt: xla.Float32, in: []any{0.0, math.Pi}, want: []any{1.0, -1.0}, tol: 1e-7},
		{op: "tan", dt: xla.Float64, in: []any{0.0, math.Pi / 4}, want: []any{0.0, 1.0}, tol: 1e-15},
		{op: "tanh", dt: xla.Float32, in: []any{-1.0, 0.0, 1.0, ewtInf}, want: []any{-0.76159416, 0.0, 0.76159416, 1.0}, tol: 1e-7},
		{op: "sine", dt: xla.Complex128, in: []any{complex(0, 1)}, want: []any{complex(0, math.Sinh(1))}, tol: 1e-15},
		{op: "cosine", dt: xla.Complex128, in: []any{complex(0, 1)}, want: []any{complex(math.Cosh(1), 0)}, tol: 1e-15},
		{op: "tanh", dt: xla.Complex128, in: []any{complex(0, math.Pi/4)}, want: []any{complex(0, 1)}, tol: 1e-15},
		{op: "tan", dt: xla.Complex128, in: []any{complex(math.Pi/4, 0)}, want: []any{complex(1, 0)}, tol: 1e-15},
		{op: "rsqrt", dt: xla.Complex128, in: []any{-4 + 0i}, want: []any{-0.5i}, tol: 1e-15},
		// is_finite, real, imag
		{op: "is_finite", dt: xla.Float64, rdt: xla.Bool, in: []any{-ewtInf, ewtInf, ewtNaN, -10.0, ewtNegZ, 0.0, 10.0},
			want: []any{false, false, false, true, true, true, true}},
		{op: "is_finite", dt: xla.Float8E4M3FN, rdt: xla.Bool, in: []any{448.0, ewtNaN}, want: []any{true, false}},
		{op: "is_finite", dt: xla.Float8E4M3FN, rdt: xla.Bool, in: []any{ewtInf}, want: []any{false}}, // Inf -> NaN
		{op: "real", dt: xla.Complex64, rdt: xla.Float32, in: []any{1 + 2i, 3 + 4i}, want: []any{1.0, 3.0}},
		{op: "imag", dt: xla.Complex128, rdt: xla.Float64, in: []any{1 + 2i, 3 - 4i}, want: []any{2.0, -4.0}},
		{op: "real", dt: xla.Float32, in: []any{1.5, ewtNaN}, want: []any{1.5, ewtNaN}},
		{op: "imag", dt: xla.Float32, in: []any{1.5, ewtNaN}, want: []any{0.0, 0.0}},
	}
	for _, tt := range tests {
		t.Run(tt.op+"/"+tt.dt.String(), func(t *testing.T) {
			out := ewtRun1(t, "stablehlo."+tt.op, "", tt.rdt, ewtTensor(tt.dt, tt.in...))
			ewtCheck(t, out, tt.tol, tt.want, tt.op)
		})
	}
}

func TestUnaryOpsRejectTypes(t *testing.T) {
	tests := []struct {
		op  string
		dt  xla.DType
		rdt xla.DType
	}{
		{"not", xla.Float32, xla.Invalid},
		{"count_leading_zeros", xla.Float32, xla.Invalid},
		{"popcnt", xla.Bool, xla.Invalid},
		{"floor", xla.Complex64, xla.Invalid},
		{"exponential", xla.Int32, xla.Invalid},
		{"is_finite", xla.Int32, xla.Bool},
		{"negate", xla.Bool, xla.Invalid},
		{"abs", xla.Complex64, xla.Complex64}, // abs of complex is real
		{"sqrt", xla.Float32, xla.Float64},    // result type must match
	}
	for _, tt := range tests {
		rdt := tt.rdt
		if rdt == xla.Invalid {
			rdt = tt.dt
		}
		in := ewtTensor(tt.dt, 1)
		if tt.dt == xla.Bool {
			in = ewtTensor(tt.dt, true)
		}
		_, err := ewtRun("stablehlo."+tt.op, "", []xla.Shape{xla.MakeShape(rdt, 1)}, in)
		require.Error(t, err, "%s on %v", tt.op, tt.dt)
		assert.Contains(t, err.Error(), "stablehlo."+tt.op)
	}
}

// Every narrow float type goes through float32 arithmetic and is rounded
// back: the results are always values of the type.
func TestUnaryNarrowResultsAreRepresentable(t *testing.T) {
	for _, dt := range append([]xla.DType{xla.BFloat16}, narrowTypes...) {
		in := ewtTensor(dt, 0.3, 1.7, 2.9, 5.5)
		for _, op := range []string{"exponential", "sqrt", "log", "tanh", "logistic", "negate", "cbrt"} {
			out := ewtRun1(t, "stablehlo."+op, "", xla.Invalid, in)
			for i, v := range out.Data.([]float32) {
				if v != v {
					continue
				}
				assert.Equal(t, math.Float32bits(v), math.Float32bits(RoundNarrow(dt, v)), "%s %v element %d: %v", op, dt, i, v)
			}
		}
	}
}

// TestComplexTanhLargeArguments: tanh tends to ±1 (and tan to ±i) where
// Go's cmplx.Tanh and cmplx.Tan divide infinities (NaN before).
func TestComplexTanhLargeArguments(t *testing.T) {
	for _, dt := range []xla.DType{xla.Complex128, xla.Complex64} {
		out := ewtRun1(t, "stablehlo.tanh", "", xla.Invalid, ewtTensor(dt, complex(1000, 0), complex(-1000, 0.5), complex(0.5, 0.3)))
		ewtCheck(t, out, 1e-6, []any{complex(1, 0), complex(-1, 0), complex(0.49619706577350764, 0.23840508333812327)}, dt.String()+" tanh")
		out = ewtRun1(t, "stablehlo.tan", "", xla.Invalid, ewtTensor(dt, complex(0, 1000), complex(1, 400), complex(0.5, -400)))
		ewtCheck(t, out, 1e-6, []any{complex(0, 1), complex(0, 1), complex(0, -1)}, dt.String()+" tan")
	}
}

// Complex sqrt and rsqrt keep tiny parts: sqrt(i·y) = sqrt(y/2)·(1 + i)
// for a subnormal y (the root lost it, or came out 15% off, and rsqrt
// gave Inf+NaNi).
func TestComplexSqrtOfSubnormals(t *testing.T) {
	ys := []float64{5e-324, 3 * 5e-324, 0x1p-1060 * 1.75}
	vals := make([]any, len(ys))
	for i, y := range ys {
		vals[i] = complex(0, y)
	}
	out := ewtRun1(t, "stablehlo.sqrt", "", xla.Invalid, ewtTensor(xla.Complex128, vals...))
	for i, y := range ys {
		want := math.Sqrt(y*0x1p100/2) * 0x1p-50 // y/2 without underflow
		got := out.Data.([]complex128)[i]
		assert.InEpsilon(t, want, real(got), 1e-15, "sqrt(0+%gi) = %v", y, got)
		assert.InEpsilon(t, want, imag(got), 1e-15, "sqrt(0+%gi) = %v", y, got)
	}
	y := ys[0] // the smallest subnormal
	out = ewtRun1(t, "stablehlo.rsqrt", "", xla.Invalid, ewtTensor(xla.Complex128, complex(0, y)))
	got := out.Data.([]complex128)[0]
	want := 1 / (math.Sqrt(y*0x1p100/2) * 0x1p-50) / 2 // 1/(s(1+i)) = (1-i)/(2s)
	assert.InEpsilon(t, want, real(got), 1e-15, "rsqrt: %v", got)
	assert.InEpsilon(t, -want, imag(got), 1e-15, "rsqrt: %v", got)
}

// Complex square of a part past half the largest float: the imaginary
// part 2·re·im stays finite when it is (it was Inf, or NaN for im = 0).
func TestComplexSquareOfHugeParts(t *testing.T) {
	out := ewtRun1(t, "stablehlo.square", "", xla.Invalid, ewtTensor(xla.Complex128,
		complex(math.MaxFloat64, 0.5), complex(math.MaxFloat64, 0), complex(1e308, 1e-300)))
	got := out.Data.([]complex128)
	assert.Equal(t, math.MaxFloat64, imag(got[0]))
	assert.Equal(t, 0.0, imag(got[1]))
	assert.InEpsilon(t, 2e8, imag(got[2]), 1e-15)
	for _, z := range got {
		assert.True(t, math.IsInf(real(z), 1), "%v", z)
	}
}

// TestComplexExpFamilyOverflow: complex exponential, expm1, cosine, sine
// and power give the exact zeros and finite results next to an overflowing
// factor (e^1000 times sin 0 was NaN; e^710 alone overflows while
// e^(710+iπ/4) is finite).
func TestComplexExpFamilyOverflow(t *testing.T) {
	out := shpRun(t, `func.func @main() -> (tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>, tensor<1xcomplex<f64>>, tensor<1xcomplex<f32>>) {
  %a = stablehlo.constant dense<[(1000.0, 0.0), (710.0, 0.7853981633974483)]> : tensor<2xcomplex<f64>>
  %0 = stablehlo.exponential %a : tensor<2xcomplex<f64>>
  %1 = stablehlo.exponential_minus_one %a : tensor<2xcomplex<f64>>
  %b = stablehlo.constant dense<[(0.0, 1000.0), (0.7853981633974483, 710.0)]> : tensor<2xcomplex<f64>>
  %2 = stablehlo.cosine %b : tensor<2xcomplex<f64>>
  %3 = stablehlo.sine %b : tensor<2xcomplex<f64>>
  %x = stablehlo.constant dense<[(10.0, 0.0)]> : tensor<1xcomplex<f64>>
  %y = stablehlo.constant dense<[(400.0, 0.0)]> : tensor<1xcomplex<f64>>
  %4 = stablehlo.power %x, %y : tensor<1xcomplex<f64>>
  %c = stablehlo.constant dense<[(100.0, 0.0)]> : tensor<1xcomplex<f32>>
  %5 = stablehlo.exponential %c : tensor<1xcomplex<f32>>
  return %0, %1, %2, %3, %4, %5 : tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>, tensor<1xcomplex<f64>>, tensor<1xcomplex<f32>>
}`)
	inf := math.Inf(1)
	big := math.Exp(355) * (math.Exp(355) * math.Sqrt2 / 2) // e^710·cos(π/4), finite
	half := big / 2                                         // cosh(710)·cos(π/4) ≈ e^710/2·√2/2
	want := [][]complex128{
		{complex(inf, 0), complex(big, big)},
		{complex(inf, 0), complex(big, big)},
		{complex(inf, math.Copysign(0, -1)), complex(half, -half)},
		{complex(0, inf), complex(half, half)},
		{complex(inf, 0)},
		{complex(inf, 0)},
	}
	for i, w := range want {
		got := laValues(out[i].(*Tensor))
		require.Len(t, got, len(w), "result %d", i)
		for j := range w {
			for _, part := range []struct{ g, w float64 }{{real(got[j]), real(w[j])}, {imag(got[j]), imag(w[j])}} {
				if part.w == 0 || math.IsInf(part.w, 0) {
					assert.Equal(t, math.Float64bits(part.w), math.Float64bits(part.g), "result %d element %d: got %v, want %v", i, j, got[j], w[j])
				} else {
					assert.InEpsilon(t, part.w, part.g, 1e-12, "result %d element %d", i, j)
				}
			}
		}
	}
}
