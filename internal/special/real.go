package special

// Real functions whose standard-library forms are inaccurate somewhere.

import "math"

// RealLog is the natural logarithm of a float64: math.Log, but right for
// subnormal x. The amd64 assembly of math.Log (Go 1.26) does not
// normalize them and is off by up to 35 (5e-324 gave -709.09 for
// -744.44).
func RealLog(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return math.Log(x*0x1p52) - 52*math.Ln2
	}
	return math.Log(x)
}

// RealExp is e^x: math.Exp, but finite up to ln(MaxFloat64) ≈ 709.78.
// The amd64 assembly of math.Exp (Go 1.26) overflows from about 709.44
// (709.5 gave +Inf for 1.35e308); past 709, e^x - 1 rounds to e^x, and
// math.Expm1 is right there.
func RealExp(x float64) float64 {
	if x > 709 {
		if r := math.Expm1(x); !math.IsInf(r, 1) {
			return r
		}
		// math.Expm1 overflows at the largest x whose e^x is finite
		// (709.782712893384): e^(x/2) squared is finite up to there.
		h := math.Exp(x / 2)
		return h * h
	}
	return math.Exp(x)
}

// RealSinh is sinh x without the early overflow of math.Sinh, which
// computes e^|x|/2 and overflows for 709.78 < |x| < 710.48.
func RealSinh(x float64) float64 {
	if a := math.Abs(x); a > 700 && !math.IsInf(a, 0) {
		h := math.Exp(a / 2)
		return math.Copysign(h/2*h, x)
	}
	return math.Sinh(x)
}

// RealCosh is cosh x without math.Cosh's early overflow.
func RealCosh(x float64) float64 {
	if a := math.Abs(x); a > 700 && !math.IsInf(a, 0) {
		h := math.Exp(a / 2)
		return h / 2 * h
	}
	return math.Cosh(x)
}

// RealLog2 is log₂ x as e + log(m)/ln 2 for x = m·2^e with m in [√½, √2):
// exact at powers of two and accurate near 1, where math.Log2's
// log(frac)/ln 2 + exp for frac in [½, 1) cancels (log2(1+2⁻²³) was off
// by millions of ulps).
func RealLog2(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 1) {
		return math.Log2(x) // NaN, -Inf at 0, +Inf
	}
	m, e := math.Frexp(x)
	if m < math.Sqrt2/2 {
		m *= 2
		e--
	}
	return float64(e) + RealLog(m)/math.Ln2
}

// LogHypot is log √(x² + y²) without the overflow of the sum for huge x
// or y (log|1.5e308 + 1.5e308i| is 709.95, not +Inf) or its loss of bits
// for subnormal ones: the parts are scaled by a power of two first. Near
// |z| = 1 it is ½ log1p(x² + y² - 1) with the squares split exactly, so
// that a logarithm near 0 keeps its digits (log|0.6+0.8i| is 2.2e-17, not
// 0).
func LogHypot(x, y float64) float64 {
	x, y = math.Abs(x), math.Abs(y)
	if h := math.Hypot(x, y); h > 0.5 && h < 2 {
		return 0.5 * math.Log1p(sumSquaresMinusOne(x, y))
	}
	m := max(x, y)
	if math.IsInf(m, 0) || math.IsNaN(x) || math.IsNaN(y) || m == 0 || (m < 0x1p1000 && m > 0x1p-1000) {
		return RealLog(math.Hypot(x, y))
	}
	k := math.Ilogb(m)
	return math.Log(math.Hypot(math.Ldexp(x, -k), math.Ldexp(y, -k))) + float64(k)*math.Ln2
}

// Atan2 is the angle of (x, y): math.Atan2, but with the sign of y when
// x < 0 and y/x underflows. math.Atan2 (Go 1.26) adds π to atan(y/x) = +0
// there, giving +π for y < 0 (atan2(-1e-300, -1e300) was π, not -π).
func Atan2(y, x float64) float64 {
	r := math.Atan2(y, x)
	if y != 0 && !math.IsNaN(r) && math.Signbit(r) != math.Signbit(y) {
		r = -r
	}
	return r
}

// RealAcos is arccos x as atan2(√((1-x)(1+x)), x): accurate near |x| = 1,
// where math.Acos's 1-x² cancels (acos(0.99999994) was off by 1.3e6
// ulp). NaN outside [-1, 1].
func RealAcos(x float64) float64 {
	return Atan2(math.Sqrt((1-x)*(1+x)), x)
}

// RealAsin is arcsin x as atan2(x, √((1-x)(1+x))), accurate near |x| = 1.
func RealAsin(x float64) float64 {
	return Atan2(x, math.Sqrt((1-x)*(1+x)))
}
