package special

import (
	"math"
	"math/big"
	"math/cmplx"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const euler = 0.57721566490153286060651209008240243 // γ (DLMF 5.2.3)

// relErr is |got-want|/|want| (absolute when want is 0).
func relErr(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / math.Abs(want)
}

func same(t *testing.T, want, got float64, msg string) {
	t.Helper()
	if math.IsNaN(want) {
		assert.True(t, math.IsNaN(got), "%s: got %v, want NaN", msg, got)
		return
	}
	assert.Equal(t, want, got, msg)
	assert.Equal(t, math.Signbit(want), math.Signbit(got), "%s: sign of %v", msg, got)
}

func TestDigammaValues(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	// Special points (CHLO's definitions).
	for _, c := range []struct{ x, want float64 }{
		{0, -inf}, {math.Copysign(0, -1), -inf}, {-1, nan}, {-7, nan}, {inf, inf}, {-inf, nan}, {nan, nan},
	} {
		same(t, c.want, Digamma(c.x), "digamma special")
	}
	// Closed forms (DLMF 5.4.12-5.4.16, Gauss's digamma theorem).
	sqrt3 := math.Sqrt(3)
	for _, c := range []struct{ x, want, tol float64 }{
		{1, -euler, 1e-15},
		{0.5, -euler - 2*math.Ln2, 1e-15},
		{0.25, -euler - math.Pi/2 - 3*math.Ln2, 1e-15},
		{1.0 / 3, -euler - math.Pi/(2*sqrt3) - 1.5*math.Log(3), 1e-15},
		{2, 1 - euler, 1e-15},
		{11, 1 + 1./2 + 1./3 + 1./4 + 1./5 + 1./6 + 1./7 + 1./8 + 1./9 + 1./10 - euler, 1e-15},
		{1e10, 23.025850929890456840, 1e-15}, // ln x - 1/(2x) to 20 digits
		{-0.5, 0.03648997397857652056, 1e-13},
	} {
		assert.LessOrEqual(t, relErr(Digamma(c.x), c.want), c.tol, "digamma(%v)", c.x)
	}
	// The zero: ψ(x0) = 0 to within ψ'(x0)·ulp(x0).
	assert.Less(t, math.Abs(Digamma(1.4616321449683623)), 3e-16)
	// Recurrence and reflection over a sweep (independent identities).
	for x := -9.95; x < 30; x += 0.0731 {
		if x != math.Floor(x) {
			r := Digamma(x+1) - Digamma(x) - 1/x
			assert.LessOrEqual(t, math.Abs(r), 4e-15*(1+math.Abs(Digamma(x))+1/math.Abs(x)), "recurrence at %v", x)
		}
	}
	for x := 0.013; x < 1; x += 0.0173 {
		// tan(πx) with the argument reduced exactly: tan(πx) = -tan(π(1-x)).
		tp := math.Tan(math.Pi * x)
		if x > 0.5 {
			tp = -math.Tan(math.Pi * (1 - x))
		}
		r := Digamma(1-x) - Digamma(x) - math.Pi/tp
		assert.LessOrEqual(t, math.Abs(r), 1e-14*(math.Abs(Digamma(x))+1), "reflection at %v", x)
	}
}

func TestPolygammaZeta(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	pi2 := math.Pi * math.Pi
	zeta3 := 1.2020569031595942853997381615114 // Apéry's constant (DLMF 25.6.2 table)
	for _, c := range []struct{ n, x, want, tol float64 }{
		{1, 1, pi2 / 6, 5e-16},
		{1, 0.5, pi2 / 2, 5e-16},
		{2, 1, -2 * zeta3, 5e-16},
		{3, 1, pi2 * pi2 / 15, 5e-16},                              // 6 ζ(4)
		{1, 0.25, pi2 + 8*0.915965594177219015054603514932, 1e-15}, // π² + 8G (Catalan)
		{0, 1, -euler, 1e-15},
	} {
		assert.LessOrEqual(t, relErr(Polygamma(c.n, c.x), c.want), c.tol, "polygamma(%v, %v)", c.n, c.x)
	}
	for _, c := range []struct{ n, x, want float64 }{
		{-1, 1, nan}, {1.5, 1, nan}, {nan, 1, nan}, {1, nan, nan}, {1, 0, inf}, {2, 0, nan}, {1, -3, inf},
		// At +Inf, ±0 for every n (n! overflowing made it NaN from 171).
		{1, inf, 0}, {2, inf, math.Copysign(0, -1)}, {171, inf, 0}, {200, inf, math.Copysign(0, -1)},
		// x past 2^53 with n+1 > x: the scaled sum's q+1 == q (it never
		// returned); n! ζ(n+1, x) overflows, with the sign of (-1)^(n+1)
		// (n even: every float past 2^53 is).
		{1e20, 1e17, math.Inf(-1)},
	} {
		same(t, c.want, Polygamma(c.n, c.x), "polygamma special")
	}
	// ψ^(n)(x+1) = ψ^(n)(x) + (-1)^n n! / x^(n+1)
	for n := 1.0; n <= 6; n++ {
		for x := 0.05; x < 40; x *= 1.37 {
			f := math.Gamma(n + 1)
			if math.Mod(n, 2) == 1 {
				f = -f
			}
			want := Polygamma(n, x) + f/math.Pow(x, n+1)
			assert.LessOrEqual(t, relErr(Polygamma(n, x+1), want), 4e-15*math.Abs(Polygamma(n, x))/math.Abs(want)+4e-15, "n=%v x=%v", n, x)
		}
	}
	// Zeta special points (CHLO) and values: ζ(2) = π²/6, ζ(4) = π⁴/90,
	// ζ(s, 1/2) = (2^s - 1) ζ(s).
	for _, c := range []struct{ x, q, want float64 }{
		{0.5, 1, nan}, {1, 2, inf}, {2.5, -1.5, nan}, {2, -2, inf}, {3, -2, nan}, {nan, 1, nan}, {2, inf, 0}, {inf, 2, 0}, {inf, 1, 1},
	} {
		same(t, c.want, Zeta(c.x, c.q), "zeta special")
	}
	assert.LessOrEqual(t, relErr(Zeta(2, 1), pi2/6), 4e-16)
	assert.LessOrEqual(t, relErr(Zeta(4, 1), pi2*pi2/90), 4e-16)
	assert.LessOrEqual(t, relErr(Zeta(3, 0.5), 7*zeta3), 4e-16)
	// ζ(s, q) = ζ(s, q+1) + q^-s, also through negative q for integer s.
	for s := 1.1; s < 60; s *= 1.6 {
		for q := 0.01; q < 100; q *= 1.9 {
			want := Zeta(s, q+1) + math.Pow(q, -s)
			assert.LessOrEqual(t, relErr(Zeta(s, q), want), 1e-14, "zeta(%v, %v)", s, q)
		}
	}
	assert.LessOrEqual(t, relErr(Zeta(2, -0.5), Zeta(2, 0.5)+4), 1e-15)
}

func TestIgamma(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct{ a, x, p, q float64 }{
		{0, 1, nan, nan}, {-1, 1, nan, nan}, {1, -1, nan, nan}, {nan, 1, nan, nan}, {1, nan, nan, nan},
		{2, 0, 0, 1}, {2, math.Inf(1), 1, 0}, {0, 0, nan, nan},
	} {
		same(t, c.p, Igamma(c.a, c.x), "igamma special")
		same(t, c.q, Igammac(c.a, c.x), "igammac special")
	}
	// P(1, x) = 1 - e^-x, P(1/2, x) = erf(√x), Q(n, x) = e^-x Σ_{k<n} x^k/k!
	// (DLMF 8.4.1, 8.4.10), and the recurrence P(a+1, x) = P(a, x) - x^a e^-x / Γ(a+1).
	for x := 0.001; x < 80; x *= 1.23 {
		assert.LessOrEqual(t, relErr(Igamma(1, x), -math.Expm1(-x)), 2e-15, "P(1, %v)", x)
		assert.LessOrEqual(t, relErr(Igammac(1, x), math.Exp(-x)), 2e-14, "Q(1, %v)", x)
		assert.LessOrEqual(t, relErr(Igamma(0.5, x), math.Erf(math.Sqrt(x))), 2e-15, "P(1/2, %v)", x)
		assert.LessOrEqual(t, relErr(Igammac(0.5, x), math.Erfc(math.Sqrt(x))), 1e-13, "Q(1/2, %v)", x)
		sum, term := 0.0, 1.0
		for k := 0; k < 5; k++ {
			sum += term
			term *= x / float64(k+1)
		}
		assert.LessOrEqual(t, relErr(Igammac(5, x), math.Exp(-x)*sum), 1e-13, "Q(5, %v)", x)
		for _, a := range []float64{0.3, 2.7, 11.5} {
			lg, _ := math.Lgamma(a + 1)
			p := Igamma(a, x)
			want := p - math.Exp(a*math.Log(x)-x-lg)
			// The difference cancels: the tolerance is relative to P(a, x).
			assert.LessOrEqual(t, math.Abs(Igamma(a+1, x)-want), 1e-13*p, "P(%v, %v)", a+1, x)
			assert.InDelta(t, 1, Igamma(a, x)+Igammac(a, x), 1e-15)
		}
	}
}

// i1eQuadrature is I1(x)e^-|x| = (1/π)∫_0^π e^(x(cos t - 1)) cos t dt by the
// trapezoid rule, which converges geometrically for this smooth periodic
// integrand (x > 0).
func i1eQuadrature(x float64) float64 {
	const n = 4000
	h := math.Pi / n
	s := 0.0
	for i := 0; i <= n; i++ {
		t := float64(i) * h
		f := math.Exp(x*(math.Cos(t)-1)) * math.Cos(t)
		if i == 0 || i == n {
			f /= 2
		}
		s += f
	}
	return s * h / math.Pi
}

func TestBesselI1e(t *testing.T) {
	for _, c := range []struct{ x, want float64 }{
		{0, 0}, {math.Copysign(0, -1), math.Copysign(0, -1)}, {math.Inf(1), 0}, {math.Inf(-1), math.Copysign(0, -1)}, {math.NaN(), math.NaN()},
	} {
		same(t, c.want, BesselI1e(c.x), "i1e special")
	}
	// Abramowitz & Stegun table 9.8, e^-x I1(x) to 10 digits.
	for _, c := range []struct{ x, want float64 }{{1, 0.2079104154}, {2, 0.2152692892}, {5, 0.1639722669}, {10, 0.1212626814}} {
		assert.InDelta(t, c.want, BesselI1e(c.x), 6e-11, "A&S i1e(%v)", c.x)
	}
	for x := 0.01; x < 400; x *= 1.11 {
		// The quadrature sums terms of size 1 to a result of size x/2: it is
		// good to an absolute 5e-15 below x = 1, relatively above.
		q := i1eQuadrature(x)
		if x < 1 {
			assert.InDelta(t, q, BesselI1e(x), 5e-15, "i1e(%v) vs quadrature", x)
		} else {
			assert.LessOrEqual(t, relErr(BesselI1e(x), q), 2e-14, "i1e(%v) vs quadrature", x)
		}
		assert.Equal(t, -BesselI1e(x), BesselI1e(-x))
	}
	// f32 subnormals of odd mantissa: x/2 is an f32 tie, and the true
	// value (x/2)(1 - |x|) lies just below it, so the f32 result is the
	// lower neighbour (it rounded to even, the wrong side, half the time).
	for _, k := range []uint32{1, 3, 5, 0x7fffff, 0x12345} {
		x := float64(math.Float32frombits(k))
		want := math.Float32frombits(k / 2)
		assert.Equal(t, want, float32(BesselI1e(x)), "i1e of f32 subnormal %#x", k)
		assert.Equal(t, -want, float32(BesselI1e(-x)), "i1e of -f32 subnormal %#x", k)
	}
}

func TestErfInv(t *testing.T) {
	for _, c := range []struct{ y, want float64 }{{0, 0}, {1, math.Inf(1)}, {-1, math.Inf(-1)}, {1.5, math.NaN()}, {math.NaN(), math.NaN()}} {
		same(t, c.want, ErfInv(c.y), "erfinv special")
	}
	// erf(ErfInv(y)) = y to within what one ulp of the result moves erf by.
	for y := -0.9999; y < 1; y += 0.000731 {
		x := ErfInv(y)
		slope := 2 / math.SqrtPi * math.Exp(-x*x)
		ulp := math.Nextafter(math.Abs(x), math.Inf(1)) - math.Abs(x)
		assert.LessOrEqual(t, math.Abs(math.Erf(x)-y), slope*ulp+4e-16*math.Abs(y), "erfinv(%v)", y)
	}
	// Tails: erfc(ErfInv(1-e)) = e.
	for e := 1e-300; e < 0.1; e *= 17 {
		x := ErfInv(1 - e)
		if e > 1e-16 {
			assert.LessOrEqual(t, relErr(math.Erfc(x), 1-(1-e)), 1e-14, "tail %v", e)
		}
	}
}

func TestNextafter(t *testing.T) {
	negZero := math.Copysign(0, -1)
	same(t, negZero, Nextafter64(0, negZero), "+0 toward -0")
	same(t, math.Float64frombits(1), Nextafter64(0, 1), "0 up")
	same(t, -math.Float64frombits(1), Nextafter64(negZero, -1), "-0 down")
	same(t, math.NaN(), Nextafter64(math.NaN(), 1), "nan")
	same(t, math.MaxFloat64, Nextafter64(math.Inf(1), 0), "inf down")
	same(t, math.Inf(1), Nextafter64(math.MaxFloat64, math.Inf(1)), "max up")
	same(t, 1+0x1p-52, Nextafter64(1, 2), "1 up")
	same(t, 1-0x1p-53, Nextafter64(1, 0), "1 down")
	assert.Equal(t, float32(1+0x1p-23), Nextafter32(1, 2))
	assert.Equal(t, math.Float32frombits(0x80000001), Nextafter32(0, -1))
	assert.True(t, math.Signbit(float64(Nextafter32(0, float32(negZero)))))
}

// bigSqrt is the correctly rounded complex square root by math/big.
func TestComplexAgainstIdentities(t *testing.T) {
	// Interior points: the forward function (math/cmplx) undoes the
	// inverse, and the inverse agrees with a math/big evaluation of
	// log-based formulas where cmplx is accurate.
	for re := -3.1; re < 3.2; re += 0.37 {
		for im := -3.05; im < 3.1; im += 0.41 {
			z := complex(re, im)
			for _, c := range []struct {
				name string
				f    func(complex128) complex128
				g    func(complex128) complex128
			}{
				{"asin", Asin, sinC}, {"acos", Acos, cosC}, {"atan", Atan, tanC},
				{"asinh", Asinh, sinhC}, {"acosh", Acosh, coshC}, {"atanh", Atanh, tanhC},
				{"sqrt", Sqrt, func(w complex128) complex128 { return w * w }},
				{"log", Log, expC},
			} {
				w := c.f(z)
				back := c.g(w)
				assert.InDelta(t, 0, absC(back-z)/(1+absC(z)), 1e-14, "%s(%v) = %v", c.name, z, w)
			}
			assert.InDelta(t, 0, absC(Tan(z)-tanC(z))/(1+absC(tanC(z))), 1e-14, "tan(%v)", z)
			assert.InDelta(t, 0, absC(Sinh(z)-sinhC(z))/(1+absC(sinhC(z))), 1e-14, "sinh(%v)", z)
			assert.InDelta(t, 0, absC(Cosh(z)-coshC(z))/(1+absC(coshC(z))), 1e-14, "cosh(%v)", z)
		}
	}
	// Principal ranges.
	require.InDelta(t, math.Pi/2, real(Asin(complex(5, 0))), 0)
}

func TestComplexBranchCuts(t *testing.T) {
	nz := math.Copysign(0, -1)
	acosh2 := 1.3169578969248167086 // ln(2+√3)
	asinh2 := 1.4436354751788103425 // ln(2+√5)
	atanh2 := 0.5493061443340548457 // ln(3)/2
	for _, c := range []struct {
		name string
		f    func(complex128) complex128
		z    complex128
		re   float64
		im   float64
	}{
		// Real axis beyond ±1: the sign of the zero imaginary part picks the side.
		{"asin", Asin, complex(2, 0), math.Pi / 2, acosh2},
		{"asin", Asin, complex(2, nz), math.Pi / 2, -acosh2},
		{"asin", Asin, complex(-2, 0), -math.Pi / 2, acosh2},
		{"asin", Asin, complex(-2, nz), -math.Pi / 2, -acosh2},
		{"acos", Acos, complex(2, 0), 0, -acosh2},
		{"acos", Acos, complex(2, nz), 0, acosh2},
		{"acos", Acos, complex(-2, 0), math.Pi, -acosh2},
		{"acos", Acos, complex(-2, nz), math.Pi, acosh2},
		{"atanh", Atanh, complex(2, 0), atanh2, math.Pi / 2},
		{"atanh", Atanh, complex(2, nz), atanh2, -math.Pi / 2},
		{"atanh", Atanh, complex(-2, 0), -atanh2, math.Pi / 2},
		{"acosh", Acosh, complex(-2, 0), acosh2, math.Pi},
		{"acosh", Acosh, complex(-2, nz), acosh2, -math.Pi},
		{"acosh", Acosh, complex(0.5, nz), 0, -math.Acos(0.5)},
		{"log", Log, complex(-1, 0), 0, math.Pi},
		{"log", Log, complex(-1, nz), 0, -math.Pi},
		{"sqrt", Sqrt, complex(-4, 0), 0, 2},
		{"sqrt", Sqrt, complex(-4, nz), 0, -2},
		// Imaginary axis beyond ±i: the sign of the zero real part.
		{"asinh", Asinh, complex(0, 2), acosh2, math.Pi / 2},
		{"asinh", Asinh, complex(nz, 2), -acosh2, math.Pi / 2},
		{"atan", Atan, complex(0, 2), math.Pi / 2, atanh2},
		{"atan", Atan, complex(nz, 2), -math.Pi / 2, atanh2},
		{"atan", Atan, complex(0, -2), math.Pi / 2, -atanh2},
		{"asinh", Asinh, complex(2, 0), asinh2, 0},
	} {
		w := c.f(c.z)
		assert.InDelta(t, c.re, real(w), 4e-16*(1+math.Abs(c.re)), "%s(%v) = %v", c.name, c.z, w)
		assert.InDelta(t, c.im, imag(w), 4e-16*(1+math.Abs(c.im)), "%s(%v) = %v", c.name, c.z, w)
		if c.re == 0 {
			assert.Equal(t, math.Signbit(c.re), math.Signbit(real(w)), "%s(%v) real sign", c.name, c.z)
		}
	}
}

func TestComplexAnnexGSpecials(t *testing.T) {
	inf, nan, nz := math.Inf(1), math.NaN(), math.Copysign(0, -1)
	type sv struct{ re, im float64 }
	for _, c := range []struct {
		name string
		f    func(complex128) complex128
		z    complex128
		want sv
	}{
		{"asinh", Asinh, complex(0, 0), sv{0, 0}},
		{"asinh", Asinh, complex(1, inf), sv{inf, math.Pi / 2}},
		{"asinh", Asinh, complex(inf, 1), sv{inf, 0}},
		{"asinh", Asinh, complex(inf, inf), sv{inf, math.Pi / 4}},
		{"asinh", Asinh, complex(-inf, nz), sv{-inf, nz}},
		{"asinh", Asinh, complex(nan, 0), sv{nan, 0}},
		{"asinh", Asinh, complex(nan, inf), sv{inf, nan}},
		{"asinh", Asinh, complex(inf, nan), sv{inf, nan}},
		{"acosh", Acosh, complex(0, 0), sv{0, math.Pi / 2}},
		{"acosh", Acosh, complex(nz, nz), sv{0, -math.Pi / 2}},
		{"acosh", Acosh, complex(1, inf), sv{inf, math.Pi / 2}},
		{"acosh", Acosh, complex(-inf, 1), sv{inf, math.Pi}},
		{"acosh", Acosh, complex(inf, 1), sv{inf, 0}},
		{"acosh", Acosh, complex(-inf, inf), sv{inf, 3 * math.Pi / 4}},
		{"acosh", Acosh, complex(inf, nan), sv{inf, nan}},
		{"acosh", Acosh, complex(nan, inf), sv{inf, nan}},
		{"acos", Acos, complex(0, 0), sv{math.Pi / 2, nz}},
		{"acos", Acos, complex(nz, nan), sv{math.Pi / 2, nan}},
		{"acos", Acos, complex(1, inf), sv{math.Pi / 2, -inf}},
		{"acos", Acos, complex(-inf, 1), sv{math.Pi, -inf}},
		{"acos", Acos, complex(inf, 1), sv{0, -inf}},
		{"acos", Acos, complex(inf, inf), sv{math.Pi / 4, -inf}},
		{"acos", Acos, complex(nan, inf), sv{nan, -inf}},
		{"atanh", Atanh, complex(0, 0), sv{0, 0}},
		{"atanh", Atanh, complex(1, 0), sv{inf, 0}},
		{"atanh", Atanh, complex(1, inf), sv{0, math.Pi / 2}},
		{"atanh", Atanh, complex(inf, 1), sv{0, math.Pi / 2}},
		{"atanh", Atanh, complex(inf, nan), sv{0, nan}},
		{"atanh", Atanh, complex(nan, inf), sv{0, math.Pi / 2}},
		{"atanh", Atanh, complex(-inf, nz), sv{nz, -math.Pi / 2}},
		{"sinh", Sinh, complex(inf, 0), sv{inf, 0}},
		{"sinh", Sinh, complex(nan, 0), sv{nan, 0}},
		{"sinh", Sinh, complex(1, inf), sv{nan, nan}},
		{"cosh", Cosh, complex(0, 0), sv{1, 0}},
		{"cosh", Cosh, complex(inf, 0), sv{inf, 0}},
		{"cosh", Cosh, complex(nz, 0), sv{1, nz}},
		{"tanh", Tanh, complex(inf, 1), sv{1, 0}},
		{"tanh", Tanh, complex(-inf, inf), sv{-1, 0}},
		{"tanh", Tanh, complex(nan, 0), sv{nan, 0}},
		{"tanh", Tanh, complex(30, 1), sv{1, 4 * math.Sin(1) * math.Cos(1) * math.Exp(-60)}},
		{"sqrt", Sqrt, complex(nan, inf), sv{inf, inf}},
		{"sqrt", Sqrt, complex(-inf, 1), sv{0, inf}},
		{"sqrt", Sqrt, complex(inf, nz), sv{inf, nz}},
		{"sqrt", Sqrt, complex(nz, 0), sv{0, 0}},
		{"log", Log, complex(nz, 0), sv{-inf, math.Pi}},
		{"log", Log, complex(0, nz), sv{-inf, nz}},
		{"log", Log, complex(nan, inf), sv{inf, nan}},
	} {
		w := c.f(c.z)
		same(t, c.want.re, real(w), c.name+" re")
		same(t, c.want.im, imag(w), c.name+" im")
	}
}

// Accuracy near |z| = 1 for log and near the origin for the inverse
// functions, against math/big (log|z| = log1p(x²+y²-1)/2 with the argument
// of log1p exact in big arithmetic).
func TestComplexAccuracy(t *testing.T) {
	for _, z := range []complex128{complex(0.6, 0.8), complex(1, 1e-9), complex(0.9999999, 0.0001)} {
		x, y := new(big.Float).SetPrec(300).SetFloat64(real(z)), new(big.Float).SetPrec(300).SetFloat64(imag(z))
		s := new(big.Float).SetPrec(300).Mul(x, x)
		s.Add(s, new(big.Float).SetPrec(300).Mul(y, y))
		s.Sub(s, big.NewFloat(1))
		v, _ := s.Float64()
		want := math.Log1p(v) / 2
		assert.LessOrEqual(t, math.Abs(real(Log(z))-want), 2e-16*math.Abs(want)+1e-300, "log|%v|", z)
	}
	for _, z := range []complex128{1e-20 + 1e-20i, complex(1e-300, -1e-310)} {
		for _, f := range []func(complex128) complex128{Asin, Asinh, Atan, Atanh, Tan, Sinh} {
			w := f(z)
			assert.LessOrEqual(t, absC(w-z), 1e-15*absC(z))
		}
	}
}

// TestZetaBoundedAndReflected: huge x underflows to 0 at once (it summed
// x terms), and far negative q goes through positive arguments (it
// summed |q| terms).
func TestZetaBoundedAndReflected(t *testing.T) {
	assert.Equal(t, 0.0, Zeta(1e300, 2.5))
	assert.Equal(t, 0.0, Zeta(1e7, 2.5))
	// ζ(2, -1e15-0.5) = Σ over ±(m+1/2) of m^-2 → 2·ζ(2, 1/2) = π².
	assert.InDelta(t, math.Pi*math.Pi, Zeta(2, -1e15-0.5), 1e-9)
	// Reflected (n > 64) against the terms summed one by one.
	for _, c := range []struct{ x, q float64 }{{2, -100.5}, {3, -80.25}, {4, -70.75}} {
		want := Zeta(c.x, c.q+math.Ceil(-c.q))
		for q := c.q; q < 0; q++ {
			want += math.Pow(q, -c.x)
		}
		got := Zeta(c.x, c.q)
		assert.InDelta(t, want, got, 1e-13*math.Abs(want), "ζ(%v, %v)", c.x, c.q)
	}
	near := math.Pi * math.Pi / 2 // ζ(2, 1/2), plus the ten terms at -9.5 ... -0.5
	for m := 0.5; m < 10; m++ {
		near += 1 / (m * m)
	}
	assert.InDelta(t, near, Zeta(2, -9.5), 1e-13)
}

func TestRealLogSubnormals(t *testing.T) {
	assert.InDelta(t, -744.4400719213812, RealLog(5e-324), 1e-12)
	assert.InDelta(t, -713.8013788281542, RealLog(1e-310), 1e-12)
	assert.Equal(t, math.Log(1e-300), RealLog(1e-300))
	assert.True(t, math.IsInf(RealLog(0), -1))
	assert.InDelta(t, 744.4400719213812, Lgamma(5e-324), 1e-12)
	assert.InDelta(t, -744.4400719213812, real(Log(complex(5e-324, 0))), 1e-12)
}

// TestHyperbolicBeyond700: the split exponential keeps the sign of cos y
// and sin y, and sinh, cosh of real x stay finite up to 710.47.
func TestHyperbolicBeyond700(t *testing.T) {
	z := Sinh(complex(710, 2))
	assert.InDelta(t, 1, real(z)/(math.Sinh(700)*math.Exp(10)*math.Cos(2)), 1e-12)
	assert.Less(t, real(z), 0.0)
	assert.Greater(t, imag(z), 0.0)
	z = Cosh(complex(710, -1))
	assert.Greater(t, real(z), 0.0)
	assert.Less(t, imag(z), 0.0)
	assert.Less(t, imag(Cosh(complex(-710, 1))), 0.0)
	assert.InDelta(t, 1.1169973830808557e308, real(Sinh(complex(710, 0))), 1e295)
	assert.InDelta(t, 1.1169973830808557e308, real(Cosh(complex(-710, 0))), 1e295)
	assert.True(t, math.IsInf(real(Sinh(complex(711, 0))), 1))
}

// TestRealSinhCoshLog2: real sinh and cosh finite past math.Sinh's
// overflow at 709.78, and log₂ exact at powers of two and accurate near 1
// (the values to 200 bits, mpmath).
func TestRealSinhCoshLog2(t *testing.T) {
	for _, c := range []struct{ x, sinh, cosh float64 }{
		{709.6, 7.487457372484647e+307, 7.487457372484647e+307},
		{710.4, 1.6663642832806496e+308, 1.6663642832806496e+308},
		{-709.6, -7.487457372484647e+307, 7.487457372484647e+307},
		{1.5, 2.1292794550948173, 2.352409615243247},
	} {
		assert.InDelta(t, c.sinh, RealSinh(c.x), 4e-16*math.Abs(c.sinh), "sinh(%v)", c.x)
		assert.InDelta(t, c.cosh, RealCosh(c.x), 4e-16*c.cosh, "cosh(%v)", c.x)
	}
	assert.True(t, math.IsInf(RealSinh(711), 1))
	assert.True(t, math.IsInf(RealSinh(-711), -1))
	for _, c := range []struct{ x, log2 float64 }{
		{1 + 0x1p-23, 1.7198264061184464e-07}, {0.999, -0.0014434168696687186}, {3, 1.584962500721156},
		{1e308, 1023.1538532253076}, {1 - 0x1p-53, -1.6017132519074588e-16}, {math.Sqrt2 / 2, -0.4999999999999999},
	} {
		assert.InDelta(t, c.log2, RealLog2(c.x), 4e-16*math.Abs(c.log2), "log2(%v)", c.x)
	}
	for k := -1074; k <= 1023; k++ {
		require.Equal(t, float64(k), RealLog2(math.Ldexp(1, k)), "log2(2^%d)", k)
	}
	assert.True(t, math.IsNaN(RealLog2(-1)))
	assert.True(t, math.IsInf(RealLog2(0), -1))
	assert.True(t, math.IsInf(RealLog2(math.Inf(1)), 1))
}

func TestRealAcosAsin(t *testing.T) {
	// acos(0.99999994) to 300 bits: 3.464101631546588e-4.
	assert.InDelta(t, 3.464101631546588e-4, RealAcos(0.99999994), 1e-19)
	assert.InDelta(t, math.Pi/2-3.464101631546588e-4, RealAsin(0.99999994), 4e-16)
	for _, c := range []struct{ x, acos, asin float64 }{{1, 0, math.Pi / 2}, {-1, math.Pi, -math.Pi / 2}, {0, math.Pi / 2, 0}} {
		assert.Equal(t, c.acos, RealAcos(c.x))
		assert.Equal(t, c.asin, RealAsin(c.x))
	}
	assert.True(t, math.Signbit(RealAsin(math.Copysign(0, -1))))
	for _, x := range []float64{1.0000001, -2, math.NaN(), math.Inf(1)} {
		assert.True(t, math.IsNaN(RealAcos(x)), "%v", x)
		assert.True(t, math.IsNaN(RealAsin(x)), "%v", x)
	}
}

// TestIgammaTinyArguments: P(a, x) stays a probability for subnormal a,
// and P(1, x) = 1 - e^-x ≈ x for subnormal x.
func TestIgammaTinyArguments(t *testing.T) {
	for _, x := range []float64{0.5, 1e-10, 0.9} {
		p := Igamma(5e-324, x)
		assert.True(t, p >= 0 && p <= 1, "P(5e-324, %v) = %v", x, p)
		assert.InDelta(t, 1, Igamma(5e-324, x)+Igammac(5e-324, x), 1e-15)
	}
	assert.InDelta(t, 1e-310, Igamma(1, 1e-310), 1e-325)
	assert.InDelta(t, 1-math.Exp(-0.5), Igamma(1, 0.5), 1e-16)
}

// TestPolygammaLargeOrder: past n = 170, n! overflows and ζ(n+1, x) may
// underflow; their product is finite (it came out NaN).
func TestPolygammaLargeOrder(t *testing.T) {
	// ψ^(n)(x) = (-1)^(n+1) n! Σ_k (x+k)^-(n+1): at x = 300 the first
	// terms decide; log10|ψ^(200)(300)| = log10 200! - 201 log10 300 + log10 Σ.
	for _, c := range []struct{ n, x float64 }{{200, 300}, {171, 1000}, {180, 10}} {
		lg, _ := math.Lgamma(c.n + 1)
		var sum float64
		for k := 0.0; k < 1e5; k++ {
			sum += math.Exp(-(c.n + 1) * math.Log1p(k/c.x))
		}
		want := math.Exp(lg - (c.n+1)*math.Log(c.x) + math.Log(sum))
		if math.Mod(c.n, 2) == 0 {
			want = -want
		}
		got := Polygamma(c.n, c.x)
		assert.InDelta(t, 1, got/want, 1e-12, "polygamma(%v, %v) = %v, want %v", c.n, c.x, got, want)
	}
}

// TestZetaNegativeHalfIntegers: at q = -1/2 the terms (-1/2)^-x and
// (1/2)^-x cancel exactly before the small ones are added (summing them
// apart lost ζ(33, -1/2) to rounding: 1.9e-6 for 1.545e-6). Values from
// mpmath.
func TestZetaNegativeHalfIntegers(t *testing.T) {
	for _, c := range []struct{ x, q, want float64 }{
		{33, -0.5, 1.5452134221870694e-06},
		{51, -0.5, 1.045552363661043e-09},
		{21, -0.5, 2.0049017503511193e-4},
	} {
		got := Zeta(c.x, c.q)
		assert.InDelta(t, c.want, got, 1e-13*c.want, "ζ(%v, %v)", c.x, c.q)
	}
	assert.InDelta(t, -42108.858768975493, Polygamma(10, -0.5), 1e-9*42108)
	assert.InDelta(t, -3.1799527035658681e+55, Polygamma(50, -0.5), 1e-12*3.18e55)
	assert.InDelta(t, 1, Polygamma(172, -0.5)/-7.3370036562215103e+280, 1e-11)
}

// TestZetaNegativeHalfIntegersPastOne: for odd x the terms (q+k)^-x at
// ±1/2, ±3/2 ... cancel exactly, leaving ζ(x, -q+1) (a running sum kept
// their rounding: ζ(31, -3/2) came out 1.4e-7 for 4.6e-13).
func TestZetaNegativeHalfIntegersPastOne(t *testing.T) {
	for _, c := range []struct{ x, q float64 }{{31, -1.5}, {27, -1.5}, {59, -1.5}, {7, -2.5}, {5, -5.5}, {3, -63.5}} {
		assert.InDelta(t, 1, Zeta(c.x, c.q)/Zeta(c.x, -c.q+1), 1e-12, "ζ(%v, %v)", c.x, c.q)
	}
	assert.InDelta(t, 1, Polygamma(30, -1.5)/Polygamma(30, 2.5), 1e-12)
	// ψ^(32)(x) ≈ -31!/x^32 for large x: ζ(33, 1e10) is subnormal.
	lg, _ := math.Lgamma(32)
	assert.InDelta(t, 1, Polygamma(32, 1e10)/-math.Exp(lg-32*math.Log(1e10)), 1e-8)
}

// TestExpCosSin: on ordinary arguments Exp, Cos and Sin agree with
// math/cmplx (Exp exactly, Cos and Sin within a few ulp: they go through
// Cosh and Sinh); next to overflow they give the exact zero and the
// finite value where math/cmplx gives NaN or Inf.
func TestExpCosSin(t *testing.T) {
	close := func(a, b complex128) bool {
		d := cmplx.Abs(a - b)
		return d <= 1e-15*cmplx.Abs(b) || d == 0
	}
	for _, x := range []float64{-30, -2.5, -1e-3, 0, 1e-300, 0.7, 3, 40} {
		for _, y := range []float64{-7, -1, -1e-8, 0.3, 2, 100} {
			z := complex(x, y)
			if got, want := Exp(z), cmplx.Exp(z); got != want {
				t.Errorf("Exp(%v) = %v, want %v", z, got, want)
			}
			if got, want := Cos(z), cmplx.Cos(z); !close(got, want) {
				t.Errorf("Cos(%v) = %v, want %v", z, got, want)
			}
			if got, want := Sin(z), cmplx.Sin(z); !close(got, want) {
				t.Errorf("Sin(%v) = %v, want %v", z, got, want)
			}
		}
	}
	inf := math.Inf(1)
	for _, c := range []struct {
		got, want complex128
	}{
		{Exp(complex(1000, 0)), complex(inf, 0)},
		{Exp(complex(inf, 0)), complex(inf, 0)},
		{Exp(complex(math.Inf(-1), 0)), complex(0, 0)},
		{Cos(complex(0, 1000)), complex(inf, math.Copysign(0, -1))},
		{Sin(complex(0, 1000)), complex(0, inf)},
		{Sin(complex(0, -1000)), complex(0, -inf)},
	} {
		if math.Float64bits(real(c.got)) != math.Float64bits(real(c.want)) || math.Float64bits(imag(c.got)) != math.Float64bits(imag(c.want)) {
			t.Errorf("got %v, want %v", c.got, c.want)
		}
	}
	if e := Exp(complex(710, math.Pi/4)); cmplx.IsInf(e) || math.Abs(real(e)/1.5796728482882019e+308-1) > 1e-14 {
		t.Errorf("Exp(710+iπ/4) = %v, want about 1.58e308·(1+i)", e)
	}
}

// Found in review (references from mpmath at 300 bits): tanh(+∞ + iy)
// takes its zero's sign from sin 2y, which overflowed to NaN (always +)
// for |y| past MaxFloat64/2; e^x at the largest x with a finite result
// overflowed in math.Expm1; log|z| near |z| = 1 lost every digit
// through the hypotenuse; e^z and sinh z for x past 1419.57 and a tiny y
// overflowed in e^(x/2) where the product is finite.
func TestReviewedEdges(t *testing.T) {
	w := Tanh(complex(math.Inf(1), 1e308)) // sin(2e308) < 0
	assert.Equal(t, 1.0, real(w))
	assert.True(t, imag(w) == 0 && math.Signbit(imag(w)), "imag %v is -0", imag(w))
	assert.False(t, math.Signbit(imag(Tanh(complex(math.Inf(1), -1e308)))), "the conjugate's")
	assert.True(t, math.Signbit(real(Tan(complex(1e308, math.Inf(1))))), "tan(1e308 + i∞) = -0 + i")

	assert.Equal(t, 1.7976931348622732e308, RealExp(709.782712893384))
	assert.True(t, math.IsInf(RealExp(709.7827128933841), 1))

	for _, c := range []struct{ x, y, want float64 }{
		{0.6, 0.8, 2.2204460492503131548e-17},
		{1, 1e-8, 4.9999999999999999592e-17},
	} {
		assert.InEpsilon(t, c.want, LogHypot(c.x, c.y), 1e-15, "LogHypot(%v, %v)", c.x, c.y)
		assert.InEpsilon(t, c.want, real(Log(complex(c.x, c.y))), 1e-15)
	}

	const tiny = 5e-324
	want := math.Exp(1420 + RealLog(tiny)) // e^1420·y, finite
	assert.InEpsilon(t, want, imag(Exp(complex(1420, tiny))), 1e-12)
	assert.InEpsilon(t, want/2, imag(Sinh(complex(1420, tiny))), 1e-12)
	assert.True(t, math.IsInf(real(Exp(complex(1420, tiny))), 1), "cos y = 1: +Inf")
}
