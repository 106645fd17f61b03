package special

import (
	"math"
	"math/cmplx"
)

// Complex elementary functions with the special values of C99 Annex G
// (G.6) and branch cuts on the sides given by the sign of a zero part:
// on a cut, the value is the limit from the side the signed zero points
// to (asin(2+0i) is the limit from above, asin(2-0i) from below).
// The inverse functions follow Kahan's formulas, built on Sqrt.

func isInf(v float64) bool { return math.IsInf(v, 0) }
func isNaN(v float64) bool { return v != v }

// Sqrt is the principal square root, with Annex G's special values:
// Sqrt(x ± i∞) = +∞ ± i∞ (also for NaN x), Sqrt(-∞ ± iy) = 0 ± i∞,
// Sqrt(+∞ ± iy) = +∞ ± i0, Sqrt(±0 ± i0) = +0 ± i0, and the imaginary
// part keeps y's sign (so -4-0i has root -2i).
func Sqrt(z complex128) complex128 {
	x, y := real(z), imag(z)
	switch {
	case isInf(y):
		return complex(math.Inf(1), y)
	case isNaN(x):
		return complex(x, math.NaN())
	case math.IsInf(x, 1):
		if isNaN(y) {
			return complex(x, y)
		}
		return complex(x, math.Copysign(0, y))
	case math.IsInf(x, -1):
		if isNaN(y) {
			return complex(math.NaN(), math.Inf(1))
		}
		return complex(0, math.Copysign(math.Inf(1), y))
	case isNaN(y):
		return complex(math.NaN(), y)
	case x == 0 && y == 0:
		return complex(0, y)
	}
	// Scale so that |x| + |z| neither overflows nor loses the subnormals.
	scale := 1.0
	ax, ay := math.Abs(x), math.Abs(y)
	if m := math.Max(ax, ay); m > 0x1p1000 {
		ax, ay, scale = ax*0x1p-2, ay*0x1p-2, 2
	} else if m < 0x1p-1000 {
		ax, ay, scale = ax*0x1p200, ay*0x1p200, 0x1p-100
	}
	t := math.Sqrt((ax + math.Hypot(ax, ay)) / 2) // >= sqrt(|z|/2) > 0
	u := ay / (2 * t)
	if x >= 0 {
		return complex(t*scale, math.Copysign(u*scale, y))
	}
	return complex(u*scale, math.Copysign(t*scale, y))
}

// Log is the principal logarithm: log|z| + i·atan2(y, x), with
// log|z| computed without cancellation near |z| = 1.
func Log(z complex128) complex128 {
	x, y := real(z), imag(z)
	return complex(LogHypot(x, y), Atan2(y, x))
}

// sumSquaresMinusOne is x² + y² - 1 with the products split exactly by FMA.
func sumSquaresMinusOne(x, y float64) float64 {
	if math.Abs(x) < math.Abs(y) {
		x, y = y, x
	}
	x2 := x * x
	x2l := math.FMA(x, x, -x2)
	y2 := y * y
	y2l := math.FMA(y, y, -y2)
	return ((x2 - 1) + y2) + (x2l + y2l)
}

// Sinh is the hyperbolic sine sinh x cos y + i cosh x sin y with Annex G's
// special values.
func Sinh(z complex128) complex128 {
	x, y := real(z), imag(z)
	switch {
	case y == 0:
		return complex(sinhWide(x), y)
	case x == 0 && (isInf(y) || isNaN(y)):
		return complex(x, math.NaN())
	case isInf(x) && (isInf(y) || isNaN(y)):
		return complex(x, math.NaN())
	}
	s, c := math.Sincos(y)
	if ax := math.Abs(x); ax > 700 && !isInf(x) {
		// sinh x ≈ cosh x ≈ e^|x|/2: split the exponential so that a small
		// cos or sin does not meet an overflowed factor.
		return complex(expTimes(math.Copysign(1, x)*c, ax, 0.5), expTimes(s, ax, 0.5))
	}
	return complex(math.Sinh(x)*c, math.Cosh(x)*s)
}

// sinhWide is math.Sinh without its early overflow: sinh x is finite up
// to |x| = 710.47..., where e^|x| alone is not.
func sinhWide(x float64) float64 {
	if ax := math.Abs(x); ax > 700 && !isInf(x) {
		h := math.Exp(ax / 2)
		return math.Copysign(h/2, x) * h
	}
	return math.Sinh(x)
}

// coshWide is math.Cosh without its early overflow.
func coshWide(x float64) float64 {
	if ax := math.Abs(x); ax > 700 && !isInf(x) {
		h := math.Exp(ax / 2)
		return h / 2 * h
	}
	return math.Cosh(x)
}

// Cosh is the hyperbolic cosine cosh x cos y + i sinh x sin y with Annex
// G's special values.
func Cosh(z complex128) complex128 {
	x, y := real(z), imag(z)
	switch {
	case y == 0:
		im := math.Copysign(0, x)
		if math.Signbit(y) {
			im = -im
		}
		if isNaN(x) {
			im = y
		}
		return complex(coshWide(x), im)
	case x == 0 && (isInf(y) || isNaN(y)):
		return complex(math.NaN(), 0)
	case isInf(x) && (isInf(y) || isNaN(y)):
		return complex(math.Inf(1), math.NaN())
	}
	s, c := math.Sincos(y)
	if ax := math.Abs(x); ax > 700 && !isInf(x) {
		h := math.Exp(ax / 2)
		return complex(c*(h/2)*h, s*math.Copysign(h/2, x)*h)
	}
	return complex(math.Cosh(x)*c, math.Sinh(x)*s)
}

// Tanh is the hyperbolic tangent by Kahan's formula
// (β ρ s + i t)/(1 + β s²), t = tan y, β = 1 + t², s = sinh x, ρ = √(1+s²),
// with Annex G's special values.
func Tanh(z complex128) complex128 {
	x, y := real(z), imag(z)
	switch {
	case isInf(x):
		if isInf(y) || isNaN(y) {
			return complex(math.Copysign(1, x), math.Copysign(0, y))
		}
		// The sign of sin 2y, from sin y cos y: 2y may overflow.
		return complex(math.Copysign(1, x), math.Copysign(0, math.Sin(y)*math.Cos(y)))
	case isNaN(x):
		if y == 0 {
			return complex(x, y)
		}
		return complex(x, math.NaN())
	case isInf(y) || isNaN(y):
		if x == 0 {
			return complex(x, math.NaN())
		}
		return complex(math.NaN(), math.NaN())
	case math.Abs(x) > 22:
		// tanh x rounds to ±1; the imaginary part is
		// sin 2y / (cosh 2x + cos 2y) ≈ 2 sin 2y e^(-2|x|).
		e := math.Exp(-math.Abs(x))
		return complex(math.Copysign(1, x), 4*math.Sin(y)*math.Cos(y)*e*e)
	}
	t := math.Tan(y)
	b := 1 + t*t
	s := math.Sinh(x)
	rho := math.Sqrt(1 + s*s)
	d := 1 + b*s*s
	return complex(b*rho*s/d, t/d)
}

// Tan is tan z = -i tanh(iz).
func Tan(z complex128) complex128 {
	w := Tanh(complex(-imag(z), real(z)))
	return complex(imag(w), -real(w))
}

// Asinh is the inverse hyperbolic sine, with cuts on the imaginary axis
// beyond ±i and Annex G's special values.
func Asinh(z complex128) complex128 {
	x, y := real(z), imag(z)
	ax, ay := math.Abs(x), math.Abs(y)
	var re, im float64
	switch {
	case isNaN(x):
		switch {
		case y == 0:
			return complex(x, y)
		case isInf(y):
			return complex(math.Inf(1), math.NaN())
		}
		return complex(math.NaN(), math.NaN())
	case isNaN(y):
		if isInf(x) {
			return complex(x, y)
		}
		return complex(math.NaN(), math.NaN())
	case isInf(ax) && isInf(ay):
		re, im = math.Inf(1), math.Pi/4
	case isInf(ax):
		re, im = math.Inf(1), 0
	case isInf(ay):
		re, im = math.Inf(1), math.Pi/2
	default:
		// asinh z = -i asin(iz), and asin by Kahan's formula:
		// asin w = atan2(Re w, Re(√(1-w)√(1+w))) + i asinh(Im(conj(√(1-w))√(1+w))).
		a, b := asinFinite(-y, x)
		return complex(b, -a)
	}
	return complex(math.Copysign(re, x), math.Copysign(im, y))
}

// hugeInverse is the bound on |x|, |y| past which the inverse functions
// halve their square roots: the products of two of them are about |z|,
// which overflows when |z| > MaxFloat64 with both parts finite.
const hugeInverse = 0x1p1000

// halve is z/2 part by part (a complex product would lose signed zeros).
func halve(z complex128) complex128 { return complex(real(z)/2, imag(z)/2) }

// asinhScaled is asinh(4v) for v = (product of halved roots), where
// |4v| > 2^28: asinh(v) + 2 ln 2 with v's sign.
func asinhScaled(v float64) float64 {
	return math.Asinh(v) + math.Copysign(2*math.Ln2, v)
}

// asinFinite is asin(x + iy) for finite x, y by Kahan's formula; past
// hugeInverse with the square roots halved (asinh(1.5e308+1.5e308i) came
// out +Inf).
func asinFinite(x, y float64) (re, im float64) {
	if x == 0 && y == 0 {
		return x, y
	}
	s1 := Sqrt(complex(1-x, -y))
	s2 := Sqrt(complex(1+x, y))
	if math.Max(math.Abs(x), math.Abs(y)) > hugeInverse {
		s1, s2 = halve(s1), halve(s2)
		re = Atan2(x/4, real(s1)*real(s2)-imag(s1)*imag(s2))
		im = asinhScaled(real(s1)*imag(s2) - imag(s1)*real(s2))
		return re, im
	}
	re = Atan2(x, real(s1)*real(s2)-imag(s1)*imag(s2))
	im = math.Asinh(real(s1)*imag(s2) - imag(s1)*real(s2))
	return re, im
}

// Asin is the inverse sine, asin z = -i asinh(iz): cuts on the real axis
// beyond ±1.
func Asin(z complex128) complex128 {
	w := Asinh(complex(-imag(z), real(z)))
	return complex(imag(w), -real(w))
}

// Acos is the inverse cosine with cuts on the real axis beyond ±1, by
// Kahan's formula 2 atan2(Re √(1-z), Re √(1+z)) + i asinh(Im(conj(√(1+z))√(1-z))),
// with Annex G's special values.
func Acos(z complex128) complex128 {
	x, y := real(z), imag(z)
	switch {
	case isNaN(x):
		if isInf(y) {
			return complex(x, -y)
		}
		return complex(math.NaN(), math.NaN())
	case isNaN(y):
		switch {
		case x == 0:
			return complex(math.Pi/2, y)
		case isInf(x):
			return complex(math.NaN(), math.Inf(-1))
		}
		return complex(math.NaN(), math.NaN())
	case isInf(x) || isInf(y):
		var re float64
		switch {
		case isInf(x) && isInf(y):
			re = math.Pi / 4
			if x < 0 {
				re = 3 * math.Pi / 4
			}
		case isInf(y):
			re = math.Pi / 2
		case x < 0:
			re = math.Pi
		}
		return complex(re, -math.Copysign(math.Inf(1), y))
	}
	s1 := Sqrt(complex(1-x, -y))
	s2 := Sqrt(complex(1+x, y))
	re := 2 * Atan2(real(s1), real(s2))
	if math.Max(math.Abs(x), math.Abs(y)) > hugeInverse {
		s1, s2 = halve(s1), halve(s2)
		return complex(re, asinhScaled(real(s2)*imag(s1)-imag(s2)*real(s1)))
	}
	im := math.Asinh(real(s2)*imag(s1) - imag(s2)*real(s1))
	return complex(re, im)
}

// Acosh is the inverse hyperbolic cosine, by Kahan's formula
// asinh(Re(conj(√(z-1))√(z+1))) + 2i atan2(Im √(z-1), Re √(z+1)), with
// Annex G's special values: its real part is never negative.
func Acosh(z complex128) complex128 {
	x, y := real(z), imag(z)
	switch {
	case isNaN(x):
		if isInf(y) {
			return complex(math.Inf(1), x)
		}
		return complex(math.NaN(), math.NaN())
	case isNaN(y):
		if isInf(x) {
			return complex(math.Inf(1), y)
		}
		return complex(math.NaN(), math.NaN())
	case isInf(x) || isInf(y):
		var im float64
		switch {
		case isInf(x) && isInf(y):
			im = math.Pi / 4
			if x < 0 {
				im = 3 * math.Pi / 4
			}
		case isInf(y):
			im = math.Pi / 2
		case x < 0:
			im = math.Pi
		}
		return complex(math.Inf(1), math.Copysign(im, y))
	}
	s1 := Sqrt(complex(x-1, y))
	s2 := Sqrt(complex(x+1, y))
	im := 2 * Atan2(imag(s1), real(s2))
	if math.Max(math.Abs(x), math.Abs(y)) > hugeInverse {
		s1, s2 = halve(s1), halve(s2)
		return complex(asinhScaled(real(s1)*real(s2)+imag(s1)*imag(s2)), im)
	}
	re := math.Asinh(real(s1)*real(s2) + imag(s1)*imag(s2))
	return complex(re, im)
}

// Atanh is the inverse hyperbolic tangent with cuts on the real axis
// beyond ±1:
// Re = log1p(4x / ((1-x)² + y²)) / 4, Im = atan2(2y, (1-x)(1+x) - y²) / 2,
// with Annex G's special values.
func Atanh(z complex128) complex128 {
	x, y := real(z), imag(z)
	ax, ay := math.Abs(x), math.Abs(y)
	switch {
	case isNaN(x):
		if isInf(y) {
			return complex(math.Copysign(0, x), math.Copysign(math.Pi/2, y))
		}
		return complex(x, math.NaN())
	case isNaN(y):
		if isInf(x) || x == 0 {
			return complex(math.Copysign(0, x), y)
		}
		return complex(math.NaN(), math.NaN())
	case isInf(ax) || isInf(ay) || math.Max(ax, ay) > 0x1p500:
		// atanh z ≈ 1/z + iπ/2·sign(y) for large |z|.
		re := 0.0
		if !isInf(ax) && !isInf(ay) {
			re = (x / ax) / (ax + ay*(ay/ax))
			if ay > ax {
				re = (x / ay) / (ay + ax*(ax/ay))
			}
		}
		return complex(math.Copysign(re, x), math.Copysign(math.Pi/2, y))
	case ax == 1 && y == 0:
		return complex(math.Copysign(math.Inf(1), x), y)
	}
	omx := 1 - ax
	re := math.Log1p(4*ax/(omx*omx+ay*ay)) / 4
	if ax == 1 && ay < 0x1p-500 {
		// Next to the branch points ±1, y² underflows (re came out +Inf):
		// re = log((4+y²)/y²)/4 = (ln 2 - ln|y|)/2.
		re = (math.Ln2 - RealLog(ay)) / 2
	}
	im := Atan2(2*y, omx*(1+ax)-ay*ay) / 2
	return complex(math.Copysign(re, x), im)
}

// Atan is the inverse tangent, atan z = -i atanh(iz): cuts on the
// imaginary axis beyond ±i.
func Atan(z complex128) complex128 {
	w := Atanh(complex(-imag(z), real(z)))
	return complex(imag(w), -real(w))
}

// Exp is e^z = e^x (cos y + i sin y) with Annex G's special values: a
// zero y gives (e^x, y) whatever x (1000+0i is +Inf+0i, not the NaN of
// ∞·sin 0), and past x = 700 the exponential is split so that a finite
// result does not pass through an overflowed e^x (e^(710+iπ/4) is
// finite).
func Exp(z complex128) complex128 {
	x, y := real(z), imag(z)
	switch {
	case y == 0:
		return complex(RealExp(x), y)
	case isInf(x) || isNaN(x) || isInf(y) || isNaN(y):
		return cmplx.Exp(z)
	}
	s, c := math.Sincos(y)
	if x > 700 {
		return complex(expTimes(c, x, 1), expTimes(s, x, 1))
	}
	r := math.Exp(x)
	return complex(r*c, r*s)
}

// Cos is the cosine, cosh(iz), with Annex G's special values (cos(1000i)
// is +Inf-0i, not the NaN of 0·sinh 1000).
func Cos(z complex128) complex128 { return Cosh(complex(-imag(z), real(z))) }

// Sin is the sine, -i·sinh(iz), with Annex G's special values (sin(1000i)
// is 0+Inf·i).
func Sin(z complex128) complex128 {
	w := Sinh(complex(-imag(z), real(z)))
	return complex(imag(w), -real(w))
}

// expTimes is v·e^x·scale (scale 1 or ½) for a large x (past 700),
// finite wherever the product is: e^x is split into factors that do not
// overflow, multiplied into v one at a time (two up to x = 1400; three
// past it, where e^(x/2) overflows although a tiny v, down to 5e-324,
// keeps the product finite up to x ≈ 1454). The scale goes on a factor,
// exactly, not on v, which it could round to 0.
func expTimes(v, x, scale float64) float64 {
	if x <= 1400 {
		h := math.Exp(x / 2)
		return v * (h * scale) * h
	}
	h := math.Exp(x / 3)
	return v * (h * scale) * h * h
}
