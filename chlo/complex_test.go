package chlo

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/halo-ml/halo/interpreter"
	"github.com/halo-ml/halo/stablehlo"
	"github.com/halo-ml/halo/xla"
)

// complexGrid is a dense grid of the plane, both sides of every branch cut
// (±0 imaginary parts on the real axis beyond ±1, ±0 real parts on the
// imaginary axis beyond ±i), the points ±1, ±i, tiny and huge magnitudes,
// infinities and NaN in either part.
func complexGrid() []complex128 {
	nz := math.Copysign(0, -1)
	inf, nan := math.Inf(1), math.NaN()
	var parts []float64
	for i := -12; i <= 12; i++ {
		parts = append(parts, float64(i)/4)
	}
	parts = append(parts, 0, nz, 1e-30, -1e-30, 0.999, 1.001, -1.001, 1e10, -1e10, 1e300, -1e300, 3e38, inf, -inf, nan)
	var out []complex128
	for _, re := range parts {
		for _, im := range parts {
			out = append(out, complex(re, im))
		}
	}
	return out
}

func complexTensor(dt xla.DType, zs []complex128) *interpreter.Tensor {
	x := interpreter.NewTensor(xla.MakeShape(dt, int64(len(zs))))
	switch d := x.Data.(type) {
	case []complex128:
		copy(d, zs)
	case []complex64:
		for i, z := range zs {
			d[i] = complex64(z)
		}
	}
	return x
}

func complexes(x *interpreter.Tensor) []complex128 {
	switch d := x.Data.(type) {
	case []complex128:
		return d
	case []complex64:
		out := make([]complex128, len(d))
		for i, z := range d {
			out[i] = complex128(z)
		}
		return out
	}
	panic("not a complex tensor")
}

// partClose compares one part: NaN with NaN, infinities and zeros exactly
// with their signs, others within limit ulps of the part's type.
func partClose(dt xla.DType, got, want float64, limit uint64) bool {
	switch {
	case math.IsNaN(want) || math.IsNaN(got):
		return math.IsNaN(want) && math.IsNaN(got)
	case want == 0 || got == 0 || math.IsInf(want, 0):
		// A result that should be a signed zero or an infinity must be
		// exactly that; tiny nonzero values compare in ulps.
		if want == 0 && got == 0 || math.IsInf(want, 0) {
			return got == want && math.Signbit(got) == math.Signbit(want)
		}
	}
	return interpreter.ULPDistance(dt, got, want) <= limit
}

// compareComplexPaths runs fn over zs in dt through the interpreter's
// direct kernels and decomposed by Expand, reports (t.Errorf, the first 20)
// points whose parts differ by more than limit ulp (special values and
// signed zeros exactly), and returns the worst finite difference.
func compareComplexPaths(t *testing.T, name string, fn func(fb *FuncBuilder, x *Value) *Value, dt xla.DType, zs []complex128, limit uint64) uint64 {
	t.Helper()
	mk := func() *stablehlo.Module {
		return build(t, []stablehlo.TensorType{stablehlo.Tensor(dt, int64(len(zs)))}, func(fb *FuncBuilder, a []*Value) []*Value {
			return []*Value{fn(fb, a[0])}
		})
	}
	in := complexTensor(dt, zs)
	direct := complexes(run(t, mk(), in)[0])
	expanded := complexes(expandAndRun(t, mk(), in)[0])
	pt := dt.ComplexElem()
	var worst uint64
	bad := 0
	for i, z := range complexes(in) {
		d, e := direct[i], expanded[i]
		if !partClose(pt, real(e), real(d), limit) || !partClose(pt, imag(e), imag(d), limit) {
			bad++
			if bad <= 20 {
				t.Errorf("%s %s(%v): direct %v, decomposed %v", dt, name, z, d, e)
			}
		}
		for _, p := range [][2]float64{{real(e), real(d)}, {imag(e), imag(d)}} {
			if !math.IsNaN(p[1]) && !math.IsInf(p[1], 0) && p[1] != 0 && p[0] != 0 {
				worst = max(worst, interpreter.ULPDistance(pt, p[0], p[1]))
			}
		}
	}
	assert.Zero(t, bad, "%s %s: mismatches of %d points", dt, name, len(zs))
	return worst
}

// The six complex inverse functions decomposed agree with the
// interpreter's direct kernels (C99 Annex G special values, Kahan's
// formulas) over the grid: every special value and signed zero exactly,
// finite parts within 1 ulp for complex64 and 4 ulp for complex128 (the
// real asinh of the decomposition is not math.Asinh).
func TestExpandComplexInverse(t *testing.T) {
	zs := complexGrid()
	fns := []struct {
		name string
		fn   func(fb *FuncBuilder, x *Value) *Value
	}{{"asin", Asin}, {"acos", Acos}, {"atan", Atan}, {"asinh", Asinh}, {"acosh", Acosh}, {"atanh", Atanh}}
	for _, f := range fns {
		t.Run(f.name, func(t *testing.T) {
			for _, dt := range []xla.DType{xla.Complex64, xla.Complex128} {
				limit := uint64(1)
				if dt == xla.Complex128 {
					limit = 4
				}
				worst := compareComplexPaths(t, f.name, f.fn, dt, zs, limit)
				t.Logf("%s %s: %d points, worst finite part %d ulp", dt, f.name, len(zs), worst)
			}
		})
	}
}

// On a branch cut the sign of the zero part picks the side: asin(2 ± 0i)
// = π/2 ± i·1.3169..., atanh(2 ± 0i) = 0.549... ± iπ/2, acosh(-2 ± 0i) =
// 1.3169... ± iπ, and the decomposition gives exactly these sides.
func TestExpandComplexBranchCuts(t *testing.T) {
	nz := math.Copysign(0, -1)
	zs := []complex128{complex(2, 0), complex(2, nz), complex(-2, 0), complex(-2, nz), complex(0, 2), complex(nz, 2)}
	m := build(t, []stablehlo.TensorType{stablehlo.Tensor(xla.Complex128, 6)}, func(fb *FuncBuilder, a []*Value) []*Value {
		return []*Value{Asin(fb, a[0]), Atanh(fb, a[0]), Acosh(fb, a[0]), Asinh(fb, a[0])}
	})
	out := expandAndRun(t, m, complexTensor(xla.Complex128, zs))
	asin, atanh, acosh, asinh := complexes(out[0]), complexes(out[1]), complexes(out[2]), complexes(out[3])
	ach2 := math.Acosh(2)
	assert.InDelta(t, math.Pi/2, real(asin[0]), 1e-15)
	assert.InDelta(t, ach2, imag(asin[0]), 1e-15)
	assert.InDelta(t, -ach2, imag(asin[1]), 1e-15)
	assert.InDelta(t, math.Pi/2, imag(atanh[0]), 1e-15)
	assert.InDelta(t, -math.Pi/2, imag(atanh[1]), 1e-15)
	assert.InDelta(t, math.Pi, imag(acosh[2]), 1e-15)
	assert.InDelta(t, -math.Pi, imag(acosh[3]), 1e-15)
	assert.InDelta(t, ach2, real(acosh[2]), 1e-15)
	// asinh's cut is the imaginary axis beyond i: the sign of the zero real
	// part picks the side.
	assert.InDelta(t, ach2, real(asinh[4]), 1e-15)
	assert.InDelta(t, -ach2, real(asinh[5]), 1e-15)
	assert.InDelta(t, math.Pi/2, imag(asinh[5]), 1e-15)
}

// top_k has no order on complex numbers (as in JAX): the builder rejects
// complex operands with the reason.
func TestTopKRejectsComplex(t *testing.T) {
	b := stablehlo.NewBuilder("m")
	fb := b.NewFunction("main", stablehlo.Tensor(xla.Complex64, 2, 4))
	v, i := TopK(fb, fb.Arg(0), 2)
	assert.NotNil(t, v)
	assert.NotNil(t, i)
	fb.Return(fb.Arg(0))
	_, err := b.Build()
	if assert.Error(t, err) {
		assert.Contains(t, err.Error(), "top_k is not defined for complex element type complex<f32>")
	}
}

// TestExpandComplexSinhCosh: the decomposed complex sinh, cosh and
// square agree with the interpreter's kernels over the grid and past
// |re| = 700: the special values of C99 Annex G (sinh(0 + i∞) = 0 + iNaN,
// cosh(720 + 0i) = ∞ + 0i), a split e^|re| where sinh re alone overflows
// (sinh(720 + 1e-300i) = ∞ + 2.5e12i), and squares whose re + im
// overflows (3e38 + 3e38i in complex64 is 0 + ∞i).
func TestExpandComplexSinhCosh(t *testing.T) {
	zs := complexGrid()
	for _, re := range []float64{700.5, -705, 710, -710.4, 720, -745} {
		for _, im := range []float64{0, math.Copysign(0, -1), 1e-300, -1e-300, 2, math.Pi / 2, 1e-10, math.Inf(1), math.NaN()} {
			zs = append(zs, complex(re, im))
		}
	}
	for _, f := range []struct {
		name string
		fn   func(fb *FuncBuilder, x *Value) *Value
	}{{"sinh", Sinh}, {"cosh", Cosh}, {"square", Square}} {
		for _, dt := range []xla.DType{xla.Complex64, xla.Complex128} {
			compareComplexPaths(t, f.name, f.fn, dt, zs, 4)
		}
	}
}

// TestComplexInverseEdges: both forms (direct kernels and decomposition,
// complex128) against mpmath where a form overflowed with a finite
// result. Next to the branch points ±1 of atanh (±i of atan) y² underflowed
// (atanh(1 + 1e-200i) came out +Inf, re = (ln 2 - ln|y|)/2); past
// |z| = MaxFloat64 with both parts finite the product of the two square
// roots of Kahan's formulas overflowed (asinh(1.5e308 + 1.5e308i) came out
// +Inf, ln(2|z|) + i arg z). asin(x + 0i), x > 1, is on the upper side of
// its cut.
func TestComplexInverseEdges(t *testing.T) {
	pi4 := math.Pi / 4
	cases := []struct {
		name string
		fn   func(fb *FuncBuilder, x *Value) *Value
		z    complex128
		want complex128
	}{
		{"atanh", Atanh, complex(1, 1e-200), complex(230.60508288968454107, pi4)},
		{"atanh", Atanh, complex(-1, -1e-300), complex(-345.73433753938682524, -pi4)},
		{"atanh", Atanh, complex(1, 5e-324), complex(372.56660955097060381, pi4)},
		{"atan", Atan, complex(1e-200, 1), complex(pi4, 230.60508288968454107)},
		{"atan", Atan, complex(-1e-250, -1), complex(-pi4, -288.16971021453568313)},
		{"asinh", Asinh, complex(1.5e308, 1.5e308), complex(710.64139452111415303, pi4)},
		{"asinh", Asinh, complex(-1.7e308, 1e300), complex(-710.41998407378818636, 5.8823529411764710409e-9)},
		{"asin", Asin, complex(1.5e308, -1.5e308), complex(pi4, -710.64139452111415303)},
		{"asin", Asin, complex(1.7e308, 0), complex(math.Pi/2, 710.41998407378818635)},
		{"acos", Acos, complex(-1.5e308, 1.5e308), complex(3*pi4, -710.64139452111415303)},
		{"acos", Acos, complex(1e10, 1.7e308), complex(math.Pi/2, -710.41998407378818635)},
		{"acosh", Acosh, complex(-1.5e308, -1.5e308), complex(710.64139452111415303, -3*pi4)},
		{"acosh", Acosh, complex(1.7e308, 1e-300), complex(710.41998407378818635, 0)},
	}
	for _, c := range cases {
		mk := func() *stablehlo.Module {
			return build(t, []stablehlo.TensorType{stablehlo.Tensor(xla.Complex128, 1)}, func(fb *FuncBuilder, a []*Value) []*Value {
				return []*Value{c.fn(fb, a[0])}
			})
		}
		in := complexTensor(xla.Complex128, []complex128{c.z})
		for form, out := range map[string]*interpreter.Tensor{"direct": run(t, mk(), in)[0], "decomposed": expandAndRun(t, mk(), in)[0]} {
			got := complexes(out)[0]
			for _, p := range [][2]float64{{real(got), real(c.want)}, {imag(got), imag(c.want)}} {
				ok := math.Abs(p[0]-p[1]) <= 5e-16*math.Abs(p[1]) && math.Signbit(p[0]) == math.Signbit(p[1])
				assert.True(t, ok, "%s %s(%v) = %v, want %v", form, c.name, c.z, got, c.want)
			}
		}
	}
}
